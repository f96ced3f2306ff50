"""The roofline cost model (specsim.serving) and `specsim serving`.

Byte and FLOP counts are integers, compared exactly; times are floats,
compared with a relative tolerance of 1e-12 (rounding only). No wall clock.
"""
import json
import math

import pytest

from specsim import formulas
from specsim.schemes import Block, Tree, parse
from specsim.serving import (HARDWARE, MODELS, ModelShape, best_gamma, cpu_from, crossover_batch, max_batch,
                             measure_cpu, memory_needed, serving_point, serving_table, speedup_grid, step_cost,
                             tensor_parallel)
from specsim.serving.roofline import draft_passes

TOL = 1e-12
TOY = ModelShape("toy", layers=1, d_model=10, n_heads=1, n_kv_heads=1, head_dim=10, d_ff=20, vocab=100,
                 tied_embeddings=False, gated_mlp=False, source="by hand")
TOY_DRAFT = ModelShape("toy-draft", layers=1, d_model=2, n_heads=1, n_kv_heads=1, head_dim=2, d_ff=4, vocab=100,
                       tied_embeddings=True, gated_mlp=False, source="by hand")


# -- shapes ---------------------------------------------------------------------------------------

def test_llama_3_8b_has_the_published_parameter_count_and_kv_size():
    m = MODELS["llama-3-8b"]
    assert m.params == 8_030_261_248  # Meta's count for Meta-Llama-3-8B
    assert m.kv_bytes_per_token("bf16") == 2 * 32 * 8 * 128 * 2 == 128 * 1024
    assert m.streamed_params == m.params - 128256 * 4096  # the input table is only looked up


def test_tied_drafters_match_their_model_card_sizes():
    assert round(MODELS["llama-3.2-1b"].params / 1e9, 2) == 1.24
    assert round(MODELS["llama-3.2-3b"].params / 1e9, 2) == 3.21
    assert round(MODELS["llama-3-70b"].params / 1e9, 1) == 70.6


def test_tiny_pair_counts_equal_the_shipped_manifest():
    manifest = json.loads((__import__("pathlib").Path(__file__).parent.parent
                           / "specsim/gpt/weights/manifest.json").read_text())["models"]
    assert MODELS["tiny-target"].params == manifest["target"]["parameters"]
    assert MODELS["tiny-draft"].params == manifest["draft_trained"]["parameters"]


def test_eagle_head_reads_the_targets_lm_head_but_does_not_own_it():
    e, t = MODELS["eagle-head-8b"], MODELS["llama-3-8b"]
    layer = t.layer_params - t.d_model  # EAGLE's one layer has no input norm
    fc = 2 * 4096 * 4096 + 4096
    assert e.params == layer + fc
    assert e.streamed_params == layer + fc + 128256 * 4096
    assert e.kv_bytes_per_token("bf16") == t.kv_bytes_per_token("bf16") // 32


def test_toy_shape_by_hand():
    assert TOY.params == 4 * 100 + 2 * 200 + 2 * 10 + 10 + 2 * 1000
    assert TOY.streamed_params == 820 + 10 + 1000
    assert TOY.weight_bytes("fp8") * 2 == TOY.weight_bytes("bf16") == TOY.weight_bytes("fp32") // 2
    assert TOY.flops_per_token(7) == 2 * 1830 + 4 * 10 * 7


def test_bad_shapes_and_dtypes_are_one_line():
    with pytest.raises(ValueError, match="multiple of n_kv_heads"):
        ModelShape("x", 1, 8, 3, 2, 4, 8, 10, True, False, "s")
    with pytest.raises(ValueError, match="unknown dtype 'int3'"):
        TOY.weight_bytes("int3")


# -- one step -------------------------------------------------------------------------------------

