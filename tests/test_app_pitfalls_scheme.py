"""The Pitfalls page on a scheme (``?scheme=``): the rules that apply to a tree, judged as the library
judges them, and refused by the same guard as ``specsim pitfalls`` (``pitfalls.check_lab``)."""
from __future__ import annotations

from fractions import Fraction as F

import pytest
from streamlit.testing.v1 import AppTest

from specsim import bounds, toy
from specsim.labs import pitfalls
from specsim.schemes import Chain, Tree

from tests.apptest import open_page  # noqa: E402 (puts app/ on sys.path)
from parts import widgets  # noqa: E402

SEED = toy.load_model("seed")
VOCAB = [f"t{i}" for i in range(12)]
UNIFORM12 = toy.model_from_dict({"name": "uniform12", "vocab": VOCAB, "order": 1,
                                 "target": {v: [F(1, 12)] * 12 for v in VOCAB},
                                 "draft": {v: [F(1, 12)] * 12 for v in VOCAB}})


def open_pitfalls(params=None) -> AppTest:
    return open_page("views/pitfalls.py", params, timeout=120)


def test_a_tree_offers_the_tree_rules_and_judges_them_as_the_library_does():
    at = open_pitfalls({"scheme": "tree:2,1"})
    table = pitfalls.applicable(Tree((2, 1)))
    assert set(at.selectbox(key="pit-rule").options) == {pitfalls.DESCRIPTIONS.get(n, {}).get("title") or n
                                                         for n in table}
    lab = {r.name: r for r in pitfalls.run_lab(SEED, ("a",), Tree((2, 1)), 2)}
    for name in table:
        at.selectbox(key="pit-rule").set_value(name).run()
        assert not at.exception and not at.error
        assert at.metric[0].value.split(" ≈")[0] == widgets.fmt(lab[name].total_variation)
    assert lab["tree-no-residual-update"].total_variation > 0 == lab["correct"].total_variation


@pytest.mark.parametrize("scheme, refused", [(Chain(1), False), (Chain(2), True)])
def test_the_page_refuses_exactly_what_the_cli_refuses(scheme, refused):
    """A 12-token model: chain:2 with N = 2 is 17 rules' joints, over the limit (the page once counted one)."""
    at = open_pitfalls({"scheme": scheme.name})
    at.selectbox(key="pit-model").set_value(widgets.UPLOAD).run()
    at.file_uploader(key="pit-upload").upload("u12.json", UNIFORM12.to_json().encode(), "application/json").run()
    assert not at.exception
    errors = [e.value for e in at.error]
    try:
        pitfalls.check_lab(UNIFORM12, scheme, 2, limit=bounds.LIMITS.interactive_work)
        want = []
    except bounds.WorkRefused as e:
        want = [str(e)]
    assert (want != []) == refused and errors == want


def test_every_family_the_lab_can_break_is_offered_and_a_dynamic_tree_is_judged_as_the_library_does():
    """The page offers the families with a pitfall beyond the correct rule (``pitfalls.families``), a
    dynamic tree among them: its top-k children verified as if sampled are biased, as point masses exact."""
    from specsim.schemes import parse

    at = open_pitfalls({"scheme": "tree:dynamic,budget=4,depth=2,topk=2"})
    assert not at.exception and not at.error
    assert len(at.sidebar.radio(key="pit-kind").options) == len(pitfalls.families()) == 3  # chain, tree, dynamic
    dynamic = parse("tree:dynamic,budget=4,depth=2,topk=2")
    lab = {r.name: r for r in pitfalls.run_lab(SEED, ("a",), dynamic, 2)}
    at.selectbox(key="pit-rule").set_value("top-k-tree-as-if-sampled").run()
    assert not at.exception and not at.error
    assert at.metric[0].value.split(" ≈")[0] == widgets.fmt(lab["top-k-tree-as-if-sampled"].total_variation)
    assert lab["top-k-tree-as-if-sampled"].total_variation > 0 == lab["correct"].total_variation
