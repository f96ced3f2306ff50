"""Mixture-of-experts targets in the roofline (specsim.serving.moe, ModelShape's experts) and `specsim serving`.

The union of experts is exact (Fractions, compared with ==) against a brute-force enumeration of every
routing; byte counts of a pass are compared with the exact union within a relative tolerance of 1e-12
(the roofline carries them as floats); times are floats compared exactly where the same arithmetic makes
them, else with that tolerance. No sampling, no wall clock.
"""
import itertools
import math
from dataclasses import replace
from fractions import Fraction as F

import pytest

from specsim.serving import (MODELS, ModelShape, best_gamma, cpu_from, expected_experts, expected_experts_with,
                             experts_read, serving_point, serving_table, step_cost, union_bounds)

TOL = 1e-12
MOE, DRAFT, HW = "qwen3-30b-a3b", "qwen3-0.6b", "h100-sxm"
SAME = replace(MODELS[MOE], routing="same")


# -- the union, exactly -----------------------------------------------------------------------------

def brute_union(subsets, weights, tokens):
    """E[distinct experts] over every sequence of ``tokens`` independent choices, a choice being one of
    ``subsets`` with probability ``weights``: the size of the union of each sequence, weighted."""
    total = F(0)
    for picks in itertools.product(range(len(subsets)), repeat=tokens):
        p = math.prod((weights[i] for i in picks), start=F(1))
        total += p * len(set().union(*(subsets[i] for i in picks)))
    return total


@pytest.mark.parametrize("experts, per_token", [(1, 1), (3, 1), (4, 2), (5, 2), (6, 3), (6, 6)])
def test_union_formula_equals_brute_force_enumeration(experts, per_token):
    subsets = list(itertools.combinations(range(experts), per_token))
    uniform = [F(1, len(subsets))] * len(subsets)
    for tokens in range(1, 5):
        assert expected_experts(experts, per_token, tokens) == brute_union(subsets, uniform, tokens)


def test_how_a_token_picks_its_k_does_not_matter_when_every_expert_is_equally_likely():
    """Group-limited routing (DeepSeek-V3 picks its experts within a few groups): 6 experts in groups
    {0,1,2} and {3,4,5}, a token picks 2 experts of one group. Each expert's marginal is still 2/6."""
    groups = [(0, 1, 2), (3, 4, 5)]
    subsets = [pair for g in groups for pair in itertools.combinations(g, 2)]
    weights = [F(1, len(subsets))] * len(subsets)
    for tokens in range(1, 5):
        assert brute_union(subsets, weights, tokens) == expected_experts(6, 2, tokens)


def test_uneven_expert_loads_lower_the_union():
    """Independent tokens with marginals π_j summing to k: Σ (1 - (1 - π_j)^n) is largest at π_j = k/E."""
    even = expected_experts(4, 2, 3)
    assert expected_experts_with([F(1, 2)] * 4, 3) == even
    for shares in ([F(9, 10), F(9, 10), F(1, 10), F(1, 10)], [1, 1, 0, 0], [F(3, 4), F(3, 4), F(1, 4), F(1, 4)]):
        assert sum(map(F, shares)) == 2 and expected_experts_with(shares, 3) < even
    # and the formula for marginals agrees with brute force on an uneven router: {0,1} half the time,
    # {0,2} and {1,3} a quarter each, so π = (3/4, 3/4, 1/4, 1/4)
    subsets, weights = [(0, 1), (0, 2), (1, 3)], [F(1, 2), F(1, 4), F(1, 4)]
    assert brute_union(subsets, weights, 3) == expected_experts_with([F(3, 4), F(3, 4), F(1, 4), F(1, 4)], 3)


def test_deepseek_v3_four_positions_read_about_30_5_experts_per_layer():
    """256 routed experts, 8 per token (DeepSeek-V3): γ + 1 = 4 positions."""
    u = expected_experts(256, 8, 4)
    assert u == 256 * (1 - F(31, 32) ** 4) == F(125055, 4096)
    assert round(float(u), 1) == 30.5 and round(float(u / 8), 1) == 3.8
    assert union_bounds(256, 8, 4) == (8, 32) and 8 < u < 32