def test_step_cost_by_hand_memory_then_compute_bound():
    hw = cpu_from(1e6, 1e6, overhead=1e-3, dtype="bf16", overlap=True)
    s = step_cost(TOY, hw, batch=1, context=4)
    assert (s.bytes, s.flops, s.bound) == (3660 + 160 + 40, 3660 + 200, "memory")
    assert math.isclose(s.seconds, 3860 / 1e6 + 1e-3, rel_tol=TOL)
    s = step_cost(TOY, hw, batch=2, context=4, positions=3)  # queries see 5, 6, 7 keys
    assert (s.bytes, s.flops, s.bound) == (3660 + 320 + 240, 2 * (3 * 3660 + 40 * 18), "compute")
    assert math.isclose(s.seconds, 23400 / 1e6 + 1e-3, rel_tol=TOL)


def test_a_cpu_adds_memory_and_compute_time_a_gpu_takes_the_larger():
    """cpu_from's default: memory and compute take turns (one core), so a pass costs their sum."""
    serial, overlapped = cpu_from(1e6, 1e6, overhead=1e-3, dtype="bf16"), cpu_from(1e6, 1e6, 1e-3, "bf16", overlap=True)
    assert not serial.overlap and overlapped.overlap and HARDWARE["h100-sxm"].overlap
    s, o = step_cost(TOY, serial, 2, 4, 3), step_cost(TOY, overlapped, 2, 4, 3)
    assert (s.bytes, s.flops) == (o.bytes, o.flops) == (3660 + 320 + 240, 2 * (3 * 3660 + 40 * 18))
    assert math.isclose(s.seconds, (4220 + 23400) / 1e6 + 1e-3, rel_tol=TOL)
    assert math.isclose(o.seconds, 23400 / 1e6 + 1e-3, rel_tol=TOL)
    assert tensor_parallel(serial, 2).overlap is False


def test_kv_window_bounds_reads_and_attention():
    hw = cpu_from(1e6, 1e6, dtype="bf16")
    full, window = step_cost(TOY, hw, 3, 100, 1), step_cost(TOY, hw, 3, 100, 1, kv_window=10)
    assert full.kv_read_bytes == 3 * 100 * 40 and window.kv_read_bytes == 3 * 10 * 40
    assert full.flops - window.flops == 3 * 40 * 90
    assert step_cost(TOY, hw, 3, 100, 1, kv_window=100) == full


def test_h100_figures_and_the_bound_at_batch_1():
    hw = HARDWARE["h100-sxm"]
    s = step_cost("llama-3-8b", hw, 1, 1024)
    assert s.bound == "memory"
    assert math.isclose(s.memory_s, (7_504_924_672 * 2 + 1025 * 131072) / 3.35e12, rel_tol=TOL)


# -- a round --------------------------------------------------------------------------------------

def test_serving_point_is_refined_speedup_of_c_and_v():
    p = serving_point("llama-3-8b", "llama-3.2-1b", "h100-sxm", 8, 1024, 0.8, 4)
    assert math.isclose(p.c, p.draft.seconds / p.target.seconds, rel_tol=TOL)
    assert math.isclose(p.v, p.verify.seconds / p.target.seconds, rel_tol=TOL)
    assert p.verify.positions == 5
    tokens = (1 - 0.8 ** 5) / 0.2
    assert math.isclose(p.speedup, tokens / (4 * p.c + p.v), rel_tol=TOL)


def test_toy_round_by_hand():
    """Toy pair on 1 MB/s, 1 MFLOP/s, no overhead, batch 1, context 4, γ = 2, α = 1/2, overlapped."""
    hw = cpu_from(1e6, 1e6, dtype="bf16", overlap=True)
    p = serving_point(TOY, TOY_DRAFT, hw, 1, 4, 0.5, 2)
    target = 3660 + 4 * 40 + 40  # bytes: memory-bound (3860 FLOPs)
    d = TOY_DRAFT
    draft = max(d.weight_bytes("bf16") + 5 * d.kv_bytes_per_token("bf16"), d.flops_per_token(5))
    verify = max(3660 + 160 + 3 * 40, 3 * 3660 + 40 * 18)  # 3 positions: compute-bound
    assert (p.target.seconds, p.draft.seconds, p.verify.seconds) == (target / 1e6, draft / 1e6, verify / 1e6)
    assert math.isclose(p.speedup, 1.75 / (2 * draft / target + verify / target), rel_tol=TOL)


