"""Speedup formulas: closed form against direct sums, and the source's tables."""
from fractions import Fraction as F

import pytest

from specsim import formulas


@pytest.mark.parametrize("alpha", [F(0), F(1, 3), F(9, 10), F(1)])
@pytest.mark.parametrize("gamma", [0, 1, 4, 9])
def test_expected_tokens_is_the_geometric_sum(alpha, gamma):
    assert formulas.expected_tokens(alpha, gamma) == sum(alpha ** k for k in range(gamma + 1))


def test_best_gamma_is_the_argmax_of_the_speedup():
    for alpha in (F(3, 5), F(4, 5), F(9, 10)):
        for cost in (F(1, 20), F(1, 5)):
            g, s = formulas.best_gamma(alpha, cost)
            values = [formulas.speedup(alpha, k, cost) for k in range(1, 33)]
            assert s == max(values) and g == values.index(max(values)) + 1


@pytest.mark.parametrize("cost, alpha, gamma, speedup", [
    (F(1, 20), F(3, 5), 4, 1.92), (F(1, 20), F(4, 5), 8, 3.09), (F(1, 20), F(9, 10), 13, 4.67),
    (F(1, 5), F(3, 5), 2, 1.40), (F(1, 5), F(4, 5), 4, 1.87), (F(1, 5), F(9, 10), 7, 2.37),
])
def test_reference_best_gammas(cost, alpha, gamma, speedup):
    g, s = formulas.best_gamma(alpha, cost)
    assert g == gamma
    assert round(float(s), 2) == speedup


def test_slower_than_plain_decoding():
    s = formulas.speedup(F(3, 5), 8, F(1, 5))
    assert s < 1 and round(float(s), 2) == 0.95


def test_tables_rows_agree_with_speedup():
    tables = formulas.speedup_tables()
    assert [t["cost"] for t in tables] == [F(1, 20), F(1, 5)]
    for t in tables:
        for row in t["rows"]:
            assert list(row["speedups"]) == [1, 2, 4, 6, 8, 12]
            for g, s in row["speedups"].items():
                assert s == formulas.speedup(row["alpha"], g, t["cost"])
            assert (row["best_gamma"], row["best_speedup"]) == formulas.best_gamma(row["alpha"], t["cost"])


def test_refined_speedup_reduces_to_the_formula():
    a, g, c = F(4, 5), 4, F(1, 10)
    assert formulas.refined_speedup(formulas.expected_tokens(a, g), g, c, 1) == formulas.speedup(a, g, c)


