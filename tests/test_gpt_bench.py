"""specsim.gpt.measure.bench: measured rates from K per round, and the Tiny GPT page's quick measurement."""
import pytest
import torch

from specsim import formulas
from specsim.gpt import api
from specsim.gpt.measure import bench


def test_measured_and_predicted_by_hand():
    costs = {"target": 2.0, "draft": {2: 0.2}, "verify": {2: 2.4}}
    r = bench.measured_and_predicted([2, 0, 1, 2], 2, costs)  # checked: 2 + 1 + 2 + 2 drafts
    assert r["alpha"] == 5 / 7 and r["tokens_per_round"] == 9 / 4
    assert r["cost"] == 0.1 and r["verify_ratio"] == 1.2
    assert r["formula_speedup"] == pytest.approx(float(formulas.speedup(5 / 7, 2, 0.1)), rel=1e-12)
    assert r["refined_speedup"] == pytest.approx(9 / 4 / (2 * 0.1 + 1.2), rel=1e-12)


@pytest.fixture(scope="module")
def pair():
    return api.load_pair("distilled", "cpu")


def test_measured_alpha_matches_the_trace(pair):
    g = api.speculative_generate(pair, "def ", 40, 4, seed=3)
    costs = {"target": 1.0, "draft": {4: 0.1}, "verify": {4: 1.0}}
    r = bench.measured_and_predicted(g.accepted_per_round, 4, costs)
    assert r["alpha"] == pytest.approx(g.alpha, abs=1e-12)
    emitted = r["tokens_per_round"] * len(g.rounds)  # K + 1 tokens a round: every token, and at most
    assert len(g.tokens) <= round(emitted) < len(g.tokens) + 4 + 1  # one round's overshoot past 40


def test_quick_measure(pair):
    m = bench.quick_measure(pair, "def ", 16, 3, temperature=1.0, seed=2, runs=2)
    assert m.generation.tokens == api.speculative_generate(pair, "def ", 16, 3, seed=2).tokens
    assert m.runs == 2 and m.speedup == m.seconds["plain"] / m.seconds["speculative"] > 0
    assert set(m.costs["draft"]) == {3} and m.rates["alpha"] == pytest.approx(m.generation.alpha)
    own = bench.in_round_costs([m.generation], 3)  # c and v: the kept run's own rounds, in plain steps
    assert m.costs["target"] == m.seconds["plain"] / 16 and m.costs["verify"][3] == own["verify"]
    assert m.rates["cost"] == pytest.approx(own["draft"] / m.costs["target"], rel=1e-12)
    assert set(m.spreads) == {"speculative", "plain"} and all(x >= 0 for x in m.spreads.values())
    assert m.machine["threads"] == torch.get_num_threads() and m.machine["torch"] == torch.__version__.split("+")[0]


@pytest.mark.parametrize("scheme", ["block:3", "tree:2,1", "tree:dynamic,budget=4,depth=2,topk=2"])
def test_quick_measure_runs_every_scheme_and_counts_without_the_chains_formula(scheme):
    """The Tiny GPT page measures any scheme; the formula's c, v and α predictions stay a chain's."""
    pair = api.load_pair("distilled", "cpu")
    m = bench.quick_measure(pair, "def ", 16, scheme, temperature=1.0, seed=2, runs=1)
    gen = api.speculative_generate(pair, "def ", 16, scheme, seed=2)
    assert m.generation.tokens == gen.tokens and m.generation.scheme == gen.scheme
    assert set(m.costs) == {"target"} and "alpha" not in m.rates
    assert m.rates["tokens_per_round"] == sum(len(r.emitted) for r in gen.rounds) / len(gen.rounds)
    assert m.rates["tokens_per_pass"] == len(gen.tokens) / gen.target_passes


def test_quick_measure_temperature_zero_is_greedy(pair):
    m = bench.quick_measure(pair, "def ", 12, 2, temperature=0, seed=7, runs=1)
    assert m.generation.tokens == api.speculative_generate(pair, "def ", 12, 2, greedy=True, seed=0).tokens
    assert api.sampling(0).greedy and not api.sampling(0.5).greedy
    with pytest.raises(ValueError, match="temperature must be >= 0"):
        api.sampling(-1)


def test_a_clock_times_every_round_and_changes_no_token(pair):
    """With a clock the trace is the same; each round has its three parts, the generation its two
    phases, and the rounds' parts fit inside the decoding time they are part of."""
    import time
    for scheme in ("chain:3", "block:3", "tree:2,1"):
        plain = api.speculative_generate(pair, "def f(x):\n", 30, scheme, seed=5)
        timed = api.speculative_generate(pair, "def f(x):\n", 30, scheme, seed=5, clock=time.perf_counter)
        assert timed.tokens == plain.tokens and plain.seconds is None and plain.rounds[0].seconds is None
        assert [r.to_dict() for r in timed.rounds] == [r.to_dict() for r in plain.rounds]
        assert all(set(r.seconds) == {"draft", "verify", "decide", "keep"} and min(r.seconds.values()) >= 0
                   for r in timed.rounds)
        assert set(timed.seconds) == {"prefill", "decode"} and timed.seconds["prefill"] > 0
        assert sum(sum(r.seconds.values()) for r in timed.rounds) <= timed.seconds["decode"]
    g = api.plain_generate(pair, "def ", 10, clock=time.perf_counter)
    assert g.tokens == api.plain_generate(pair, "def ", 10).tokens and g.seconds["decode"] > 0


