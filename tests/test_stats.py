"""Means and ratios with their standard errors (specsim.stats)."""
import math
import random

import pytest

from specsim import stats


def test_mean_se_by_hand():
    e = stats.mean_se([1, 2, 3, 4])  # s^2 = 5/3, se = sqrt(5/12)
    assert e.value == 2.5 and e.n == 4
    assert math.isclose(e.se, math.sqrt(5 / 12), rel_tol=1e-12)


def test_ratio_with_unit_denominators_is_the_mean():
    xs = [0, 1, 1, 0, 1, 1, 1]
    a, b = stats.ratio_se(xs, [1] * len(xs)), stats.mean_se(xs)
    assert a.value == pytest.approx(b.value, abs=1e-12) and a.se == pytest.approx(b.se, abs=1e-12)


def test_standard_error_covers_the_truth_about_as_often_as_it_should():
    # 200 experiments of 400 Bernoulli(0.3) draws: |mean - 0.3| <= 2 se in about 95% of them
    rng = random.Random(7)
    hits = sum(stats.mean_se([rng.random() < 0.3 for _ in range(400)]).within(0.3)
               for _ in range(200))
    assert 180 <= hits <= 199  # binomial(200, 0.95): mean 190, sd 3.1


def test_ratio_se_covers_a_known_acceptance_rate():
    # rounds of gamma = 4 with i.i.d. acceptance 0.7: accepted / checked estimates 0.7
    rng = random.Random(3)
    hits = 0
    for _ in range(200):
        acc, chk = [], []
        for _ in range(300):
            k = 0
            while k < 4 and rng.random() < 0.7:
                k += 1
            acc.append(k)
            chk.append(k if k == 4 else k + 1)
        hits += stats.ratio_se(acc, chk).within(0.7)
    assert 180 <= hits <= 199


def test_too_few_values():
    with pytest.raises(ValueError, match="at least 2"):
        stats.mean_se([1.0])
    with pytest.raises(ValueError, match="paired"):
        stats.ratio_se([1, 2], [1])


# -- the gap between measured tokens per round and the formula ---------------------------------
# Simulated datasets from processes whose truth we know: G generations of R rounds with gamma = 4,
# acceptance at draft position i drawn with a known rate. The spread of D over many datasets is the
# true SE(D); the estimates must match it. With 300 datasets the empirical SD itself is off by about
# 1/sqrt(2 * 299) = 4% (one SE), so a 15% tolerance is a false-alarm rate far below 1e-3.

import numpy as np  # noqa: E402

GAMMA = 4
FLAT = (0.7,) * GAMMA  # i.i.d. acceptance
FALLING = (0.9, 0.75, 0.6, 0.5)  # non-i.i.d.: each position its own rate
KINDS = ((0.95, 0.6, 0.6, 0.6), (0.5, 0.9, 0.9, 0.9))  # each generation one of two profiles


def f(a):
    return sum(a ** j for j in range(GAMMA + 1))  # the i.i.d. formula, vectorizes over numpy


def slope(a):
    return sum(j * a ** (j - 1) for j in range(1, GAMMA + 1))


def simulate(rng, generations, rounds, profile):
    """accepted, checked and the generation of every round; profile(rng) gives a generation's rates."""
    acc, chk, gen = [], [], []
    for g in range(generations):
        ok = rng.random((rounds, GAMMA)) < np.asarray(profile(rng))  # (rounds, gamma)
        k = np.where(ok.all(1), GAMMA, ok.argmin(1))
        acc += k.tolist()
        chk += np.minimum(k + 1, GAMMA).tolist()
        gen += [g] * rounds
    return acc, chk, gen


def gap_statistic(sums):  # columns: rounds, accepted, checked (summed over the resampled generations)
    return 1 + sums[:, 1] / sums[:, 0] - f(sums[:, 1] / sums[:, 2])


