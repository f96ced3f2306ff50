"""The course's contract, checked on every lesson: metadata, paths and
reading time, figures and their SVGs, check-yourself questions, links to the app, the course map.

The numbers themselves are checked by the lessons' doctests (``python -m pytest -q lessons/NN-*.md``);
this file checks the shape that the Lessons page and a reader on GitHub rely on. No browser: a
figure's SVG is compared with the code through the hash its comment carries.
"""
from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path

import pytest

from specsim.plots import lesson_figs
from specsim.views import course

ROOT = Path(__file__).resolve().parent.parent
LESSONS = ROOT / "lessons"
ENTRIES = course.load(LESSONS)
BY_NUMBER = {les.number: les for _, les in ENTRIES}
FILES = {les.number: path for path, les in ENTRIES}
CORE = [les for _, les in ENTRIES if les.number in course.PATHS["core"]]
REGENERATE_MAP = "python -m specsim.views.course --write"


@pytest.fixture(scope="module")
def figures():
    return lesson_figs.registry()


def lesson_ids(items):
    return [f"{les.number:02d}" for les in items]


# ---- metadata, paths, reading time ----------------------------------------------------------------

def test_the_paths_cover_every_lesson_once():
    numbers = [n for path in course.PATHS.values() for n in path]
    assert len(numbers) == len(set(numbers)), "a lesson on two paths"
    assert set(numbers) <= set(BY_NUMBER), "a fixed path names no lesson"
    assert all(course.path_of(les) in course.PATHS for les in BY_NUMBER.values()), "a lesson on no path"
    for name, fixed in course.PATHS.items():  # a lesson the contract places stays there; later ones join by metadata
        assert all(course.path_of(BY_NUMBER[n]) == name for n in fixed)


@pytest.mark.parametrize("lesson", [les for _, les in ENTRIES], ids=lesson_ids([les for _, les in ENTRIES]))
def test_metadata_line_is_present_and_valid(lesson):
    """``<!-- course: PATH; needs: N, M -->`` under the title, on the path the course puts it on, needing
    only earlier lessons."""
    found = [p for p in course.problems(lesson, known=set(BY_NUMBER)) if "check" not in p]
    assert not found, "\n".join(found)


def test_the_core_path_reads_in_ninety_minutes_at_most():
    total = course.path_minutes(CORE, "core")
    detail = ", ".join(f"{les.number}: {float(les.minutes):.1f}" for les in CORE)
    assert total <= course.CORE_MINUTES, (
        f"the core path's taught prose takes {float(total):.1f} minutes ({detail}); move lab notebooks and long "
        f"derivations under '## Going deeper'")


@pytest.mark.parametrize("path", list(FILES.values()), ids=lambda p: p.stem[:2])
def test_sections_come_in_the_course_order(path):
    order = ["What you will learn", "Check yourself", "Going deeper", "Exercises", "References"]
    heads = [h for h in course.headings(path.read_text(encoding="utf-8")) if h in order]
    assert heads == sorted(set(heads), key=order.index), f"sections out of order: {heads}"
    assert heads and heads[0] == "What you will learn"


# ---- figures -------------------------------------------------------------------------------------

@pytest.mark.parametrize("number", sorted(FILES), ids=lambda n: f"{n:02d}")
def test_every_figure_names_a_registered_figure_of_its_lesson(number, figures):
    text = FILES[number].read_text(encoding="utf-8")
    for fig in course.figures(text):
        assert fig.name in figures, (f"{FILES[number].name}: figures/{fig.name}.svg is not a registered "
                                     f"LessonFigure (specsim/plots/lesson_figs/l{number:02d}.py, list FIGURES)")
        assert figures[fig.name].lesson == number, f"{fig.name} is lesson {figures[fig.name].lesson}'s figure"
        assert fig.alt, f"{fig.name}: an image without its text (the caption)"
    inline = [line for line in text.splitlines() if course.FIGURE.search(line) and not course.FIGURE_LINE.match(line)]
    assert not inline, f"a figure not on a line of its own: {inline[0]!r}"