def test_plain_decoding_is_gamma_0_with_speedup_1():
    p = serving_point("llama-3-8b", "llama-3.2-1b", "h100-sxm", 64, 1024, 0.8, 0)
    assert (p.gamma, p.speedup, p.v, p.tokens, p.name) == (0, 1.0, 1.0, 1, "plain")


def test_trees_draft_level_by_level_and_need_tokens():
    assert draft_passes(Tree((2, 2, 1))) == [1, 2, 4]
    assert draft_passes(parse("tree:dynamic,budget=8,depth=3,topk=2")) == [1, 2, 2]
    with pytest.raises(ValueError, match="α alone does not fix"):
        serving_point("llama-3-8b", "llama-3.2-1b", "h100-sxm", 1, 1024, 0.8, "tree:2,2")
    p = serving_point("llama-3-8b", "llama-3.2-1b", "h100-sxm", 1, 1024, 0.8, "tree:2,2", tokens=2.5)
    assert p.verify.positions == 7 and p.tokens == 2.5
    with pytest.raises(ValueError, match="depends on the drafter"):
        serving_point("llama-3-8b", "llama-3.2-1b", "h100-sxm", 1, 1024, 0.8, "chain:max=4,stop=1/2")


def test_block_uses_the_chain_formula_as_a_lower_bound():
    p = serving_point("llama-3-8b", "llama-3.2-1b", "h100-sxm", 1, 1024, 0.8, Block(3))
    assert p.tokens == formulas.expected_tokens(0.8, 3) and "lower bound" in p.tokens_from


# -- batch, context, crossover ----------------------------------------------------------------

def test_speedup_falls_with_batch_at_fixed_gamma_on_h100():
    for g in (1, 4, 8):
        s = [serving_point("llama-3-8b", "llama-3.2-1b", "h100-sxm", 2 ** k, 1024, 0.8, g).speedup
             for k in range(13)]
        assert all(a > b for a, b in zip(s, s[1:])), (g, s)


def test_verify_turns_compute_bound_as_the_batch_grows():
    one = serving_point("llama-3-8b", "llama-3.2-1b", "h100-sxm", 1, 1024, 0.8, 4)
    big = serving_point("llama-3-8b", "llama-3.2-1b", "h100-sxm", 1024, 1024, 0.8, 4)
    assert one.verify.bound == "memory" and big.verify.bound == "compute"
    assert big.v > 1.5 > 1.01 > one.v


def test_crossover_exists_at_short_context_and_is_the_first_batch_where_nothing_pays():
    args = ("llama-3-8b", "llama-3.2-1b", "h100-sxm")
    b = crossover_batch(*args, 128, 0.8)
    assert b is not None and b > 1

    def best(batch):
        return best_gamma(*args, batch, 128, 0.8, gammas=range(1, 11)).speedup
    assert best(b - 1) > 1 >= best(b)
    assert all(best(k * b) <= 1 for k in (2, 4, 16))


def test_crossover_bisection_agrees_with_a_scan():
    hw = cpu_from(1e6, 2e6, dtype="bf16")
    b = crossover_batch(TOY, TOY_DRAFT, hw, 4, 0.5, limit=64)
    scan = next((k for k in range(1, 65)
                 if best_gamma(TOY, TOY_DRAFT, hw, k, 4, 0.5, gammas=range(1, 11)).speedup <= 1), None)
    assert b == scan


def test_crossover_none_within_the_limit_is_reported_as_none():
    # at 1024 cached tokens the target stays KV-bound: some γ pays up to the limit
    assert crossover_batch("llama-3-8b", "llama-3.2-1b", "h100-sxm", 1024, 0.8, limit=4096) is None