def spread_and_estimates(profile, datasets=300, generations=20, rounds=20, seed=1):
    rng = np.random.default_rng(seed)
    gaps, by_round, by_gen, boot, tokens_se = [], [], [], [], []
    for rep in range(datasets):
        acc, chk, gen = simulate(rng, generations, rounds, profile)
        d = stats.gap_se(acc, chk, f, slope)
        gaps.append(d.value)
        by_round.append(d.se)
        by_gen.append(stats.gap_se(acc, chk, f, slope, clusters=gen).se)
        totals = [(rounds, sum(acc[i:i + rounds]), sum(chk[i:i + rounds])) for i in range(0, len(acc), rounds)]
        boot.append(stats.cluster_bootstrap_se(totals, gap_statistic, 500, seed=rep))
        tokens_se.append(stats.mean_se([k + 1 for k in acc]).se)
    return float(np.std(gaps, ddof=1)), {"round": np.mean(by_round), "generation": np.mean(by_gen),
                                         "bootstrap": np.mean(boot), "tokens": np.mean(tokens_se)}


@pytest.mark.parametrize("profile", [lambda rng: FLAT, lambda rng: FALLING], ids=["iid", "by-position"])
def test_gap_se_matches_the_spread_of_the_gap_over_simulated_datasets(profile):
    sd, se = spread_and_estimates(profile)
    for way in ("round", "generation", "bootstrap"):
        assert se[way] == pytest.approx(sd, rel=0.15), (way, se[way], sd)
    # the mistake to avoid: judging D with SE(mean tokens) overstates its spread several times over
    assert se["tokens"] > 2.5 * sd


def test_clustered_se_follows_generations_that_differ_and_the_round_level_one_does_not():
    sd, se = spread_and_estimates(lambda rng: KINDS[rng.integers(2)])
    assert se["generation"] == pytest.approx(sd, rel=0.15) and se["bootstrap"] == pytest.approx(sd, rel=0.15)
    assert se["round"] < 0.6 * sd  # rounds of one generation share its profile: not independent


def test_gap_se_is_the_delta_method_by_hand():
    # gamma = 1: f(alpha) = 1 + alpha and every round checks one draft, so D = 0 exactly and its SE too
    d = stats.gap_se([1, 0, 1, 1], [1, 1, 1, 1], lambda a: 1 + a, lambda a: 1)
    assert d.value == pytest.approx(0, abs=1e-12) and d.se == pytest.approx(0, abs=1e-12)
    with pytest.raises(ValueError, match="at least 2 rounds"):
        stats.gap_se([1], [1], f, slope)
    with pytest.raises(ValueError, match="cluster label"):
        stats.gap_se([1, 0], [1, 1], f, slope, clusters=[0])
    with pytest.raises(ValueError, match="2 clusters"):
        stats.gap_se([1, 0], [1, 1], f, slope, clusters=[0, 0])


def test_cluster_bootstrap_is_seeded():
    rows = [(1, 3), (1, 5), (1, 4), (1, 8)]
    one = stats.cluster_bootstrap_se(rows, lambda s: s[:, 1] / s[:, 0], 300, seed=5)
    assert one == stats.cluster_bootstrap_se(rows, lambda s: s[:, 1] / s[:, 0], 300, seed=5)
    with pytest.raises(ValueError, match="2 clusters"):
        stats.cluster_bootstrap_se([(1, 3)], lambda s: s[:, 1], 10)


# -- per-position conditional acceptance ---------------------------------------------------------

def test_position_acceptance_counts_by_hand():
    # rounds (accepted, checked) with gamma = 3: (3, 3) (0, 1) (1, 2) (2, 3)
    rates = stats.position_acceptance([3, 0, 1, 2], [3, 1, 2, 3])
    assert [(e.value, e.n) for e in rates] == [(0.75, 4), (2 / 3, 3), (0.5, 2)]
    # a draft the drafter never proposed is never reached (prompt lookup: 0 drafts in a round)
    assert [e.n for e in stats.position_acceptance([0, 1], [0, 2])] == [1, 1]


