"""specsim.acceptance: the figures engines log (vLLM's) and the conditional rates, converted exactly."""
from __future__ import annotations

import random
from fractions import Fraction as F

import pytest

from specsim import acceptance, exact, toy
from specsim.formulas import expected_tokens
from specsim.schemes import Chain


def vllm_style(ks, gamma):
    """vLLM's SpecDecodingStats.observe_draft and SpecDecodingLogging.log, written out: per position i,
    the rounds that accepted at least i drafts, over all rounds; 1 + accepted / rounds; accepted / drafted."""
    per_pos = [0] * gamma
    for k in ks:
        for i in range(k):
            per_pos[i] += 1
    return [F(c, len(ks)) for c in per_pos], 1 + F(sum(ks), len(ks)), F(sum(ks), gamma * len(ks))


@pytest.mark.parametrize("seed", range(5))
def test_from_rounds_matches_a_written_out_vllm_count_and_the_conditional_rates(seed):
    rng = random.Random(seed)
    gamma = rng.randint(1, 6)
    ks = [rng.randint(0, gamma) for _ in range(rng.randint(1, 60))]
    m = acceptance.from_rounds(ks, gamma)
    per_pos, length, rate = vllm_style(ks, gamma)
    assert list(m.per_position) == per_pos and m.mean_length == length and m.draft_acceptance_rate == rate
    for i in range(gamma):  # conditional: among rounds that judged draft i + 1, the share that kept it
        judged = [k for k in ks if k >= i]
        expected = F(sum(k >= i + 1 for k in judged), len(judged)) if judged else None
        assert m.conditional[i] == expected
    checked = sum(min(k + 1, gamma) for k in ks)
    assert m.alpha == F(sum(ks), checked) and m.rounds == len(ks)


def test_iid_rounds_have_per_position_alpha_to_the_i_and_the_formula_s_tokens():
    a = F(3, 4)
    for gamma in (1, 2, 5):
        dist = [a ** k * (1 - a) for k in range(gamma)] + [a ** gamma]
        m = acceptance.exact(dist)
        assert m.per_position == tuple(a ** i for i in range(1, gamma + 1))
        assert set(m.conditional) == {a} and m.alpha == a
        assert m.mean_length == expected_tokens(a, gamma) == acceptance.mean_length(m.per_position)


def test_exact_metrics_of_a_toy_round_agree_with_the_engine():
    model = toy.load_model("seed")
    for ctx in model.contexts():
        r = exact.round_distribution(model, ctx, Chain(3))
        m = acceptance.exact(r.accepted)
        assert m.mean_length == r.expected_tokens
        assert list(acceptance.conditional(m.per_position)) == list(m.conditional)
        assert m.per_position[0] == model.alpha(ctx)  # draft 1 is always judged: its rate is alpha there


def test_bad_input_is_one_line():
    with pytest.raises(ValueError, match="whole number from 0 to 3"):
        acceptance.from_rounds([0, 4], 3)
    with pytest.raises(ValueError, match="no rounds"):
        acceptance.from_rounds([], 3)
    with pytest.raises(ValueError, match="gamma must be"):
        acceptance.from_rounds([0], 0)
    with pytest.raises(ValueError, match="never rise"):
        acceptance.conditional([F(1, 2), F(3, 4)])
    with pytest.raises(ValueError, match="sum to 1"):
        acceptance.exact([F(1, 2), F(1, 3)])
