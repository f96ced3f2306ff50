"""lessons/WRITING.md (the authors' guide) lists every rule the lesson tests enforce, by test name.

Its last table names ``file::test`` per rule. Both directions are checked: every test it names exists,
and every rule the tests enforce is in it: each test of tests/test_lessons.py, and each test of
tests/test_course.py that reads the lessons or their figures (``LESSON_DATA``: in its parametrize, its
body or, for the figure registry, its fixture), not the parser's and the figure tool's own tests. The app and the tests must not take the guide for a lesson.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "lessons" / "WRITING.md"
RULE_FILES = ("test_lessons.py", "test_course.py")
LESSON_DATA = {"FILES", "ENTRIES", "CORE", "BY_NUMBER", "figures"}  # what a per-lesson rule reads (figures: the
# registry's fixture)


def documented(text: str) -> list[str]:
    """The ``file::test`` names of the guide's rule table (its first column, in backquotes)."""
    return re.findall(r"^\|\s*`(test_[a-z_]+\.py::test_\w+)`\s*\|", text, flags=re.M)


def enforced(name: str, source: str) -> set[str]:
    """The lesson rules of one test file: every test of test_lessons.py; of another file, the tests that
    read the lessons or the figures (``LESSON_DATA``) in their parametrize or their body."""
    found = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
            names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | {a.arg for a in node.args.args}
            if name == "test_lessons.py" or names & LESSON_DATA:
                found.add(f"{name}::{node.name}")
    return found


def test_the_table_reader_reads_the_first_column_only():
    text = ("| test | the rule |\n| --- | --- |\n| `test_a.py::test_x` | a `test_b.py::test_y` aside |\n"
            "not a row `test_c.py::test_z`\n")
    assert documented(text) == ["test_a.py::test_x"]


def test_a_rule_reading_the_lessons_is_found_and_a_parser_test_is_not():
    source = ("@pytest.mark.parametrize('p', FILES)\ndef test_rule(p):\n    pass\n\n"
              "def test_map():\n    assert ENTRIES\n\ndef test_parser():\n    assert parse('x')\n")
    assert enforced("test_course.py", source) == {"test_course.py::test_rule", "test_course.py::test_map"}
    assert enforced("test_lessons.py", source) == {f"test_lessons.py::{t}" for t in ("test_rule", "test_map",
                                                                                      "test_parser")}


def test_the_guide_lists_exactly_the_rules_the_tests_enforce():
    listed = documented(GUIDE.read_text(encoding="utf-8"))
    assert len(listed) == len(set(listed)), "a rule listed twice"
    rules = set().union(*(enforced(n, (ROOT / "tests" / n).read_text(encoding="utf-8")) for n in RULE_FILES))
    defined = {f"{n}::{f.name}" for n in RULE_FILES for f in ast.parse((ROOT / "tests" / n).read_text(
        encoding="utf-8")).body if isinstance(f, ast.FunctionDef)}
    assert not set(listed) - defined, f"lessons/WRITING.md names tests that do not exist: {sorted(set(listed) - defined)}"
    assert not rules - set(listed), f"rules missing from lessons/WRITING.md's table: {sorted(rules - set(listed))}"


def test_the_guide_is_not_taken_for_a_lesson():
    import sys
    sys.path.insert(0, str(ROOT / "app"))
    from sections import lesson_index

    from specsim.views import course
    assert GUIDE.name not in {p.name for p, _ in lesson_index.lessons()}
    assert GUIDE.name not in {p.name for p, _ in course.load(GUIDE.parent)}
    from tests import test_lessons
    assert GUIDE not in test_lessons.FILES