@pytest.mark.parametrize("call, message", [
    (lambda: formulas.speedup(1.5, 2, 0.1), "alpha must be in"),
    (lambda: formulas.speedup(0.5, 2, -1), "cost must be >= 0"),
    (lambda: formulas.best_gamma(0.5, 0.1, 0), "max_gamma must be >= 1"),
])
def test_bad_parameters(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_integer_inputs_stay_exact():
    assert formulas.speedup(0, 4, F(1, 20)) == F(5, 6)
    assert isinstance(formulas.expected_tokens(1, 3), F)


@pytest.mark.parametrize("alpha, cost", [(F(3, 5), F(1, 5)), (F(9, 10), F(1, 20)), (0.8, 0.05), (F(1), F(0))])
def test_speedup_curve_is_the_speedup_at_every_gamma_and_its_best(alpha, cost):
    curve = formulas.speedup_curve(alpha, cost, 16)
    assert curve["gammas"] == list(range(1, 17))
    assert curve["speedups"] == [formulas.speedup(alpha, g, cost) for g in range(1, 17)]
    assert (curve["best_gamma"], curve["best_speedup"]) == formulas.best_gamma(alpha, cost, 16)
    assert curve["best_speedup"] == max(curve["speedups"])


def test_best_gamma_grid_is_best_gamma_in_every_cell():
    alphas, costs = (F(3, 5), F(4, 5), F(9, 10)), (F(1, 20), F(1, 5))
    grid = formulas.best_gamma_grid(alphas, costs, 32)
    assert grid["alphas"] == [0.6, 0.8, 0.9] and grid["costs"] == [0.05, 0.2]
    for i, c in enumerate(costs):
        for j, a in enumerate(alphas):
            assert (grid["best_gamma"][i][j], grid["best_speedup"][i][j]) == formulas.best_gamma(float(a), float(c))
    assert grid["best_gamma"] == [[4, 8, 13], [2, 4, 7]]  # the design document's reference table


def test_best_gamma_grid_default_grid_shape():
    grid = formulas.best_gamma_grid(max_gamma=4)
    assert len(grid["costs"]) == len(formulas.GRID_COSTS) == len(grid["best_gamma"])
    assert {len(row) for row in grid["best_speedup"]} == {len(formulas.GRID_ALPHAS)}
    assert grid["alphas"][0] == 0.02 and grid["alphas"][-1] == 0.98 and grid["costs"][-1] == 0.6


def test_exact_speedup_is_expected_tokens_over_the_round_cost():
    assert formulas.exact_speedup(F(1659, 500), 3, F(1, 20)) == F(1659, 500) / (3 * F(1, 20) + 1)
    for a, g, c in [(F(9, 10), 3, F(1, 20)), (F(3, 5), 8, F(1, 5))]:  # with the i.i.d. E[tokens]: the formula
        assert formulas.exact_speedup(formulas.expected_tokens(a, g), g, c) == formulas.speedup(a, g, c)


# -- the gap to the formula is judged by its own standard error --------------------------------

def _rounds(rates, n, seed):
    """n rounds whose draft at position i is accepted with rates[i] (independent rounds)."""
    import random
    rng, out = random.Random(seed), []
    for _ in range(n):
        k = 0
        while k < len(rates) and rng.random() < rates[k]:
            k += 1
        out.append(k)
    return out


def test_gap_is_judged_by_its_own_standard_error_not_the_mean_tokens_one():
    # acceptance that falls with the position (non-i.i.d.), 400 rounds of gamma = 4
    ks = _rounds((0.85, 0.75, 0.7, 0.65), 400, seed=3)
    m = formulas.measured_vs_formula(ks, 4)
    assert m["gap_in_se"] == pytest.approx(m["gap"] / m["gap_se"])
    assert m["tokens"].se > 3 * m["gap_se"]
    # the old test (gap against SE of the mean) called this gap noise; its own SE does not
    assert abs(m["gap"]) < 2 * m["tokens"].se and m["verdict"] == "beyond noise"
    # the per-position rates show why: they fall with the position
    first, last = m["positions"][0], m["positions"][-1]
    assert first.value - last.value > 2 * (first.se ** 2 + last.se ** 2) ** 0.5


def test_gamma_one_has_no_gap_and_no_noise():
    m = formulas.measured_vs_formula([1, 0, 1, 1, 0], 1)
    assert m["gap"] == pytest.approx(0, abs=1e-12) and m["verdict"] == "within noise" and m["gap_in_se"] == 0


def test_clusters_and_checked_pass_through():
    ks, gens = [2, 0, 1, 2, 2, 1, 0, 2], [0, 0, 1, 1, 2, 2, 3, 3]
    m = formulas.measured_vs_formula(ks, 2, clusters=gens)
    from specsim import stats
    assert m["alpha"] == stats.ratio_se(ks, [2, 1, 2, 2, 2, 2, 1, 2], gens)
    # with drafts missing (prompt lookup): the round that drafted nothing checked nothing
    m = formulas.measured_vs_formula([0, 1, 2], 2, checked=[0, 2, 2])
    assert m["alpha"].value == pytest.approx(3 / 4) and m["positions"][0].n == 2
    with pytest.raises(ValueError, match="checked must give one count per round"):
        formulas.measured_vs_formula([0, 1, 2], 2, checked=[0, 0, 2])


def test_bootstrap_and_delta_method_agree_on_many_generations():
    ks = _rounds((0.9, 0.8, 0.7, 0.6), 600, seed=4)
    gens = [i // 20 for i in range(600)]  # 30 generations of 20 rounds
    delta = formulas.measured_vs_formula(ks, 4, clusters=gens)["gap_se"]
    boot = formulas.gap_bootstrap_se(ks, 4, gens, n_boot=4000, seed=0)
    assert boot == pytest.approx(delta, rel=0.2)  # 30 clusters: each estimate is itself ~13% noisy


@pytest.mark.parametrize("target,gamma,cost,v", [(2, 3, 0.1, 1.2), (1.5, 1, 0.05, 1.0), (2, 6, 0.11, 2.2),
                                                 (0.5, 2, 0.1, 1.0)])
def test_alpha_needed_is_the_least_alpha_that_reaches_the_target(target, gamma, cost, v):
    a = formulas.alpha_needed(target, gamma, cost, v)
    reach = lambda x: float(formulas.expected_tokens(x, gamma)) / (gamma * cost + v)  # noqa: E731
    assert reach(a) >= target - 1e-9
    assert a == 0.0 or reach(a - 1e-6) < target  # a hair less falls short


def test_alpha_needed_out_of_reach_is_none():
    assert formulas.alpha_needed(2, 2, 0.2, 1.5) is None  # 3 tokens / 1.9 steps < 2 even at alpha = 1
    assert formulas.alpha_needed(2, 2, 0.2, 1.0) is not None  # 3 / 1.4 > 2