@pytest.mark.parametrize("lesson", [les for _, les in ENTRIES], ids=lesson_ids([les for _, les in ENTRIES]))
def test_every_lesson_has_a_figure_and_every_core_lesson_two(lesson):
    least = 2 if lesson.number in course.PATHS["core"] else 1
    assert len(lesson.figures) >= least, f"lesson {lesson.number} shows {len(lesson.figures)} figure(s), " \
                                         f"at least {least} wanted"


def test_every_registered_figure_is_used_by_exactly_one_lesson(figures):
    uses = {}
    for number, path in FILES.items():
        for fig in course.figures(path.read_text(encoding="utf-8")):
            uses.setdefault(fig.name, []).append(number)
    unused = sorted(set(figures) - set(uses))
    assert not unused, f"registered but shown by no lesson: {unused}"
    twice = {name: n for name, n in uses.items() if len(n) > 1}
    assert not twice, f"shown more than once: {twice}"


def test_every_svg_in_lessons_figures_is_a_registered_figure(figures):
    orphans = sorted(p.name for p in lesson_figs.FIGURES_DIR.glob("*.svg") if p.stem not in figures)
    assert not orphans, f"SVGs no figure draws (delete them): {orphans}"


@pytest.mark.parametrize("name", sorted(lesson_figs.registry()))
def test_each_figure_svg_is_what_the_code_draws_now(name, figures):
    path = lesson_figs.svg_path(name)
    assert path.exists(), f"{path.relative_to(ROOT)} is missing: run `{lesson_figs.REGENERATE} {name}`"
    text = path.read_text(encoding="utf-8")
    assert text.lstrip().startswith("<!--") and "<svg" in text, f"{path.name} is not a generated SVG"
    stamped = lesson_figs.svg_hash(text)
    assert stamped, f"{path.name} carries no figure hash: run `{lesson_figs.REGENERATE} {name}`"
    now = lesson_figs.figure_hash(figures[name].figure())
    assert stamped == now, (f"{path.relative_to(ROOT)} is stale (the code now draws another figure): "
                            f"run `{lesson_figs.REGENERATE} {name}` and commit the SVG")


# ---- check yourself ------------------------------------------------------------------------------

@pytest.mark.parametrize("lesson", CORE, ids=lesson_ids(CORE))
def test_every_core_lesson_asks_two_to_four_well_formed_questions(lesson):
    assert lesson.has_check_section, f"lesson {lesson.number}: no '## Check yourself' section"
    found = [p for p in course.problems(lesson) if "check" in p]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("lesson", [les for _, les in ENTRIES if les.checks and les.number not in course.PATHS["core"]],
                         ids=lesson_ids([les for _, les in ENTRIES if les.checks and les.number not in
                                         course.PATHS["core"]]))
def test_optional_checks_are_well_formed_too(lesson):
    found = [p for p in course.problems(lesson) if ", check " in p]
    assert not found, "\n".join(found)


# ---- links ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("path", list(FILES.values()), ids=lambda p: p.stem[:2])
def test_links_to_the_app_use_its_address(path):
    """``[the Speedup page](http://localhost:8501/speedup?...)`` works from GitHub and editors; ``(/speedup)``
    does not (the Lessons page turns both into in-app links)."""
    old = re.findall(r"\]\((/[a-z_]*[^)\s]*)\)", path.read_text(encoding="utf-8"))
    assert not old, f"{path.name}: app links without the app's address: {old[:3]} -> {course.APP_URL}..."


# ---- the course map ------------------------------------------------------------------------------

def test_lessons_readme_is_the_course_map_the_metadata_gives():
    readme = LESSONS / "README.md"
    assert readme.exists(), f"lessons/README.md is missing: run `{REGENERATE_MAP}`"
    assert readme.read_text(encoding="utf-8") == course.course_map(ENTRIES), (
        f"lessons/README.md is not what the lessons' metadata gives: run `{REGENERATE_MAP}`")


