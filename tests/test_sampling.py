"""Seeded traces and Monte-Carlo: reproducible, faithful to the rule, and fitting the exact round.

Goodness-of-fit tests reject at p < 0.001 (a false alarm in 1 run of 1000
for a correct sampler); seeds are fixed, so the verdicts are reproducible.
"""
import json
from fractions import Fraction as F

import pytest

from specsim import exact, montecarlo, sampling, stats

from specsim.labs import pitfalls
from specsim.rule import CORRECT, acceptance_probability, residual
from specsim.schemes import Chain
from specsim.toy import load_model, random_model

SEED = load_model("seed")
ZEROS = load_model("zeros")
LEVEL = 1e-3


def test_same_seed_same_trace_and_different_seeds_differ():
    a = sampling.trace_round(SEED, ("a",), Chain(3), seed=7)
    b = sampling.trace_round(SEED, ("a",), Chain(3), seed=7)
    assert a.to_dict() == b.to_dict()
    assert len({tuple(sampling.trace_round(SEED, ("a",), Chain(3), seed=s).emitted) for s in range(20)}) > 3
    g1, g2 = (sampling.generate(SEED, ("a",), Chain(3), 25, seed=3) for _ in range(2))
    assert g1.to_dict() == g2.to_dict()


def test_an_int_or_a_grammar_string_is_shorthand_for_the_chain():
    want = sampling.trace_round(SEED, ("a",), Chain(3), seed=5).to_dict()
    assert want["scheme"] == "chain:3"
    for same in (3, "chain:3", " chain:3"):
        assert sampling.trace_round(SEED, ("a",), same, seed=5).to_dict() == want
    assert montecarlo.sample_rounds(SEED, ("a",), "chain:3", 500, seed=1) == \
        montecarlo.sample_rounds(SEED, ("a",), 3, 500, seed=1)


def test_seed_zero_round_worked_by_hand():
    t = sampling.trace_round(SEED, ("a",), Chain(3), seed=0)
    assert t.drafts == ("b", "a", "a")
    # draft b after a: min(1, (3/10)/(2/5)) = 3/4; draft a after "a b": min(1, (1/5)/(2/5)) = 1/2
    assert t.acceptance == [F(3, 4), F(1, 2)]
    assert t.u[0] < F(3, 4) and not t.u[1] < F(1, 2)  # kept, then rejected
    assert t.replacement_row == (0, 1, 0)  # max(0, p - q) after "b" is all on "b"
    assert t.emitted == ("b", "b") and t.accepted == 1 and t.kinds == ["draft", "correct"]


@pytest.mark.parametrize("model,ctx", [(SEED, ("a",)), (ZEROS, ("x",)), (ZEROS, ("y",))])
def test_trace_decisions_agree_with_the_rule(model, ctx):
    for seed in range(200):
        t = sampling.trace_round(model, ctx, Chain(3), seed=seed)
        for i, a in enumerate(t.acceptance):
            here = ctx + t.drafts[:i]
            p, q = model.p(here), model.q(here)
            x = model.vocab.index(t.drafts[i])
            assert a == acceptance_probability(p[x], q[x])
            assert (t.u[i] < a) == (i < t.accepted)
        assert t.accepted_flags == [u < a for u, a in zip(t.u, t.acceptance)]
        stop = ctx + t.drafts[:t.accepted]
        if t.accepted < 3:
            assert t.bonus is None and t.replacement == t.closing_token
            assert t.replacement_row == tuple(residual(model.p(stop), model.q(stop)))
            assert t.replacement_row[model.vocab.index(t.replacement)] > 0
        else:
            assert t.replacement is None and t.replacement_row is None
            assert model.p(stop)[model.vocab.index(t.bonus)] > 0
        assert t.emitted == t.drafts[:t.accepted] + (t.closing_token,)


def test_events_replay_the_round_in_order():
    for seed in range(50):
        t = sampling.trace_round(SEED, ("a",), Chain(3), seed=seed)
        events = t.events()
        json.dumps(events)  # JSON-ready
        kinds = [e["kind"] for e in events]
        assert kinds[:4] == ["draft"] * 3 + ["verify"]
        tests = kinds[4:4 + t.accepted + (t.accepted < 3)]
        assert tests == ["accept"] * t.accepted + ["reject"] * (t.accepted < 3)
        assert kinds[-2] == ("correct" if t.accepted < 3 else "bonus") and kinds[-1] == "emit"
        assert events[-1]["tokens"] == list(t.emitted)
        assert len(events[3]["p"]) == 4


def test_generation_running_totals():
    g = sampling.generate(SEED, ("a",), Chain(3), 30, seed=11)
    assert len(g.output) == 30 and len(g.tokens) >= 30
    totals = g.running_totals()
    assert totals[-1] == {"tokens": len(g.tokens), "target_passes": len(g.rounds)}
    assert g.tokens_per_pass == F(len(g.tokens), len(g.rounds))
    ctx = ("a",)
    for r in g.rounds:  # each round starts where the previous one ended
        assert r.context == ctx
        ctx += r.emitted
    assert json.loads(json.dumps(g.to_dict()))["tokens_per_pass"] == str(g.tokens_per_pass)


