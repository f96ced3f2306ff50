"""Latency of a served pair (specsim.serving.latency) and `specsim serving --latency`.

Distributions and quantiles are exact Fractions, compared with ==; times are
floats built from the roofline's, compared exactly where the same arithmetic
makes them, else with a relative tolerance of 1e-12 (rounding only).
"""
import math
from fractions import Fraction as F

import pytest

from specsim import formulas
from specsim.serving import (ModelShape, cpu_from, crossover_batch, gap_distribution, gap_quantile, goodput,
                             latency_point, latency_table, max_batch, serving_point, step_cost, tokens_distribution,
                             within)
from specsim.serving.latency import QUANTILES

TOL = 1e-12
PAIR = ("llama-3-8b", "llama-3.2-1b", "h100-sxm")
ALPHAS = (F(0), F(1, 3), F(1, 2), F(4, 5), F(9, 10), F(1))
TOY = ModelShape("toy", layers=1, d_model=10, n_heads=1, n_kv_heads=1, head_dim=10, d_ff=20, vocab=100,
                 tied_embeddings=False, gated_mlp=False, source="by hand")
TOY_DRAFT = ModelShape("toy-draft", layers=1, d_model=2, n_heads=1, n_kv_heads=1, head_dim=2, d_ff=4, vocab=100,
                       tied_embeddings=True, gated_mlp=False, source="by hand")
TOY_HW = cpu_from(1e6, 1e6, dtype="bf16", overlap=True)  # 1 MB/s, 1 MFLOP/s, no overhead: µs = max(bytes, FLOPs)


# -- the distributions, exact ---------------------------------------------------------------------

@pytest.mark.parametrize("alpha", ALPHAS)
def test_tokens_per_round_sum_to_one_and_average_to_the_formula(alpha):
    for gamma in range(1, 9):
        dist = tokens_distribution(alpha, gamma)
        assert list(dist) == list(range(1, gamma + 2))
        assert sum(dist.values()) == 1
        assert sum(n * p for n, p in dist.items()) == formulas.expected_tokens(alpha, gamma)


@pytest.mark.parametrize("alpha", ALPHAS)
def test_gap_distribution_sums_to_one_and_a_round_gap_is_one_per_round(alpha):
    for gamma in range(1, 9):
        gaps = gap_distribution(alpha, gamma)
        assert set(gaps) == {0, 1} and sum(gaps.values()) == 1
        assert gaps[1] == 1 / formulas.expected_tokens(alpha, gamma)


def brute_quantile(alpha, gamma, q):
    """Rounds in exact proportion (counts over a common denominator), their tokens' gaps listed and sorted:
    the q-quantile is the element at ceil(q N) - 1, N gaps in all."""
    dist = tokens_distribution(alpha, gamma)
    denominator = math.lcm(*(p.denominator for p in dist.values()))
    gaps = []
    for n, p in dist.items():
        rounds = p * denominator
        assert rounds.denominator == 1
        gaps += ([1] + [0] * (n - 1)) * int(rounds)  # one gap of a round, then n - 1 within the burst
    gaps.sort()
    return gaps[math.ceil(q * len(gaps)) - 1]


@pytest.mark.parametrize("alpha", ALPHAS)
def test_quantiles_agree_with_a_brute_force_count(alpha):
    for gamma in range(1, 7):
        share0 = gap_distribution(alpha, gamma)[0]
        qs = set(QUANTILES) | {F(1, 7), F(1, 3), F(2, 3), F(1)} | ({share0} if share0 > 0 else set())
        for q in qs:
            assert gap_quantile(alpha, gamma, q) == brute_quantile(alpha, gamma, q), (alpha, gamma, q)


def test_a_quantile_at_the_share_of_zero_gaps_is_zero_and_just_above_it_a_round():
    share0 = gap_distribution(F(1, 2), 2)[0]
    assert share0 == F(3, 7)
    assert gap_quantile(F(1, 2), 2, share0) == 0 and gap_quantile(F(1, 2), 2, share0 + F(1, 10**9)) == 1