def test_the_float_union_agrees_with_the_exact_one():
    for experts, per_token in ((256, 8), (128, 8), (8, 2), (1_000_000, 1), (64, 64)):
        for tokens in (1, 2, 5, 50, 300):
            exact = expected_experts(experts, per_token, tokens)
            assert math.isclose(experts_read(experts, per_token, tokens), exact, rel_tol=TOL)
            assert experts_read(experts, per_token, tokens, "same") == per_token
    assert experts_read(128, 8, 10**9) == 128  # every expert, for any number of tokens


def test_the_union_grows_with_the_tokens_from_k_towards_e():
    values = [expected_experts(128, 8, n) for n in range(1, 40)]
    assert values[0] == 8 and all(a < b < 128 for a, b in zip(values, values[1:]))


def test_bad_routing_input_is_one_line():
    for call, match in [
        (lambda: expected_experts(8, 9, 2), r"experts per token \(9\) must be at most the experts \(8\)"),
        (lambda: expected_experts(0, 1, 2), "experts must be an integer from 1"),
        (lambda: expected_experts(8, 2, 0), "tokens must be an integer >= 1"),
        (lambda: expected_experts(8, 2.0, 2), "experts per token must be an integer"),
        (lambda: expected_experts(256, 8, 10**6), "limit is 4,300"),
        (lambda: experts_read(8, 2, 3, "clustered"), "unknown routing 'clustered'"),
        (lambda: expected_experts_with([F(3, 2)], 2), "probabilities in"),
    ]:
        with pytest.raises(ValueError, match=match) as e:
            call()
        assert "\n" not in str(e.value)


# -- an MoE model's shape and bytes ---------------------------------------------------------------

def test_qwen3_presets_have_their_model_cards_counts():
    """Qwen3-30B-A3B: 30.5B parameters, 29.9B without the embeddings, 3.3B activated; Qwen3-0.6B: 0.6B,
    0.44B without the (tied) embedding."""
    m, d = MODELS[MOE], MODELS[DRAFT]
    tables = 2 * m.vocab * m.d_model
    assert round(m.params / 1e9, 1) == 30.5 and round((m.params - tables) / 1e9, 1) == 29.9
    activated = m.streamed_params + m.vocab * m.d_model  # one token's pass, and its input embedding row's table
    assert 3.3e9 <= activated < 3.4e9
    assert round(d.params / 1e9, 1) == 0.6 and round((d.params - d.vocab * d.d_model) / 1e9, 2) == 0.44
    assert m.moe_layers == 48 and m.vocab == d.vocab


def test_moe_counts_by_hand():
    """One MoE layer of width 10, 4 experts of width 6 (2 per token), a plain MLP: every count by hand."""
    m = ModelShape("moe-toy", layers=1, d_model=10, n_heads=1, n_kv_heads=1, head_dim=10, d_ff=20, vocab=100,
                   tied_embeddings=False, gated_mlp=False, source="by hand", experts=4, experts_per_token=2,
                   expert_d_ff=6)
    attn, router, expert = 4 * 10 * 10 + 2 * 10, 10 * 4, 2 * 10 * 6
    assert m.expert_params == expert and m.moe_layer_params == attn + router + 4 * expert
    assert m.params == attn + router + 4 * expert + 10 + 2 * 1000
    assert m.shared_params == attn + router + 10 + 1000  # the LM head, not the input table
    assert m.streamed_params == m.shared_params + 2 * expert
    assert m.flops_per_token(5) == 2 * m.streamed_params + 4 * 10 * 5  # a token multiplies its own 2 experts
    for tokens in (1, 2, 3, 7):
        exact = (m.shared_params + expected_experts(4, 2, tokens) * expert) * 2
        assert math.isclose(m.weight_bytes("bf16", tokens), exact, rel_tol=TOL)
    assert math.isclose(m.weight_bytes("bf16"), m.streamed_params * 2, rel_tol=TOL)
    assert replace(m, routing="same").weight_bytes("bf16", 7) == m.streamed_params * 2


