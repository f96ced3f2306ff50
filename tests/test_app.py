"""The Streamlit app through AppTest: every page renders, the interactions match the library."""
from __future__ import annotations

import json
import re
from fractions import Fraction

import pytest
from streamlit.testing.v1 import AppTest

from specsim import formulas, rule, sampling, toy

from specsim.labs import pitfalls
from specsim.cli import main as cli_main

from tests.apptest import ENTRY, ROOT, open_page, stepped, tables  # noqa: E402 (puts app/ on sys.path)
from sections import lesson_index  # noqa: E402  (the app's own modules: the lessons, the page list, ...)
from parts import nav  # noqa: E402
from parts import event_text  # noqa: E402
from parts import widgets  # noqa: E402

WEIGHTS = (ROOT / "specsim" / "gpt" / "weights" / "manifest.json").exists()
TOY_PAGES = [p.path for p in nav.PAGES if p.path != "views/tiny_gpt.py"]


def charts(at) -> list:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def texts(at) -> str:
    return "\n".join(m.value for m in at.markdown)


@pytest.mark.parametrize("path", TOY_PAGES)
def test_page_renders_without_exception(path):
    at = open_page(path)
    assert at.title, f"{path} has no title"
    assert not at.error, [e.value for e in at.error]
    if path not in ("views/lessons.py",):
        assert charts(at), f"{path} drew no plotly chart"


# -- round stepper ---------------------------------------------------------------

def library_events(seed=0, gamma=3, rounds=3):
    gen = sampling.generate(toy.load_model("seed"), ("a",), gamma, 40, seed=seed)
    return [r.events() for r in gen.rounds[:rounds]]


def shown(at):
    pl = at.session_state["stepper"]["player"]
    return pl.round, pl.event, pl.rounds


def test_next_step_follows_the_library_trace():
    at = open_page("views/stepper.py")
    expected = [e for r in library_events() for e in r]
    events_seen = []
    for k in range(len(expected)):
        j, e, rounds = shown(at)
        ev = rounds[j].events()[e]
        assert ev == expected[k]
        assert event_text.describe_event(ev, 3) in texts(at)
        events_seen.append(ev["kind"])
        at.button(key="stepper-next").click().run()
        assert not at.exception
    assert {"draft", "verify", "accept", "emit"} <= set(events_seen)
    assert [r.events() for r in shown(at)[2][:3]] == library_events()


def test_next_round_and_reset():
    at = open_page("views/stepper.py")
    lib = library_events()
    at.button(key="stepper-round").click().run()
    j, e, rounds = shown(at)
    assert (j, rounds[0].events()[e]) == (0, lib[0][-1])  # the end of round 1: its emit event
    at.button(key="stepper-round").click().run()
    j, e, rounds = shown(at)
    assert (j, rounds[1].events()[e]) == (1, lib[1][-1])
    assert "round 2 ·" in texts(at)
    at.button(key="stepper-reset").click().run()
    assert shown(at)[:2] == (0, 0)
    assert not at.exception


def test_seed_and_gamma_change_the_trace_like_the_library():
    at = stepped(seed=7, gamma=2, clicks=3, button="stepper-round")
    rounds = shown(at)[2]
    assert [r.events() for r in rounds[:3]] == library_events(seed=7, gamma=2)


def test_play_pause_toggles():
    at = open_page("views/stepper.py")
    at.button(key="stepper-play").click().run()
    assert at.session_state["stepper"]["playing"]
    assert any(b.label == "Pause" for b in at.button)
    at.button(key="stepper-play").click().run()
    assert not at.session_state["stepper"]["playing"]
    assert not at.exception


def test_home_replays_the_library_round():
    at = open_page(nav.PAGES[0].path)
    trace = sampling.trace_round(toy.load_model("seed"), ("a",), 3, seed=0)
    n = len(trace.events())
    at.slider(key="home-event").set_value(n).run()
    assert all(event_text.describe_event(ev, 3) in texts(at) for ev in trace.events())
    at.button(key="home-new").click().run()
    assert at.session_state["home-seed"] == 1 and not at.exception


# -- bad input -------------------------------------------------------------------

