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

Standard errors of measured means and ratios follow one convention (the GPT
path's included, with the prompt as the cluster): the cluster-robust variance
with the small-sample factor G / (G - 1) (``mean_se``, ``ratio_se``, ``gap_se``),
the bootstrap over clusters scaled to the same variance
(``cluster_bootstrap_se``), and a verdict read against Student's t with
G - 1 degrees of freedom (``t_threshold``). ``_linearized_se`` says why;
``t_test_size`` gives the real size of a test that strays from it.

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
    from scipy.stats import chi2  # here, not at the top: scipy.stats takes 0.7 s to import, most pages never test
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


def _linearized_se(z, clusters=None) -> float:
    """Standard error of mean(z) when units in one cluster may be correlated.

    The units' deviations from the mean are summed per cluster and the
    clusters are treated as independent: SE^2 = G / (G - 1) * sum_g S_g^2 / n^2
    ("sandwich" or cluster-robust SE). With ``clusters=None`` every unit is its
    own cluster and this is the textbook s / sqrt(n).

    This is the one convention of every clustered SE in specsim (the GPT
    path's included; ``cluster_bootstrap_se`` is scaled to it): the factor
    G / (G - 1) makes the variance unbiased for independent clusters, and it
    is what makes ``t_threshold`` the right yardstick. With equal clusters
    (the same number of units each, as in the doctest below) this SE is the
    between-cluster standard deviation (divisor G - 1) over sqrt(G), so for
    normal cluster means (value - truth) / SE follows Student's t with
    G - 1 degrees of freedom exactly; for ratios and unequal clusters
    approximately (``tests/test_cluster_se_size.py`` simulates the size).
    Without the factor the SE is sqrt((G - 1) / G) times smaller (0.894 for
    5 clusters, 0.816 for 3) and a 5 % test at the t threshold rejects about
    7 % of the time.

    >>> round(_linearized_se([1, 2, 3, 4, 5, 6], clusters=[0, 0, 1, 1, 2, 2]), 4)    # cluster means 1.5, 3.5, 5.5
    1.1547
    >>> round(mean_se([1.5, 3.5, 5.5]).se, 4)          # the same: s / sqrt(G) of the cluster means
    1.1547
    """
    n = len(z)
    mean = sum(z) / n
    if clusters is None:
        sums = [x - mean for x in z]
    else:
        if len(clusters) != n:
            raise ValueError(f"need one cluster label per value, got {len(clusters)} for {n} values")
        by = {}
        for x, g in zip(z, clusters):
            by[g] = by.get(g, 0.0) + (x - mean)
        sums = list(by.values())
    g = len(sums)
    if g < 2:
        raise ValueError(f"a standard error needs at least 2 clusters, got {g}")
    return math.sqrt(g / (g - 1) * sum(s * s for s in sums)) / n


def mean_se(values, clusters=None) -> Estimate:
    """Sample mean and its standard error s / sqrt(n) (s with n - 1 in the denominator).

    ``clusters`` (one label per value, e.g. the generation a round came from)
    gives the cluster-robust SE instead: values of one cluster may be correlated.

    >>> e = mean_se([1, 2, 3, 4])
    >>> e.value, round(e.se, 4), e.n
    (2.5, 0.6455, 4)
    >>> round(mean_se([1, 2, 3, 4], clusters=[0, 0, 1, 1]).se, 4)     # two clusters: (1, 2) and (3, 4)
    1.0
    """
    xs = [float(v) for v in values]
    n = len(xs)
    if n < 2:
        raise ValueError(f"a standard error needs at least 2 values, got {n}")
    return Estimate(sum(xs) / n, _linearized_se(xs, clusters), n)


def ratio_se(numerators, denominators, clusters=None) -> Estimate:
    """sum(num) / sum(den) over units (rounds), with its delta-method SE.

    The acceptance rate accepted / checked is such a ratio: each round gives
    its accepted and checked drafts. Each unit's influence on the ratio is
    z_i = (a_i - R b_i) / mean(b), so SE = sqrt(sum z_i^2 / (n (n - 1))) for
    independent units; ``clusters`` sums the z_i per cluster first.

    >>> e = ratio_se([1, 2, 0, 3], [2, 2, 1, 3])
    >>> e.value, round(e.se, 4)
    (0.75, 0.184)
    """
    a, b = _paired(numerators, denominators, "paired values", "the denominators sum to 0: nothing was checked")
    n = len(a)
    r, mean_b = sum(a) / sum(b), sum(b) / n
    return Estimate(r, _linearized_se([(x - r * y) / mean_b for x, y in zip(a, b)], clusters), n)


def _paired(numerators, denominators, what: str, nothing: str) -> tuple[list, list]:
    """Both lists as floats; a one-line ValueError unless they pair up (at least 2) and the second sums above 0."""
    a, b = [float(v) for v in numerators], [float(v) for v in denominators]
    if len(a) < 2 or len(b) != len(a):
        raise ValueError(f"need at least 2 {what}, got {len(a)} and {len(b)}")
    if sum(b) <= 0:
        raise ValueError(nothing)
    return a, b


# -- measured tokens per round against a formula at the measured alpha -------------------------

def gap_se(accepted, checked, formula, slope, clusters=None) -> Estimate:
    """D = mean tokens per round - formula(alpha_hat), with its delta-method standard error.

    Round i accepted ``accepted[i]`` drafts out of ``checked[i]`` judged and
    emitted accepted[i] + 1 tokens; alpha_hat = sum(accepted) / sum(checked)
    comes from the same rounds as the mean, so the two errors are correlated
    and largely cancel in D. Linearizing D around the estimates, round i
    contributes z_i = (t_i - T) - slope(alpha_hat) (a_i - alpha_hat c_i) / mean(c),
    and SE(D) = the SE of mean(z) (clustered when ``clusters`` is given).
    ``formula`` and ``slope`` are f and f' (``specsim.formulas`` supplies them).

    >>> f = lambda a: 1 + a + a * a          # gamma = 2: 1 + alpha + alpha^2
    >>> d = gap_se([2, 0, 1, 2, 2, 1], [2, 1, 2, 2, 2, 2], f, lambda a: 1 + 2 * a)
    >>> round(d.value, 4), round(d.se, 4)
    (0.0771, 0.0988)
    """
    a, c = _paired(accepted, checked, "rounds with accepted and checked counts", "no draft was checked in these rounds")
    n = len(a)
    alpha, mean_t, mean_c = sum(a) / sum(c), 1 + sum(a) / n, sum(c) / n
    s = slope(alpha)
    z = [(x + 1 - mean_t) - s * (x - alpha * y) / mean_c for x, y in zip(a, c)]
    return Estimate(mean_t - formula(alpha), _linearized_se(z, clusters), n)


def cluster_bootstrap_se(totals, statistic, n_boot: int = 2000, seed: int = 0) -> float:
    """Bootstrap SE of a statistic of column sums, resampling whole clusters, on the clustered SE's scale.

    ``totals`` has one row per cluster (e.g. per prompt: rounds, tokens,
    accepted, checked); a resample draws as many clusters with replacement,
    sums their rows and applies ``statistic`` to the sums, vectorized: it gets
    an (n_boot, columns) array and returns n_boot values.

    Returns their standard deviation times sqrt(G / (G - 1)) for G clusters.
    The plain bootstrap standard deviation is the plug-in estimate: for a
    statistic linear in the clusters' totals it is sqrt((G - 1) / G) times
    the cluster-robust SE of ``_linearized_se`` (0.894 with 5 clusters,
    0.816 with 3), so read against Student's t with G - 1 degrees of freedom
    a nominal 5 % test would reject about 7 % of the time. Scaled, the
    bootstrap and the delta method estimate the same variance, and both are
    read against ``t_threshold(G)``: one convention for every clustered SE.

    >>> import numpy as np
    >>> rows = [(1, 3), (1, 5), (1, 4), (1, 8)]                     # (count, value) per cluster
    >>> round(cluster_bootstrap_se(rows, lambda s: s[:, 1] / s[:, 0], 4000, seed=1), 2)
    1.07
    >>> round(mean_se([3, 5, 4, 8]).se, 2)                           # the delta method's, for a linear statistic
    1.08
    """
    import numpy as np

    rows = np.asarray(totals, dtype=float)  # (G, m)
    if rows.ndim != 2 or len(rows) < 2:
        raise ValueError(f"a bootstrap needs at least 2 clusters, got {len(rows)}")
    g = len(rows)
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, g, size=(n_boot, g))  # (n_boot, G)
    values = np.asarray(statistic(rows[picks].sum(axis=1)), dtype=float)  # (n_boot,)
    return float(values.std(ddof=1)) * math.sqrt(g / (g - 1))


