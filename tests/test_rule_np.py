"""The numpy twin of the rule agrees, element by element, with the Fraction rule."""
from fractions import Fraction as F

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specsim import rule, rule_np


def _normalize(counts):
    total = sum(counts)
    return [F(c, total) for c in counts]


@st.composite
def row_pairs(draw, size=None):
    """Two rational rows of one size, zeros allowed on either side; p == q about 1 time in 5."""
    size = size or draw(st.integers(2, 6))
    row = st.lists(st.integers(0, 12), min_size=size, max_size=size).filter(lambda r: sum(r) > 0)
    p = _normalize(draw(row))
    q = list(p) if draw(st.integers(0, 4)) == 0 else _normalize(draw(row))
    return p, q


def _floats(row):
    return np.array([float(x) for x in row])


@settings(max_examples=200, deadline=None)
@given(row_pairs())
def test_numpy_rule_agrees_with_fraction_rule_element_by_element(pq):
    p, q = pq
    a = rule_np.acceptance_probabilities(_floats(p), _floats(q))
    for x in range(len(p)):
        if q[x] > 0:
            assert a[x] == pytest.approx(float(rule.acceptance_probability(p[x], q[x])), abs=1e-12)
        else:  # documented: never proposed, so 0 (the scalar rule refuses)
            assert a[x] == 0
    assert rule_np.alpha(_floats(p), _floats(q)) == pytest.approx(float(rule.alpha(p, q)), abs=1e-12)
    r, r_np = rule.residual(p, q), rule_np.residual(_floats(p), _floats(q))
    if r is None:  # p <= q everywhere: NaN, or the fallback row when one is given
        assert p == q
        assert np.isnan(r_np).all()
        assert rule_np.residual(_floats(p), _floats(q), fallback=_floats(p)).tolist() == _floats(p).tolist()
    else:
        assert r_np.tolist() == pytest.approx([float(x) for x in r], abs=1e-12)


@settings(max_examples=50, deadline=None)
@given(st.lists(row_pairs(size=3), min_size=1, max_size=5))
def test_a_table_of_rows_is_the_rows_one_by_one(pairs):
    p = np.array([_floats(a) for a, _ in pairs])  # (S, V)
    q = np.array([_floats(b) for _, b in pairs])  # (S, V)
    a, al, r = rule_np.acceptance_probabilities(p, q), rule_np.alpha(p, q), rule_np.residual(p, q, fallback=p)
    assert a.shape == r.shape == (len(pairs), 3) and al.shape == (len(pairs),)
    for s in range(len(pairs)):
        assert a[s].tolist() == rule_np.acceptance_probabilities(p[s], q[s]).tolist()
        assert al[s] == rule_np.alpha(p[s], q[s])
        assert r[s].tolist() == rule_np.residual(p[s], q[s], fallback=p[s]).tolist()


def test_the_p_equals_q_row_of_a_table_is_the_only_undefined_one():
    p = np.array([[0.5, 0.5, 0.0], [0.25, 0.0, 0.75]])
    q = np.array([[0.5, 0.5, 0.0], [0.5, 0.5, 0.0]])
    r = rule_np.residual(p, q)
    assert np.isnan(r[0]).all() and r[1].tolist() == [0.0, 0.0, 1.0]


def test_shapes_must_match():
    with pytest.raises(ValueError, match="shape"):
        rule_np.alpha(np.ones(3) / 3, np.ones(2) / 2)
    with pytest.raises(ValueError, match="fallback"):
        rule_np.residual(np.array([0.5, 0.5]), np.array([0.25, 0.75]), fallback=np.ones(3))