def test_the_course_map_lists_each_path_with_its_computed_minutes():
    text = course.course_map(ENTRIES)
    for path in course.PATHS:
        numbers = [les.number for les in course.path_lessons([les for _, les in ENTRIES], path)]
        minutes = course.minutes_text(course.path_minutes([les for _, les in ENTRIES], path))
        assert f"## {course.PATH_NAMES[path]}: {len(numbers)} lessons, {minutes}" in text
        for n in numbers:
            les = BY_NUMBER[n]
            assert f"| [{n}. {les.title}]({FILES[n].name}) | {course.minutes_text(les.minutes)} | " in text
    assert text.index("Core path") < text.index("Engineer's path") < text.index("Researcher's path")
    assert text.count(course.APP_URL.rstrip("/")) == 1, "the app's address is said once"


def test_the_top_readme_points_to_the_course():
    top = (ROOT / "README.md").read_text(encoding="utf-8")
    start = top.index("## Learn it: start here")
    block = top[start:top.index("\n## ", start + 1)]
    assert start < len(top) // 10, "the 'Learn it' block sits near the top"
    assert "(lessons/README.md)" in block and "core path" in block
    listed = re.search(r"core path\*\* \(lessons ([\d, and]+?):", block.replace("\n", " "))
    assert listed, "the block names the core path's lessons"
    assert [int(n) for n in re.findall(r"\d+", listed.group(1))] == list(course.PATHS["core"])
    assert not re.search(r"\d+\s*min", block), "no typed minutes: the course map computes them"


# ---- the parsing itself, on planted text -----------------------------------------------------------

PLANTED = '''# 4. A planted lesson
<!-- course: core; needs: 2, 3 -->

## What you will learn

One two three.

![Four five](figures/04-x.svg)

```python
>>> 1 + 1
2

```

#### Answer

hidden hidden hidden

<details><summary>Answer</summary>
folded folded
</details>

<!-- a comment
over lines -->

## Check yourself

### 1. Six?

<!-- check: number -->

<details><summary>Answer</summary>

```python
>>> from fractions import Fraction
>>> Fraction(9, 10)
Fraction(9, 10)

```

Because nine tenths.

</details>

### 2. Up or down?

<!-- check: choice: up | down -->

<details><summary>Answer</summary>

```python
>>> "down"
'down'

```

Down it goes.

</details>

## Going deeper

deep deep deep deep

## Exercises

### Exercise 1

ex ex

#### Answer

ans

## References

Someone (2023).
'''


def test_the_taught_part_leaves_out_code_answers_comments_and_the_appendix():
    words = course.count_words(course.taught_prose(PLANTED))
    # "4 A planted lesson" 4, "What you will learn" 4, "One two three" 3, "Four five" 2, "Check yourself" 2,
    # "1 Six" 2, "2 Up or down" 4
    assert words == 4 + 4 + 3 + 2 + 2 + 2 + 4
    assert course.parse(PLANTED).minutes == Fraction(words, course.WORDS_PER_MINUTE)


def test_a_planted_lesson_parses():
    les = course.parse(PLANTED)
    assert (les.number, les.title, les.meta) == (4, "A planted lesson", course.Meta("core", (2, 3)))
    assert les.figures == (course.Figure("Four five", "04-x"),)
    assert [(c.question, c.kind, c.options, c.expected) for c in les.checks] == [
        ("Six?", "number", (), Fraction(9, 10)), ("Up or down?", "choice", ("up", "down"), "down")]
    assert les.checks[0].reason == "Because nine tenths."
    assert course.problems(les) == []
    taught, deeper, rest = course.split_parts(PLANTED)
    assert deeper.startswith("## Going deeper") and "deep deep" in deeper and "Exercise" not in deeper
    assert rest.startswith("## Exercises") and "## Check yourself" in taught


@pytest.mark.parametrize("broken, problem", [
    (PLANTED.replace("<!-- course: core; needs: 2, 3 -->", ""), "no '<!-- course:"),
    (PLANTED.replace("course: core;", "course: expert;"), "course 'expert'"),
    (PLANTED.replace("needs: 2, 3", "needs: 2, 9"), "needs lesson 9"),
    (PLANTED.replace("needs: 2, 3", "needs: two"), "needs 'two'"),
    (PLANTED.replace("<!-- check: number -->", ""), "no '<!-- check: number -->'"),
    (PLANTED.replace("'down'", "'sideways'"), "not one of the options"),
    (PLANTED.replace(">>> Fraction(9, 10)\nFraction(9, 10)", ">>> 'nine'\n'nine'"), "not a number"),
    (PLANTED.split("### 2.")[0], "2-4 check-yourself questions, not 1"),
])
def test_a_broken_lesson_is_reported_in_one_line(broken, problem):
    found = course.problems(course.parse(broken))
    assert any(problem in p for p in found), found
    assert all("\n" not in p for p in found)