def test_in_round_costs_on_a_slid_generation_counts_the_refill_as_prefill(pair):
    """A generation past the window slides it: the re-fill is prefill, not a round's cost."""
    import time
    window = pair.target.config.block_size
    g = api.speculative_generate(pair, "def ", window, 4, seed=1, clock=time.perf_counter)
    assert any(r.slid for r in g.rounds)
    c = bench.in_round_costs([g], 4)
    assert min(c.values()) > 0 and c["host"] < c["verify"]  # the walk and the crop: less than a target pass


# -- the statistics of the trustworthy bench (no wall clock: timings are scripted) -----------------

def test_coverage_is_the_exact_chance_that_min_and_max_straddle_the_median():
    """Each of R independent values lies above or below the median with chance 1/2: [min, max]
    misses it only when all R fall on one side. Count the 2^R sign patterns exactly."""
    from fractions import Fraction
    from itertools import product
    for r in range(1, 9):
        both = sum(1 for signs in product((0, 1), repeat=r) if 0 in signs and 1 in signs)
        assert bench.coverage(r) == float(Fraction(both, 2 ** r))


def test_spread_and_noisy():
    assert bench.spread([3.0, 3.0, 3.0]) == 0 and bench.spread([1.0, 4.0, 2.0]) == 1.0
    assert not bench.noisy({4: 2.0}, {4: (1.0, 3.0)})  # one gamma: nothing to decide
    assert bench.noisy({3: 1.9, 4: 2.0}, {3: (1.8, 2.0), 4: (1.95, 2.06)})  # width 0.11 > lead 0.1
    assert not bench.noisy({3: 1.9, 4: 2.0}, {3: (1.8, 2.0), 4: (1.95, 2.04)})  # width 0.09 < lead 0.1


def test_bench_figures_from_scripted_timings(pair, monkeypatch):
    """Scripted clock readings (the generations run for real, their times are replaced): every figure is
    the minimum over repeats, intervals are [min, max] of the per-repeat values, c and v come from the
    rounds' own times in units of plain decoding's time per token, ratio = speedup / prediction."""
    plain_s, spec_s = iter([9.0, 1.2, 1.0, 1.1]), iter([9.0, 0.6, 0.5, 0.7])  # first: the warm-up
    calls, real_plain, real_spec = [], bench.plain_generate, bench.speculative_generate

    def scripted(real, times, split):
        def run(*args, **kwargs):
            g = real(*args, **kwargs)
            calls.append(g.mode)
            g.seconds = {"prefill": 0.25, "decode": next(times)}
            for r in g.rounds:  # each round: drafting, verifying, the rest, shares of the decoding time
                r.seconds = {k: f * g.seconds["decode"] / len(g.rounds) for k, f in split.items()}
            return g
        return run

    monkeypatch.setattr(bench, "plain_generate", scripted(real_plain, plain_s, {}))
    monkeypatch.setattr(bench, "speculative_generate",
                        scripted(real_spec, spec_s, {"draft": 0.3, "verify": 0.6, "decide": 0.05}))
    d = bench.bench(pair, [3], n_tokens=12, repeats=3, prompts=["def f(x):\n"])
    assert calls[2:] == ["plain", "speculative", "speculative", "plain", "plain", "speculative"]  # rotated
    r, rounds = d["results"][0], None
    assert r["speedup"] == round(1.0 / 0.5, 4) and r["speedup_interval"] == [round(1.1 / 0.7, 4), 2.0]
    rounds = len(api.speculative_generate(pair, "def f(x):\n", 12, 3).rounds)  # the same seed, the same rounds
    step = [1.2 / 12, 1.0 / 12, 1.1 / 12]  # plain decoding's seconds per token: the target step
    c, v = 0.3 * 0.5 / rounds / 3 / min(step), 0.6 * 0.5 / rounds / min(step)  # the minima over repeats
    assert r["cost"] == round(c, 4) and r["verify_ratio"] == round(v, 4) and d["step_ms"]["plain"] == round(1e3 / 12, 4)
    assert r["host_ratio"] == round(0.1 * 0.5 / rounds / min(step), 4)  # decoding minus drafting and verifying
    predicted = r["tokens_per_round"] / (3 * c + v)
    assert r["refined_speedup"] == pytest.approx(predicted, abs=1e-4)
    assert r["ratio"] == pytest.approx(2.0 / predicted, abs=1e-3)
    per_repeat = [(p / s) / (r["tokens_per_round"] / (0.9 * s / rounds / t)) for p, s, t in
                  zip((1.2, 1.0, 1.1), (0.6, 0.5, 0.7), step)]
    assert r["ratio_interval"] == pytest.approx([min(per_repeat), max(per_repeat)], abs=1e-3)
    assert r["ratio"] == pytest.approx(per_repeat[1], abs=1e-3)  # the fastest speculative repeat's own ratio
    assert r["spread"]["speculative"] == pytest.approx(0.6 / 0.5 - 1, abs=1e-4)
    assert r["speedup_with_prefill"] == pytest.approx((1.0 + 0.25) / (0.5 + 0.25), abs=1e-4)
    assert d["prefill_ms"] == {"plain": 250.0, 3: 250.0} and d["costs"] == "timed inside the rounds"
    assert d["statistic"] == "minimum over repeats" and d["ratio_coverage"] == 0.75 and d["noisy"] is False
    m = d["machine"]
    assert m["torch"] == torch.__version__.split("+")[0] and m["threads"] == torch.get_num_threads()