@pytest.mark.parametrize("content, reason", [
    (b"{not json", "not valid JSON"),
    (b'{"vocab": ["a"], "order": 1, "target": {"a": ["1/2"]}, "draft": {"a": ["1"]}}', "sums to 1/2"),
    (b"\xff\xfe", "not UTF-8"),
])
@pytest.mark.parametrize("page, key", [("views/exactness.py", "exact"), ("views/stepper.py", "stepper")])
def test_bad_upload_shows_an_error(page, key, content, reason):
    at = open_page(page)
    at.selectbox(key=f"{key}-model").set_value(widgets.UPLOAD).run()
    at.file_uploader(key=f"{key}-upload").upload("bad.json", content, "application/json").run()
    assert not at.exception
    assert any(reason in e.value for e in at.error), [e.value for e in at.error]


def test_good_upload_is_proved():
    at = open_page("views/exactness.py")
    at.selectbox(key="exact-model").set_value(widgets.UPLOAD).run()
    at.file_uploader(key="exact-upload").upload("m.json", toy.load_model("zeros").to_json().encode()).run()
    assert not at.exception and not at.error
    assert "speculative = target exactly" in at.success[0].value


@pytest.mark.parametrize("field, value, reason", [
    ("res-p", "3/5, x, 1/10", "not a number"),
    ("res-p", "3/5, 3/10", "2 entries but there are 3 tokens"),
    ("res-q", "1/2, 1/2, 1/2", "sums to 3/2"),
    ("res-tokens", "a b c d e f g", "between 1 and 6"),
])
def test_residual_explorer_rejects_bad_rows(field, value, reason):
    at = open_page("views/residual.py")
    at.text_input(key=field).set_value(value).run()
    assert not at.exception
    assert any(reason in e.value for e in at.error), [e.value for e in at.error]


def test_residual_explorer_renormalizes_and_shows_alpha():
    at = open_page("views/residual.py")
    assert at.metric[0].value == "9/10"  # alpha after "a" in the seed model
    at.text_input(key="res-q").set_value("1, 1, 1").run()
    assert at.error
    at.checkbox(key="res-norm").check().run()
    third = Fraction(1, 3)
    assert not at.error
    assert at.metric[0].value == str(rule.alpha([Fraction(3, 5), Fraction(3, 10), Fraction(1, 10)], [third] * 3))


# -- exactness, speedup, pitfalls, lessons -----------------------------------------

def test_exactness_shows_the_reference_round():
    at = open_page("views/exactness.py")
    values = {m.label: m.value for m in at.metric}
    assert values["distinct outcomes"] == "94"
    assert values["E[tokens per round], exact"] == "1659/500"
    assert "for all 12 (context, γ) pairs" in at.success[0].value


@pytest.mark.parametrize("alpha, cost", [(0.8, 0.05), (0.9, 0.05), (0.6, 0.2)])  # (0.3, 0.5): test_app_ux
def test_speedup_best_gamma_matches_formulas_and_cli(alpha, cost, capsys):
    at = open_page("views/speedup.py")
    at.slider(key="sp-alpha").set_value(alpha).run()
    at.slider(key="sp-cost").set_value(cost).run()
    assert not at.exception
    shown_gamma = int(next(m.value for m in at.metric if m.label == "best γ"))
    assert shown_gamma == formulas.best_gamma(Fraction(str(alpha)), Fraction(str(cost)))[0]
    assert cli_main(["best-gamma", "--alpha", str(alpha), "--cost", str(cost), "--json"]) == 0
    assert shown_gamma == json.loads(capsys.readouterr().out)["gamma"]


def test_pitfalls_lab_reports_the_library_tv():
    at = open_page("views/pitfalls.py")
    at.selectbox(key="pit-rule").set_value("always-accept").run()
    assert not at.exception
    result = pitfalls.evaluate(pitfalls.get("always-accept"), toy.load_model("seed"), ("a",), 2, 2)
    assert at.metric[0].value.split(" ≈ ")[0] == str(result.total_variation)  # long fractions get a decimal
    assert at.warning and not at.error  # a broken rule is flagged, not an input error
    at.selectbox(key="pit-rule").set_value("correct").run()
    assert at.metric[0].value == "0" and at.success


def test_lessons_step_in_order():
    at = open_page("views/lessons.py")
    lessons = lesson_index.lessons()
    assert len(lessons) >= 2, f"the shipped lessons are missing from {lesson_index.LESSONS_DIR}"
    assert at.selectbox(key="lesson-index").value == 0
    assert lessons[0][1] in texts(at) and lessons[1][1] not in texts(at)
    at.button(key="lesson-next").click().run()
    assert at.selectbox(key="lesson-index").value == 1 and not at.exception
    assert lessons[1][1] in texts(at)
    at.button(key="lesson-prev").click().run()
    assert at.selectbox(key="lesson-index").value == 0
    assert lessons[0][1] in texts(at)