@pytest.mark.parametrize("typed, right", [
    ("9/10", True), ("0.9", True), ("0.90", True), ("90%", True), (" 9 / 10 ", True), ("0.8", False),
    ("1", False), ("", None), ("nine", None), ("1/0", None),
])
def test_a_number_answer_is_read_as_a_fraction_or_a_decimal(typed, right):
    check = course.Check("α?", "number", (), "", "Fraction(9, 10)", "")
    assert course.is_right(check, typed) is right


def test_a_decimal_answer_is_right_to_the_decimals_typed():
    third = course.Check("?", "number", (), "", "Fraction(1, 3)", "")
    assert [course.is_right(third, t) for t in ("0.333", "0.33", "0.334", "0.32", "1/3")] == [
        True, True, False, False, True]
    floating = course.Check("?", "number", (), "", "1.9198", "")
    assert [course.is_right(floating, t) for t in ("1.92", "1.9", "2", "1.93")] == [True, True, False, False]


def test_a_choice_is_right_only_for_its_option():
    check = course.Check("?", "choice", ("rise", "fall"), "", "'fall'", "")
    assert (course.is_right(check, "fall"), course.is_right(check, "rise")) == (True, False)


# ---- the figures' hash ---------------------------------------------------------------------------

def planted_figure():
    import plotly.graph_objects as go
    import numpy as np

    fig = go.Figure(go.Bar(x=["a", "b", "c"], y=np.array([0.6, 0.3, 0.1])))
    fig.update_layout(title="p after a", xaxis_title="token")
    return fig


def test_the_hash_ignores_the_template_and_the_array_encoding():
    import plotly.graph_objects as go

    fig = planted_figure()
    digest = lesson_figs.figure_hash(fig)
    assert digest == lesson_figs.figure_hash(planted_figure()), "the same figure twice"
    assert lesson_figs.figure_hash(go.Figure(fig).update_layout(template="plotly_white")) == digest
    as_lists = go.Figure(go.Bar(x=["a", "b", "c"], y=[0.6, 0.3, 0.1]),
                         layout={"title": "p after a", "xaxis_title": "token"})
    assert lesson_figs.figure_hash(as_lists) == digest
    assert "template" not in lesson_figs.canonical_json(fig)
    assert lesson_figs.figure_hash(go.Figure(fig).update_traces(y=[0.6, 0.3, 0.2])) != digest
    assert lesson_figs.figure_hash(go.Figure(fig).update_layout(title="q after a")) != digest


def test_the_stamp_carries_the_hash():
    digest = lesson_figs.figure_hash(planted_figure())
    svg = lesson_figs.stamp("03-x", digest) + "\n<svg></svg>\n"
    assert lesson_figs.svg_hash(svg) == digest and lesson_figs.svg_hash("<svg></svg>") is None
    assert f"{lesson_figs.REGENERATE} 03-x" in svg


def test_the_generator_names_an_unknown_figure_in_one_line(capsys):
    from specsim.plots.lesson_figs.__main__ import main

    assert main(["99-no-such-figure"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: no lesson figure named or starting with '99-no-such-figure'") and "\n" not in err


def test_names_and_prefixes_pick_figures():
    figs = {n: lesson_figs.LessonFigure(n, planted_figure) for n in ("02-round", "03-residual", "03-alpha")}
    assert lesson_figs.select(["03-"], figs) == ["03-residual", "03-alpha"]
    assert lesson_figs.select(["03-alpha", "02"], figs) == ["03-alpha", "02-round"]
    assert lesson_figs.select([], figs) == list(figs)
    assert lesson_figs.lessons_named(["03-", "02-round"]) == {2, 3} and lesson_figs.lessons_named(["x"]) is None
    with pytest.raises(ValueError, match="'04'"):
        lesson_figs.select(["04"], figs)
