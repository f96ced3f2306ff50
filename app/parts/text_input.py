"""Text from a visitor, read strictly before anything parses it: query parameters as bounded integers,
text boxes capped by length, and errors as one line for ``st.error`` (re-exported by ``parts.widgets``)."""
from __future__ import annotations

import streamlit as st

QUERY_DIGITS = 6  # a query parameter that is a number has at most this many ASCII digits


def query_int(text, lo: int, hi: int) -> int | None:
    """A query parameter as an integer in [lo, hi], read strictly; None for anything else.

    Only ASCII digits, at most ``QUERY_DIGITS`` of them ("²", "-1", "1e3",
    5,000 digits and " 3" are all None), so no parameter can raise or cost time.

    >>> query_int("3", 1, 13), query_int("\u00b2", 1, 13), query_int("9" * 5000, 1, 13), query_int("14", 1, 13)
    (3, None, None, None)
    """
    if not isinstance(text, str) or not (0 < len(text) <= QUERY_DIGITS and text.isascii() and text.isdigit()):
        return None
    value = int(text)
    return value if lo <= value <= hi else None


def shown_param(text) -> str:
    """A query parameter's value for an error message: quoted, escaped, at most 20 characters."""
    text = str(text)
    return repr(text[:20] + ("…" if len(text) > 20 else ""))


MAX_TEXT = 1_000  # characters of any text box, checked before anything parses it


def capped_text(text: str, name: str, limit: int = MAX_TEXT) -> str | None:
    """``text`` if it has at most ``limit`` characters; else None after one ``st.error`` line.

    Every text box's value passes here before it is parsed, so a 6,000,000-character
    row is refused by its length, not parsed first. (The boxes set no ``max_chars``:
    Streamlit would cut a long text silently and the parser would then complain
    about something else, such as a wrong number of entries.)
    """
    if len(text) > limit:
        st.error(f"{name} has {len(text):,} characters; the limit is {limit:,}")
        return None
    return text


def one_line(e: BaseException, limit: int = 300) -> str:
    """An exception as one line for ``st.error``: its message's first line (cut to ``limit``), or its type."""
    lines = str(e).strip().splitlines()
    line = lines[0].strip() if lines else ""
    return (line[:limit] + ("…" if len(line) > limit else "")) or type(e).__name__