def t_threshold(clusters: int, level: float = 0.05) -> float:
    """The two-sided threshold of a test at ``level`` for an estimate with a clustered SE: t with G - 1 df.

    A standard error from G clusters is itself an estimate from G numbers;
    the ratio estimate / SE is then read against Student's t with G - 1
    degrees of freedom, not the normal's 1.96. Use it with the SEs of this
    module (``mean_se``, ``ratio_se``, ``gap_se`` with ``clusters``, and
    ``cluster_bootstrap_se``), which share its convention.

    >>> [round(t_threshold(g), 2) for g in (3, 4, 5, 30)]
    [4.3, 3.18, 2.78, 2.05]
    """
    if clusters < 2 or not 0 < level < 1:
        raise ValueError(f"need at least 2 clusters and a level in (0, 1), got {clusters} and {level}")
    from scipy.stats import t as student  # here, not at the top: scipy.stats takes 0.7 s to import

    return float(student.ppf(1 - level / 2, clusters - 1))


def t_test_size(clusters: int, se_scale: float = 1.0, level: float = 0.05, threshold: float | None = None) -> float:
    """The real false-alarm rate of a test that flags |estimate| > threshold x SE, when the SE used is
    ``se_scale`` times the convention's (``_linearized_se``) and G = ``clusters``.

    For normal cluster means, (estimate - truth) / SE follows Student's t with
    G - 1 degrees of freedom (see ``_linearized_se``), so the test rejects a
    true null with probability P(|T| > threshold x se_scale). The threshold
    defaults to ``t_threshold(G, level)``, where the size is ``level`` exactly.
    The plain bootstrap SD has se_scale = sqrt((G - 1) / G):

    >>> round(t_test_size(5), 4), round(t_test_size(5, (4 / 5) ** 0.5), 3), round(t_test_size(3, (2 / 3) ** 0.5), 3)
    (0.05, 0.068, 0.072)
    >>> round(t_test_size(5, (4 / 5) ** 0.5, threshold=1.96), 3)      # and read against the normal's 1.96
    0.154
    """
    if se_scale <= 0:
        raise ValueError(f"se_scale must be positive, got {se_scale}")
    crit = t_threshold(clusters, level) if threshold is None else float(threshold)
    from scipy.stats import t as student

    return float(2 * student.sf(crit * se_scale, clusters - 1))