def test_long_context_raises_c_and_a_kv_window_lowers_it():
    def c(context, window=None):
        return serving_point("llama-3-8b", "llama-3.2-1b", "h100-sxm", 64, context, 0.8, 3,
                             draft_kv_window=window).c
    assert c(1024) < c(8192) < c(32768)
    assert c(32768, 512) < c(32768)
    assert c(32768, 512) < c(1024)  # the target's step grows, the bounded drafter's does not
    assert c(1024, 1024) == c(1024)


def test_memory_bounds_the_batch():
    b = max_batch("llama-3-8b", "llama-3.2-1b", "h100-sxm", 1024)
    assert memory_needed("llama-3-8b", "llama-3.2-1b", b, 1024) <= 80e9 < memory_needed(
        "llama-3-8b", "llama-3.2-1b", b + 1, 1024)
    rows = serving_table("llama-3-8b", "llama-3.2-1b", "h100-sxm", [b, b + 1], 1024, 0.8)
    assert [r.fits for r in rows] == [True, False]


def test_serving_table_rows_are_the_best_points():
    rows = serving_table("llama-3-8b", "llama-3.2-1b", "h100-sxm", [1, 64], 1024, 0.8)
    for r in rows:
        p = best_gamma("llama-3-8b", "llama-3.2-1b", "h100-sxm", r.batch, 1024, 0.8)
        assert (r.best_gamma, r.speedup, r.c, r.v) == (p.gamma, p.speedup, p.c, p.v)
        assert r.verify_ms == p.verify.seconds * 1e3
    assert rows[0].best_gamma >= 1 and rows[0].speedup > 1


def test_bad_library_input_is_one_line():
    for call, match in [
        (lambda: step_cost("llama-3-8b", "h100-sxm", 0, 10), "batch must be"),
        (lambda: step_cost("nope", "h100-sxm", 1, 10), "unknown model 'nope'"),
        (lambda: step_cost("llama-3-8b", "tpu", 1, 10), "unknown hardware 'tpu'"),
        (lambda: step_cost("llama-3-8b", "a100-80gb", 1, 10, dtype="fp8"), "no 'fp8' figure"),
        (lambda: step_cost("tiny-target", "h100-sxm", 1, 256), "window of 256"),
        (lambda: serving_point("llama-3-8b", "tiny-draft", "h100-sxm", 1, 10, 0.8, 2), "share a vocabulary"),
        (lambda: serving_point("llama-3-8b", "llama-3.2-1b", "h100-sxm", 1, 10, 1.5, 2), "alpha"),
        (lambda: serving_table("llama-3-8b", "llama-3.2-1b", "h100-sxm", range(1, 1000), 10, 0.8), "batch sizes"),
        (lambda: measure_cpu(100), "seconds must be"),
    ]:
        with pytest.raises(ValueError, match=match) as e:
            call()
        assert "\n" not in str(e.value)


def test_measure_cpu_gives_positive_figures():
    hw = measure_cpu(0.1)
    assert hw.bandwidth_bytes_per_s > 0 and hw.peak("fp32") > 0 and "measured" in hw.source


# -- the command --------------------------------------------------------------------------------

def test_cli_table(cli):
    code, out, err = cli("serving", "--batch", "1,8,64", "--context", "1024", "--alpha", "0.8")
    assert code == 0, err
    for key in ("target_step_ms", "draft_step_ms", "verify_ms", "best_gamma", "speedup", "crossover_batch"):
        assert key in out
    assert len([line for line in out.splitlines() if line.split()[:1] in (["1"], ["8"], ["64"])]) == 3


