"""Text models for drafters with another tokenizer: two vocabularies, one alphabet, exact rows.

A ``TextModel`` gives next-token rows (exact Fractions) over its own string
tokens after a text; a ``MixedPair`` holds a target and a drafter that spell
the same characters with different tokens. The target's tokenizer cuts a text
into its tokens, the longest token first. ``stream_row`` is the law of the
drafter's text read in the target's tokens: what the drafter "says" about the
target's next token. ``specsim.labs.retokenize`` runs the rounds.

Example
-------
>>> pair = example()
>>> tokenize(pair.target.vocab, "abba")
('ab', 'b', 'a')
>>> [str(v) for v in drafter_token_row(pair, "a")]  # P(a, not b), P(b), P(a then b)
['4/25', '3/5', '6/25']
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Mapping

from ..toy import ModelError, check_row, parse_probability


class RetokenizeError(ValueError):
    """A model, pair or request this lab cannot take; the message is one line."""


@dataclass(frozen=True)
class TextModel:
    """Next-token rows over ``vocab`` (strings), keyed by the text's last ``order`` characters."""

    vocab: tuple
    rows: Mapping
    order: int = 1

    def row(self, text: str) -> tuple:
        if len(text) < self.order:
            raise RetokenizeError(f"the text {text[:40]!r} is shorter than the model's order {self.order}")
        key = text[len(text) - self.order:]
        if key not in self.rows:
            raise RetokenizeError(f"the text ends in {key[:40]!r}, which this model's characters do not spell")
        return self.rows[key]

    @property
    def alphabet(self) -> frozenset:
        return frozenset("".join(self.vocab))


def text_model(vocab, rows: Mapping, order: int = 1) -> TextModel:
    """Build and check a TextModel: every context of ``order`` characters has a row that sums to 1."""
    if not isinstance(vocab, (list, tuple)) or not vocab or not all(isinstance(t, str) and t for t in vocab):
        raise RetokenizeError("a vocabulary must be a non-empty list of non-empty strings")
    if len(set(vocab)) != len(vocab):
        raise RetokenizeError(f"vocabulary {list(vocab)[:10]} lists a token twice")
    if isinstance(order, bool) or not isinstance(order, int) or not 1 <= order <= 3:
        raise RetokenizeError(f"order must be 1, 2 or 3, got {order!r}")
    chars = sorted(set("".join(vocab)))
    keys = [""]
    for _ in range(order):
        keys = [k + c for k in keys for c in chars]
    extra = sorted(set(rows) - set(keys))
    if extra:
        raise RetokenizeError(f"context {str(extra[0])[:40]!r} is not {order} character(s) of the vocabulary")
    table = {}
    for key in keys:
        if key not in rows:
            raise RetokenizeError(f"no row for the context {key!r}")
        raw = rows[key]
        if not isinstance(raw, (list, tuple)) or len(raw) != len(vocab):
            raise RetokenizeError(f"the row for {key!r} must have {len(vocab)} probabilities")
        try:
            row = tuple(parse_probability(v, f"row {key!r}") for v in raw)
            check_row(row, f"row {key!r}")
        except ModelError as e:
            raise RetokenizeError(str(e)) from None
        table[key] = row
    return TextModel(tuple(vocab), table, order)


@dataclass(frozen=True)
class MixedPair:
    """A target and a drafter over different vocabularies that spell the same alphabet."""

    target: TextModel
    draft: TextModel

    def __post_init__(self):
        if self.target.alphabet != self.draft.alphabet:
            raise RetokenizeError(f"the target spells {sorted(self.target.alphabet)}, "
                                  f"the drafter {sorted(self.draft.alphabet)}: they must spell the same characters")
        long = next((t for t in self.target.vocab if len(t) > 2), None)
        if long is not None:
            raise RetokenizeError(f"target token {long[:40]!r} has more than 2 characters (this lab takes 1 or 2)")
        missing = sorted(c for c in self.target.alphabet if c not in self.target.vocab)
        if missing:
            raise RetokenizeError(f"character {missing[0]!r} is not a target token: some drafts could not be re-tokenised")

    @property
    def order(self) -> int:
        return max(self.target.order, self.draft.order)


def example() -> MixedPair:
    """Target tokens {a, b, ab}, drafter characters {a, b}; both look at the last character."""
    target = text_model(("a", "b", "ab"), {"a": ("1/5", "3/10", "1/2"), "b": ("1/2", "1/5", "3/10")})
    draft = text_model(("a", "b"), {"a": ("2/5", "3/5"), "b": ("7/10", "3/10")})
    return MixedPair(target, draft)


def tokenize(vocab, text: str) -> tuple:
    """Cut ``text`` into tokens of ``vocab``, the longest token that fits first, left to right."""
    by_length = sorted(vocab, key=len, reverse=True)
    out, i = [], 0
    while i < len(text):
        token = next((t for t in by_length if text.startswith(t, i)), None)
        if token is None:
            raise RetokenizeError(f"{text[i:i + 20]!r} does not start with any token of {list(vocab)[:10]}")
        out.append(token)
        i += len(token)
    return tuple(out)


def unsettled(vocab, tokens: tuple) -> bool:
    """Whether the last token may still grow: it is a proper prefix of another target token."""
    return bool(tokens) and any(t != tokens[-1] and t.startswith(tokens[-1]) for t in vocab)


def prefix_mass(pair: MixedPair, text: str, s: str) -> Fraction:
    """The drafter's probability that what it writes after ``text`` starts with ``s``."""
    if not s:
        return Fraction(1)
    total = Fraction(0)
    for t, qt in zip(pair.draft.vocab, pair.draft.row(text)):
        if qt and t.startswith(s):
            total += qt
        elif qt and s.startswith(t):
            total += qt * prefix_mass(pair, text + t, s[len(t):])
    return total


def stream_mass(pair: MixedPair, text: str, tokens: tuple) -> Fraction:
    """P(the drafter's text after ``text``, cut into target tokens, starts with ``tokens``)."""
    vocab, s = pair.target.vocab, "".join(tokens)
    if tokenize(vocab, s) != tuple(tokens):
        return Fraction(0)  # never the longest-match cut of anything
    mass = prefix_mass(pair, text, s)
    if unsettled(vocab, tokens):  # the next character must not merge into the last token
        last = tokens[-1]
        mass -= sum((prefix_mass(pair, text, s + t[len(last):]) for t in vocab
                     if t != last and t.startswith(last)), Fraction(0))
    return mass


def stream_row(pair: MixedPair, text: str, before: tuple = ()) -> tuple:
    """The law of the next target token after the tokens ``before``, if the drafter never stopped."""
    here = stream_mass(pair, text, before)
    if not here:
        raise RetokenizeError(f"the drafter never writes {''.join(before)[:40]!r} as the tokens {before[:8]}")
    return tuple(stream_mass(pair, text, before + (x,)) / here for x in pair.target.vocab)


def drafter_token_row(pair: MixedPair, text: str) -> tuple:
    """P(the target's next token is x) when the drafter writes on after ``text``, for each target token x."""
    return stream_row(pair, text, ())
