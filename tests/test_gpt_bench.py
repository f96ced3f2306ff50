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
