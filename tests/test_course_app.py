"""The Lessons page as the course platform: the course map and its paths, live figures with
sliders in place of the figure lines, check-yourself questions that answer back, Going deeper folded,
links by the app's address; and the Glossary page. Driven with AppTest (tests/apptest.py)."""
from __future__ import annotations

import json

import pytest

from specsim.plots import lesson_figs
from specsim.views import course, glossary
from tests.apptest import open_page  # noqa: E402 (puts app/ on sys.path)

from sections import lesson_body, lesson_index  # noqa: E402  (the app's own modules)

ENTRIES = course.load(lesson_index.LESSONS_DIR)


def shown(number: int):
    """The Lessons page opened on lesson ``number`` (as a link ?lesson=N does)."""
    return open_page("views/lessons.py", {"lesson": str(number)})


def charts(at) -> list:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def illustrated() -> course.Lesson:
    """A lesson whose figures are all registered and whose checks are well formed, with a slider and a
    number check if any has them (the course's core lessons all have figures and checks)."""
    ok = [les for _, les in ENTRIES if les.figures and les.checks and not course.problems(les)
          and all(f.name in lesson_figs.registry({les.number}) for f in les.figures)]
    assert ok, "no lesson has both registered figures and well-formed checks yet"
    sliding = [les for les in ok if any(lesson_figs.registry({les.number})[f.name].controls for f in les.figures)]
    return (sliding or ok)[0]


def test_the_course_map_lists_every_path_with_computed_minutes():
    at = shown(1)
    label = next(e.label for e in at.expander if e.label.startswith("Course map"))
    info = [les for _, les in ENTRIES]
    assert course.minutes_text(course.path_minutes(info, "core")) in label
    table = next(m.value for m in at.markdown if "| # | lesson | reading | needs |" in m.value)
    for path in course.PATHS:
        assert course.PATH_NAMES[path] in table
    for les in info:
        bold = course.path_of(les) == "core"
        name = f"**{les.title}**" if bold else les.title
        mark = "▶ " if les.number == 1 else ""
        assert (f"| {mark}{les.number} | {name} | {course.minutes_text(les.minutes)} | {course.needs_text(les)} |"
                in table), les.number  # the lesson shown marked, the core path's in bold


def test_a_path_picks_the_lessons_and_next_stays_on_it():
    at = shown(1)
    assert at.radio(key="lesson-path").value == "all"  # every lesson in order, unless a path is picked
    at.radio(key="lesson-path").set_value("engineer").run()
    first = course.PATHS["engineer"][0]
    assert at.selectbox(key="lesson-index").value == first - 1 and not at.exception
    at.button(key="lesson-next").click().run()
    assert at.selectbox(key="lesson-index").value == course.PATHS["engineer"][1] - 1
    progress = at.get("progress")[0].proto.text
    assert f"lesson {course.PATHS['engineer'][1]} of {len(ENTRIES)}" in progress and "2 of" in progress


def test_a_lesson_asked_by_number_brings_its_path():
    at = shown(1)
    at.radio(key="lesson-path").set_value("core").run()
    number = course.PATHS["researcher"][0]
    at.query_params["lesson"] = str(number)  # a link to a lesson that is not on the core path
    at.run()
    assert at.radio(key="lesson-path").value == "researcher"
    assert at.selectbox(key="lesson-index").value == number - 1 and not at.exception


def test_each_figure_line_is_the_live_figure_with_its_caption():
    les = illustrated()
    at = shown(les.number)
    figures = lesson_figs.registry({les.number})
    drawn = [lesson_figs.figure_hash(spec) for spec in charts(at)]
    assert drawn == [lesson_figs.figure_hash(figures[f.name].figure()) for f in les.figures]
    captions = [c.value for c in at.caption]
    assert all(f.alt in captions for f in les.figures)
    assert not at.error


def test_a_figures_slider_redraws_it_and_keeps_its_value():
    les = illustrated()
    figures = lesson_figs.registry({les.number})
    ref = next((f for f in les.figures if figures[f.name].controls), None)
    if ref is None:
        pytest.skip("no lesson with a slider figure yet")
    control = figures[ref.name].controls[0]
    at = shown(les.number)
    key = f"fig-{ref.name}-{control.name}"
    value = control.high if control.high != control.default else control.low
    value = int(value) if lesson_body.whole(control) else float(value)
    at.slider(key=key).set_value(value).run()
    assert not at.exception and not at.error
    want = lesson_figs.figure_hash(figures[ref.name].figure(**{control.name: value}))
    assert want in [lesson_figs.figure_hash(spec) for spec in charts(at)]
    at.button(key="lesson-next").click().run()
    at.button(key="lesson-prev").click().run()  # away and back: the slider's value is still there
    assert at.slider(key=key).value == value


def test_a_figure_that_fails_to_draw_is_one_line(monkeypatch):
    les = illustrated()

    def broken(**_):
        raise ZeroDivisionError("division by zero\nsecond line")

    planted = {f.name: lesson_figs.LessonFigure(f.name, broken) for f in les.figures}
    monkeypatch.setattr(lesson_body, "figures_of", lambda lesson: (planted, ""))
    at = shown(les.number)
    assert not at.exception
    errors = [e.value for e in at.error]
    assert len(errors) == len(les.figures)
    assert all("could not be drawn: ZeroDivisionError: division by zero" in e and "\n" not in e for e in errors)


def test_an_unregistered_figure_is_one_line(monkeypatch):
    les = illustrated()
    monkeypatch.setattr(lesson_body, "figures_of", lambda lesson: ({}, ""))
    at = shown(les.number)
    assert not at.exception
    assert any(f"Figure {les.figures[0].name} cannot be drawn" in e.value for e in at.error)


