"""specsim.gpt.measure.bench: measured rates from K per round, and the Tiny GPT page's quick measurement."""
import pytest

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


def test_quick_measure(pair, monkeypatch):
    monkeypatch.setattr(bench, "QUICK_STEPS", 2)
    monkeypatch.setattr(bench, "QUICK_REPEATS", 1)
    m = bench.quick_measure(pair, "def ", 16, 3, temperature=1.0, seed=2, runs=2)
    assert m.generation.tokens == api.speculative_generate(pair, "def ", 16, 3, seed=2).tokens
    assert m.runs == 2 and m.speedup == m.seconds["plain"] / m.seconds["speculative"] > 0
    assert set(m.costs["draft"]) == {3} and m.rates["alpha"] == pytest.approx(m.generation.alpha)


def test_quick_measure_temperature_zero_is_greedy(pair, monkeypatch):
    monkeypatch.setattr(bench, "QUICK_STEPS", 2)
    monkeypatch.setattr(bench, "QUICK_REPEATS", 1)
    m = bench.quick_measure(pair, "def ", 12, 2, temperature=0, seed=7, runs=1)
    assert m.generation.tokens == api.speculative_generate(pair, "def ", 12, 2, greedy=True, seed=0).tokens
    assert api.sampling(0).greedy and not api.sampling(0.5).greedy
    with pytest.raises(ValueError, match="temperature must be >= 0"):
        api.sampling(-1)


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


def test_round_costs_at_the_given_positions_and_bad_positions_in_one_line(pair):
    ids = pair.tokenizer.encode("def f(x):\n    return x\n")
    c = bench.round_costs(pair.target, pair.draft, ids, [10, 30, 20], 3)
    assert set(c) == {"target", "draft", "verify"} and all(v > 0 for v in c.values())
    for bad in ([0], [pair.target.config.block_size - 3]):
        with pytest.raises(ValueError, match="positions must lie in") as e:
            bench.round_costs(pair.target, pair.draft, ids, bad, 3)
        assert "\n" not in str(e.value)


def test_bench_figures_from_scripted_timings(pair, monkeypatch):
    """Scripted wall times and step costs (the generations run for real): every figure is the
    minimum over repeats, intervals are [min, max] of the per-repeat values, ratio = speedup / prediction."""
    from specsim.bench.timing import Timing
    plain_s, spec_s = iter([9.0, 1.2, 1.0, 1.1]), iter([9.0, 0.6, 0.5, 0.7])  # first: the warm-up
    step = iter([{"target": 1e-3, "draft": 1e-4, "verify": 1.5e-3}, {"target": 2e-3, "draft": 3e-4, "verify": 2e-3},
                 {"target": 1.1e-3, "draft": 1e-4, "verify": 1.4e-3}])
    calls = []

    def fake_measure(fn, repeats=1, warmup=0, sync=None):
        result = fn()
        calls.append(result[0].mode)
        return Timing([next(plain_s if result[0].mode == "plain" else spec_s)], result)

    monkeypatch.setattr(bench, "measure", fake_measure)
    monkeypatch.setattr(bench, "bench_clock", lambda device: ("wall time", bench.time.perf_counter))
    monkeypatch.setattr(bench, "round_costs", lambda *a, **k: next(step))
    d = bench.bench(pair, [3], n_tokens=12, repeats=3, prompts=["def f(x):\n"])
    assert calls[2:] == ["plain", "speculative", "speculative", "plain", "plain", "speculative"]  # rotated
    r = d["results"][0]
    assert r["speedup"] == round(1.0 / 0.5, 4) and r["speedup_interval"] == [round(1.1 / 0.7, 4), 2.0]
    step = [1.2 / 12, 1.0 / 12, 1.1 / 12]  # plain decoding's seconds per token: the target step
    c, v = 1e-4 / min(step), 1.4e-3 / min(step)  # minima of each cost over the repeats
    assert r["cost"] == round(c, 4) and r["verify_ratio"] == round(v, 4) and d["step_ms"]["plain"] == round(1e3 / 12, 4)
    predicted = r["tokens_per_round"] / (3 * c + v)
    assert r["refined_speedup"] == pytest.approx(predicted, abs=1e-4)
    assert r["ratio"] == pytest.approx(2.0 / predicted, abs=1e-3)
    per_repeat = [(p / s) / (r["tokens_per_round"] / (3 * dr / t + vr / t))
                  for p, s, t, dr, vr in zip((1.2, 1.0, 1.1), (0.6, 0.5, 0.7), step, (1e-4, 3e-4, 1e-4),
                                             (1.5e-3, 2e-3, 1.4e-3))]
    assert r["ratio_interval"] == pytest.approx([min(per_repeat), max(per_repeat)], abs=1e-3)
    assert r["spread"]["speculative"] == pytest.approx(0.6 / 0.5 - 1, abs=1e-4)
    assert d["statistic"] == "minimum over repeats" and d["ratio_coverage"] == 0.75 and d["noisy"] is False
