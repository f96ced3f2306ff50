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
