"""`specsim deps` and `specsim --version`: installed library versions against the required and tested ranges."""
from importlib import metadata

import pytest

from specsim import deps


def test_deps_reports_each_library_as_installed(cli_json):
    out = cli_json("deps")
    names = [d["name"] for d in out["libraries"]]
    assert names == list(deps.TESTED)
    for d in out["libraries"]:
        try:
            want = metadata.version(d["name"])
        except metadata.PackageNotFoundError:
            want = None
        assert d["installed"] == want
        assert d["tested"] == deps.TESTED[d["name"]]


def test_required_ranges_are_read_from_specsims_metadata():
    ranges = deps.required_ranges()
    assert ranges["torch"].startswith(">=") and ranges["numpy"]
    # transformers is bounded above: the gallery encodes its rule per release
    assert "<" in ranges["transformers"]


def test_a_library_outside_its_required_range_fails_the_command(cli, monkeypatch):
    monkeypatch.setattr(deps, "required_ranges", lambda dist="specsim": {"torch": ">=99"})
    code, out, _ = cli("deps")
    assert code == 1 and "outside required >=99" in out


def test_an_untested_release_is_reported_not_refused(cli, monkeypatch):
    monkeypatch.setattr(deps, "TESTED", {"torch": ">=0.0.1,<0.0.2"})
    code, out, _ = cli("deps")
    assert code == 0 and "untested (tested >=0.0.1,<0.0.2)" in out


def test_a_missing_library_is_named(cli, monkeypatch):
    monkeypatch.setattr(deps, "TESTED", {"no-such-library-xyz": ">=1"})
    code, out, _ = cli("deps")
    assert code == 1 and "not installed" in out


@pytest.mark.parametrize("version, want", [("2.13.0+cpu", "tested"), ("2.13.1rc1", "tested"),
                                           ("2.14.0", "untested (tested >=2.13,<2.14)"),
                                           ("2.2.0", "outside required >=2.3")])
def test_local_tags_and_prereleases_count_as_their_release(version, want):
    assert deps.status(version, ">=2.3", ">=2.13,<2.14") == want


def test_version_flag_names_specsim_and_every_library(cli):
    code, out, _ = cli("--version")
    lines = out.splitlines()
    assert code == 0 and lines[0].startswith("specsim ")
    assert [line.split()[0] for line in lines[1:]] == list(deps.TESTED)