def test_one_draft_keeps_the_median_gap_a_whole_round_below_alpha_1():
    """E[K + 1] = 1 + α < 2, so more than half the gaps are a whole round."""
    assert all(gap_quantile(a, 1, F(1, 2)) == 1 for a in ALPHAS if a < 1)
    assert gap_quantile(F(1), 1, F(1, 2)) == 0


def test_an_exact_alpha_gives_fractions_and_a_float_gives_floats():
    assert gap_distribution(1, 2) == {0: F(2, 3), 1: F(1, 3)} and isinstance(gap_distribution(1, 2)[0], F)
    assert isinstance(gap_distribution(1.0, 2)[0], float)


def test_float_alpha_gives_the_same_quantiles_away_from_the_boundary():
    for gamma in (1, 4, 10):
        assert [gap_quantile(0.8, gamma, q) for q in QUANTILES] == [gap_quantile(F(4, 5), gamma, q)
                                                                   for q in QUANTILES]


# -- the figures of one batch ---------------------------------------------------------------------

def test_plain_tpot_and_itl_are_one_step_and_plain_throughput_is_batch_over_step():
    for batch in (1, 64, 512):
        r = latency_point(*PAIR, batch, 1024, 0.8, 4)
        step = step_cost("llama-3-8b", "h100-sxm", batch, 1024).seconds
        assert r.tpot_plain_ms == r.itl_chunk_plain_ms == step * 1e3 and r.throughput_plain == batch / step


def test_speculative_tpot_is_the_round_over_its_tokens_and_the_ratio_is_the_speedup():
    for batch in (1, 64, 512):
        r = latency_point(*PAIR, batch, 128, F(4, 5), 4)
        p = serving_point(*PAIR, batch, 128, F(4, 5), 4)
        assert r.round_ms == (p.draft_s + p.verify.seconds) * 1e3
        assert r.tokens_per_round == float(formulas.expected_tokens(F(4, 5), 4))
        assert math.isclose(r.tpot_spec_ms, r.round_ms / r.tokens_per_round, rel_tol=TOL)
        assert math.isclose(r.tpot_plain_ms / r.tpot_spec_ms, p.speedup, rel_tol=TOL)
        assert math.isclose(r.throughput_spec / r.throughput_plain, p.speedup, rel_tol=TOL)


def test_at_alpha_0_every_token_waits_a_whole_round():
    r = latency_point(*PAIR, 8, 128, 0, 3)
    assert r.tokens_per_round == 1 and r.round_gap_share == 1
    assert r.tpot_spec_ms == r.itl_chunk_spec_ms == r.round_ms == r.gap_p50_ms == r.gap_p90_ms == r.gap_p99_ms


def test_the_gap_quantiles_are_zero_or_the_round():
    r = latency_point(*PAIR, 1, 128, F(4, 5), 4)  # E = 2101/625: 1 - 625/2101 of the gaps are 0, about 0.70
    assert (r.gap_p50_ms, r.gap_p90_ms, r.gap_p99_ms) == (0, r.round_ms, r.round_ms)
    assert r.round_gap_share == float(F(625, 2101))


def test_ttft_is_half_an_iteration_and_the_prefills():
    r = latency_point(*PAIR, 16, 1024, 0.8, 4, prompt=2000)
    prefill = step_cost("llama-3-8b", "h100-sxm", 1, 0, 2000).seconds
    draft_prefill = step_cost("llama-3.2-1b", "h100-sxm", 1, 0, 2000).seconds
    assert r.prefill_ms == prefill * 1e3 and r.draft_prefill_ms == draft_prefill * 1e3
    assert math.isclose(r.ttft_plain_ms, r.tpot_plain_ms / 2 + r.prefill_ms, rel_tol=TOL)
    assert math.isclose(r.ttft_spec_ms, r.round_ms / 2 + r.prefill_ms + r.draft_prefill_ms, rel_tol=TOL)
    assert latency_point(*PAIR, 16, 1024, 0.8, 4).prompt == 1024  # the prompt defaults to the context


@pytest.mark.parametrize("hw", ["h100-sxm", cpu_from(10e9, 100e9), cpu_from(10e9, 100e9, overlap=True)],
                         ids=["h100", "serial-cpu", "overlapped-cpu"])
