"""A page is its file plus one registry line (``parts.nav.PAGES``); a library call is cached with no hop.

A page added in a test (a tiny views file and a temporary registry entry, nothing else) is in the navigation,
in the Home page's list and opened by ``tests/apptest.open_page``; every list of pages the tests and benches
keep derives from the registry; ``parts.cached.compute`` caches any library function by its arguments' value.
"""
from __future__ import annotations

import sys

import pytest

from tests.apptest import PAGES, ROOT, open_page  # noqa: F401 (puts app/ on sys.path)
from parts import cached, nav  # noqa: E402
from specsim import exact, toy  # noqa: E402
from specsim.schemes import Chain  # noqa: E402

TINY_PAGE = '''import streamlit as st

from parts import toy_setup

st.title("A page added in a test")
model, context, gamma = toy_setup.pick("added", gamma=toy_setup.Gamma("γ up to", 1, 3, 2, name="top"))
st.markdown(f"context {' '.join(context)}, γ {gamma}")
'''


@pytest.fixture
def added_page(tmp_path, monkeypatch):
    """A tiny page in its own file and its one registry line, for this test only."""
    path = tmp_path / "added_page.py"
    path.write_text(TINY_PAGE, encoding="utf-8")
    info = nav.PageInfo(str(path), "Added page", ":material/add:", "Toy models", "a page added in a test")
    monkeypatch.setattr(nav, "PAGES", [*nav.PAGES, info])
    monkeypatch.setitem(nav.PAGE, info.name, info)
    return info


def test_a_page_added_to_the_registry_is_in_the_navigation_and_opens(added_page):
    home = open_page()
    listed = [link.label for link in home.get("page_link")]
    assert f"**{added_page.title}**" in listed  # the Home page's list of pages (a page not in st.navigation raises)
    at = open_page(added_page.path)
    assert not at.exception and [t.value for t in at.title] == ["A page added in a test"]
    assert at.selectbox(key="added-model").value == "seed" and at.number_input(key="added-top").value == 2
    at.number_input(key="added-top").set_value(3).run()
    assert at.markdown[-1].value == "context a, γ 3"  # the toy setup drew the model, its context and γ


def test_every_list_of_pages_derives_from_the_registry(added_page):
    sys.path.insert(0, str(ROOT))
    try:
        from tests import bench_layout
    finally:
        sys.path.pop(0)
    assert list(bench_layout.main_charts()) == [p.url for p in nav.PAGES]
    assert bench_layout.main_charts()["added_page"] is None and bench_layout.main_charts()[""] == nav.HOME.chart
    assert [p.name for p in nav.PAGES if p.url == ""] == ["home"] and added_page.url == "added_page"


def test_a_library_call_is_cached_by_its_arguments_value():
    seed = toy.load_model("seed")
    calls = []

    def round_of(model, context, scheme):
        calls.append((model.name, context, scheme.name))
        return exact.round_distribution(model, context, scheme)

    first = cached.compute(round_of, seed, ("a",), Chain(2))
    again = cached.compute(round_of, toy.loads_model(seed.to_json()), ("a",), Chain(2))  # the same model's JSON
    other = cached.compute(round_of, seed, ("a",), Chain(3))
    assert len(calls) == 2 and first.outcomes == again.outcomes == exact.round_distribution(seed, ("a",), 2).outcomes
    assert other.outcomes == exact.round_distribution(seed, ("a",), 3).outcomes != first.outcomes