def test_cli_json_keys_and_values(cli_json):
    d = cli_json("serving", "--batch", "1,8", "--context", "128")
    assert {"target", "draft", "hardware", "dtype", "context", "alpha", "rows", "crossover_batch"} <= set(d)
    assert set(d["rows"][0]) >= {"batch", "target_step_ms", "draft_step_ms", "verify_ms", "c", "v", "best_gamma",
                                 "speedup"}
    assert d["crossover_batch"] == crossover_batch("llama-3-8b", "llama-3.2-1b", "h100-sxm", 128, 0.8)
    p = best_gamma("llama-3-8b", "llama-3.2-1b", "h100-sxm", 8, 128, 0.8)
    assert d["rows"][1]["speedup"] == p.speedup and d["rows"][1]["best_gamma"] == p.gamma


def test_cli_list_names_every_preset_with_its_source(cli):
    code, out, _ = cli("serving", "--list")
    assert code == 0
    for name in list(MODELS) + list(HARDWARE):
        assert f"  {name}:" in out
    assert "datasheet" in out and "config.json" in out and "manifest.json" in out


def test_cli_fixed_scheme_and_window(cli_json):
    d = cli_json("serving", "--scheme", "tree:2,2", "--tokens", "2.5", "--batch", "1", "--draft-kv-window", "64")
    assert d["scheme"] == "tree:2,2" and d["draft_kv_window"] == 64
    assert d["rows"][0]["scheme"] in ("tree:2,2", "plain")


@pytest.mark.parametrize("argv, message", [
    (["--target", "nope"], "unknown model 'nope': known llama-3-8b"),
    (["--hardware", "tpu"], "unknown hardware 'tpu'"),
    (["--batch", "0"], "batch must be from 1"),
    (["--batch", "1," * 70 + "1"], "at most 64 batch sizes"),
    (["--batch", "9" * 40], "digits"),
    (["--context", "0"], "context must be between"),
    (["--context", "99999999999"], "context must be between"),
    (["--alpha", "1.5"], "alpha must be <= 1"),
    (["--hardware", "a100-80gb", "--dtype", "fp8"], "no 'fp8' figure"),
    (["--scheme", "tree:2,2"], "α alone does not fix"),
    (["--tokens", "2"], "--tokens needs one fixed scheme"),
    (["--target", "tiny-target", "--draft", "tiny-draft", "--context", "300"], "window of 256"),
    (["--gammas", "0"], "gammas must be between 1"),
])
def test_cli_bad_input_is_one_line_exit_2(cli, argv, message):
    code, out, err = cli("serving", *argv)
    assert code == 2 and message in err and err.count("\n") == 1, err


def test_grid_cells_are_serving_points():
    g = speedup_grid("llama-3-8b", "llama-3.2-1b", "h100-sxm", [1, 512], [0, 2, 5], 256, 0.8)
    assert g["gammas"] == [0, 2, 5]
    for b, row in zip(g["batches"], g["speedup"]):
        assert row == [serving_point("llama-3-8b", "llama-3.2-1b", "h100-sxm", b, 256, 0.8, k).speedup
                       for k in (0, 2, 5)]
    assert g["best_gamma"][0] > 0 and g["best_gamma"][1] == 0


def test_tensor_parallel_is_n_devices_ideally():
    one, two = HARDWARE["h100-sxm"], tensor_parallel(HARDWARE["h100-sxm"], 2)
    a, b = step_cost("llama-3-70b", one, 8, 1024), step_cost("llama-3-70b", two, 8, 1024)
    assert math.isclose(b.memory_s, a.memory_s / 2, rel_tol=TOL) and b.bytes == a.bytes
    assert max_batch("llama-3-70b", "llama-3.2-1b", one, 1024) == 0 < max_batch("llama-3-70b", "llama-3.2-1b",
                                                                                 two, 1024)


def test_cli_devices_and_overhead(cli_json):
    d = cli_json("serving", "--target", "llama-3-70b", "--devices", "2", "--step-overhead-us", "100",
                 "--batch", "1")
    assert d["hardware"] == "2x h100-sxm" and math.isclose(d["step_overhead_s"], 100e-6, rel_tol=TOL)