def test_a_check_says_right_or_wrong_with_the_reason():
    les = illustrated()
    at = shown(les.number)
    for k, item in enumerate(les.checks, 1):
        key = f"check-{les.number}-{k}"
        submit = at.button(key=f"FormSubmitter:{key}-form-Check")
        if item.kind == "choice":
            wrong = next(o for o in item.options if o != item.expected)
            at.radio(key=key).set_value(wrong)
            submit.click().run()
            assert any("Not quite" in e.value for e in at.error)
            at.radio(key=key).set_value(item.expected)
        else:
            at.text_input(key=key).set_value(str(item.expected + 1))
            submit.click().run()
            assert any("Not quite" in e.value for e in at.error)
            value = item.expected
            typed = f"{value.numerator}/{value.denominator}" if hasattr(value, "denominator") else repr(value)
            at.text_input(key=key).set_value(typed)
        at.button(key=f"FormSubmitter:{key}-form-Check").click().run()
        assert not at.exception
        assert any(s.value.startswith("Right") for s in at.success), (item.question, [e.value for e in at.error])
        if item.reason:
            first = item.reason.split("\n")[0][:30]
            assert any(first in m.value for m in at.markdown), "the reason is shown"


def test_a_number_check_takes_a_decimal_and_refuses_words():
    les = next((les for _, les in ENTRIES if any(c.kind == "number" and c.expected is not None for c in les.checks)),
               None)
    assert les is not None, "no lesson asks a number yet"
    k, item = next((k, c) for k, c in enumerate(les.checks, 1) if c.kind == "number")
    at = shown(les.number)
    key = f"check-{les.number}-{k}"
    at.text_input(key=key).set_value("nine tenths")
    at.button(key=f"FormSubmitter:{key}-form-Check").click().run()
    assert any("Type a number" in w.value for w in at.warning) and not at.exception
    at.text_input(key=key).set_value(f"{float(item.expected):.6f}")
    at.button(key=f"FormSubmitter:{key}-form-Check").click().run()
    assert any(s.value.startswith("Right") for s in at.success)


def test_going_deeper_is_folded():
    les = next((les for path, les in ENTRIES if "\n## Going deeper" in path.read_text(encoding="utf-8")), None)
    assert les is not None, "no lesson has a Going deeper part yet"
    at = shown(les.number)
    deeper = [e for e in at.expander if e.label.startswith("Going deeper")]
    assert deeper and not deeper[0].proto.expanded


def test_a_link_by_the_apps_address_is_an_in_app_link():
    text = "See [the Speedup page](http://localhost:8501/speedup?alpha=0.6&c=0.2) and [Home](http://localhost:8501/)."
    links = lesson_index.internal_links(text)
    assert links == [("the Speedup page", "speedup?alpha=0.6&c=0.2"), ("Home", "")]
    assert lesson_index.link_page(links[0][1]).path == "views/speedup.py"
    assert lesson_index.link_page(links[1][1]).path == "views/home.py"
    assert lesson_index.link_params(links[0][1]) == {"alpha": "0.6", "c": "0.2"}
    assert lesson_index.internal_links("[old](/stepper?seed=3)") == [("old", "stepper?seed=3")]


def test_a_lessons_pieces_are_cut_where_the_page_draws_them():
    text = ("# 4. T\n<!-- course: core; needs: 2 -->\n\n## What you will learn\n\nWords.\n\n"
            "![A fig](figures/04-x.svg)\n\n<details><summary>Answer</summary>\n\nfolded\n\n</details>\n\n"
            "## Check yourself\n\nIntro.\n\n### 1. Q?\n\n## Going deeper\n\ndeep\n\n## References\n\nR (2023).\n")
    kinds = [seg[0] for seg in lesson_index.split_lesson(lesson_index.lesson_parts(text)["taught"])]
    assert kinds == ["text", "figure", "answer"]
    assert "<!--" not in "".join(str(seg[1]) for seg in lesson_index.split_lesson(text))
    parts = lesson_index.lesson_parts(text)
    assert parts["check"].strip() == "## Check yourself\n\nIntro." and parts["deeper"].startswith("## Going deeper")
    assert parts["rest"].startswith("## References")


# ---- the glossary ------------------------------------------------------------------------------------

def test_the_glossary_page_defines_every_symbol_once():
    at = open_page("views/glossary.py")
    text = "\n".join(m.value for m in at.markdown)
    for symbol in glossary.ORDER:
        entry = glossary.GLOSSARY[symbol]
        assert text.count(entry.text) == 1, symbol


@pytest.mark.parametrize("page, params", [("views/home.py", {}), ("views/lessons.py", {"lesson": "9"}),
                                          ("views/lessons.py", {"lesson": "3"}), ("views/residual.py", {}),
                                          ("views/speedup.py", {}), ("views/stepper.py", {})])
def test_symbols_in_widget_labels_have_the_glossarys_hover_text(page, params):
    """Where a page's widget label names a glossary symbol (γ, α, c, ...), its hover text is the glossary's
    definition (written once, in specsim.views.glossary)."""
    at = open_page(page, params)
    labelled = [w for kind in ("slider", "number_input", "select_slider", "selectbox", "text_input", "radio")
                for w in at.get(kind) if glossary.symbols_in(w.label)]
    missing = [w.label for w in labelled if glossary.label_help(w.label) not in (w.help or "")]
    assert not missing, f"{page}: labels naming a symbol without its definition: {missing}"
