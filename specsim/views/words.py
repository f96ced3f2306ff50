"""Counts in words for pages and chart titles: "1 query", "2 queries", "draft 4 of 4", "Six ways".

>>> count(1, "query", "queries"), count(2, "query", "queries"), count(1, "drafted node")
('1 query', '2 queries', '1 drafted node')
>>> span("draft", 4, 4, 4), span("draft", 1, 3, 4)
('draft 4 of 4', 'drafts 1–3 of 4')
>>> number_word(6), number_word(12)
('six', '12')
"""
from __future__ import annotations

NUMBERS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


def count(n: int, one: str, many: str | None = None) -> str:
    """``n`` and the noun, singular for exactly one ("1 query"); the plural is ``many`` or ``one`` + "s"."""
    return f"{n:,} {one if n == 1 else (many or one + 's')}"


def span(noun: str, first: int, last: int, total: int) -> str:
    """Items ``first`` to ``last`` of ``total``, one item named alone ("draft 4 of 4", "drafts 1–3 of 4")."""
    if first == last:
        return f"{noun} {first} of {total}"
    return f"{noun}s {first}–{last} of {total}"


def number_word(n: int) -> str:
    """Zero to ten in words (for a sentence's start, capitalize it), larger numbers in digits."""
    return NUMBERS[n] if 0 <= n < len(NUMBERS) else f"{n:,}"