@pytest.mark.parametrize("rates", [FLAT, FALLING], ids=["iid", "by-position"])
def test_position_acceptance_covers_the_true_rate_of_every_position(rates):
    rng = np.random.default_rng(2)
    hits = np.zeros(GAMMA)
    for _ in range(200):
        acc, chk, _ = simulate(rng, 1, 400, lambda r: rates)
        hits += [e.within(a) for e, a in zip(stats.position_acceptance(acc, chk), rates)]
    assert all(180 <= h <= 200 for h in hits), hits  # binomial(200, 0.95): mean 190, sd 3.1


def test_rounds_needed_gives_the_stated_power_on_simulated_data():
    # a mean of Bernoulli(0.55) against 0.5: sd per unit 0.497; the test should flag it in ~80% of runs
    sd, effect = math.sqrt(0.55 * 0.45), 0.05
    n = stats.rounds_needed(sd, effect)
    assert n == math.ceil(((1.959964 + 0.841621) * sd / effect) ** 2)
    rng = np.random.default_rng(4)
    flagged = sum(abs(e.value - 0.5) > 1.959964 * e.se
                  for e in (stats.mean_se(rng.random(n) < 0.55) for _ in range(400)))
    assert 0.74 <= flagged / 400 <= 0.86  # binomial(400, 0.8): sd 0.02, so 3 sd either side
    with pytest.raises(ValueError, match="effect"):
        stats.rounds_needed(1.0, 0)


def test_luck_se_is_the_bernoulli_sd_of_the_draws():
    """The luck's SE is sqrt(sum e(1 - e)) / n whatever the texts; a simulation of draws with those
    probabilities gives a spread of the mean within 10 % of it (4,000 replicates, seed 0: the SD of a
    sample SD is about 1.1 % here, so 10 % is about nine of them)."""
    rng = random.Random(0)
    probs = [rng.uniform(0.3, 0.95) for _ in range(400)]
    e = stats.luck_se([1] * 200 + [0] * 200, probs)
    assert e.se == pytest.approx(math.sqrt(sum(p * (1 - p) for p in probs)) / 400, rel=1e-12)
    means = [sum((rng.random() < p) - p for p in probs) / 400 for _ in range(4000)]
    sd = math.sqrt(sum(m * m for m in means) / len(means))
    assert sd == pytest.approx(e.se, rel=0.10)
    with pytest.raises(ValueError, match="0 or 1"):
        stats.luck_se([2], [0.5])


def test_totals_by_sums_the_rows_of_a_label():
    assert stats.totals_by([(1, 2), (3, 4), (5, 6), (7, 8)], [0, 1, 0, 1]) == [(6.0, 8.0), (10.0, 12.0)]
    with pytest.raises(ValueError, match="one label per row"):
        stats.totals_by([(1, 2)], [0, 1])


def test_bootstrap_ratio_interval_covers_the_ratio_and_shrinks_with_units():
    """The 95 % interval holds the full-sample ratio; with the same per-unit noise and 16 times the units
    it is about 4 times narrower (checked within a factor 2.5 to 6.5, seed 0)."""
    rng = random.Random(0)
    few = [(2 + rng.gauss(0, 0.3), 1.0) for _ in range(8)]
    many = [(2 + rng.gauss(0, 0.3), 1.0) for _ in range(128)]
    widths = []
    for rows in (few, many):
        low, high = stats.bootstrap_ratio_interval([a for a, _ in rows], [b for _, b in rows], seed=0)
        assert low <= sum(a for a, _ in rows) / sum(b for _, b in rows) <= high
        widths.append(high - low)
    assert 2.5 < widths[0] / widths[1] < 6.5
    assert stats.bootstrap_ratio_interval([1.0], [1.0]) is None
    with pytest.raises(ValueError, match="level"):
        stats.bootstrap_ratio_interval([1, 2], [1, 1], level=1.5)
