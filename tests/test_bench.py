"""The timing helper and the toy benchmarks (small sizes: shapes and relations, not speeds)."""
import json
import statistics
import time

import pytest

from specsim import montecarlo, toy
from specsim.schemes import Block, Chain

from specsim.bench import toy as bench

from specsim.bench import timing


def test_measure_keeps_every_run_and_the_last_result():
    calls = []
    t = timing.measure(lambda: calls.append(1) or len(calls), repeats=3, warmup=2)
    assert len(calls) == 5 and t.result == 5 and len(t.seconds) == 3


def test_measure_times_the_work_and_calls_sync_around_it():
    events = []
    t = timing.measure(lambda: (events.append("run"), time.sleep(0.02)), repeats=3,
                       sync=lambda: events.append("sync"))
    assert events == ["sync", "run", "sync"] * 3
    assert all(s >= 0.02 for s in t.seconds)  # sleep never returns early
    assert t.best == min(t.seconds) and t.median == sorted(t.seconds)[1]


def test_measure_refuses_no_repeats():
    with pytest.raises(ValueError, match="repeats must be >= 1"):
        timing.measure(lambda: None, repeats=0)


def test_prove_all_finds_a_broken_joint(monkeypatch):
    m = toy.load_model("seed")
    assert bench.prove_all(m, gamma=2, n_tokens=2)
    assert bench.prove_all(m, gamma=2, n_tokens=2, naive=True)
    monkeypatch.setattr(bench.exact, "target_joint", lambda model, ctx, n: {})
    assert not bench.prove_all(m, gamma=2, n_tokens=2)


def test_bench_exact_small_reports_its_own_runs():
    d = bench.bench_exact(repeats=2, seed=1, small=2, large=3)
    assert set(d) == {"task", "repeats", "statistic", "v2_fast_s", "v2_naive_s", "v2_ratio", "v3_fast_s"}
    assert d["repeats"] == 2 and all(isinstance(d[k], float) and d[k] > 0 for k in d if k.endswith("_s"))
    assert d["v2_ratio"] == round(d["v2_naive_s"] / d["v2_fast_s"], 1)  # the ratio of the figures it reports
    json.dumps(d)  # printable as it is


def test_bench_sample_counts_are_the_engines_and_the_speedup_its_medians():
    m = toy.load_model("seed")
    d = bench.bench_sample(m, ("a",), gamma=3, rounds=2000, repeats=3, loop_repeats=1, seed=4)
    # the counts are those of the vectorized sampler, the same as the loop's for one seed
    assert d["accepted_counts"] == montecarlo.sample_rounds(m, ("a",), Chain(3), 2000, 4).accepted_counts
    assert sum(d["accepted_counts"]) == 2000 and d["same_counts"] is True and d["scheme"] == "chain:3"
    # the reported medians are the medians of the reported runs, and the speedup is their per-round ratio
    assert d["vectorized_s"] == statistics.median(d["vectorized_all_s"]) and len(d["vectorized_all_s"]) == 3
    assert d["loop_s"] == statistics.median(d["loop_all_s"]) and len(d["loop_all_s"]) == 1
    assert d["speedup"] == round((d["loop_s"] / d["loop_rounds"]) / (d["vectorized_s"] / d["vectorized_rounds"]), 1)
    assert d["vectorized_rounds_per_s"] == round(d["vectorized_rounds"] / d["vectorized_s"])
    assert d["loop_rounds_per_s"] == round(d["loop_rounds"] / d["loop_s"])
    assert json.loads(json.dumps(d)) == d
    d = bench.bench_sample(m, ("a",), rounds=2000, loop_rounds=500, repeats=1, loop_repeats=1)
    assert d["same_counts"] is None and d["loop_rounds"] == 500


def test_bench_exact_command_prints_the_library_dict(cli, monkeypatch):
    monkeypatch.setattr(bench, "bench_exact", lambda repeats, seed: {"repeats": repeats, "seed": seed})
    code, out, _ = cli("bench-exact", "--repeats", "2", "--seed", "5")
    assert code == 0 and '"repeats": 2' in out and '"seed": 5' in out


def test_bench_schemes_small_proves_before_timing_and_counts_the_block_rounds():
    d = bench.bench_schemes(repeats=1, seed=2, tree_vocab=2, block_vocab=2, mc_rounds=1000)
    assert {"tree_2_2_1_v2_s", "block_gamma4_v2_s", "block_mc_gamma3_s"} <= set(d)
    assert all(isinstance(d[k], float) and d[k] > 0 for k in d if k.endswith("_s"))
    seed = toy.load_model("seed")
    assert d["block_mc_rounds"] == 1000
    assert d["block_mc_accepted_counts"] == montecarlo.sample_rounds(seed, ("a",), Block(3), 1000, 2).accepted_counts
    json.dumps(d)


def test_bench_schemes_refuses_a_broken_proof(monkeypatch):
    monkeypatch.setattr(bench.exact, "check_exactness",
                        lambda *a, **k: [type("C", (), {"exact": False})()])
    with pytest.raises(ValueError, match="proof failed on the benchmark case tree_2_2_1_v2"):
        bench.bench_schemes(repeats=1, tree_vocab=2, block_vocab=2, mc_rounds=10)


def test_bench_schemes_command_prints_the_library_dict(cli, monkeypatch):
    monkeypatch.setattr(bench, "bench_schemes", lambda repeats, seed: {"repeats": repeats, "seed": seed})
    code, out, _ = cli("bench-schemes", "--repeats", "2", "--seed", "5")
    assert code == 0 and '"repeats": 2' in out and '"seed": 5' in out
