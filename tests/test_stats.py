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
