"""Strict parsing of Try-it query parameters (``?alpha=0.8&c=0.05&from_lesson=9``).

A parameter is used only when it is short ASCII digits (with at most one
decimal point) inside the page's own range; anything else is ignored, so a
hand-edited URL can never raise. ``back_to_lesson`` shows "← back to lesson N".
"""
from __future__ import annotations

import re

import streamlit as st

NUMBER = re.compile(r"[0-9]{1,3}(\.[0-9]{1,4})?")
MAX_LEN = 8


def number(name: str, lo: float, hi: float, params=None):
    """The parameter ``name`` as a float in [lo, hi], or None when absent or not strictly valid."""
    raw = (params if params is not None else st.query_params).get(name)
    if not isinstance(raw, str) or len(raw) > MAX_LEN or not NUMBER.fullmatch(raw):
        return None
    value = float(raw)
    return value if lo <= value <= hi else None


def integer(name: str, lo: int, hi: int, params=None):
    """The parameter ``name`` as an int in [lo, hi] (ASCII digits, at most 10), or None."""
    raw = (params if params is not None else st.query_params).get(name)
    if not isinstance(raw, str) or not re.fullmatch(r"[0-9]{1,10}", raw):
        return None
    value = int(raw)
    return value if lo <= value <= hi else None


def choice(name: str, options, params=None):
    """The parameter ``name`` when it is exactly one of ``options`` (strings), else None."""
    raw = (params if params is not None else st.query_params).get(name)
    return raw if isinstance(raw, str) and raw in options else None


def back_to_lesson(params=None, lessons: int = 99) -> int | None:
    """A "← back to lesson N" link when the page was opened with ``?from_lesson=N``; returns N."""
    raw = (params if params is not None else st.query_params).get("from_lesson")
    if not isinstance(raw, str) or not re.fullmatch(r"[0-9]{1,2}", raw) or not 1 <= int(raw) <= lessons:
        return None
    st.page_link("views/lessons.py", label=f"← back to lesson {int(raw)}", query_params={"lesson": str(int(raw))})
    return int(raw)
