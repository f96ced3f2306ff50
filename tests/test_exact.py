"""The exact engine: reference numbers, the theorem, and two ways to the same joint."""
from fractions import Fraction as F

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specsim import exact, formulas, rule
from specsim.schemes import Chain
from specsim.toy import ToyModel, load_model, random_model

SEED = load_model("seed")


def test_round_from_a_with_gamma_3_matches_the_reference():
    r = exact.round_distribution(SEED, ("a",), Chain(3))
    assert len(r.outcomes) == 94
    assert r.accepted == [F(1, 10), F(13, 100), F(61, 500), F(81, 125)]
    assert r.expected_tokens == F(1659, 500)
    assert sum(r.outcomes.values()) == 1
    assert sum(r.accepted) == 1
    # E[tokens] two ways: from the outcomes and from the K distribution
    assert r.expected_tokens == sum((k + 1) * pk for k, pk in enumerate(r.accepted))
    # an int G is shorthand for Chain(G), and so is the grammar string
    for same in (3, "chain:3"):
        assert exact.round_distribution(SEED, ("a",), same) == r


def test_iid_formula_overestimates_the_seed_round():
    info = formulas.exact_vs_iid(SEED, ("a",), 3)
    assert info["iid_expected_tokens"] == F(3439, 1000)
    assert info["expected_tokens"] < info["iid_expected_tokens"]


def test_two_token_table_after_a():
    expected = {"aa": F(9, 25), "ab": F(9, 50), "ac": F(3, 50), "ba": F(3, 50), "bb": F(3, 20),
                "bc": F(9, 100), "ca": F(3, 100), "cb": F(1, 50), "cc": F(1, 20)}
    spec = exact.speculative_joint(SEED, ("a",), 3, 2)
    assert {"".join(k): v for k, v in spec.items()} == expected
    assert exact.target_joint(SEED, ("a",), 2) == spec


@pytest.mark.parametrize("preset", ["seed", "zeros", "order2"])
def test_round_preserves_target_distribution_three_tokens_every_context(preset):
    model = load_model(preset)
    checks = exact.check_exactness(model, 3, range(1, 5))
    assert len(checks) == 4 * len(model.contexts())
    assert all(c.exact and c.max_abs_difference == 0 for c in checks)


def test_fast_joint_equals_the_naive_enumeration():
    model = random_model(4, seed=7)
    for ctx in model.contexts():
        assert exact.speculative_joint(model, ctx, 3, 3) == exact.naive_speculative_joint(model, ctx, 3, 3)


def test_when_p_equals_q_every_draft_is_accepted():
    m = load_model("zeros")  # context z has p == q
    r = exact.round_distribution(m, ("z",), 1)
    assert r.accepted == [0, 1]
    assert r.expected_tokens == 2


@pytest.mark.parametrize("gamma", [1, 2, 3])
def test_q_zero_tokens_come_only_from_the_residual(gamma):
    m = load_model("zeros")
    ctx = ("y",)  # p = (0, 1/3, 2/3), q = (1/2, 1/2, 0): the drafter never proposes z
    assert m.q(ctx)[2] == 0 < m.p(ctx)[2] == F(2, 3)
    assert m.residual(ctx) == [0, 0, 1]  # the residual is all on z
    r = exact.round_distribution(m, ctx, gamma)
    z_first = {t: pr for t, pr in r.outcomes.items() if t[0] == "z"}
    # z is emitted first only as the replacement of a rejected first draft...
    assert list(z_first) == [("z",)]
    # ...with exactly its target probability, which is all of the rejection mass
    assert z_first[("z",)] == m.p(ctx)[2] == r.accepted[0] == 1 - m.alpha(ctx)


def test_p_zero_tokens_are_never_emitted_first():
    m = load_model("zeros")
    ctx = ("x",)  # p = (1/2, 1/2, 0), q = (1/4, 1/4, 1/2): z is drafted half the time
    assert m.p(ctx)[2] == 0 < m.q(ctx)[2]
    r = exact.round_distribution(m, ctx, 1)
    assert all(t[0] != "z" for t in r.outcomes)
    assert r.accepted[0] == F(1, 2)  # every drafted z is rejected


class _Broken(rule.RoundRule):
    name = "resample-from-p"

    def replacement(self, p, q):
        return p


def test_a_broken_rule_is_caught_by_the_check():
    checks = exact.check_exactness(SEED, 2, [2], rule=_Broken())
    assert not all(c.exact for c in checks)
    c = checks[0]
    assert c.max_abs_difference > 0
    assert exact.joint_total_variation(c.speculative, c.target) > 0


def test_iid_model_round_matches_the_formula():
    # With the same rows in every context the i.i.d. assumption holds exactly.
    p, q = (F(1, 2), F(1, 3), F(1, 6)), (F(1, 4), F(1, 2), F(1, 4))
    contexts = [(t,) for t in "abc"]
    model = ToyModel(("a", "b", "c"), 1, {c: p for c in contexts}, {c: q for c in contexts}, "iid")
    for g in (1, 2, 5):
        r = exact.round_distribution(model, model.contexts()[0], g)
        a = rule.alpha(p, q)
        assert r.expected_tokens == formulas.expected_tokens(a, g)
        assert r.accepted == [a ** k * (1 - a) for k in range(g)] + [a ** g]


def test_bad_arguments():
    with pytest.raises(ValueError, match="gamma must be an integer >= 1"):
        exact.round_distribution(SEED, ("a",), 0)
    with pytest.raises(ValueError, match="tokens must be >= 1"):
        exact.target_joint(SEED, ("a",), 0)


@settings(max_examples=25, deadline=None)
@given(vocab=st.integers(2, 4), order=st.integers(1, 2), seed=st.integers(0, 10**6),
       gamma=st.integers(1, 3), zeros=st.booleans())
def test_exactness_holds_for_random_rational_models(vocab, order, seed, gamma, zeros):
    model = random_model(vocab, order, seed, denominator=12, zeros=zeros)
    for ctx in model.contexts()[:3]:
        assert exact.speculative_joint(model, ctx, gamma, 2) == exact.target_joint(model, ctx, 2)
        assert model.alpha(ctx) == 1 - rule.total_variation(model.p(ctx), model.q(ctx))


class _Silent(rule.RoundRule):
    name = "silent"

    def replacement(self, p, q):
        return [0 * x for x in p]


def test_a_rule_that_emits_nothing_on_rejection_is_refused():
    with pytest.raises(ValueError, match="'silent': the replacement row has no positive entry"):
        exact.speculative_joint(SEED, ("a",), 1, 1, _Silent())
