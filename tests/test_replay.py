"""specsim.views.replay: what a replayed round shows, chained rounds, running tokens per pass."""
from fractions import Fraction as F

import pytest

from specsim import exact, sampling, toy
from specsim.schemes import Block, Chain, Tree
from specsim.views import replay

SEED = toy.load_model("seed")


def final_statuses(trace) -> list:
    """The per-draft statuses at the end of a round, written from the trace's summary (K), not its events."""
    k, gamma = trace.accepted, trace.gamma
    if k == gamma:
        return ["accepted"] * gamma
    return ["accepted"] * k + ["rejected"] + ["discarded"] * (gamma - k - 1)


@pytest.mark.parametrize("gamma", [1, 2, 3, 5])
@pytest.mark.parametrize("seed", range(8))
def test_draft_statuses_follow_the_round(gamma, seed):
    trace = sampling.trace_round(SEED, ("a",), Chain(gamma), seed=seed)
    events = trace.events()
    for i in range(gamma):  # while drafting: every draft so far is pending, nothing drawn yet
        assert replay.draft_statuses(trace, i) == (["pending"] * (i + 1), None)
    assert replay.draft_statuses(trace, gamma) == (["pending"] * gamma, None)  # the verify event
    statuses, last = replay.draft_statuses(trace, len(events) - 1)
    assert statuses == final_statuses(trace)
    assert last == (trace.kinds[-1], trace.emitted[-1])


def test_draft_statuses_cover_both_endings():
    endings = {replay.draft_statuses(t, len(t.events()) - 1)[1][0]
               for t in (sampling.trace_round(SEED, ("a",), Chain(2), seed=s) for s in range(30))}
    assert endings == {"correct", "bonus"}


@pytest.mark.parametrize("scheme", [Block(3), Tree((2, 2)), Tree((2, 1), "distinct")])
@pytest.mark.parametrize("seed", range(6))
def test_draft_statuses_of_a_block_or_a_tree_end_on_the_verdict(scheme, seed):
    """At the end of a round the kept path is accepted, a tested child that failed is rejected,
    every other node discarded (written from the verdict, not the events)."""
    trace = sampling.trace_round(SEED, ("b",), scheme, seed=seed)
    n = len(trace.drafts)
    assert replay.draft_statuses(trace, n) == (["pending"] * n, None)  # drafted whole, then the verify event
    statuses, last = replay.draft_statuses(trace, len(trace.events()) - 1)
    failed = {t["node"] for t in trace.verdict.tests if t.get("accepted") is False}
    want = ["accepted" if j in trace.verdict.path else "rejected" if j in failed else "discarded" for j in range(n)]
    assert statuses == want and last == (trace.kinds[-1], trace.emitted[-1])


@pytest.mark.parametrize("gamma", [1, 3])
@pytest.mark.parametrize("seed", [0, 7])
@pytest.mark.parametrize("model, context", [(SEED, ("a",)), (toy.load_model("order2"), None)])
def test_next_round_chains_like_generate(model, context, gamma, seed):
    context = context or model.contexts()[0]
    gen = sampling.generate(model, context, Chain(gamma), 12, seed=seed)
    rng, rounds = sampling.make_rng(seed), []
    for _ in gen.rounds:
        rounds.append(replay.next_round(model, context, rounds, Chain(gamma), rng))
    assert [r.events() for r in rounds] == [r.events() for r in gen.rounds]


def test_running_tokens_per_pass_matches_the_generation_and_the_exact_engine():
    gen = sampling.generate(SEED, ("a",), Chain(3), 30, seed=1)
    totals = replay.running_tokens_per_pass(SEED, gen.rounds)
    assert [(t["tokens"], t["target_passes"]) for t in totals] == \
        [(t["tokens"], t["target_passes"]) for t in gen.running_totals()]
    assert totals[-1]["sampled"] == gen.tokens_per_pass
    per_round = [exact.round_distribution(SEED, r.context, Chain(3)).expected_tokens for r in gen.rounds]
    assert [t["expected"] for t in totals] == [sum(per_round[:j], F(0)) / j for j in range(1, len(per_round) + 1)]
    assert totals[0]["expected"] == F(1659, 500)  # the reference round from "a" with gamma = 3


@pytest.mark.parametrize("scheme", [Chain(2), Block(2), Tree((2, 1))])
def test_running_tokens_per_pass_takes_a_memoized_expectation(scheme):
    gen = sampling.generate(SEED, ("a",), scheme, 20, seed=4)
    calls = []

    def expected(context, of):
        calls.append((SEED.state(context), of))
        return exact.round_distribution(SEED, SEED.state(context), of).expected_tokens

    assert replay.running_tokens_per_pass(SEED, gen.rounds, expected_tokens=expected) == \
        replay.running_tokens_per_pass(SEED, gen.rounds)
    assert calls == [(SEED.state(r.context), scheme) for r in gen.rounds]  # the scheme played, not a chain


def test_the_player_plays_the_generation_of_its_scheme():
    tree = Tree((2, 1))
    gen = sampling.generate(SEED, ("a",), tree, 10, seed=3)
    pl = replay.Player(SEED, ("a",), tree, seed=3)
    pl.advance_to(sum(len(r.events()) for r in gen.rounds))
    assert [r.to_dict() for r in pl.finished()] == [r.to_dict() for r in gen.rounds]


def test_sampled_tokens_per_pass_approach_the_exact_expectation():
    """Over ~1400 seeded rounds the sampled mean is within 0.2 of the exact one: tokens per
    round lie in 1..4, so the standard error is below 1.5 / sqrt(1400) ~ 0.04 (0.2 is 5 of them)."""
    gen = sampling.generate(SEED, ("a",), Chain(3), 4500, seed=2024)
    memo = {}

    def expected(context, scheme):
        key = (SEED.state(context), scheme)
        if key not in memo:
            memo[key] = exact.round_distribution(SEED, key[0], scheme).expected_tokens
        return memo[key]

    last = replay.running_tokens_per_pass(SEED, gen.rounds, expected_tokens=expected)[-1]
    assert last["target_passes"] >= 1300
    assert abs(float(last["sampled"] - last["expected"])) < 0.2
