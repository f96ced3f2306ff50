"""Small tables and code shown as Markdown: no data-grid or syntax-highlighter bundle to load.

``st.dataframe`` pulls about 1.3 MB of JavaScript into the browser (the data
grid and Arrow) and ``st.code`` about 1.6 MB (the highlighter); on a small
machine, evaluating them beside plotly.js delayed a page's first chart by
0.3-0.5 s each. The app's tables are a few dozen rows of short text, so they
are drawn as Markdown tables instead (which also grow with the presenter
mode's type); a long one scrolls inside a box of ``height`` pixels. Every
cell is escaped, so text from a model or an upload is shown as it is, never
read as Markdown, HTML or math.
"""
from __future__ import annotations

import html
import numbers
import re

import streamlit as st

_MARKUP = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>$~&:])")  # CommonMark lets a backslash make each of these literal


def _number(value) -> bool:
    return isinstance(value, numbers.Number) and not isinstance(value, bool)


def cell(value) -> str:
    """One cell's text, inert: integers as they are, other numbers with four decimals, markup escaped."""
    text = f"{float(value):.4f}" if _number(value) and not isinstance(value, numbers.Integral) else str(value)
    text = " ".join(text.split())  # a newline would end the table's row
    return _MARKUP.sub(r"\\\1", text) if text else "&nbsp;"


def markdown(rows: list[dict]) -> str:
    """The rows (dicts with the same keys, in order) as a Markdown table; numeric columns right-aligned."""
    columns = list(rows[0])
    lines = ["| " + " | ".join(cell(c) for c in columns) + " |",
             "|" + "|".join("---:" if all(_number(r[c]) for r in rows) else ":---" for c in columns) + "|"]
    lines += ["| " + " | ".join(cell(r[c]) for c in columns) + " |" for r in rows]
    return "\n".join(lines)


def table(rows: list[dict], height: int | None = None) -> None:
    """The rows as a table; over ``height`` pixels tall, it scrolls inside a box of that height."""
    if not rows:
        st.caption("(no rows)")
        return
    box = st.container(height=height, border=True) if height and 38 + 35 * len(rows) > height else st.container()
    box.markdown(markdown(rows))


def code(text: str) -> None:
    """Source or JSON as a monospaced block, shown as it is (escaped; no highlighting)."""
    st.html(f'<pre style="white-space: pre; overflow-x: auto; font-size: 0.85em; padding: 0.75em; margin: 0; '
            f'border-radius: 0.5rem; background: rgba(128, 128, 128, 0.1)"><code>{html.escape(text)}</code></pre>')
