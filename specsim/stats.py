"""Goodness of fit: do sampled counts match exact probabilities?

Pearson's chi-square test. Cells whose expected count is below
``min_expected`` (5 by default, the usual rule of thumb) are pooled into one
cell, so the chi-square approximation holds; if the pooled cell is itself
still below ``min_expected`` it is merged with the next smallest cell.
Degrees of freedom = cells after pooling - 1. A sampled outcome the exact
distribution gives probability 0 cannot happen at all: the test then fails
outright (statistic infinite, p-value 0).

Under the null hypothesis (the sampler is right) the p-value is uniform on
[0, 1], so a test that rejects when p < 0.001 raises a false alarm in one run
out of a thousand; the test suite uses fixed seeds, so its verdicts are
reproducible.

Example
-------
>>> from fractions import Fraction as F
>>> fit = chi_square({"a": 480, "b": 520}, {"a": F(1, 2), "b": F(1, 2)})
>>> fit.statistic, fit.dof, round(fit.p_value, 3)
(1.6, 1, 0.206)
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from scipy.stats import chi2


@dataclass
class GoodnessOfFit:
    statistic: float
    dof: int
    p_value: float
    cells: int  # cells after pooling
    pooled: int  # rare cells merged into one
    unexpected: list  # sampled outcomes with exact probability 0

    def passes(self, level: float = 1e-3) -> bool:
        """True when the test does not reject at false-alarm rate ``level``."""
        return self.p_value >= level

    def to_dict(self) -> dict:
        return {"statistic": self.statistic, "dof": self.dof, "p_value": self.p_value,
                "cells": self.cells, "pooled": self.pooled,
                "unexpected": [list(u) if isinstance(u, tuple) else u for u in self.unexpected]}


def chi_square(counts: dict, probabilities: dict, min_expected: float = 5) -> GoodnessOfFit:
    """Pearson chi-square of ``counts`` (outcome -> n) against exact ``probabilities``."""
    total = sum(counts.values())
    if total < 1:
        raise ValueError("no samples to test")
    unexpected = [k for k, c in counts.items() if c and not probabilities.get(k, 0)]
    if unexpected:
        return GoodnessOfFit(math.inf, 0, 0.0, 0, 0, unexpected)
    cells = sorted(((float(pr) * total, counts.get(k, 0)) for k, pr in probabilities.items() if pr),
                   key=lambda c: c[0])
    rare = [c for c in cells if c[0] < min_expected]
    kept = [c for c in cells if c[0] >= min_expected]
    pooled = len(rare)
    if rare:
        cell = (sum(e for e, _ in rare), sum(o for _, o in rare))
        while cell[0] < min_expected and kept:
            e, o = kept.pop(0)
            cell = (cell[0] + e, cell[1] + o)
            pooled += 1
        kept.append(cell)
    dof = len(kept) - 1
    statistic = sum((o - e) ** 2 / e for e, o in kept)
    p_value = float(chi2.sf(statistic, dof)) if dof > 0 else 1.0
    return GoodnessOfFit(float(statistic), dof, p_value, len(kept), pooled, [])


def fit_round(sample, exact) -> dict:
    """Chi-square of a ``SampleResult`` against a ``RoundDistribution``: outcomes and K."""
    accepted = dict(enumerate(sample.accepted_counts))
    return {"outcomes": chi_square(sample.outcomes, exact.outcomes),
            "accepted": chi_square(accepted, dict(enumerate(exact.accepted)))}


@dataclass
class Estimate:
    """A measured mean with its standard error; ``within(x)``: x is within ``k`` SE."""

    value: float
    se: float
    n: int

    def within(self, x, k: float = 2) -> bool:
        return abs(float(x) - self.value) <= k * self.se


def mean_se(values) -> Estimate:
    """Sample mean and its standard error s / sqrt(n) (s with n - 1 in the denominator).

    >>> e = mean_se([1, 2, 3, 4])
    >>> e.value, round(e.se, 4), e.n
    (2.5, 0.6455, 4)
    """
    xs = [float(v) for v in values]
    n = len(xs)
    if n < 2:
        raise ValueError(f"a standard error needs at least 2 values, got {n}")
    mean = sum(xs) / n
    var = sum((x - mean) ** 2 for x in xs) / (n - 1)
    return Estimate(mean, math.sqrt(var / n), n)


def ratio_se(numerators, denominators) -> Estimate:
    """sum(num) / sum(den) over independent units (rounds), with its delta-method SE.

    The acceptance rate accepted / checked is such a ratio: each round gives
    its accepted and checked drafts. SE = sqrt(sum (a_i - R b_i)^2 / (n (n - 1))) / mean(b).

    >>> e = ratio_se([1, 2, 0, 3], [2, 2, 1, 3])
    >>> e.value, round(e.se, 4)
    (0.75, 0.184)
    """
    a, b = [float(v) for v in numerators], [float(v) for v in denominators]
    n = len(a)
    if n < 2 or len(b) != n:
        raise ValueError(f"need at least 2 paired values, got {n} and {len(b)}")
    r = sum(a) / sum(b)
    spread = sum((x - r * y) ** 2 for x, y in zip(a, b)) / (n * (n - 1))
    return Estimate(r, math.sqrt(spread) / (sum(b) / n), n)
