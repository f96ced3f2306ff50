"""The rule workbench page through AppTest: its numbers are the library's, its exact point is marked."""
from __future__ import annotations

import json
from fractions import Fraction

from streamlit.testing.v1 import AppTest

from specsim import toy

from specsim.labs import family

from tests.apptest import open_page  # noqa: E402 (puts app/ on sys.path)
from parts import nav  # noqa: E402
from parts import widgets  # noqa: E402

PAGE = "views/workbench.py"


def open_workbench() -> AppTest:
    return open_page(PAGE)


def metric(at, label_start: str) -> str:
    return next(m.value for m in at.metric if m.label.startswith(label_start))


def test_workbench_is_listed_once():
    assert [p.path for p in nav.PAGES].count(PAGE) == 1


def test_default_is_the_real_rule_and_exact():
    at = open_workbench()
    assert at.title[0].value == "Rule workbench"
    want = family.evaluate(family.RuleFamily(), toy.load_model("seed"), ("a",), 2, 2)
    assert metric(at, "TV to the target") == "0"
    assert metric(at, "E[tokens per round]") == widgets.fmt(want["expected_tokens"])
    assert metric(at, "still exact?").startswith("yes")
    assert any("one exact point" in s.value for s in at.success)
    fig = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert [t.get("name") for t in fig["data"]][1:] == ["exact point (β = 1, λ = 1)", "your rule"]


def test_sliders_change_the_numbers_like_the_library():
    at = open_workbench()
    at.select_slider(key="wb-beta").set_value(2).run()
    at.select_slider(key="wb-lam").set_value(Fraction(1, 2)).run()
    at.number_input(key="wb-gamma").set_value(1).run()
    assert not at.exception, [e.value for e in at.exception]
    want = family.evaluate(family.RuleFamily(2, Fraction(1, 2)), toy.load_model("seed"), ("a",), 1, 2)
    assert want["total_variation"] > 0
    assert metric(at, "TV to the target") == widgets.fmt(want["total_variation"])
    assert metric(at, "E[tokens per round]") == widgets.fmt(want["expected_tokens"])
    assert metric(at, "still exact?").startswith("no")
    assert at.warning


def test_no_bonus_is_exact_but_slower_and_comparison_changes_nothing():
    at = open_workbench()
    tv_before = metric(at, "TV to the target")
    at.radio(key="wb-cmp").set_value("≤").run()
    assert metric(at, "TV to the target") == tv_before == "0"
    at.toggle(key="wb-bonus").set_value(False).run()
    want = family.evaluate(family.RuleFamily(bonus=False), toy.load_model("seed"), ("a",), 2, 2)
    assert metric(at, "TV to the target") == "0"
    assert metric(at, "E[tokens per round]") == widgets.fmt(want["expected_tokens"])
    assert any("without the bonus" in i.value for i in at.info)


def test_an_exact_point_other_than_the_rule_is_described_as_itself():
    """zeros after "z" has p == q, so β = 2 with the bonus is exact there: the note names β = 2, not the rule."""
    at = open_workbench()
    at.selectbox(key="wb-model").set_value("zeros").run()
    at.selectbox(key="wb-ctx").set_value(("z",)).run()
    at.number_input(key="wb-gamma").set_value(1).run()
    at.number_input(key="wb-n").set_value(1).run()
    at.select_slider(key="wb-beta").set_value(2).run()
    assert not at.exception, [e.value for e in at.exception]
    assert metric(at, "TV to the target") == "0"
    note = " ".join(i.value for i in at.info)
    assert "β = 2" in note and "bonus on" in note and "without the bonus" not in note