def test_latency_grows_and_throughput_does_not_fall_with_the_batch(hw):
    """Every pass's bytes and FLOPs grow with the batch and the weights are shared: times rise, and so
    do tokens per second (batch / time is batch / (a + b batch) or batch / (c batch + overhead))."""
    target, draft = ("llama-3-8b", "llama-3.2-1b") if hw == "h100-sxm" else ("tiny-target", "tiny-draft")
    dtype = "bf16" if hw == "h100-sxm" else "fp32"
    rows = latency_table(target, draft, hw, [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096], 64, 0.8, 4,
                         dtype=dtype)
    for key in ("tpot_plain_ms", "tpot_spec_ms", "itl_chunk_plain_ms", "itl_chunk_spec_ms", "round_ms",
                "ttft_plain_ms", "ttft_spec_ms", "throughput_plain", "throughput_spec", "requests_plain",
                "requests_spec"):
        values = [getattr(r, key) for r in rows]
        assert values == sorted(values), key
    assert len({r.prefill_ms for r in rows}) == 1  # the prefill runs alone, whatever the batch


def test_the_p99_gap_with_speculation_is_longer_than_a_plain_step_at_every_batch():
    for r in latency_table(*PAIR, [1, 8, 64, 512, 2048], 128, 0.9, 8):
        assert r.gap_p99_ms == r.round_ms > r.tpot_plain_ms


def test_the_tpot_crosses_plain_at_the_crossover_batch_of_that_gamma():
    for context, gamma in ((128, 4), (128, 1), (512, 2)):
        cross = crossover_batch(*PAIR, context, 0.8, gammas=[gamma])
        before, at = latency_table(*PAIR, [cross - 1, cross], context, 0.8, gamma)
        assert before.tpot_spec_ms < before.tpot_plain_ms and at.tpot_spec_ms >= at.tpot_plain_ms
        assert before.throughput_spec > before.throughput_plain and at.throughput_spec <= at.throughput_plain


# -- TPOT, ITL, requests per second and goodput, by hand ----------------------------------------------

def test_tpot_itl_and_requests_by_hand_on_the_toy_pair():
    """Batch 1, context 4, γ = 2, α = 1/2, requests of 11 tokens. In µs: the plain step max(3860 bytes, 3860
    FLOPs) = 3860; a drafter step max(476 + 32 + 8, 2 x 238 + 4 x 2 x 5) = 516; the verify pass over 3
    positions max(3660 + 160 + 120, 3 x 3660 + 40 x 18) = 11700; a round 2 x 516 + 11700 = 12732 emits
    1 + 1/2 + 1/4 = 7/4 tokens on average."""
    r = latency_point(TOY, TOY_DRAFT, TOY_HW, 1, 4, F(1, 2), 2, prompt=4, output_tokens=11)
    assert r.tokens_per_round == 1.75
    assert math.isclose(r.tpot_plain_ms, 3.860, rel_tol=TOL) and math.isclose(r.itl_chunk_plain_ms, 3.860, rel_tol=TOL)
    assert math.isclose(r.round_ms, 12.732, rel_tol=TOL) and math.isclose(r.itl_chunk_spec_ms, 12.732, rel_tol=TOL)
    assert math.isclose(r.tpot_spec_ms, 12.732 / 1.75, rel_tol=TOL)
    # Little's law: 1 slot, 10 decoded tokens a request, each a TPOT long
    assert math.isclose(r.requests_plain, 1 / (10 * 3.860e-3), rel_tol=TOL)
    assert math.isclose(r.requests_spec, 1 / (10 * 12.732e-3 / 1.75), rel_tol=TOL)
    # the prefill of 4 positions over nothing cached: max(3660 + 160, 4 x 3660 + 40 x 10) = 15040 µs
    assert math.isclose(r.prefill_ms, 15.040, rel_tol=TOL)
    assert math.isclose(r.ttft_plain_ms, 3.860 / 2 + 15.040, rel_tol=TOL)