def test_lessons_page_without_lessons_says_so(monkeypatch, tmp_path):
    monkeypatch.setattr(lesson_index, "LESSONS_DIR", tmp_path)
    at = open_page("views/lessons.py")
    assert any("No lessons yet" in i.value for i in at.info)


# -- tiny GPT --------------------------------------------------------------------

def test_tiny_gpt_page():
    assert WEIGHTS, "the shipped weights (specsim/gpt/weights/manifest.json) are missing"
    at = open_page("views/tiny_gpt.py", timeout=300)
    assert not at.error, [e.value for e in at.error]
    figs = charts(at)
    assert len(figs) >= 4
    metas = [f["layout"].get("meta") for f in figs]
    assert "placeholder" not in metas  # the place the chart held while generating now holds the chart
    assert float(at.metric[0].value.split(" ± ")[0]) > 0  # measured alpha (± its standard error)
    import torch
    speedup = next(m for m in at.metric if m.label == "speedup measured")
    shown = speedup.proto.help.replace("\\", "")  # the machine it was timed on, its name escaped (inert)
    assert f"torch {torch.__version__.split('+')[0]} with " in shown
    at.text_area(key="gpt-prompt").set_value("caf\u00e9")
    at.run()  # a change takes effect at once (no Generate button)
    assert not at.exception
    assert any("not in the vocabulary" in e.value for e in at.error)
    assert all(f["layout"].get("meta") != "placeholder" for f in charts(at))  # no "generating…" left behind


def test_lesson_from_the_url_and_its_page_links():
    lessons = lesson_index.lessons()
    assert len(lessons) >= 2, f"the shipped lessons are missing from {lesson_index.LESSONS_DIR}"
    at = AppTest.from_file(str(ENTRY), default_timeout=30)
    at.query_params["lesson"] = "2"
    at.run()
    at.switch_page("views/lessons.py").run()
    assert at.selectbox(key="lesson-index").value == 1 and not at.exception
    shown_links = [el.proto.page for el in at.get("page_link")]  # url paths, e.g. "stepper"
    # each page once: linked from the text (same tab) or, if the text does not, under "Try it"
    assert lesson_index.lesson_pages(*lessons[1]) and shown_links == lesson_index.lesson_pages(*lessons[1])


def test_unknown_lesson_number_is_an_error():
    at = AppTest.from_file(str(ENTRY), default_timeout=30)
    at.query_params["lesson"] = "999"
    at.run()
    at.switch_page("views/lessons.py").run()
    assert not at.exception
    assert any("There is no lesson '999'" in e.value for e in at.error), [e.value for e in at.error]


def test_tiny_gpt_page_runs_prompt_lookup_and_the_gallery():
    """Every drafter of the gallery is on the page: lookup (no model, no drafter cache) runs
    without an error, and the gallery's table lists the six drafters for both prompt sets."""
    at = open_page("views/tiny_gpt.py", timeout=300)
    at.selectbox(key="gpt-draft").set_value("lookup:3")
    at.text_area(key="gpt-prompt").set_value("x = 1\ny = 2\nx = 1\ny = 2\nx = ")
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert "measured" in " ".join(m.label for m in at.metric)
    hint = next(i.value for i in at.info if "Measure every drafter" in i.value)
    assert not re.search(r"\d|minute|second", hint), hint  # no typed duration (it said a minute for 10-20 s)
    at.slider(key="gallery-n").set_value(20)
    next(b for b in at.button if b.label == "Measure every drafter").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    shown = [t for t in tables(at) if "drafter" in t.columns]
    assert len(shown) == 2
    for table in shown:
        assert list(table["drafter"]) == ["distilled", "trained", "eagle", "lookup:3", "early-exit:2",
                                          "early-exit:2+head"]
        assert (table["tokens / pass"].astype(float) >= 1).all()
    assert sum(1 for f in charts(at) if any(t.get("type") == "contour" for t in f["data"])) == 2


def test_tiny_gpt_page_generates_with_lookup_from_the_default_prompt():
    """The default prompt gives prompt lookup rounds with no match (zero drafts): the page draws
    them (it raised ValueError from the per-draft chart before)."""
    at = open_page("views/tiny_gpt.py", timeout=300)
    at.selectbox(key="gpt-draft").set_value("lookup:3")
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert "measured" in " ".join(m.label for m in at.metric)
