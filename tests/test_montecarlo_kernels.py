"""The vectorized Monte-Carlo kernels (chain and block): the per-round loop's counts on the same
seed, a fit to the exact round, and the first round of a run is the traced round."""
import pytest

from specsim import exact, montecarlo, sampling, stats
from specsim.schemes import Block, Chain
from specsim.toy import load_model, random_model

CASES = [(load_model("seed"), ("a",), 3), (load_model("seed"), ("c",), 1), (load_model("zeros"), ("y",), 2),
         (load_model("order2"), None, 3), (random_model(4, seed=5), None, 2)]


@pytest.mark.parametrize("kind", [Chain, Block])
@pytest.mark.parametrize("model, context, gamma", CASES)
def test_same_seed_same_counts_as_the_per_round_loop(kind, model, context, gamma):
    context = context or model.contexts()[0]
    fast = montecarlo.sample_rounds(model, context, kind(gamma), 3000, seed=11)
    slow = montecarlo.sample_rounds_loop(model, context, kind(gamma), 3000, seed=11)
    assert fast == slow  # the whole SampleResult: outcomes, K counts, rounds, context


@pytest.mark.parametrize("name, context", [("seed", ("a",)), ("zeros", ("x",))])
def test_sampled_block_rounds_fit_the_exact_round(name, context):
    """Chi-square at level 0.001 (the false-alarm rate of each test), fixed seed."""
    m = load_model(name)
    s = montecarlo.sample_rounds(m, context, Block(3), 200_000, seed=3)
    fit = stats.fit_round(s, exact.round_distribution(m, context, Block(3)))
    assert all(f.passes(1e-3) and not f.unexpected for f in fit.values()), {k: f.to_dict() for k, f in fit.items()}


def test_same_seed_same_result_and_seeds_differ():
    m = load_model("seed")
    a, b = (montecarlo.sample_rounds(m, ("a",), Block(3), 5000, seed=7) for _ in range(2))
    assert a == b
    assert montecarlo.sample_rounds(m, ("a",), Block(3), 5000, seed=8).outcomes != a.outcomes


def test_the_block_trace_is_the_sampled_round_on_the_same_seed():
    m = load_model("seed")
    for seed in range(40):
        t = sampling.trace_round(m, ("b",), Block(3), seed=seed)
        one = montecarlo.sample_rounds(m, ("b",), Block(3), 1, seed=seed)
        assert one.outcomes == {t.emitted: 1}
        assert one.accepted_counts[t.accepted] == 1
        d = t.to_dict()
        assert d == sampling.trace_round(m, ("b",), Block(3), seed=seed).to_dict()  # deterministic
        kinds = [e["kind"] for e in d["events"]]
        assert kinds[:5] == ["draft"] * 3 + ["verify", "weights"] and kinds[5:8] == ["stop"] * 3
        assert kinds[-1] == "emit" and kinds[-2] == ("bonus" if t.accepted == 3 else "correct")
        # tau is the last position whose stop coin came up
        stops = [e["position"] for e in d["events"] if e["kind"] == "stop" and e["stop"]]
        assert t.accepted == max(stops, default=0)
