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
