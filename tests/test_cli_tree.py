"""CLI: round / prove / sample with --tree; bad trees refused with one line and exit 2."""
import pytest

from specsim import exact
from specsim.toy import load_model, random_model
from specsim.schemes.tree import Tree


def test_round_tree_json(cli_json):
    out = cli_json("round", "seed", "--context", "a", "--tree", "2,2,1")
    assert out["tree"] == [2, 2, 1] and out["drafts"] == "iid" and out["drafted_tokens"] == 10
    r = exact.round_distribution(load_model("seed"), ("a",), Tree((2, 2, 1)))
    assert out["expected_tokens"] == str(r.expected_tokens)
    assert len(out["accepted"]) == 4 and len(out["outcomes"]) == len(r.outcomes)


def test_round_tree_distinct_and_readable(cli, cli_json):
    out = cli_json("round", "seed", "--context", "a", "--tree", "2,2", "--drafts", "distinct")
    assert out["drafts"] == "distinct"
    code, text, _ = cli("round", "seed", "--context", "a", "--tree", "2,2")
    assert code == 0 and "scheme tree:2,2 (6 drafted tokens)" in text


def test_prove_tree_exit_zero_when_exact(cli, cli_json):
    out = cli_json("prove", "seed", "--tokens", "3", "--tree", "2,2", "--drafts", "distinct")
    assert out["exact"] and out["gammas"] == out["schemes"] == ["tree:2,2:distinct"]
    assert set(out) == {"tokens", "schemes", "gammas", "exact", "checks"}
    assert all(c["max_abs_difference"] == "0" for c in out["checks"])
    code, text, _ = cli("prove", "zeros", "--tokens", "2", "--tree", "3")
    assert code == 0 and "exact" in text


@pytest.fixture
def v6(tmp_path):
    path = tmp_path / "v6.json"
    path.write_text(random_model(6, seed=1).to_json())
    return str(path)


def test_prove_tree_on_a_random_model_file(cli_json, v6):
    out = cli_json("prove", v6, "--tokens", "3", "--tree", "2,2,1")
    assert out["exact"] and len(out["checks"]) == 6


@pytest.mark.parametrize("tree", ["0", "2,,1", "-1", "9,9", "x"])
def test_bad_trees_one_line_exit_2(cli, tree):
    code, out, err = cli("round", "seed", "--tree", tree)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1


def test_too_much_work_is_refused(cli, v6):
    code, _, err = cli("prove", v6, "--tokens", "6", "--tree", "2,2,2,2,2")
    assert code == 2 and "limit" in err and len(err.strip().splitlines()) == 1


def test_sample_tree_check(cli_json):
    out = cli_json("sample", "seed", "--context", "a", "--tree", "2,2,1", "--rounds", "4000",
                   "--seed", "3", "--check")
    assert out["rounds"] == 4000 and sum(out["accepted_counts"]) == 4000
    assert out["tree"] == [2, 2, 1]
    assert all(v["p_value"] > 1e-3 for v in out["check"].values())
    again = cli_json("sample", "seed", "--context", "a", "--tree", "2,2,1", "--rounds", "4000", "--seed", "3")
    assert again["outcomes"] == out["outcomes"]


def test_sample_tree_rounds_refused(cli):
    code, _, err = cli("sample", "seed", "--tree", "8,7", "--rounds", "10000000")
    assert code == 2 and "limit" in err


def test_pitfalls_tree(cli, cli_json):
    out = cli_json("pitfalls", "seed", "--context", "a", "--tree", "2,2", "--tokens", "2")
    got = {r["name"]: r for r in out["rules"]}
    assert set(got) == {"correct", "tree-no-residual-update", "top-k-tree-as-if-sampled"}
    assert got["correct"]["total_variation"] == "0" and got["correct"]["exact"]
    assert not got["tree-no-residual-update"]["exact"] and got["top-k-tree-as-if-sampled"]["drafts"] == "distinct"
    code, _, err = cli("pitfalls", "seed", "--tree", "2", "--rule", "always-accept")
    assert code == 2 and "'always-accept' does not apply to tree:2" in err and len(err.strip().splitlines()) == 1
