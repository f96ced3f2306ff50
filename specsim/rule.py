"""The acceptance rule of speculative sampling, written once.

p is always the target's next-token distribution and q the drafter's. The
functions here take one probability (``acceptance_probability``) or one row
(a list or tuple of probabilities, the rest) of exact ``Fraction``s or
Python floats, and return the same number type. They compare values one at
a time (``if q_x <= 0``), so they do not take numpy arrays or tensors: the
vectorized twin for numpy arrays (rows or tables of rows) is
``specsim.rule_np``, the torch twin is ``specsim.gpt.rule``; both are tested
against this file.

The one-position identity that makes speculative decoding exact::

    q(x) * min(1, p(x) / q(x)) + (1 - alpha) * r(x) = p(x)

    alpha = sum_x min(p(x), q(x)) = 1 - TV(p, q)
    r(x)  = max(0, p(x) - q(x)) / sum_y max(0, p(y) - q(y))

Example
-------
>>> from fractions import Fraction as F
>>> p = [F(3, 5), F(3, 10), F(1, 10)]
>>> q = [F(1, 2), F(2, 5), F(1, 10)]
>>> acceptance_probability(p[1], q[1])
Fraction(3, 4)
>>> alpha(p, q)
Fraction(9, 10)
>>> residual(p, q)
[Fraction(1, 1), Fraction(0, 1), Fraction(0, 1)]
"""
from __future__ import annotations

from typing import Sequence, TypeVar

Number = TypeVar("Number")


def acceptance_probability(p_x, q_x):
    """min(1, p(x) / q(x)) for the drafted token x.

    ``p_x`` and ``q_x`` are the target's and the drafter's probability of the
    drafted token. The drafter only proposes tokens it gives positive
    probability, so ``q_x == 0`` is an error, not a division by zero.

    >>> from fractions import Fraction as F
    >>> acceptance_probability(F(1, 2), F(7, 10))
    Fraction(5, 7)
    >>> acceptance_probability(0.3, 0.1)
    1.0
    """
    if q_x <= 0:
        raise ValueError("the drafter proposed a token it gives probability 0 (q(x) = 0)")
    ratio = p_x / q_x
    return ratio if ratio < 1 else ratio / ratio  # 1 of the same type (Fraction(1), 1.0)


def overlap(p: Sequence, q: Sequence) -> list:
    """min(p(x), q(x)) for every token: the mass that is accepted as drafted."""
    _check_lengths(p, q)
    return [a if a < b else b for a, b in zip(p, q)]


def excess(p: Sequence, q: Sequence) -> list:
    """max(0, p(x) - q(x)) for every token: the mass the drafter under-proposes."""
    _check_lengths(p, q)
    return [a - b if a > b else (a - a) for a, b in zip(p, q)]


def alpha(p: Sequence, q: Sequence):
    """Acceptance rate sum_x min(p(x), q(x)) = 1 - TV(p, q)."""
    return _sum(overlap(p, q))


def total_variation(p: Sequence, q: Sequence):
    """Total variation distance (1/2) sum_x |p(x) - q(x)|."""
    _check_lengths(p, q)
    return _sum([abs(a - b) for a, b in zip(p, q)]) / 2


def residual_mass(p: Sequence, q: Sequence):
    """sum_x max(0, p(x) - q(x)) = 1 - alpha: the probability of a rejection."""
    return _sum(excess(p, q))


def residual(p: Sequence, q: Sequence):
    """The residual distribution r = max(0, p - q) / sum max(0, p - q).

    Returns ``None`` when p == q (more precisely when p <= q everywhere): no
    rejection can happen then, so the residual is never needed and is not
    defined. It is never normalized by zero.

    >>> from fractions import Fraction as F
    >>> residual([F(1, 2), F(1, 2)], [F(1, 2), F(1, 2)]) is None
    True
    """
    ex = excess(p, q)
    mass = _sum(ex)
    if not mass > 0:
        return None
    return [e / mass for e in ex]


def _sum(values):
    total = values[0] - values[0]
    for v in values:
        total = total + v
    return total


def _check_lengths(p, q):
    if len(p) != len(q):
        raise ValueError(f"p has {len(p)} entries but q has {len(q)}")


class RoundRule:
    """The three decisions a round makes, as methods a variant can override.

    The exact engine (``specsim.exact``) and the sampler (``specsim.sampling``)
    both run a round through one of these objects, so the rule lives here
    once and a broken rule (``specsim.labs.pitfalls``) is a subclass, not a copy of
    the round. Token arguments are vocabulary indices.

    Step 1 (draft):   drafts are drawn from ``draft_row(q)``.
    Step 3 (accept):  a draft x is kept with probability ``accept(p, q, x)``.
    Step 4 (correct): on the first rejection the replacement is drawn from
                      ``replacement(p, q)``.
    Step 5 (bonus):   after full acceptance one more token is drawn from
                      ``bonus(p)``; ``None`` means no bonus token.
    """

    name = "correct"

    def draft_row(self, q: Sequence):
        return q

    def accept(self, p: Sequence, q: Sequence, x: int):
        return acceptance_probability(p[x], q[x])

    def replacement(self, p: Sequence, q: Sequence):
        r = residual(p, q)
        if r is None:
            raise ValueError("a rejection happened where p == q: the residual is undefined")
        return r

    def bonus(self, p: Sequence):
        return p

    def __repr__(self):
        return f"<RoundRule {self.name}>"


CORRECT = RoundRule()