def test_a_pass_reads_the_union_of_every_token_of_the_batch():
    hw = cpu_from(1e9, 1e9, dtype="bf16", overlap=True)
    m = MODELS[MOE]
    for batch, positions in ((1, 1), (1, 5), (3, 5), (64, 1)):
        s = step_cost(m, hw, batch, 100, positions)
        n = batch * positions
        assert math.isclose(s.experts_read, expected_experts(128, 8, n), rel_tol=TOL)
        exact = (m.shared_params + 48 * expected_experts(128, 8, n) * m.expert_params) * 2
        assert math.isclose(s.weight_bytes, exact, rel_tol=TOL)
        assert s.flops == batch * (positions * 2 * m.streamed_params + m.attention_flops(
            positions * 100 + positions * (positions + 1) // 2))
    assert step_cost("llama-3-8b", hw, 3, 100, 5).experts_read == 0


def test_dense_models_are_unchanged_by_the_experts_fields():
    m = MODELS["llama-3-8b"]
    assert m.experts == m.moe_layers == m.expert_params == 0 and m.shared_params == m.streamed_params
    assert m.weight_bytes("bf16", 1) == m.weight_bytes("bf16", 999) == m.streamed_params * 2
    assert isinstance(m.weight_bytes("bf16", 5), int)


@pytest.mark.parametrize("changes, match", [
    (dict(experts=8, experts_per_token=9, expert_d_ff=4), r"experts per token \(9\) must be at most"),
    (dict(experts=8, experts_per_token=0, expert_d_ff=4), "experts per token must be an integer from 1"),
    (dict(experts=8, experts_per_token=2), "expert_d_ff must be >= 1"),
    (dict(experts=8, experts_per_token=2, expert_d_ff=4, dense_layers=2), "must leave some of the 2 layers"),
    (dict(experts_per_token=2), "need experts >= 1"),
    (dict(experts=-1), "experts must be an integer >= 0"),
    (dict(experts=8, experts_per_token=2, expert_d_ff=4, routing="sticky"), "unknown routing 'sticky'"),
])
def test_bad_moe_shapes_are_one_line(changes, match):
    with pytest.raises(ValueError, match=match) as e:
        ModelShape("m", 2, 8, 2, 2, 4, 8, 10, True, False, "s", **changes)
    assert "\n" not in str(e.value)


# -- v and the best γ ---------------------------------------------------------------------------

def v_of(target, gamma, batch=1, context=1024):
    return serving_point(target, DRAFT if target != "llama-3-8b" else "llama-3.2-1b", HW, batch, context, 0.8,
                         gamma).v


def test_v_grows_with_gamma_for_an_moe_target_and_stays_flat_for_a_dense_one():
    moe = [v_of(MOE, g) for g in range(1, 11)]
    dense = [v_of("llama-3-8b", g) for g in range(1, 11)]
    same = [v_of(SAME, g) for g in range(1, 11)]
    assert all(a < b for a, b in zip(moe, moe[1:])) and moe[0] > 1.5 and moe[3] > 2.9
    assert all(1 <= v < 1.01 for v in dense + same)  # memory-bound: the weights read once, whatever γ


def test_v_of_the_moe_target_is_its_bytes_ratio_at_batch_1():
    """Memory-bound at batch 1: v = (verify bytes / bandwidth + overhead) / (step bytes / bandwidth + overhead)."""
    p = serving_point(MOE, DRAFT, HW, 1, 1024, 0.8, 3)
    assert p.target.bound == p.verify.bound == "memory"
    assert math.isclose(p.verify.experts_read, expected_experts(128, 8, 4), rel_tol=TOL)
    bw, over = 3.35e12, 20e-6
    assert math.isclose(p.v, (p.verify.bytes / bw + over) / (p.target.bytes / bw + over), rel_tol=TOL)


def test_the_best_gamma_is_lower_for_the_moe_target_than_a_dense_roofline_says():
    """qwen3-30b-a3b with qwen3-0.6b on an H100 SXM, batch 1, context 1024, α = 0.8: uniform routing makes
    γ = 1 best; priced as if every position read the same 8 experts (v = 1), γ = 4."""
    moe = best_gamma(MOE, DRAFT, HW, 1, 1024, 0.8, gammas=range(0, 11))
    dense_view = best_gamma(SAME, DRAFT, HW, 1, 1024, 0.8, gammas=range(0, 11))
    assert (moe.gamma, dense_view.gamma) == (1, 4)
    assert moe.c == dense_view.c  # the same plain step: one token reads the same 8 experts either way
    assert moe.speedup < dense_view.speedup


def test_at_moderate_batch_the_step_already_reads_every_expert_and_v_is_about_1_again():
    p = serving_point(MOE, DRAFT, HW, 64, 1024, 0.8, 4)
    assert p.target.experts_read > 125 and 128 - p.verify.experts_read < 1e-6
    assert 1 <= p.v < 1.02
    rows = serving_table(MOE, DRAFT, HW, [1, 64], 1024, 0.8, gammas=range(0, 11))
    assert rows[0].best_gamma < rows[1].best_gamma and rows[0].speedup < rows[1].speedup
    assert math.isclose(rows[0].verify_experts, expected_experts(128, 8, rows[0].best_gamma + 1), rel_tol=TOL)
    assert math.isclose(rows[0].target_experts, 8, rel_tol=TOL)  # batch 1: one token's 8


# -- the command --------------------------------------------------------------------------------

def test_cli_moe_table_shows_the_experts_read(cli):
    code, out, err = cli("serving", "--target", MOE, "--draft", DRAFT, "--batch", "1,64")
    assert code == 0, err
    assert "8 of 128 experts in each of 48 MoE layers, uniform routing" in out
    assert "experts_per_layer_verify" in out


def test_cli_json_moe_and_routing_overrides(cli_json):
    d = cli_json("serving", "--target", MOE, "--draft", DRAFT, "--batch", "1")
    assert (d["experts"], d["experts_per_token"], d["moe_layers"], d["routing"]) == (128, 8, 48, "uniform")
    assert d["rows"][0]["best_gamma"] == 1
    same = cli_json("serving", "--target", MOE, "--draft", DRAFT, "--batch", "1", "--routing", "same")
    assert same["routing"] == "same" and same["rows"][0]["best_gamma"] == 4
    more = cli_json("serving", "--target", MOE, "--draft", DRAFT, "--batch", "1", "--experts", "256",
                    "--experts-per-token", "4")
    p = best_gamma(replace(MODELS[MOE], experts=256, experts_per_token=4), DRAFT, HW, 1, 1024, 0.8,
                   gammas=range(0, 11))
    assert (more["experts"], more["experts_per_token"]) == (256, 4)
    assert more["rows"][0]["speedup"] == p.speedup and more["rows"][0]["best_gamma"] == p.gamma
    assert "experts" not in cli_json("serving", "--batch", "1")  # a dense target


def test_cli_list_shows_the_moe_preset(cli):
    code, out, _ = cli("serving", "--list")
    assert code == 0 and "one token's: 8 of 128 experts in each of its 48 MoE layers" in out


@pytest.mark.parametrize("argv, message", [
    (["--target", MOE, "--draft", DRAFT, "--experts-per-token", "200"],
     "qwen3-30b-a3b: experts per token (200) must be at most the experts (128)"),
    (["--target", MOE, "--draft", DRAFT, "--experts", "4"],
     "qwen3-30b-a3b: experts per token (8) must be at most the experts (4)"),
    (["--target", MOE, "--draft", DRAFT, "--experts", "0"], "experts must be between 1 and"),
    (["--target", MOE, "--draft", DRAFT, "--experts-per-token", "x"], "not an integer"),
    (["--experts", "64"], "need a mixture-of-experts target (qwen3-30b-a3b); llama-3-8b has no experts"),
    (["--routing", "same"], "need a mixture-of-experts target"),
    (["--target", MOE, "--draft", DRAFT, "--routing", "sticky"], "invalid choice: 'sticky'"),
    (["--target", MOE], "do not share a vocabulary"),
])
def test_cli_bad_moe_settings_are_one_line_exit_2(cli, argv, message):
    code, out, err = cli("serving", *argv)
    assert code == 2 and message in err and err.count("\n") == 1, err