def test_goodput_by_hand_on_the_toy_pair():
    """Plain TPOT at batch B: max(3660 + 200 B, 3860 B) µs = 3.86 B ms, so a 10 ms target allows B = 2
    (7.72 ms). Speculation at batch 2: drafter steps max(476 + 2 x 40, 2 x 516) = 1032, the verify pass
    max(3660 + 2 x 280, 2 x 11700) = 23400, a round 25464 µs, TPOT 14.55 ms > 10: batch 1 only."""
    g = goodput(TOY, TOY_DRAFT, TOY_HW, 4, F(1, 2), 2, tpot_slo_ms=10, output_tokens=11, prompt=4, limit=64)
    assert (g.batch_plain, g.batch_spec, g.searched_to) == (2, 1, 64)
    assert math.isclose(g.row_plain.tpot_plain_ms, 7.72, rel_tol=TOL)
    assert math.isclose(latency_point(TOY, TOY_DRAFT, TOY_HW, 2, 4, F(1, 2), 2).tpot_spec_ms, 25.464 / 1.75,
                        rel_tol=TOL)
    assert math.isclose(g.requests_plain, 2 / (10 * 7.72e-3), rel_tol=TOL)
    assert math.isclose(g.requests_spec, 1 / (10 * 12.732e-3 / 1.75), rel_tol=TOL)
    none = goodput(TOY, TOY_DRAFT, TOY_HW, 4, F(1, 2), 2, tpot_slo_ms=3, output_tokens=11, limit=64)
    assert (none.batch_plain, none.requests_plain, none.row_plain) == (0, 0.0, None)


def test_goodput_bisection_agrees_with_a_scan_up_to_the_memory_limit():
    top = max_batch(*PAIR, 1024)
    rows = [latency_point(*PAIR, b, 1024, 0.8, 4) for b in range(1, top + 1)]
    for tpot, ttft in ((3, None), (5, None), (10, None), (10, 22.0), (None, 24.0), (40, None), (None, 8.0)):
        g = goodput(*PAIR, 1024, 0.8, 4, tpot_slo_ms=tpot, ttft_slo_ms=ttft)
        plain = max((r.batch for r in rows if within(r, tpot, ttft)[0]), default=0)
        spec = max((r.batch for r in rows if within(r, tpot, ttft)[1]), default=0)
        assert (g.batch_plain, g.batch_spec, g.searched_to) == (plain, spec, top), (tpot, ttft)
        if spec:
            assert g.requests_spec == rows[spec - 1].requests_spec == max(
                r.requests_spec for r in rows if within(r, tpot, ttft)[1])


def test_goodput_of_an_moe_target_agrees_with_a_scan():
    """The MoE pair's times grow with the batch too (more tokens, more experts), so bisection still finds
    the largest batch within a target."""
    moe = ("qwen3-30b-a3b", "qwen3-0.6b", "h100-sxm")
    top = max_batch(*moe, 1024)
    rows = [latency_point(*moe, b, 1024, 0.8, 4) for b in range(1, top + 1)]
    for key in ("tpot_plain_ms", "tpot_spec_ms", "ttft_plain_ms", "ttft_spec_ms"):
        values = [getattr(r, key) for r in rows]
        assert values == sorted(values), key
    for tpot, ttft in ((2, None), (5, None), (10, None), (10, 26.0), (None, 30.0)):
        g = goodput(*moe, 1024, 0.8, 4, tpot_slo_ms=tpot, ttft_slo_ms=ttft)
        plain = max((r.batch for r in rows if within(r, tpot, ttft)[0]), default=0)
        spec = max((r.batch for r in rows if within(r, tpot, ttft)[1]), default=0)
        assert (g.batch_plain, g.batch_spec) == (plain, spec), (tpot, ttft)


def test_speculation_lowers_the_tpot_and_raises_the_itl():
    """A round holds a verify pass (at least a plain step) and γ drafter steps, and its K + 1 tokens come
    as one chunk: the ITL per chunk is always longer with speculation, the TPOT shorter while it pays."""
    for r in latency_table(*PAIR, [1, 8, 64, 187, 188, 512], 128, 0.8, 4):
        assert r.itl_chunk_spec_ms == r.round_ms > r.itl_chunk_plain_ms == r.tpot_plain_ms
        assert (r.tpot_spec_ms < r.tpot_plain_ms) == (r.batch < crossover_batch(*PAIR, 128, 0.8, gammas=[4]))


