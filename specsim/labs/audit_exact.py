"""The exact p-value of Pearson's statistic for few cells and few runs: every outcome enumerated.

N runs over C cells with exact law p have comb(N + C - 1, C - 1) possible
count vectors x, each with the multinomial probability
N! prod p_i^x_i / x_i!. The exact p-value of an observed statistic T is the
probability that an exact engine's statistic reaches it:

    P(T* >= T) = sum of P(x) over the outcomes x with T(x) >= T.

It needs no approximation and no simulation, so an exact engine gets a
p-value at or below f with probability at most f, for every f (even below
the 2e-5 that Monte Carlo resolves). Its cost is the number of outcomes, so
the audit uses it only up to ``EXACT_LIMIT`` of them (``feasible``) and falls
back to Monte Carlo beyond (``specsim.labs.audit.calibrated``).

>>> from fractions import Fraction as F
>>> exact_tail_fraction([2, 0], [F(1, 2), F(1, 2)])  # T = 2; the outcomes (2, 0) and (0, 2) reach it
Fraction(1, 2)
>>> round(exact_tail(2.0, [0.5, 0.5], 2), 12)
0.5
"""
from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np

from .audit_limits import EXACT_LIMIT  # outcomes enumerated at most (about a second of numpy)


def outcomes(n: int, cells: int) -> int:
    """The count vectors of ``n`` runs over ``cells`` cells: comb(n + cells - 1, cells - 1)."""
    return math.comb(n + cells - 1, cells - 1)


def feasible(n: int, cells: int, limit: int = EXACT_LIMIT) -> bool:
    return outcomes(n, cells) <= limit


def compositions(n: int, cells: int) -> np.ndarray:
    """Every count vector of ``n`` runs over ``cells`` cells, one a row (outcomes(n, cells), cells): stars and
    bars, the bars' positions from ``itertools.combinations``."""
    bars = np.array(list(itertools.combinations(range(n + cells - 1), cells - 1)), dtype=np.int64)
    bars = bars.reshape(-1, cells - 1)
    edges = np.concatenate([np.full((len(bars), 1), -1), bars, np.full((len(bars), 1), n + cells - 1)], axis=1)
    return np.diff(edges, axis=1) - 1


def exact_tail(stat: float, probs, n: int) -> float:
    """P(Pearson's statistic of n runs from ``probs`` >= ``stat``), every outcome enumerated (floats: the
    probabilities in logs; a statistic within 1e-9 relative of ``stat`` counts as reaching it, as a tie)."""
    from scipy.special import gammaln
    p = np.asarray(probs, dtype=float)
    x = compositions(n, len(p))  # (M, C)
    e = n * p
    t = ((x - e) ** 2 / e).sum(axis=1)
    reach = t >= stat - 1e-9 * max(1.0, abs(stat))
    if reach.all():
        return 1.0
    log_pmf = gammaln(n + 1) - gammaln(x + 1).sum(axis=1) + (x * np.log(p)).sum(axis=1)
    return float(min(1.0, np.exp(log_pmf[reach]).sum()))


def exact_tail_fraction(counts, probs) -> Fraction:
    """The same p-value in exact arithmetic, for ``probs`` given as Fractions (the reference the float version is
    tested against): ties are exact here."""
    n, probs = sum(counts), [Fraction(v) for v in probs]

    def pearson(x):
        return sum((xi - n * pi) ** 2 / (n * pi) for xi, pi in zip(x, probs))

    stat = pearson(counts)
    total = Fraction(0)
    for x in compositions(n, len(probs)).tolist():
        if pearson(x) >= stat:
            coef = math.factorial(n)
            for xi in x:
                coef //= math.factorial(xi)
            total += coef * math.prod(pi ** xi for pi, xi in zip(probs, x))
    return total
