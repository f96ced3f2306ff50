"""Acceptance as engines report it, and as the formulas need it.

A chain round with γ drafts accepts K of them (0 <= K <= γ). Engines and papers
summarize the rounds in different ways:

- **per-position acceptance** ``P(K >= i)``, i = 1..γ: the share of *all* rounds
  whose draft i was accepted. vLLM's metrics report this vector (its
  ``num_accepted_tokens_per_pos[i] / num_drafts``, "Per-position acceptance
  rate"); it can only fall with i.
- **conditional acceptance** ``P(K >= i | K >= i - 1)``: among the rounds that
  judged draft i, the share that accepted it (``stats.position_acceptance``
  measures it with standard errors). Under i.i.d. acceptance every one is α.
- **mean acceptance length** ``E[K] + 1 = 1 + sum_i P(K >= i)``: tokens a round
  emits (vLLM's "Mean acceptance length", EAGLE's τ).
- **draft acceptance rate** ``E[K] / γ``: accepted over drafted (vLLM's "Avg Draft
  acceptance rate"; lesson 15).

``conditional`` and ``mean_length`` convert the first into the others;
``from_rounds`` computes them all from a list of K; ``exact`` from a round's
exact distribution of K (``specsim.exact.round_distribution(...).accepted``).

>>> m = from_rounds([0, 2, 3, 1, 3], gamma=3)
>>> m.per_position, m.mean_length, m.draft_acceptance_rate
((Fraction(4, 5), Fraction(3, 5), Fraction(2, 5)), Fraction(14, 5), Fraction(3, 5))
>>> m.conditional, m.alpha
((Fraction(4, 5), Fraction(3, 4), Fraction(2, 3)), Fraction(3, 4))
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction


@dataclass(frozen=True)
class EngineMetrics:
    """Every summary of a set of chain rounds with ``gamma`` drafts (exact Fractions)."""

    gamma: int
    rounds: int
    per_position: tuple  # P(K >= i), i = 1..gamma (vLLM's per-position acceptance rate)
    conditional: tuple  # P(K >= i | K >= i - 1); None where no round reached position i
    mean_length: Fraction  # E[K] + 1 (vLLM's mean acceptance length)
    draft_acceptance_rate: Fraction  # E[K] / gamma (vLLM's avg draft acceptance rate)
    alpha: Fraction  # accepted / checked (the formula's alpha)


def _check_gamma(gamma) -> int:
    if isinstance(gamma, bool) or not isinstance(gamma, int) or not 1 <= gamma <= 64:
        raise ValueError(f"gamma must be a whole number from 1 to 64, got {str(gamma)[:40]}")
    return gamma


def conditional(per_position) -> tuple:
    """P(K >= i | K >= i - 1) from the per-position vector P(K >= i): each entry over the one before
    (the first over 1). None where the earlier position was never reached.

    >>> conditional([Fraction(9, 10), Fraction(3, 4)])
    (Fraction(9, 10), Fraction(5, 6))
    """
    rates = [Fraction(r) for r in per_position]
    if any(not 0 <= r <= 1 for r in rates) or any(b > a for a, b in zip(rates, rates[1:])):
        raise ValueError("per-position acceptance must lie in [0, 1] and never rise with the position")
    before = [Fraction(1)] + rates[:-1]
    return tuple(r / b if b else None for r, b in zip(rates, before))


def mean_length(per_position) -> Fraction:
    """E[K] + 1 = 1 + sum_i P(K >= i): the tokens a round emits, from the per-position vector.

    >>> mean_length([Fraction(4, 5), Fraction(16, 25)])
    Fraction(61, 25)
    """
    return 1 + sum((Fraction(r) for r in per_position), Fraction(0))


def exact(accepted_distribution) -> EngineMetrics:
    """The metrics of a round whose K has the given exact distribution (a list, P(K = k) for k = 0..γ).

    >>> from specsim.formulas import expected_tokens
    >>> a = Fraction(4, 5)
    >>> m = exact([a ** k * (1 - a) for k in range(3)] + [a ** 3])   # i.i.d.: P(K >= i) = a^i
    >>> m.per_position == (a, a ** 2, a ** 3), set(m.conditional) == {a}, m.mean_length == expected_tokens(a, 3)
    (True, True, True)
    """
    dist = [Fraction(x) for x in accepted_distribution]
    gamma = _check_gamma(len(dist) - 1)
    if any(x < 0 for x in dist) or sum(dist) != 1:
        raise ValueError("the distribution of K must be non-negative and sum to 1")
    at_least = [sum(dist[i:], Fraction(0)) for i in range(1, gamma + 1)]
    checked = sum(at_least[:-1], Fraction(1))  # E[min(K + 1, gamma)]: draft 1 always, i + 1 after i kept
    accepted = sum(at_least, Fraction(0))
    return EngineMetrics(gamma, 0, tuple(at_least), conditional(at_least), 1 + accepted, accepted / gamma,
                         accepted / checked)


def from_rounds(accepted, gamma: int) -> EngineMetrics:
    """The metrics of measured chain rounds (``accepted``: K of each round), exactly, as counts.

    Raises a one-line ValueError for no rounds or a K outside 0..gamma.
    """
    gamma = _check_gamma(gamma)
    ks = list(accepted)
    if not ks:
        raise ValueError("no rounds to summarize")
    bad = next((k for k in ks if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k <= gamma), None)
    if bad is not None:
        raise ValueError(f"a round accepted {str(bad)[:20]} drafts; K must be a whole number from 0 to {gamma}")
    n = len(ks)
    counts = [0] * (gamma + 1)
    for k in ks:
        counts[k] += 1
    m = exact([Fraction(c, n) for c in counts])
    return EngineMetrics(gamma, n, m.per_position, m.conditional, m.mean_length, m.draft_acceptance_rate, m.alpha)