def bootstrap_best_share(numerators, denominators: dict, n_boot: int = 2000, seed: int = 0):
    """How often each arm has the largest sum(num) / sum(den) when whole units (prompts) are resampled,
    the same resample for every arm: how settled "the best arm" is by which units were drawn.

    ``denominators``: arm -> one value per unit (an arm's decoding time per prompt; ``numerators`` plain
    decoding's). Returns arm -> share of the resamples it wins (ties go to the first arm listed), or
    None with fewer than 2 units.

    >>> bootstrap_best_share([2, 2, 2], {"a": [1, 1, 1], "b": [2, 2, 2]})
    {'a': 1.0, 'b': 0.0}
    >>> share = bootstrap_best_share([4, 4], {"a": [1, 3], "b": [2, 2]}, seed=1)  # a wins on unit 0 only
    >>> 0 < share["a"] < 1 and share["a"] + share["b"] == 1
    True
    """
    import numpy as np

    arms = list(denominators)
    a = np.asarray(numerators, dtype=float)
    b = np.asarray([denominators[k] for k in arms], dtype=float)  # (arms, units)
    if b.shape != (len(arms), a.size) or a.ndim != 1:
        raise ValueError(f"need one time per unit for every arm, {a.size} units")
    if a.size < 2:
        return None
    picks = np.random.default_rng(seed).integers(0, a.size, size=(n_boot, a.size))
    ratios = a[picks].sum(axis=1)[None] / b[:, picks].sum(axis=2)  # (arms, n_boot)
    wins = np.bincount(ratios.argmax(axis=0), minlength=len(arms))
    return {k: round(float(w) / n_boot, 4) for k, w in zip(arms, wins)}


def bootstrap_ratio_interval(numerators, denominators, level: float = 0.95, n_boot: int = 2000,
                             seed: int = 0):
    """Percentile bootstrap interval of sum(num) / sum(den), resampling whole units (e.g. prompts).

    A speedup measured over several prompts is such a ratio: plain decoding's
    time over speculative decoding's, summed over the prompts. Which prompts
    were drawn moves it (an easy prompt accepts more), so the interval resamples
    prompts with replacement and reads the ``level`` central range of the
    resampled ratios. With few units it is rough and tends to be too narrow;
    ``None`` with fewer than 2 units.

    >>> bootstrap_ratio_interval([2, 2, 2], [1, 1, 1])
    (2.0, 2.0)
    >>> low, high = bootstrap_ratio_interval([3, 2, 4, 2], [1, 1, 2, 2], seed=1)
    >>> low < (3 + 2 + 4 + 2) / (1 + 1 + 2 + 2) < high
    True
    """
    import numpy as np

    a, b = np.asarray(numerators, dtype=float), np.asarray(denominators, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"need one denominator per numerator, got {b.size} for {a.size}")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    if len(a) < 2:
        return None
    picks = np.random.default_rng(seed).integers(0, len(a), size=(n_boot, len(a)))
    ratios = a[picks].sum(axis=1) / b[picks].sum(axis=1)
    low, high = np.quantile(ratios, [(1 - level) / 2, (1 + level) / 2])
    return float(low), float(high)


