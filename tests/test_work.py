"""The work bound sits next to the computation: the CLI and the app ask one function for one computation.

``pitfalls.check_lab`` bounds ``pitfalls.run_lab`` and ``compare.check`` bounds ``compare.compare``; the
``specsim pitfalls`` / ``specsim compare`` commands and the Pitfalls / Trees pages must ask them, so they
estimate the same work for the same lab (they once differed ~17x) and a comparison of trees is priced
as trees. Each test records the estimate every caller gets and compares them.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from specsim import bounds
from specsim.labs import compare, pitfalls
from specsim.schemes import Chain, Tree
from specsim.toy import load_model

ROOT = Path(__file__).resolve().parent.parent
SEED = load_model("seed")


def _record(monkeypatch, module, name) -> list:
    """Wrap ``module.name``; each call appends the list of work figures ``bounds.check`` saw during it."""
    real, calls = getattr(module, name), []
    real_check = bounds.check

    def spy(*args, **kwargs):
        seen = []

        def check(work, *a, **k):
            seen.append(work)
            return real_check(work, *a, **k)
        monkeypatch.setattr(bounds, "check", check)
        try:
            return real(*args, **kwargs)
        finally:
            monkeypatch.setattr(bounds, "check", real_check)
            calls.append(seen)
    monkeypatch.setattr(module, name, spy)
    return calls


def _page(path: str) -> AppTest:
    sys.path.insert(0, str(ROOT / "app"))
    from parts import nav
    at = AppTest.from_file(str(ROOT / "app" / "streamlit_app.py"), default_timeout=60).run()
    if path != nav.PAGES[0].path:
        at.switch_page(path).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


# -- the library: one estimate, one-line refusals --------------------------------------------------
def test_check_lab_prices_every_rule_it_runs():
    one = bounds.exact_work(SEED, Chain(2), 2, rounds=1, rules=1, power=2)
    every = bounds.exact_work(SEED, Chain(2), 2, rounds=1, rules=len(pitfalls.PITFALLS), power=2)
    assert every == pytest.approx(len(pitfalls.PITFALLS) * one, rel=1e-12)  # the page once priced it as one rule
    limit = int((one + every) / 2)
    pitfalls.check_lab(SEED, Chain(2), 2, names=["always-accept"], limit=limit)
    with pytest.raises(bounds.WorkRefused) as e:
        pitfalls.check_lab(SEED, Chain(2), 2, limit=limit)
    assert "17 rules" in str(e.value) and "lower γ or N" in str(e.value) and "\n" not in str(e.value)


def test_a_tree_lab_runs_the_tree_rules_and_prices_them():
    cases = pitfalls.cases(Tree((2, 1)))
    assert [(p.name, s.name) for p, s in cases] == [("correct", "tree:2,1"), ("tree-no-residual-update", "tree:2,1"),
                                                   ("top-k-tree-as-if-sampled", "tree:2,1:distinct")]
    with pytest.raises(ValueError, match="rule 'always-accept' does not apply to tree:2,1") as e:
        pitfalls.check_lab(SEED, Tree((2, 1)), 1, names=["always-accept"])
    assert "\n" not in str(e.value)
    with pytest.raises(bounds.WorkRefused, match="tree:2,2,2,2,1.*3 rules.*lower the widths, the depth or N"):
        pitfalls.check_lab(SEED, Tree((2, 2, 2, 2, 1)), 8)
    assert [p.name for p, _ in pitfalls.cases("block:3")] == ["correct"]  # block verification has its own rule


# -- the CLI and the app call the same function ---------------------------------------------------
def test_the_pitfalls_command_and_page_estimate_the_same_lab(cli, monkeypatch):
    calls = _record(monkeypatch, pitfalls, "check_lab")
    code, _, err = cli("pitfalls", "seed", "--context", "a", "--gamma", "2", "--tokens", "2")
    assert code == 0, err
    assert len(calls) == 1, "specsim pitfalls must ask pitfalls.check_lab"
    _page("views/pitfalls.py")  # its defaults: the seed model, γ = 2, N = 2
    assert len(calls) >= 2, "the Pitfalls page must ask pitfalls.check_lab"
    # the page's guard comes first, with the same work figures: the same verdict under the same limit (its
    # cached computations may ask again when they are not cached yet, for the whole lab or one rule)
    assert calls[0] == calls[1]


def test_the_compare_command_and_the_trees_page_estimate_the_same_comparison(cli, monkeypatch):
    calls = _record(monkeypatch, compare, "check")
    code, _, err = cli("compare", "seed", "--context", "a", "--budget", "3")
    assert code == 0, err
    assert len(calls) == 1, "specsim compare must ask compare.check"
    at = _page("views/trees.py")
    at.slider(key="trees-budget").set_value(3).run()
    budget_calls = [c for c in calls[1:] if c == calls[0]]
    assert budget_calls, "the Trees page must ask compare.check for the same comparison"
