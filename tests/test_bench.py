"""The timing helper and the toy benchmarks (small sizes: shapes and relations, not speeds)."""
import time

import pytest

from specsim import toy

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


def test_bench_exact_small():
    d = bench.bench_exact(repeats=2, seed=1, small=2, large=3)
    assert set(d) == {"task", "repeats", "statistic", "v2_fast_s", "v2_naive_s", "v2_ratio", "v3_fast_s"}
    assert d["repeats"] == 2 and d["v2_fast_s"] >= 0 and d["v3_fast_s"] >= 0


def test_bench_sample_small_counts_agree():
    m = toy.load_model("seed")
    d = bench.bench_sample(m, ("a",), gamma=3, rounds=2000, repeats=2, loop_repeats=1, seed=4)
    assert d["same_counts"] is True and len(d["vectorized_all_s"]) == 2 and len(d["loop_all_s"]) == 1
    assert d["loop_rounds"] == d["vectorized_rounds"] == 2000 and d["speedup"] > 0
    d = bench.bench_sample(m, ("a",), rounds=2000, loop_rounds=500, repeats=1, loop_repeats=1)
    assert d["same_counts"] is None and d["loop_rounds"] == 500


def test_bench_exact_command_prints_the_library_dict(cli, monkeypatch):
    monkeypatch.setattr(bench, "bench_exact", lambda repeats, seed: {"repeats": repeats, "seed": seed})
    code, out, _ = cli("bench-exact", "--repeats", "2", "--seed", "5")
    assert code == 0 and '"repeats": 2' in out and '"seed": 5' in out


def test_bench_schemes_small_proves_before_timing():
    d = bench.bench_schemes(repeats=1, seed=2, tree_vocab=2, block_vocab=2, mc_rounds=1000)
    assert {"tree_2_2_1_v2_s", "block_gamma4_v2_s", "block_mc_gamma3_s"} <= set(d)
    assert d["block_mc_rounds"] == 1000 and all(d[k] >= 0 for k in d if k.endswith("_s"))


def test_bench_schemes_refuses_a_broken_proof(monkeypatch):
    monkeypatch.setattr(bench.exact, "check_exactness",
                        lambda *a, **k: [type("C", (), {"exact": False})()])
    with pytest.raises(ValueError, match="proof failed on the benchmark case tree_2_2_1_v2"):
        bench.bench_schemes(repeats=1, tree_vocab=2, block_vocab=2, mc_rounds=10)


def test_bench_schemes_command_prints_the_library_dict(cli, monkeypatch):
    monkeypatch.setattr(bench, "bench_schemes", lambda repeats, seed: {"repeats": repeats, "seed": seed})
    code, out, _ = cli("bench-schemes", "--repeats", "2", "--seed", "5")
    assert code == 0 and '"repeats": 2' in out and '"seed": 5' in out
