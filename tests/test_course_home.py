"""Home as a first tour: one round of the reference toy model step by step, the uniform draw u
and the residual r told one step before they appear, the other ending (a bonus), then why the output is
exactly p as a picture; and two defects once seen (lesson titles cut, the phone order)."""
from __future__ import annotations

import json

from specsim import rule, sampling, toy
from specsim.views import course
from tests.apptest import open_page  # noqa: E402 (puts app/ on sys.path)

from parts import nav  # noqa: E402
from sections import home_tour, lesson_index  # noqa: E402

MODEL, CONTEXT, GAMMA = toy.load_model("seed"), ("a",), 3
TRACE = sampling.trace_round(MODEL, CONTEXT, GAMMA, seed=0)
EVENTS = [e["kind"] for e in TRACE.events()]


def main_meta(at) -> str:
    return json.loads(at.get("plotly_chart")[0].proto.spec)["layout"]["meta"]


def infos(at) -> str:
    return "\n".join(i.value for i in at.info)


def test_the_tour_starts_at_the_first_draft_and_steps_through_the_round():
    assert "accept" in EVENTS and "correct" in EVENTS, "the tour's round shows a test and a replacement"
    at = open_page("views/home.py")
    assert at.slider(key="home-event").value == 1 and main_meta(at) == "draft"
    for k, kind in enumerate(EVENTS[1:], start=2):
        at.button(key="home-next").click().run()
        assert at.slider(key="home-event").value == k and not at.exception
        want = {"weights": "verify", "emit": "emit"}.get(kind, kind)
        assert main_meta(at) == want, (k, kind)


def test_u_and_r_are_told_one_step_before_they_appear():
    first_test = next(k for k, e in enumerate(EVENTS) if e in ("accept", "reject"))
    correct = EVENTS.index("correct")
    at = open_page("views/home.py")
    for k in range(len(EVENTS)):
        at.slider(key="home-event").set_value(k + 1).run()
        told = infos(at)
        assert ("uniform draw u" in told) == (k == first_test - 1), k
        assert ("the residual r" in told.lower() and "Next" in told) == (k == correct - 1), k
    # the step where u first appears draws it (the ◆ trace "u"), the replacement step draws r
    at.slider(key="home-event").set_value(first_test + 1).run()
    assert any(t.get("name") == "u" for t in json.loads(at.get("plotly_chart")[0].proto.spec)["data"])
    at.slider(key="home-event").set_value(correct + 1).run()
    assert any(t.get("name") == "residual r" for t in json.loads(at.get("plotly_chart")[0].proto.spec)["data"])


def test_the_last_step_is_the_other_ending():
    other = home_tour.other_seed(MODEL, CONTEXT, GAMMA, 0, bonus=True)
    assert sampling.trace_round(MODEL, CONTEXT, GAMMA, seed=other).bonus is not None
    at = open_page("views/home.py")
    at.slider(key="home-event").set_value(len(EVENTS) + 1).run()
    assert main_meta(at) == "bonus" and not at.exception
    assert any("The other ending: a bonus" in m.value for m in at.markdown)
    assert at.button(key="home-next").disabled


def test_why_the_output_is_exactly_p_is_drawn_and_added_up():
    at = open_page("views/home.py")
    stack = next(json.loads(c.proto.spec) for c in at.get("plotly_chart")
                 if any(t.get("name") == "(1 − α)·r" for t in json.loads(c.proto.spec)["data"]))
    bars = {t["name"]: t["y"] for t in stack["data"] if t.get("type") == "bar"}
    p = MODEL.p(CONTEXT)
    for k in range(len(MODEL.vocab)):  # the two ways, stacked, reach p (floats of exact fractions: 1e-12)
        assert abs(bars["min(p, q)"][k] + bars["(1 − α)·r"][k] - float(p[k])) < 1e-12
    text = "\n".join(m.value for m in at.markdown)
    q = MODEL.q(CONTEXT)
    for x, kept, rest, total in zip(MODEL.vocab, rule.overlap(p, q), rule.excess(p, q), p):
        assert kept + rest == total
        assert f"**{x}**: {kept} drafted and kept + {rest} rejected, then drawn from the residual = {total}" in text


def test_where_to_go_lists_the_pages_in_the_sidebars_order():
    """Row by row, so that on a phone (columns stacked) the pages come in the sidebar's order."""
    at = open_page("views/home.py")
    titles = [el.proto.label.strip("*") for el in at.get("page_link") if el.proto.label.startswith("**")
              and el.proto.label.strip("*") in {p.title for p in nav.PAGES}]
    assert titles == [p.title for p in nav.PAGES if p != nav.HOME]


def test_the_core_lessons_are_linked_with_their_whole_titles_and_minutes():
    """Each core lesson's link carries its whole title and computed reading time; its label wraps instead of
    being cut (the browser test checks nothing is cut at 420 px)."""
    at = open_page("views/home.py")
    links = [el.proto for el in at.get("page_link") if el.proto.page == "lessons" and "lesson=" in el.proto.query_string]
    entries = lesson_index.course_entries()
    core = [(k, les) for k, (_, les) in enumerate(entries) if les.number in course.PATHS["core"]]
    assert [link.query_string for link in links] == [f"lesson={k + 1}" for k, _ in core]
    assert [link.label for link in links] == [f"{les.number}. {les.title} · {course.minutes_text(les.minutes)}"
                                              for _, les in core]
