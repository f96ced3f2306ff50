"""The clustered standard errors hold their stated size: a 5 % test at t with G - 1 df rejects 5 % of the time.

One convention for every clustered SE (``specsim.stats``): the cluster-robust
variance with the factor G / (G - 1), the bootstrap over clusters scaled to it,
both read against ``stats.t_threshold(G)``. Each test simulates many data sets
where the null holds, with few clusters (3 and 5, as the lessons' prompts),
and counts how often |estimate - truth| > t_threshold(G) SE.

False alarms: with N data sets the rejection count is binomial; under a true
size of 5 % its standard deviation is sqrt(0.05 * 0.95 / N). Each band below is
3.29 such deviations wide on either side, so a correct SE fails it with
probability 0.001 (normal approximation); the seeds are fixed, so the verdicts
are reproducible.
"""
import math

import numpy as np
import pytest

from specsim import stats

LEVEL = 0.05
Z = 3.29  # two-sided 0.001 of the normal


def band(n: int, size: float = LEVEL) -> float:
    return Z * math.sqrt(size * (1 - size) / n)


def normal_clusters(g: int, n: int, seed: int):
    """n data sets of g clusters, one normal cluster total each (count 1): the mean is the statistic, truth 0."""
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, g))  # (n, G)


@pytest.mark.parametrize("g", [3, 5])
def test_both_clustered_ses_hold_a_five_percent_size_with_few_clusters(g):
    n = 6000
    data = normal_clusters(g, n, seed=g)
    crit = stats.t_threshold(g)
    boot_reject = delta_reject = plain_reject = 0
    for i, y in enumerate(data):
        rows = [(1.0, v) for v in y]
        boot = stats.cluster_bootstrap_se(rows, lambda s: s[:, 1] / s[:, 0], 1000, seed=i)
        delta = stats.mean_se(y.tolist(), clusters=list(range(g))).se
        est = abs(float(y.mean()))
        boot_reject += est > crit * boot
        delta_reject += est > crit * delta
        plain_reject += est > crit * boot * math.sqrt((g - 1) / g)  # the unscaled bootstrap SD
    for name, count in (("bootstrap", boot_reject), ("delta method", delta_reject)):
        assert abs(count / n - LEVEL) < band(n), (name, g, count / n)
    # the unscaled bootstrap is the mistake the scaling fixes: about 7 % at these G, not 5 %
    assert plain_reject / n > LEVEL + band(n), (g, plain_reject / n)


def acceptance_totals(rng, rate, rounds, gamma=3):
    """Accepted and checked drafts of ``rounds`` chain rounds with i.i.d. acceptance ``rate``."""
    ok = rng.random((rounds, gamma)) < rate  # (rounds, gamma)
    k = np.where(ok.all(1), gamma, ok.argmin(1))
    return float(k.sum()), float(np.minimum(k + 1, gamma).sum())


@pytest.mark.parametrize("g", [3, 5])
def test_a_paired_gain_in_alpha_is_not_flagged_more_often_than_stated(g):
    # Lesson 16's design under the null: two drafters with the same acceptance on each prompt, prompts that
    # differ (rate ~ Beta(15, 5)) and run different numbers of rounds; the statistic is the difference of the
    # two ratio estimators, its SE the scaled bootstrap over prompts or the delta method with the prompt as
    # the cluster. Ratios of unequal clusters make t only approximate: the claim is that the size is not above
    # 5 % (beyond the band), i.e. that a "beyond noise" verdict is not an artefact of the SE.
    n, rng = 3000, np.random.default_rng(10 + g)
    crit = stats.t_threshold(g)
    boot_reject = delta_reject = 0
    for i in range(n):
        rows = []
        for _ in range(g):
            rate, rounds = rng.beta(15, 5), int(rng.integers(40, 160))
            rows.append(acceptance_totals(rng, rate, rounds) + acceptance_totals(rng, rate, rounds))
        a = np.asarray(rows)  # (G, 4): accepted, checked of drafter A, then of drafter B
        gain = a[:, 0].sum() / a[:, 1].sum() - a[:, 2].sum() / a[:, 3].sum()
        boot = stats.cluster_bootstrap_se(rows, lambda s: s[:, 0] / s[:, 1] - s[:, 2] / s[:, 3], 1000, seed=i)
        ra, rb = a[:, 0].sum() / a[:, 1].sum(), a[:, 2].sum() / a[:, 3].sum()
        z = (a[:, 0] - ra * a[:, 1]) / a[:, 1].mean() - (a[:, 2] - rb * a[:, 3]) / a[:, 3].mean()  # influence
        delta = stats.mean_se(z.tolist(), clusters=list(range(g))).se
        boot_reject += abs(gain) > crit * boot
        delta_reject += abs(gain) > crit * delta
    for name, count in (("bootstrap", boot_reject), ("delta method", delta_reject)):
        assert count / n < LEVEL + band(n), (name, g, count / n)


def test_t_threshold_is_students_quantile():
    assert stats.t_threshold(5) == pytest.approx(2.7764, abs=1e-4)  # t(4), 0.975
    assert stats.t_threshold(2, level=0.1) == pytest.approx(6.3138, abs=1e-4)  # t(1), 0.95
    assert stats.t_threshold(10_000) == pytest.approx(1.96, abs=1e-3)  # many clusters: the normal's
    with pytest.raises(ValueError, match="at least 2 clusters"):
        stats.t_threshold(1)


def test_bootstrap_and_delta_method_agree_for_a_linear_statistic():
    # with the scaling, the two estimate one variance: for the mean of G cluster totals the exact bootstrap
    # variance is (G - 1) / G times the delta method's, so the scaled SE converges to it as resamples grow
    y = [3.0, 5.0, 4.0, 8.0, 1.0]
    boot = stats.cluster_bootstrap_se([(1.0, v) for v in y], lambda s: s[:, 1] / s[:, 0], 200_000, seed=2)
    assert boot == pytest.approx(stats.mean_se(y).se, rel=0.01)  # 200,000 resamples: ~0.2 % noise


def test_t_test_size_is_the_simulated_size_of_a_mean():
    # the closed form against a simulation of the same test (normal cluster means, the convention's SE scaled)
    g, n = 5, 20_000
    y = normal_clusters(g, n, seed=7)
    se = y.std(axis=1, ddof=1) / math.sqrt(g)  # the convention's SE of the mean of G equal clusters
    for scale in (1.0, math.sqrt((g - 1) / g)):
        flagged = float(np.mean(np.abs(y.mean(axis=1)) > stats.t_threshold(g) * scale * se))
        expected = stats.t_test_size(g, scale)
        assert abs(flagged - expected) < Z * math.sqrt(expected * (1 - expected) / n), (scale, flagged, expected)
    assert stats.t_test_size(g) == pytest.approx(LEVEL, abs=1e-12)