def totals_by(rows, labels) -> list:
    """Sum the rows that share a label (one row per label, in the labels' first-seen order).

    Per-generation totals become per-prompt totals this way, so that a bootstrap
    (``cluster_bootstrap_se``) resamples prompts, the unit that was replicated,
    and not the generations that reuse them.

    >>> totals_by([(1, 2), (3, 4), (5, 6)], ["p0", "p1", "p0"])
    [(6.0, 8.0), (3.0, 4.0)]
    """
    rows, labels = [tuple(float(x) for x in r) for r in rows], list(labels)
    if len(rows) != len(labels):
        raise ValueError(f"need one label per row, got {len(labels)} for {len(rows)} rows")
    out: dict = {}
    for r, g in zip(rows, labels):
        out[g] = tuple(a + b for a, b in zip(out[g], r)) if g in out else r
    return list(out.values())


def luck_se(accepted, probabilities) -> Estimate:
    """The luck of the acceptance draws: mean(accepted - probability) over judged drafts, with its SE.

    Draft i was accepted (1) or not (0) with probability ``probabilities[i]``
    given everything before it. The differences are then martingale differences:
    uncorrelated whatever the dependence between positions and texts, each with
    variance e (1 - e). So SE = sqrt(sum e (1 - e)) / n, with no clustering, and
    it is exact where the probabilities are the ones the draws faced. (A
    cluster-robust SE over a few texts estimates the same thing far more
    roughly.)

    >>> e = luck_se([1, 0, 1, 1], [0.5, 0.5, 0.5, 0.5])
    >>> e.value, e.se, e.n
    (0.25, 0.25, 4)
    """
    a, e = [float(x) for x in accepted], [float(x) for x in probabilities]
    n = len(a)
    if n < 1 or len(e) != n:
        raise ValueError(f"need one probability per judged draft, got {len(e)} for {n}")
    if any(not 0 <= x <= 1 for x in e) or any(x not in (0.0, 1.0) for x in a):
        raise ValueError("accepted must be 0 or 1 and every probability in [0, 1]")
    return Estimate(sum(x - y for x, y in zip(a, e)) / n, math.sqrt(sum(y * (1 - y) for y in e)) / n, n)


def position_acceptance(accepted, checked, clusters=None) -> list:
    """Per-position conditional acceptance: accepted at draft position i among rounds that checked it.

    A round with ``checked`` drafts judged reached positions 1..checked and
    accepted positions 1..accepted. Under i.i.d. acceptance every position's
    rate is alpha; rates that change with the position are the direct sign
    that acceptances are not i.i.d. Returns one ``Estimate`` per position
    reached by at least one round, ``n`` = rounds that reached it, with the
    ratio estimator's SE over rounds (or clusters).

    >>> [(round(e.value, 3), e.n) for e in position_acceptance([2, 0, 1, 2, 2, 1], [2, 1, 2, 2, 2, 2])]
    [(0.833, 6), (0.6, 5)]
    """
    a, c = list(accepted), list(checked)
    if len(a) < 2 or len(c) != len(a):
        raise ValueError(f"need at least 2 rounds with accepted and checked counts, got {len(a)} and {len(c)}")
    out = []
    for i in range(1, max(c) + 1):
        reached = [int(y >= i) for y in c]
        kept = [int(x >= i) for x in a]
        e = ratio_se(kept, reached, clusters)
        out.append(Estimate(e.value, e.se, sum(reached)))
    return out


def rounds_needed(sd_per_unit: float, effect: float, level: float = 0.05, power: float = 0.8) -> int:
    """Units (rounds, generations) a two-sided test at ``level`` needs to detect ``effect`` with ``power``.

    With n units an estimate has SE = sd / sqrt(n); the test flags |estimate| > z_(1-level/2) SE,
    which an effect of that size passes with probability ``power`` when
    effect = (z_(1-level/2) + z_power) SE, so n = ((z_(1-level/2) + z_power) sd / effect)^2.
    ``sd_per_unit`` is SE * sqrt(n) from a pilot run.

    >>> rounds_needed(1.0, 0.1)                 # (1.96 + 0.84)^2 / 0.01, rounded up
    785
    """
    from scipy.stats import norm

    if not effect or sd_per_unit < 0 or not 0 < level < 1 or not 0 < power < 1:
        raise ValueError("need effect != 0, sd >= 0, level and power in (0, 1)")
    z = float(norm.ppf(1 - level / 2) + norm.ppf(power))
    return math.ceil((z * sd_per_unit / abs(effect)) ** 2)
