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


def test_tokens_per_round_closed_form():
    series = symbolic.prove_tokens_per_round()
    assert series.holds
