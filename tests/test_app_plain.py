"""The app's light tables and code blocks (app/parts/plain.py): every cell inert, read back exactly."""
from __future__ import annotations

import sys
from fractions import Fraction
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "app"))

from parts import plain  # noqa: E402

HOSTILE = ["<img src=x onerror=alert(1)>", "**bold** _it_ `code`", "$x^2$ and $$y$$", "a | b", "[link](http://e.x)",
           "line\nbreak", "# heading", "&amp; &lt;", "\\backslash\\", "- item", "1. item", "~~gone~~", ""]


def test_every_markup_character_in_a_cell_is_escaped_and_reads_back_as_written():
    """Rendered by a CommonMark parser with GFM tables (markdown-it, as Streamlit's remark renders it), a hostile
    cell makes no tag, link, emphasis, code or extra column, and its text comes back as written (whitespace
    runs made one space)."""
    markdown_it = pytest.importorskip("markdown_it")
    rows = [{"text": t, "n": i} for i, t in enumerate(HOSTILE)]
    tokens = markdown_it.MarkdownIt("commonmark").enable("table").parse(plain.markdown(rows))
    kinds = {t.type for t in tokens} | {c.type for t in tokens for c in (t.children or [])}
    assert not kinds & {"html_inline", "html_block", "link_open", "strong_open", "em_open", "code_inline",
                        "heading_open", "s_open", "bullet_list_open", "ordered_list_open"}
    cells = ["".join(c.content for c in t.children if c.type == "text") for t in tokens if t.type == "inline"]
    assert cells[:2] == ["text", "n"]
    body = cells[2:]
    assert body[0::2] == [" ".join(t.split()) or "\xa0" for t in HOSTILE]  # an empty cell is a no-break space
    assert body[1::2] == [str(i) for i in range(len(HOSTILE))]


def test_numbers_are_formatted_and_numeric_columns_right_aligned():
    rows = [{"name": "a", "count": 3, "rate": 0.123456, "exact": Fraction(1, 3), "flag": True},
            {"name": "b", "count": 12, "rate": 2.0, "exact": Fraction(2, 3), "flag": False}]
    text = plain.markdown(rows)
    head, rule, first, second = text.splitlines()
    assert rule == "|:---|---:|---:|---:|:---|"  # text, ints, floats, fractions (numbers), booleans (text)
    assert first == r"| a | 3 | 0\.1235 | 0\.3333 | True |" and second == r"| b | 12 | 2\.0000 | 0\.6667 | False |"


def test_code_is_shown_as_text(monkeypatch):
    shown = []
    monkeypatch.setattr(plain.st, "html", shown.append)
    plain.code('x = "<script>alert(1)</script>" & y')
    assert "<script>" not in shown[0] and "&lt;script&gt;alert(1)&lt;/script&gt;" in shown[0]
    assert "&quot;" in shown[0] and "&amp; y" in shown[0]