def test_trace_runs_a_broken_rule_through_its_methods():
    rule = pitfalls.PITFALLS["no-bonus-token"].rule
    t = sampling.trace_round(SEED, ("a",), Chain(3), seed=2, rule=rule)
    assert t.accepted == 3 and t.closing_token is None and t.bonus is None and len(t.emitted) == 3
    assert "bonus" not in [e["kind"] for e in t.events()]


def test_first_round_of_monte_carlo_is_the_traced_round():
    for seed in range(30):
        s = montecarlo.sample_rounds(SEED, ("a",), Chain(3), 1, seed=seed)
        assert s.outcomes == {sampling.trace_round(SEED, ("a",), Chain(3), seed=seed).emitted: 1}


@pytest.mark.parametrize("model,ctx,gamma", [(SEED, ("a",), 3), (SEED, ("c",), 2),
                                             (ZEROS, ("x",), 3), (ZEROS, ("y",), 4),
                                             (random_model(40, seed=3), ("t0",), 12)])
def test_vectorized_and_loop_give_the_same_counts(model, ctx, gamma):
    a = montecarlo.sample_rounds(model, ctx, Chain(gamma), 20_000, seed=4)
    b = montecarlo.sample_rounds_loop(model, ctx, Chain(gamma), 20_000, seed=4, rule=CORRECT)
    assert a.outcomes == b.outcomes and a.accepted_counts == b.accepted_counts


@pytest.mark.parametrize("model,ctx,gamma", [(SEED, ("a",), 3), (SEED, ("b",), 1),
                                             (ZEROS, ("x",), 3), (ZEROS, ("y",), 3),
                                             (load_model("order2"), ("0", "1"), 3)])
def test_monte_carlo_fits_the_exact_round(model, ctx, gamma):
    s = montecarlo.sample_rounds(model, ctx, Chain(gamma), 300_000, seed=2024)
    assert s.rounds == sum(s.outcomes.values()) == sum(s.accepted_counts)
    fit = stats.fit_round(s, exact.round_distribution(model, ctx, gamma))
    assert fit["outcomes"].passes(LEVEL) and fit["accepted"].passes(LEVEL)
    assert not fit["outcomes"].unexpected


def test_goodness_of_fit_catches_a_broken_rule():
    # always-accept sampled, tested against the correct round: must be rejected
    rule = pitfalls.PITFALLS["always-accept"].rule
    s = montecarlo.sample_rounds_loop(SEED, ("a",), Chain(2), 20_000, seed=1, rule=rule)
    assert not stats.fit_round(s, exact.round_distribution(SEED, ("a",), 2))["outcomes"].passes(LEVEL)
    # ... and fits its own exact round, which validates the loop for broken rules too
    assert stats.fit_round(s, exact.round_distribution(SEED, ("a",), Chain(2), rule))["outcomes"].passes(LEVEL)


def test_chi_square_pools_rare_cells_and_flags_impossible_outcomes():
    probs = {"a": F(98, 100), "b": F(1, 100), "c": F(1, 100)}
    fit = stats.chi_square({"a": 98, "b": 1, "c": 1}, probs)  # b, c expected 1 each: pooled
    assert fit.pooled >= 2 and fit.dof == fit.cells - 1
    bad = stats.chi_square({"a": 99, "z": 1}, probs)
    assert bad.unexpected == ["z"] and bad.p_value == 0 and not bad.passes()


def test_result_json_shape():
    d = montecarlo.sample_rounds(SEED, ("a",), Chain(2), 100, seed=0).to_dict()
    assert set(d) == {"rounds", "outcomes", "accepted_counts"}
    assert d["rounds"] == 100 and len(d["accepted_counts"]) == 3
    assert all(set(o) == {"tokens", "count"} for o in d["outcomes"])


@pytest.mark.parametrize("call", [
    lambda: montecarlo.sample_rounds(SEED, ("a",), Chain(3), 0),
    lambda: montecarlo.sample_rounds_loop(SEED, ("a",), Chain(3), -5),
    lambda: montecarlo.sample_rounds(SEED, ("a",), 0, 10),
    lambda: montecarlo.sample_rounds(SEED, ("a",), "chain:0", 10),
    lambda: sampling.trace_round(SEED, ("a",), 0),
    lambda: sampling.trace_round(SEED, ("a",), 2.5),
    lambda: exact.round_distribution(SEED, ("a",), "tree:2:foo"),
    lambda: sampling.generate(SEED, ("a",), Chain(3), 0),
])
def test_bad_inputs_raise_value_errors(call):
    with pytest.raises(ValueError):
        call()
