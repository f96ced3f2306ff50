"""The vectorized block sampler: the loop's counts on the same seed, and a fit to the exact round."""
import pytest

from specsim import exact, stats
from specsim.schemes.block import Block, sample_block_rounds
from specsim.schemes.block_mc import sample_block_rounds_vectorized
from specsim.toy import load_model, random_model


@pytest.mark.parametrize("model, context, gamma", [
    (load_model("seed"), ("a",), 3), (load_model("seed"), ("c",), 1), (load_model("zeros"), ("y",), 2),
    (load_model("order2"), None, 3), (random_model(4, seed=5), None, 2)])
def test_same_seed_same_counts_as_the_per_round_loop(model, context, gamma):
    context = context or model.contexts()[0]
    fast = sample_block_rounds_vectorized(model, context, gamma, 3000, seed=11)
    slow = sample_block_rounds(model, context, gamma, 3000, seed=11)
    assert fast.outcomes == slow.outcomes
    assert fast.accepted_counts == slow.accepted_counts


@pytest.mark.parametrize("name, context", [("seed", ("a",)), ("zeros", ("x",))])
def test_sampled_block_rounds_fit_the_exact_round(name, context):
    """Chi-square at level 0.001 (the false-alarm rate of each test), fixed seed."""
    m = load_model(name)
    s = sample_block_rounds_vectorized(m, context, 3, 200_000, seed=3)
    fit = stats.fit_round(s, exact.round_distribution(m, context, Block(3)))
    assert all(f.passes() and not f.unexpected for f in fit.values()), {k: f.to_dict() for k, f in fit.items()}


def test_same_seed_same_result_and_seeds_differ():
    m = load_model("seed")
    a, b = (sample_block_rounds_vectorized(m, ("a",), 3, 5000, seed=7) for _ in range(2))
    assert a.outcomes == b.outcomes
    assert sample_block_rounds_vectorized(m, ("a",), 3, 5000, seed=8).outcomes != a.outcomes


def test_the_trace_is_the_sampled_round_on_the_same_seed():
    from specsim.schemes.block import trace_block_round
    m = load_model("seed")
    for seed in range(40):
        t = trace_block_round(m, ("b",), 3, seed=seed)
        one = sample_block_rounds(m, ("b",), 3, 1, seed=seed)
        assert one.outcomes == {tuple(t["emitted"]): 1}
        assert one.accepted_counts[t["accepted"]] == 1
        assert t == trace_block_round(m, ("b",), 3, seed=seed)  # deterministic
        kinds = [e["kind"] for e in t["events"]]
        assert kinds[:3] == ["draft"] * 3 and kinds[-1] == "emit"
        assert kinds[-2] == ("bonus" if t["accepted"] == 3 else "correct")
