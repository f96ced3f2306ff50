"""The code's shape, read from the source: short functions, and no issue numbers of ours in the code.

- **No function over 60 lines** in ``specsim/`` or ``app/``: a function's length is
  ``end_lineno - lineno + 1`` as ``ast`` reads it (from its ``def`` line to its last line; decorators
  apart, a nested function counted inside its parent and on its own). A longer one is split into named
  steps.
- **No issue number of ours** in ``tests/`` (tests and benches), ``specsim/`` or ``app/``: an issue
  number says why code was written once, not what it does now, and means nothing outside our tracker.
  The rule: ``issue N`` (or ``issues N``, ``issue #N``, any case) is ours unless the word right before
  ``issue`` (across spaces and line breaks, nothing else between) names another project: a name in
  ``OUTSIDE_PROJECTS``, or one with a slash (``SafeAILab/EAGLE``) or a capital past its first letter
  (``vLLM``, ``PyTorch``). So ``transformers issue 47932`` is a citation and stays; ``(issue 56)``,
  ``Goals (issue 38)`` and ``the defects of issue 59`` are ours and go.

Planted examples test each checker first; the last tests run them on the real tree.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_LINES = 60
# Functions still over MAX_LINES, each with the reason it is allowed for now (keep this empty).
KNOWN_LONG: dict[str, str] = {}
# Lower-case project names cited with their own issue numbers (names with a capital inside or a slash
# are recognised without a list).
OUTSIDE_PROJECTS = {"transformers", "vllm", "pytorch", "torch", "streamlit", "plotly", "sglang", "tensorrt-llm"}
ISSUE = re.compile(r"\bissues?\s+#?(\d+)", re.IGNORECASE)


def long_functions(source: str, limit: int = MAX_LINES) -> list[tuple[str, int, int]]:
    """``(name, first line, length)`` of each function in ``source`` longer than ``limit`` lines."""
    return [(node.name, node.lineno, node.end_lineno - node.lineno + 1) for node in ast.walk(ast.parse(source))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.end_lineno - node.lineno + 1 > limit]


def names_a_project(word: str) -> bool:
    """Whether ``word`` (the word before "issue") names another project."""
    return word.lower() in OUTSIDE_PROJECTS or "/" in word or any(c.isupper() for c in word[1:])


def our_issue_numbers(text: str) -> list[tuple[int, str]]:
    """``(line, number)`` of each issue number of ours in ``text`` (see the module's rule)."""
    found = []
    for match in ISSUE.finditer(text):
        before = re.search(r"([\w./-]+)\s+$", text[:match.start()])
        if before is None or not names_a_project(before.group(1).rstrip(".")):
            found.append((text.count("\n", 0, match.start()) + 1, match.group(1)))
    return found


def python_files(*folders: str) -> list[Path]:
    return sorted(p for folder in folders for p in (ROOT / folder).rglob("*.py") if ".venv" not in p.parts)


# ---- planted examples ---------------------------------------------------------

def test_a_function_over_the_limit_is_found_with_its_length():
    body = "".join(f"    x{i} = {i}\n" for i in range(60))
    source = f"def short():\n    return 1\n\n\n@decorated\ndef long():\n{body}    return x0\n"
    assert long_functions(source) == [("long", 6, 62)]
    assert long_functions(source, limit=62) == []


def test_a_nested_function_counts_inside_its_parent_and_alone():
    inner = "".join(f"        y{i} = {i}\n" for i in range(3))
    source = f"def outer():\n    def inner():\n{inner}        return y0\n    return inner\n"
    assert long_functions(source, limit=4) == [("outer", 1, 7), ("inner", 2, 5)]


def test_our_issue_numbers_are_found_and_outside_citations_kept():
    text = ("Goals (issue 38): fast.\n"
            "the defects of Issue #59\n"
            "raw logits (transformers issue 47932), vLLM\n  issue 54282, SafeAILab/EAGLE issue 110\n"
            "issues 12 and PyTorch issue 7\n"
            "reissue 3 and tissue 4 are words\n")
    assert our_issue_numbers(text) == [(1, "38"), (2, "59"), (5, "12")]


# ---- the real tree ------------------------------------------------------------

def test_no_function_is_over_sixty_lines():
    found = {f"{path.relative_to(ROOT)}::{name}": (line, length)
             for path in python_files("specsim", "app")
             for name, line, length in long_functions(path.read_text(encoding="utf-8"))}
    over = [f"{where} (line {line}): {length} lines" for where, (line, length) in sorted(found.items())
            if where not in KNOWN_LONG]
    assert not over, f"functions over {MAX_LINES} lines (split them into named steps):\n" + "\n".join(over)
    stale = sorted(set(KNOWN_LONG) - set(found))
    assert not stale, f"no longer over {MAX_LINES} lines: remove from KNOWN_LONG: {stale}"


def test_no_issue_number_of_ours_in_the_code():
    found = [f"{path.relative_to(ROOT)}:{line}: issue {number}"
             for path in python_files("tests", "specsim", "app") if path != Path(__file__).resolve()  # its examples
             for line, number in our_issue_numbers(path.read_text(encoding="utf-8"))]
    assert not found, "say what the code does, not which issue asked for it:\n" + "\n".join(found)
