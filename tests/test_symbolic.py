"""The sympy proofs hold, and fail for a broken rule."""
from specsim import symbolic


def test_one_position_identity_holds_in_every_case():
    proof = symbolic.prove_one_position()
    # S ranges over the subsets of {a, b, c} except the full set
    assert sorted(c.over for c in proof.cases) == sorted(
        [(), (0,), (1,), (2,), (0, 1), (0, 2), (1, 2)])
    assert proof.holds
    for case in proof.cases:
        assert all(diff == 0 for *_, diff in case.terms)
    assert proof.lines()[-1].startswith("Q.E.D.")


def test_resampling_from_the_target_breaks_the_identity():
    proof = symbolic.prove_one_position(replacement="target")
    assert not proof.holds
    assert proof.cases[0].holds  # p == q: no rejection, nothing to break
    assert not all(c.holds for c in proof.cases[1:])


def test_the_empty_case_holds_because_alpha_is_one():
    """S = {} (p == q): the residual is undefined, so its term is (1 - alpha) times an
    arbitrary row r; the case holds only because alpha simplifies to 1 there."""
    import sympy as sp

    for replacement in ("residual", "target"):
        case = symbolic.prove_one_position(replacement=replacement).cases[0]
        assert case.over == () and case.holds
        assert case.alpha == 1 and case.residual_mass == 0
        p = symbolic.prove_one_position().q  # p == q in this case
        for x, (accepted, resid, total, diff) in enumerate(case.terms):
            assert sp.simplify(accepted - p[x]) == 0  # every draft is accepted as drafted
            assert resid == 0 and diff == 0  # resid is (1 - alpha) * r(x) for a free symbol r(x)


def test_tokens_per_round_closed_form():
    series = symbolic.prove_tokens_per_round()
    assert series.holds