def test_the_machine_record_names_the_bfloat16_matrix_hardware(monkeypatch):
    """A bench records what it ran on: the processor's name and how it multiplies bfloat16 matrices (what
    sets a bfloat16 verify pass's cost), read from /proc/cpuinfo; without that file, only what torch says."""
    from specsim.gpt.measure import machine
    text = ("processor : 0\nmodel name : Zen 4 part\nflags : fpu avx512f avx512_bf16\n\n"
            "processor : 1\nmodel name : other\n")
    monkeypatch.setattr(machine, "read_cpuinfo", lambda: text)
    m = machine.machine("cpu")
    assert m["cpu"] == "Zen 4 part" and m["bfloat16_matrix"] == "AVX-512 BF16"
    assert m["torch_cpu_kernels"] == torch.backends.cpu.get_cpu_capability()
    assert machine.describe(m).startswith("Zen 4 part (bfloat16 matrices: AVX-512 BF16; torch ")
    monkeypatch.setattr(machine, "read_cpuinfo", lambda: "")
    bare = machine.machine("cpu")
    assert bare["bfloat16_matrix"] is None and "bfloat16 matrices" not in machine.describe(bare)

def test_bench_reports_a_bootstrap_interval_over_prompts(pair, monkeypatch):
    """With two prompts the speedup gets a prompt-level interval: each prompt's minimum over repeats,
    resampled. Scripted times: prompt 0 is twice as fast speculatively, prompt 1 1.25 times, so every
    resample lies between 1.25 and 2 and the interval's ends are those two figures."""
    times = {"plain": iter([1.0, 1.0] + [1.0, 1.0] * 2), "speculative": iter([0.5, 0.8] + [0.5, 0.8] * 2)}
    real = {"plain": bench.plain_generate, "speculative": bench.speculative_generate}

    def scripted(mode):
        def run(*args, **kwargs):
            g = real[mode](*args, **kwargs)
            g.seconds = {"prefill": 0.1, "decode": next(times[mode])}
            for r in g.rounds:
                r.seconds = {"draft": 0.001, "verify": 0.002, "decide": 0.0}
            return g
        return run

    monkeypatch.setattr(bench, "plain_generate", scripted("plain"))
    monkeypatch.setattr(bench, "speculative_generate", scripted("speculative"))
    d = bench.bench(pair, [2], n_tokens=6, repeats=2, prompts=["def f(x):\n", "class A:\n"])
    low, high = d["results"][0]["speedup_prompt_interval"]
    assert low == pytest.approx(1.25, abs=1e-4) and high == pytest.approx(2.0, abs=1e-4)
    assert d["alpha_se_unit"] == "prompt"
    assert bench.prompt_interval([[1.0]], [[0.5]]) is None


def test_best_gamma_share_resamples_the_prompts_jointly():
    """Each prompt's time is its fastest repeat; the same prompt resample judges every gamma. A gamma faster
    on every prompt wins every resample; when each wins one of two prompts by the same margin, the winner
    is the one whose prompt the resample drew more often (ties to the first listed): both shares in (0, 1)."""
    by_prompt = {"plain": [[4.0, 4.0], [5.0, 5.0]], 2: [[2.0, 2.0], [2.5, 3.0]], 3: [[3.0, 3.0], [3.0, 3.0]]}
    t = bench.ArmTimings(seconds={}, by_prompt=by_prompt, prefill={}, costs={}, gens={})
    assert bench.best_share(t, [2, 3]) == {"2": 1.0, "3": 0.0}
    t.by_prompt = {"plain": [[4.0, 4.0]], 2: [[1.0, 3.0]], 3: [[3.0, 1.0]]}
    share = bench.best_share(t, [2, 3])
    assert 0.6 < share["2"] < 0.9 and share["2"] + share["3"] == pytest.approx(1.0)  # 3/4 of resamples in law
    t.by_prompt = {"plain": [[4.0]], 2: [[1.0]], 3: [[2.0]]}
    assert bench.best_share(t, [2, 3]) is None  # one prompt: nothing to resample
