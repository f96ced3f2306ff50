"""Sampling transforms: exact identities, p and q alike, and the greedy case."""
from fractions import Fraction as F

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specsim import exact, sampling, transforms
from specsim.toy import load_model, random_model

SEED = load_model("seed")
P_A = [F(3, 5), F(3, 10), F(1, 10)]


def test_temperature_one_half_squares_and_normalizes():
    # (9/25, 9/100, 1/100) / (46/100)
    assert transforms.temperature(P_A, F(1, 2)) == [F(36, 46), F(9, 46), F(1, 46)]
    assert transforms.temperature(P_A, "1/2") == transforms.temperature(P_A, 0.5)


def test_temperature_one_third_cubes_and_normalizes():
    cubes = [x ** 3 for x in P_A]
    assert transforms.temperature(P_A, "1/3") == [c / sum(cubes) for c in cubes]


def test_temperature_one_is_the_identity_and_others_are_floats():
    assert transforms.temperature(P_A, 1) == P_A
    hot = transforms.temperature(P_A, 2)  # sqrt, normalized: floats
    assert all(isinstance(x, float) for x in hot)
    roots = [float(x) ** 0.5 for x in P_A]
    assert hot == pytest.approx([r / sum(roots) for r in roots], abs=1e-15)


def test_temperature_zero_is_greedy_with_ties_in_vocabulary_order():
    assert transforms.temperature(P_A, 0) == [1, 0, 0]
    tie = [F(1, 5), F(2, 5), F(2, 5)]
    assert transforms.greedy(tie) == [0, 1, 0]  # "b" before "c"


def test_top_k_keeps_the_k_largest_and_renormalizes():
    assert transforms.top_k(P_A, 2) == [F(2, 3), F(1, 3), 0]
    assert transforms.top_k(P_A, 1) == [1, 0, 0]
    assert transforms.top_k(P_A, 3) == P_A
    assert transforms.top_k(P_A, 10) == P_A
    # a tie at the cut: the token listed first in the vocabulary survives
    assert transforms.top_k([F(1, 5), F(2, 5), F(2, 5)], 1) == [0, 1, 0]


def test_top_p_keeps_the_fewest_tokens_reaching_the_mass():
    assert transforms.top_p(P_A, F(3, 5)) == [1, 0, 0]  # 3/5 reaches 3/5 exactly
    assert transforms.top_p(P_A, F(61, 100)) == [F(2, 3), F(1, 3), 0]
    assert transforms.top_p(P_A, 1) == P_A


@pytest.mark.parametrize("call", [
    lambda: transforms.temperature(P_A, -1),
    lambda: transforms.temperature(P_A, float("inf")),
    lambda: transforms.temperature(P_A, "warm"),
    lambda: transforms.top_k(P_A, 0),
    lambda: transforms.top_k(P_A, 1.5),
    lambda: transforms.top_p(P_A, 0),
    lambda: transforms.top_p(P_A, F(3, 2)),
    lambda: transforms.top_p(P_A, "-0.1"),
    lambda: transforms.transform_pair(SEED, top_k=0),
])
def test_invalid_parameters_are_value_errors(call):
    with pytest.raises(ValueError):
        call()


def test_pair_transforms_p_and_q_alike():
    pair = transforms.transform_pair(SEED, temperature="1/2", top_k=2)
    for ctx in SEED.contexts():
        for mine, base in ((pair.p(ctx), SEED.p(ctx)), (pair.q(ctx), SEED.q(ctx))):
            assert list(mine) == transforms.top_k(transforms.temperature(base, F(1, 2)), 2)
    assert transforms.transform_pair(SEED) is SEED


@pytest.mark.parametrize("settings_", [dict(temperature="1/2"), dict(top_k=2), dict(top_p="7/10"),
                                       dict(temperature="1/3", top_p="9/10"), dict(temperature=0)])
@pytest.mark.parametrize("preset", ["seed", "zeros"])
def test_speculative_output_equals_the_transformed_target(preset, settings_):
    pair = transforms.transform_pair(load_model(preset), **settings_)
    for ctx in pair.contexts():
        for gamma in (1, 3):
            assert exact.speculative_joint(pair, ctx, gamma, 3) == exact.target_joint(pair, ctx, 3)


def _plain_greedy(model, ctx, n):
    out = ()
    for _ in range(n):
        row = model.p(ctx + out)
        out += (model.vocab[max(range(len(row)), key=lambda i: (row[i], -i))],)
    return out


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), gamma=st.integers(1, 5), order=st.integers(1, 2))
def test_greedy_speculative_output_is_plain_greedy_token_for_token(seed, gamma, order):
    model = random_model(3, order=order, seed=seed)
    pair = transforms.greedy_pair(model)
    ctx = model.contexts()[seed % len(model.contexts())]
    g = sampling.generate(pair, ctx, gamma, 12, seed=seed)
    assert g.output == _plain_greedy(model, ctx, 12) == sampling.plain_generate(pair, ctx, 12, seed)
    # and the exact engine agrees: a point mass on that sequence
    assert exact.speculative_joint(pair, ctx, gamma, 4) == {_plain_greedy(model, ctx, 4): 1}