def test_requests_per_second_are_tokens_per_second_over_the_decoded_tokens():
    for output in (2, 128, 1000):
        for r in latency_table(*PAIR, [1, 64], 128, 0.8, 4, output_tokens=output):
            assert math.isclose(r.requests_plain, r.throughput_plain / (output - 1), rel_tol=TOL)
            assert math.isclose(r.requests_spec, r.throughput_spec / (output - 1), rel_tol=TOL)


def test_cli_goodput(cli, cli_json):
    lat = cli_json("serving", "--batch", "1,98,99,169,170", "--context", "128", "--latency", "--tpot-slo-ms", "5",
                   "--output-tokens", "200")["latency"]
    g = goodput(*PAIR, 128, 0.8, 4, tpot_slo_ms=5, output_tokens=200)
    assert lat["goodput"]["batch_plain"] == g.batch_plain and lat["goodput"]["requests_spec"] == g.requests_spec
    assert [w["plain"] for w in lat["rows_within"]] == [b <= g.batch_plain for b in (1, 98, 99, 169, 170)]
    assert [w["spec"] for w in lat["rows_within"]] == [b <= g.batch_spec for b in (1, 98, 99, 169, 170)]
    code, out, err = cli("serving", "--batch", "1", "--context", "128", "--latency", "--tpot-slo-ms", "3")
    assert code == 0, err
    assert "goodput under TPOT <= 3 ms" in out and "plain: no batch meets it: 0 requests/s" in out


def test_bad_goodput_input_is_one_line():
    for call, match in [
        (lambda: goodput(*PAIR, 128, 0.8, 4), "needs a latency target"),
        (lambda: goodput(*PAIR, 128, 0.8, 4, tpot_slo_ms=0), "TPOT target must be a number of ms > 0"),
        (lambda: goodput(*PAIR, 128, 0.8, 4, ttft_slo_ms=float("nan")), "TTFT target must be"),
        (lambda: goodput(*PAIR, 128, 0.8, 4, tpot_slo_ms=5, output_tokens=1), "output tokens must be"),
        (lambda: goodput(*PAIR, 128, 0.8, 4, tpot_slo_ms=5, limit=0), "limit must be"),
        (lambda: latency_point(*PAIR, 1, 128, 0.8, 4, output_tokens=True), "output tokens must be"),
    ]:
        with pytest.raises(ValueError, match=match) as e:
            call()
        assert "\n" not in str(e.value)


def test_bad_library_input_is_one_line():
    for call, match in [
        (lambda: tokens_distribution(0.8, 0), "gamma must be an integer >= 1"),
        (lambda: tokens_distribution(0.8, 10**9), "gamma must be between 1 and 64"),
        (lambda: tokens_distribution(0.8, 2.0), "gamma must be an integer"),
        (lambda: tokens_distribution(0.8, True), "gamma must be an integer"),
        (lambda: tokens_distribution(1.5, 2), "alpha must be in"),
        (lambda: tokens_distribution(F(10**100 - 1, 10**100), 64), "limit is 4,300"),
        (lambda: gap_quantile(0.8, 2, 0), "quantile must be in"),
        (lambda: gap_quantile(0.8, 2, F(3, 2)), "quantile must be in"),
        (lambda: latency_point(*PAIR, 0, 128, 0.8, 4), "batch must be"),
        (lambda: latency_point(*PAIR, 1, 128, 0.8, 65), "gamma must be between 1 and 64"),
        (lambda: latency_point(*PAIR, 1, 128, 0.8, 4, prompt=0), "prompt must be"),
        (lambda: latency_point("tiny-target", "tiny-draft", "h100-sxm", 1, 10, 0.8, 4, prompt=300),
         "a prompt of 300"),
        (lambda: latency_point("nope", "tiny-draft", "h100-sxm", 1, 10, 0.8, 4), "unknown model"),
        (lambda: latency_table(*PAIR, [], 128, 0.8, 4), "batch sizes"),
        (lambda: latency_table(*PAIR, range(1, 300), 128, 0.8, 4), "batch sizes"),
    ]:
        with pytest.raises(ValueError, match=match) as e:
            call()
        assert "\n" not in str(e.value)


# -- the command ----------------------------------------------------------------------------------

