"""Probability rows typed by a person ("3/5, 0.3 1/10"): read, optionally renormalized, checked.

The Residual explorer reads p and q this way; every problem is a
``specsim.toy.ModelError`` whose message names it (the page shows it as one
line). Numbers are read exactly (``specsim.toy.parse_probability``) and rows
checked as a toy model's rows are (``specsim.toy.check_row``).

Example
-------
>>> parse_rows("a b", "1, 1", "1/4 3/4", normalize=True)
(['a', 'b'], [Fraction(1, 2), Fraction(1, 2)], [Fraction(1, 4), Fraction(3, 4)])
>>> parse_rows("a b", "1/2, x", "1/4 3/4")
Traceback (most recent call last):
...
specsim.toy.ModelError: p[1]: 'x' is not a number (use "3/5", "0.25" or 1)
"""
from __future__ import annotations

from fractions import Fraction

from .toy import MAX_VOCAB, ModelError, check_row, parse_probability


def parse_row(text: str, where: str) -> list:
    """Comma- or space-separated probabilities as exact Fractions; ``where`` names the row in errors."""
    parts = text.replace(",", " ").split()
    if not parts:
        raise ModelError(f"{where} is empty")
    return [parse_probability(x, f"{where}[{i}]") for i, x in enumerate(parts)]


def normalized(row) -> list:
    """``row`` divided by its sum; a row with a negative entry or no mass is returned unchanged."""
    total = sum(row, Fraction(0))
    if total > 0 and all(x >= 0 for x in row):
        return [x / total for x in row]
    return list(row)


def parse_rows(tokens: str, p: str, q: str, normalize: bool = False, max_tokens: int = MAX_VOCAB) -> tuple:
    """(vocab, p, q): distinct space-separated tokens and one checked row each for p and q.

    With ``normalize`` each row is divided by its sum before the check (so
    "1, 1, 1" becomes thirds); without it a row must sum to exactly 1.
    """
    vocab = tokens.split()
    if not 1 <= len(vocab) <= max_tokens:
        raise ModelError(f"give between 1 and {max_tokens} tokens, got {len(vocab)}")
    if len(set(vocab)) != len(vocab):
        raise ModelError("tokens must be distinct")
    rows = []
    for name, text in (("p", p), ("q", q)):
        row = parse_row(text, name)
        if len(row) != len(vocab):
            raise ModelError(f"{name} has {len(row)} entries but there are {len(vocab)} tokens")
        if normalize:
            row = normalized(row)
        check_row(row, name)
        rows.append(row)
    return vocab, rows[0], rows[1]
