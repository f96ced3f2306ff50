"""The acceptance rule on Fractions and floats, and its one-position identity."""
from fractions import Fraction as F

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specsim import rule


def test_acceptance_probability_is_min_of_one_and_ratio():
    assert rule.acceptance_probability(F(1, 10), F(2, 5)) == F(1, 4)
    assert rule.acceptance_probability(F(3, 5), F(1, 2)) == 1
    assert isinstance(rule.acceptance_probability(F(3, 5), F(1, 2)), F)
    assert rule.acceptance_probability(0.1, 0.4) == pytest.approx(0.25, abs=1e-15)
    assert rule.acceptance_probability(0.5, 0.25) == 1.0


def test_acceptance_of_a_token_the_drafter_never_proposes_is_an_error():
    with pytest.raises(ValueError, match="q\\(x\\) = 0"):
        rule.acceptance_probability(F(1, 2), F(0))


def test_residual_is_undefined_when_p_equals_q():
    p = [F(1, 3), F(2, 3)]
    assert rule.residual(p, p) is None
    assert rule.residual_mass(p, p) == 0
    assert rule.alpha(p, p) == 1


def test_residual_handles_zeros_on_either_side():
    p = [F(1, 2), F(1, 2), F(0)]  # q = 0 < p on the second token, p = 0 < q on the third
    q = [F(1, 2), F(0), F(1, 2)]
    assert rule.residual(p, q) == [0, 1, 0]
    assert rule.alpha(p, q) == F(1, 2)


def test_wrong_lengths_are_rejected():
    with pytest.raises(ValueError, match="2 entries but q has 3"):
        rule.alpha([F(1, 2)] * 2, [F(1, 3)] * 3)


rows = st.lists(st.integers(0, 12), min_size=2, max_size=6).filter(lambda r: sum(r) > 0)


def _normalize(counts):
    total = sum(counts)
    return [F(c, total) for c in counts]


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_one_position_identity_and_alpha_is_one_minus_tv(data):
    size = data.draw(st.integers(2, 6))
    row = st.lists(st.integers(0, 12), min_size=size, max_size=size).filter(lambda r: sum(r) > 0)
    p, q = _normalize(data.draw(row)), _normalize(data.draw(row))
    a = rule.alpha(p, q)
    assert a == 1 - rule.total_variation(p, q)
    assert rule.residual_mass(p, q) == 1 - a
    r = rule.residual(p, q)
    for x in range(size):
        accepted = q[x] * rule.acceptance_probability(p[x], q[x]) if q[x] else 0
        corrected = (1 - a) * r[x] if r is not None else 0
        assert accepted + corrected == p[x]


def test_float_rows_agree_with_fraction_rows():
    p = [F(3, 10), F(1, 5), F(1, 2)]
    q = [F(1, 10), F(1, 5), F(7, 10)]
    pf, qf = [float(x) for x in p], [float(x) for x in q]
    assert rule.alpha(pf, qf) == pytest.approx(float(rule.alpha(p, q)), abs=1e-12)
    assert rule.residual(pf, qf) == pytest.approx([float(x) for x in rule.residual(p, q)], abs=1e-12)