def test_cli_latency_table(cli):
    code, out, err = cli("serving", "--batch", "1,8,512", "--context", "128", "--latency")
    assert code == 0, err
    latency = out.split("\nLatency:", 1)[1]
    for key in ("ttft_plain_ms", "ttft_spec_ms", "tpot_plain_ms", "tpot_spec_ms", "itl_chunk_plain_ms",
                "itl_chunk_spec_ms", "gap_p50_ms", "gap_p90_ms", "gap_p99_ms", "tokens/s plain", "tokens/s spec",
                "requests/s plain", "requests/s spec", "tpot_crossover_batch"):
        assert key in latency
    assert "γ = 4" in latency
    assert len([line for line in latency.splitlines() if line.split()[:1] in (["1"], ["8"], ["512"])]) == 6  # 2 tables
    cross = crossover_batch(*PAIR, 128, 0.8, gammas=[4])
    assert f"tpot_crossover_batch: {cross:,} (from this batch on" in latency
    assert "goodput" not in latency  # no target given


def test_cli_without_latency_prints_and_returns_none_of_it(cli, cli_json):
    code, out, _ = cli("serving", "--batch", "1")
    assert code == 0 and "Latency" not in out and "itl" not in out and "tpot" not in out
    assert "latency" not in cli_json("serving", "--batch", "1")


def test_cli_json_latency_is_the_library_table(cli_json):
    d = cli_json("serving", "--batch", "1,64", "--context", "256", "--latency", "--latency-gamma", "3",
                 "--prompt", "500")
    lat = d["latency"]
    assert lat["gamma"] == 3 and lat["prompt"] == 500
    assert lat["tpot_crossover_batch"] == crossover_batch(*PAIR, 256, 0.8, gammas=[3])
    assert "itl_crossover_batch" not in lat and "goodput" not in lat
    rows = latency_table(*PAIR, [1, 64], 256, 0.8, 3, prompt=500)
    assert [r["batch"] for r in lat["rows"]] == [1, 64]
    for got, row in zip(lat["rows"], rows):
        assert got == {k: getattr(row, k) for k in got}
        assert set(got) >= {"ttft_plain_ms", "ttft_spec_ms", "tpot_plain_ms", "tpot_spec_ms", "itl_chunk_plain_ms",
                            "itl_chunk_spec_ms", "gap_p50_ms", "gap_p90_ms", "gap_p99_ms", "throughput_plain",
                            "throughput_spec", "requests_plain", "requests_spec"}
        assert "itl_plain_ms" not in got and "itl_spec_ms" not in got  # renamed: a stale reader fails loudly


def test_cli_latency_takes_gamma_from_a_fixed_chain(cli_json):
    assert cli_json("serving", "--batch", "1", "--scheme", "chain:6", "--latency")["latency"]["gamma"] == 6
    assert cli_json("serving", "--batch", "1", "--latency")["latency"]["gamma"] == 4
    assert cli_json("serving", "--batch", "1", "--context", "77", "--latency")["latency"]["prompt"] == 77


@pytest.mark.parametrize("argv, message", [
    (["--latency-gamma", "3"], "--latency-gamma, --prompt, --output-tokens, --tpot-slo-ms and --ttft-slo-ms go with"),
    (["--prompt", "30"], "go with --latency"),
    (["--tpot-slo-ms", "30"], "go with --latency"),
    (["--output-tokens", "30"], "go with --latency"),
    (["--latency", "--output-tokens", "1"], "output-tokens must be between 2"),
    (["--latency", "--tpot-slo-ms", "0"], "tpot-slo-ms must be >="),
    (["--latency", "--ttft-slo-ms", "x"], "ttft-slo-ms must be a number"),
    (["--latency", "--latency-gamma", "0"], "latency-gamma must be between 1 and 64"),
    (["--latency", "--latency-gamma", "x"], "not an integer"),
    (["--latency", "--prompt", "0"], "prompt must be between 1"),
    (["--latency", "--target", "tiny-target", "--draft", "tiny-draft", "--context", "100", "--prompt", "300"],
     "a prompt of 300 tokens exceeds tiny-target's window of 256"),
])
def test_cli_latency_bad_input_is_one_line_exit_2(cli, argv, message):
    code, out, err = cli("serving", *argv)
    assert code == 2 and message in err and err.count("\n") == 1, err
