"""The lessons: their shape, their links, and the Lessons page rendering each one.

The numbers in the lessons are checked by their own doctests (pytest collects
``lessons/*.md`` through ``--doctest-glob``); this file checks what a doctest
cannot: that there are enough lessons, in order, that each has a worked
example, something to practise (exercises with answers, or check-yourself
questions), a link to an app page that exists, and references, and that the
app shows every one of them without an exception. The course's own contract
(metadata, figures, checks, reading time) is tests/test_course.py. The rules, written for authors,
are lessons/WRITING.md (tests/test_lessons_writing.py keeps its table and these tests in step).
"""
from __future__ import annotations

import doctest
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LESSONS = ROOT / "lessons"
VIEWS = ROOT / "app" / "views"
ENTRY = ROOT / "app" / "streamlit_app.py"

NAME = re.compile(r"^(\d\d)-[a-z0-9]+(?:-[a-z0-9]+)*\.md$")
APP = "http://localhost:8501/"  # a link into the app: [label](http://localhost:8501/page?x=1) (the old form: (/page))
PAGE_LINK = re.compile(r"\]\((?:" + re.escape(APP) + r"|/)([a-z0-9_]*)(?:\?[^)\s]*)?\)")
TRY_IT = re.compile(r"\*\*Try it:\*\*.*\]\((?:" + re.escape(APP) + r"|/)[a-z0-9_]*(?:\?[^)\s]*)?\)")

NOT_LESSONS = {"readme.md", "writing.md"}  # the course map and the authors' guide sit beside the lessons
FILES = sorted(p for p in LESSONS.glob("*.md") if p.name.lower() not in NOT_LESSONS)


def text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def test_at_least_twelve_lessons_numbered_in_order():
    names = [p.name for p in FILES]
    assert len(names) >= 12, names
    assert all(NAME.match(n) for n in names), [n for n in names if not NAME.match(n)]
    numbers = [int(NAME.match(n).group(1)) for n in names]
    assert numbers == list(range(1, len(names) + 1)), numbers


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_lesson_has_title_and_what_you_will_learn(path):
    body = text(path)
    assert body.startswith("# "), "a lesson starts with its title"
    assert "## What you will learn" in body


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_lesson_has_doctest_examples(path):
    examples = doctest.DocTestParser().get_examples(text(path))
    assert examples, "every lesson computes its numbers in doctest examples"
    # every example sits inside a fenced code block, so the page renders it as code
    fenced = re.findall(r"```python\n(.*?)```", text(path), flags=re.S)
    inside = sum(len(doctest.DocTestParser().get_examples(block)) for block in fenced)
    assert inside == len(examples), "a >>> line outside a ```python block"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_lesson_has_exercises_with_answers(path):
    """Something to practise: exercises (each with a worked answer) or check-yourself questions (the course
    makes Exercises optional; tests/test_course.py checks the questions)."""
    body = text(path)
    exercises = re.findall(r"^#{3,4} Exercise\b", body, flags=re.M)
    answers = re.findall(r"^#{4,5} Answer\b", body, flags=re.M)
    assert exercises or "\n## Check yourself\n" in body, "at least one exercise or a check-yourself section"
    assert len(answers) >= len(exercises), "every exercise has a worked answer"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_lesson_exercises_are_numbered_in_order_under_one_heading(path):
    """Every lesson numbers its exercises the same way: "## Exercises", then "### Exercise 1", 2, ..."""
    body = text(path)
    numbers = re.findall(r"^### Exercise(?: (\d+))?$", body, flags=re.M)
    if not numbers and "\n## Exercises\n" not in body:
        return  # no exercises (a lesson may practise with its check-yourself questions only)
    assert all(numbers), "an exercise without its number"
    assert [int(n) for n in numbers] == list(range(1, len(numbers) + 1))
    assert body.count("\n## Exercises\n") == 1
    assert body.index("\n## Exercises\n") < body.index("\n### Exercise 1\n")


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_lesson_links_to_pages_that_exist(path):
    body = text(path)
    assert TRY_IT.search(body), "a **Try it:** link to an app page"
    pages = [p or "home" for p in PAGE_LINK.findall(body)]
    assert pages
    missing = [p for p in pages if not (VIEWS / f"{p}.py").exists()]
    assert not missing, f"links to pages that do not exist: {missing}"
    # another lesson is named by its number, not linked: a link from the Lessons page to itself changes only
    # the query, and the browser's Back button then does not bring the first lesson back
    assert "lessons" not in pages, "a link to the Lessons page from a lesson"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_no_page_link_hides_inside_a_folded_answer(path):
    """The app folds each answer into a closed expander: a Try-it link there is invisible."""
    for answer in re.findall(r"^#### Answer\n(.*?)(?=^#{1,4} |\Z)", text(path), re.S | re.M):
        assert "](/" not in answer and f"]({APP}" not in answer, f"{path.name}: a page link inside an answer"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_lesson_maths_opens_and_closes_on_one_line(path):
    """st.markdown renders $...$ and $$...$$; a span broken over lines can turn its
    second line into a list item ("+ 1)$") and the rest of the page into an error."""
    prose = re.sub(r"```.*?```", lambda m: "\n" * m.group(0).count("\n"), text(path), flags=re.S)
    for number, line in enumerate(prose.splitlines(), 1):
        assert line.count("$$") % 2 == 0, f"line {number}: $$ not closed on the line"
        assert line.replace("$$", "").count("$") % 2 == 0, f"line {number}: $ not closed on the line"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_lesson_has_references(path):
    body = text(path)
    assert "## References" in body
    refs = body.split("## References", 1)[1]
    assert re.search(r"\(\d{4}\)", refs), "references cite papers by author and year"


def test_lessons_page_renders_every_lesson():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ENTRY), default_timeout=60)
    at.run()
    at.switch_page("views/lessons.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.radio(key="lesson-path").value == "all"  # every lesson, not one path's
    box = at.selectbox(key="lesson-index")
    assert len(box.options) == len(FILES)
    for i, path in enumerate(FILES):
        box = at.selectbox(key="lesson-index")
        box.set_value(i)
        at.run()
        assert not at.exception, (path.name, [e.value for e in at.exception])
        assert not at.error, (path.name, [e.value for e in at.error])  # every figure drawn
        shown = "\n".join(m.value for m in at.markdown)
        title = text(path).splitlines()[0][2:].strip()
        assert title in shown, f"lesson {path.name} is not on the page"


def test_pitfalls_lesson_teaches_every_rule_taken_from_a_source():
    """A rule with a source (a common claim, or a paper) is shown in lesson 15 by name."""
    from specsim.labs.pitfalls import PITFALLS

    body = text(LESSONS / "15-pitfalls.md")
    missing = [name for name, pit in PITFALLS.items() if pit.source and name not in body]
    assert not missing, missing
