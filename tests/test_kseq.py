"""k i.i.d. drafts of one position: K-SEQ is exact (Fraction ==), and SpecInfer, K-SEQ <= the OT bound."""
import random
from fractions import Fraction as F

import pytest

from specsim.labs import kseq as ks
from specsim.rule import alpha, residual, total_variation
from specsim.toy import load_model, random_row

SEED = load_model("seed")


def cases(n, seed=0):
    """Small random rows (zeros allowed) with k = 1..3 drafts, and a few edge cases."""
    rng = random.Random(seed)
    out = [((F(1, 2), F(1, 2)), (F(1, 2), F(1, 2)), 2),  # p == q
           ((F(1), F(0)), (F(0), F(1)), 2),  # disjoint: nothing can be accepted
           ((F(1, 2), F(1, 3), F(1, 6)), (F(1, 6), F(1, 3), F(1, 2)), 2)]
    out += [(SEED.p(c), SEED.q(c), k) for c in SEED.contexts() for k in (1, 2, 3)]
    for _ in range(n):
        size = rng.randint(2, 4)
        out.append((random_row(rng, size, 12), random_row(rng, size, 12), rng.randint(1, 3)))
    return out


@pytest.mark.parametrize("p, q, k", cases(40))
def test_kseq_outputs_exactly_p_and_no_method_beats_the_ot_bound(p, q, k):
    r = ks.kseq(p, q, k)
    assert r.exact and r.output == tuple(p)  # enumerated over every k-tuple of drafts, Fractions
    assert 1 <= r.rho <= k and ks.kseq_phi(p, q, k, r.rho) >= 0  # a valid rho: the residual is a distribution
    if r.residual is not None:
        assert min(r.residual) >= 0 and sum(r.residual) == 1
    ot = ks.ot_bound(p, q, k)
    spec = ks.specinfer_acceptance(p, q, k)
    assert r.acceptance <= ot and spec <= ot and ot <= 1  # exact: the bound is a Fraction
    assert ot >= alpha(p, q) and spec >= alpha(p, q)  # k drafts never do worse than one


@pytest.mark.parametrize("p, q, k", cases(40))
def test_rho_is_the_smallest_valid_rho(p, q, k):
    rho, is_exact = ks.optimal_rho(p, q, k)
    if is_exact:
        assert rho == 1 or ks.kseq_phi(p, q, k, rho) == 0
    else:
        assert ks.kseq_phi(p, q, k, rho - ks.RHO_TOLERANCE) < 0  # rho* lies within the tolerance below rho


def test_a_rho_below_rho_star_is_not_a_distribution():
    p, q = SEED.p(("a",)), SEED.q(("a",))
    assert ks.kseq(p, q, 2).rho > 1
    with pytest.raises(ValueError, match="below rho\\*"):
        ks.kseq_output(p, q, 2, F(1))  # rho = 1 with two drafts over-accepts


def test_specinfer_with_two_drafts_is_the_recursive_formula():
    """alpha + (1 - alpha) * alpha(r, q): the second draft is tested against the residual r."""
    for c in SEED.contexts():
        p, q = SEED.p(c), SEED.q(c)
        a = alpha(p, q)
        assert ks.specinfer_acceptance(p, q, 2) == a + (1 - a) * alpha(residual(p, q), q)


def test_the_ot_bound_with_one_draft_is_maximal_coupling():
    for p, q, _ in cases(20, seed=1):
        assert ks.ot_bound(p, q, 1) == 1 - total_variation(p, q)


@pytest.mark.parametrize("p, q, k", cases(12, seed=2))
def test_the_min_cut_value_is_the_linear_programs(p, q, k):
    lp = ks.ot_bound_lp(p, q, k)
    assert abs(lp.value - float(ks.ot_bound(p, q, k))) <= lp.tolerance


def test_edge_cases():
    same = ks.compare_multidraft((F(1, 2), F(1, 2)), (F(1, 2), F(1, 2)), 3)
    assert same.specinfer == same.kseq.acceptance == same.ot == 1 and same.kseq.rho == 1
    apart = ks.compare_multidraft((F(1), F(0)), (F(0), F(1)), 2)
    assert apart.specinfer == apart.kseq.acceptance == apart.ot == 0 and apart.kseq.exact


def test_two_drafts_on_small_vocabularies():
    """The three for two drafts (the lesson's table): each gap to the OT optimum, exactly."""
    m = ks.compare_multidraft((F(1, 2), F(1, 3), F(1, 6)), (F(1, 6), F(1, 3), F(1, 2)), 2)
    assert (m.alpha, m.specinfer, m.kseq.acceptance, m.ot) == (F(2, 3), F(13, 18), F(3, 4), F(29, 36))
    assert m.gaps == {"specinfer": F(1, 12), "kseq": F(1, 18)}
    c = ks.compare_multidraft(SEED.p(("c",)), SEED.q(("c",)), 2)
    assert (c.specinfer, c.kseq.acceptance, c.ot) == (F(41, 50), F(21, 25), F(89, 100))


def test_float_rows():
    p, q = [0.6, 0.3, 0.1], [0.5, 0.4, 0.1]
    r = ks.kseq(p, q, 2)
    assert r.exact and not r.rho_exact and abs(r.rho - 1.153112887) < 1e-8
    assert abs(ks.specinfer_acceptance(p, q, 2) - 0.95) < 1e-12


@pytest.mark.parametrize("p, q, k, match", [
    ((F(1, 2), F(1, 2)), (F(1),), 2, "same length"),
    ((F(1, 2), F(1, 3)), (F(1, 2), F(1, 2)), 2, "p must sum to 1"),
    ((F(1, 2), F(1, 2)), (F(3, 2), F(-1, 2)), 2, "q must hold probabilities"),
    ((F(1, 2), F(1, 2)), (F(1, 2), F(1, 2)), 0, "k \\(the number of drafts\\)"),
    ((F(1, 2), F(1, 2)), (F(1, 2), F(1, 2)), 9, "in 1..8"),
])
def test_bad_input_is_one_line(p, q, k, match):
    for f in (ks.kseq, ks.ot_bound, ks.specinfer_acceptance, ks.compare_multidraft):
        with pytest.raises(ValueError, match=match) as e:
            f(p, q, k)
        assert "\n" not in str(e.value)


def test_work_limits_are_refused_in_one_line():
    wide = tuple([F(1, 16)] * 16)
    with pytest.raises(ValueError, match="2\\^16 token sets"):
        ks.ot_bound(wide, wide, 2)
    with pytest.raises(ValueError, match="variables"):
        ks.ot_bound_lp(wide, wide, 4)
    with pytest.raises(ValueError, match="tuples of drafts"):
        ks.kseq(wide, wide, 5)
