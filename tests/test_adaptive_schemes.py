"""Confidence-stopped chains (``chain:max=G,stop=T[,on=top|draft]``): exact, against an independent enumeration.

The brute force below drafts every chain the stop rule allows (each with the
product of its q's), then verifies each drafted chain token by token, by
hand: it shares no code with ``Chain.enumerate``. The scheme's round must
equal it, Fraction for Fraction, and chained rounds must give the target's
joint. The cousin whose stop rule peeks at the target (``PeekingStop``) is
refuted with its exact TV.
"""
from collections import defaultdict
from fractions import Fraction as F

import pytest

from specsim import bounds, exact, sampling
from specsim.labs import judge
from specsim.labs.pitfalls_tree import PeekingStop
from specsim.schemes import Chain, ConfidenceChain, parse
from specsim.schemes.adaptive import DraftCost, draft_lengths, drafting_cost
from specsim.toy import load_model
from tests.helpers import assert_rounds_fit_the_exact_round, refused_in_one_line

CASES = [("seed", 4, F(9, 20), "top"), ("seed", 5, F(2, 5), "draft"), ("seed", 3, F(1, 2), "draft"),
         ("order2", 6, F(3, 5), "top"), ("order2", 6, F(1, 2), "draft"), ("order2", 2, F(7, 10), "top")]


def drafted_chains(m, ctx, most, stop, on):
    """{drafted chain (indices): probability}: draw from q until `most` drafts or a low-confidence draft."""
    out = {}

    def grow(chain, prob):
        q = m.q(ctx + tuple(m.vocab[x] for x in chain))
        for x, qx in enumerate(q):
            if qx == 0:
                continue
            conf = max(q) if on == "top" else qx
            if len(chain) + 1 == most or conf < stop:
                out[chain + (x,)] = out.get(chain + (x,), 0) + prob * qx
            else:
                grow(chain + (x,), prob * qx)

    grow((), F(1))
    return out


def brute_round(m, ctx, most, stop, on):
    """Every emitted sequence: each drafted chain verified left to right (min(1, p/q), residual, bonus)."""
    out = defaultdict(F)
    for chain, pr in drafted_chains(m, ctx, most, stop, on).items():
        kept = F(1)
        for i, x in enumerate(chain):
            here = ctx + tuple(m.vocab[t] for t in chain[:i])
            p, q = m.p(here), m.q(here)
            a = min(F(1), p[x] / q[x])
            miss = [max(F(0), pv - qv) for pv, qv in zip(p, q)]
            if a < 1:
                for y, r in enumerate(miss):
                    if r:
                        out[tuple(m.vocab[t] for t in chain[:i]) + (m.vocab[y],)] += pr * kept * (1 - a) * r / sum(miss)
            kept *= a
        p = m.p(ctx + tuple(m.vocab[t] for t in chain))
        for y, py in enumerate(p):
            if py:
                out[tuple(m.vocab[t] for t in chain) + (m.vocab[y],)] += pr * kept * py
    return {k: v for k, v in out.items() if v}


@pytest.mark.parametrize("preset,most,stop,on", CASES)
def test_round_equals_the_independent_enumeration_at_every_context(preset, most, stop, on):
    m = load_model(preset)
    s = ConfidenceChain(most, stop, on)
    for ctx in m.contexts():
        r = s.enumerate(m, ctx)
        assert r.outcomes == brute_round(m, ctx, most, stop, on)
        assert sum(r.accepted) == 1 and sum(r.outcomes.values()) == 1


@pytest.mark.parametrize("preset,most,stop,on", CASES)
def test_chained_rounds_give_the_target_joint_exactly(preset, most, stop, on):
    m = load_model(preset)
    checks = exact.check_exactness(m, 3, [ConfidenceChain(most, stop, on)])
    assert all(c.exact and c.max_abs_difference == 0 for c in checks)


def test_the_stop_rule_matters_on_these_cases():
    """Not a fixed chain in disguise: each case's round differs from chain:max and the law of L is spread."""
    for preset, most, stop, on in CASES:
        m = load_model(preset)
        s = ConfidenceChain(most, stop, on)
        spread = [sum(1 for v in draft_lengths(m, ctx, s) if v) for ctx in m.contexts()]
        assert max(spread) >= 2 or most <= 2
        if most > 2:
            assert any(s.enumerate(m, c).outcomes != Chain(most).enumerate(m, c).outcomes for c in m.contexts())


def test_draft_length_law_and_drafting_cost_match_the_drafted_chains():
    m = load_model("order2")
    for most, stop, on in [(6, F(3, 5), "top"), (6, F(1, 2), "draft")]:
        s = ConfidenceChain(most, stop, on)
        for ctx in m.contexts():
            chains = drafted_chains(m, ctx, most, stop, on)
            law = draft_lengths(m, ctx, s)
            assert law == [sum(pr for c, pr in chains.items() if len(c) == k) for k in range(1, most + 1)]
            mean = sum(len(c) * pr for c, pr in chains.items())
            assert drafting_cost(m, ctx, s) == DraftCost(mean, mean)  # one drafter pass per draft
    assert drafting_cost(m, m.contexts()[0], Chain(3)) == DraftCost(3, 3)


def test_seed_numbers():
    """On seed after "a": top probabilities 1/2 (after a), 2/5 (after b), 7/10 (after c)."""
    m = load_model("seed")
    s = ConfidenceChain(4, "0.45")
    assert draft_lengths(m, ("a",), s) == [0, F(2, 5), F(11, 50), F(19, 50)]
    assert s.enumerate(m, ("a",)).expected_tokens == F(8463, 2500)
    assert ConfidenceChain(4, "0.6").enumerate(m, ("a",)).outcomes == Chain(1).enumerate(m, ("a",)).outcomes


def test_the_target_peeking_cousin_is_refuted_with_its_exact_tv():
    m = load_model("seed")
    s = ConfidenceChain(4, "0.45")
    j = judge.judge(m, ("a",), s, PeekingStop(F(2, 5)), 2)
    assert j.total_variation == F(7, 25)
    assert judge.judge(m, ("a",), s, n_tokens=2).total_variation == 0
    # one position by hand: p = (3/5, 3/10, 1/10), q = (1/2, 2/5, 1/10); b and c (p < 2/5) are withdrawn, so
    # the first token is a with 1/2 (a kept) + 1/2 * 3/5 (a withdrawn draft, then p): 4/5, not 3/5
    first = judge.judge(m, ("a",), Chain(1), PeekingStop(F(2, 5)), 1)
    assert first.produced[("a",)] == F(4, 5) and first.total_variation == F(1, 5)


# -- sampled ---------------------------------------------------------------------

def test_a_sampled_round_stops_where_the_rule_says():
    m = load_model("order2")
    s = ConfidenceChain(6, F(1, 2), "draft")
    lengths = set()
    for seed in range(40):
        t = sampling.trace_round(m, m.contexts()[1], s, seed)
        d = t.played.drafts
        qs = [t.played.q_rows[j] for j in range(len(d))]
        assert all(qs[j][d[j]] >= F(1, 2) for j in range(len(d) - 1))
        assert len(d) == 6 or qs[-1][d[-1]] < F(1, 2)
        assert t.parents == list(range(-1, len(d) - 1))
        lengths.add(len(d))
    assert len(lengths) >= 3


def test_monte_carlo_loop_agrees_with_the_exact_round():
    """20,000 seeded rounds; every outcome within 5 standard deviations (+1): false-alarm rate < 1e-4."""
    assert_rounds_fit_the_exact_round(load_model("seed"), ("a",), ConfidenceChain(4, "0.45"), n=20_000, seed=7)


# -- the grammar and the work bound ---------------------------------------------

@pytest.mark.parametrize("text", ["chain:max=6,stop=0.4", "chain:max=6,stop=0.4,on=draft", "chain:max=1,stop=1/3",
                                  "chain:max=64,stop=0.000001"])
def test_names_parse_back(text):
    s = parse(text)
    assert parse(s.name) == s and s.name == text


def test_equal_thresholds_written_two_ways_are_one_scheme():
    assert parse("chain:max=6,stop=2/5") == parse("chain:max=6,stop=0.4") == ConfidenceChain(6, F(2, 5))
    assert parse("chain:max=6,stop=0.4,on=top").name == "chain:max=6,stop=0.4"
    assert parse("chain:max=6,stop=0.4") != parse("chain:max=6,stop=0.4,on=draft")


@pytest.mark.parametrize("text,words", [
    ("chain:max=0,stop=0.4", "max must be a whole number from 1 to 64"),
    ("chain:max=65,stop=0.4", "max must be a whole number from 1 to 64"),
    ("chain:max=6,stop=0", "strictly between 0 and 1"), ("chain:max=6,stop=1", "strictly between 0 and 1"),
    ("chain:max=6,stop=-1/2", "strictly between"), ("chain:max=6,stop=x", "not a number"),
    ("chain:max=6", "needs stop"), ("chain:stop=0.4", "needs max"), ("chain:max=6,stop=0.4,on=low", "on must be"),
    ("chain:max=6,stop=0.4,gamma=2", "unknown option 'gamma'"), ("chain:max=6,max=5,stop=0.4", "given twice"),
    ("chain:max=6,stop", "not key=value"), ("block:max=6,stop=0.4", "block takes no options"),
    ("chain:max=\uff16,stop=0.4", "not an ASCII digit"), ("chain:max=6,stop=1e-999", "exponent"),
    # the dynamic tree's options
    ("tree:dynamic,budget=0,depth=1,topk=1", "budget must be a whole number from 1 to 64"),
    ("tree:dynamic,budget=65,depth=1,topk=1", "budget must be a whole number from 1 to 64"),
    ("tree:dynamic,budget=6,depth=7,topk=2", "depth must be a whole number from 1 to 6"),
    ("tree:dynamic,budget=6,depth=3,topk=0", "topk must be a whole number from 1 to 6"),
    ("tree:dynamic,budget=6,depth=3", "needs topk"), ("tree:dynamic", "needs budget"),
    ("tree:dynamic,budget=6,depth=3,topk=2,width=2", "unknown option 'width'"),
    ("tree:dynamic,budget=6,budget=5,depth=3,topk=2", "given twice"),
    ("tree:budget=6,depth=3,topk=2", "starts with 'dynamic'"), ("tree:dynamic,budget=x,depth=3,topk=2", "budget")])
def test_bad_schemes_are_refused_in_one_line(text, words):
    with refused_in_one_line(words):
        parse(text)


def test_work_bound_refuses_a_huge_chain_before_it_starts():
    m = load_model("seed")
    with pytest.raises(bounds.WorkRefused):
        bounds.check_round(m, parse("chain:max=64,stop=0.01"))
    bounds.check_joint(m, 2, [parse("chain:max=6,stop=0.4")], contexts=3)  # a two-token proof: allowed
    with pytest.raises(bounds.WorkRefused, match="one round at a time"):  # no vectorized kernel: the loop's bound
        bounds.check_sample(m, parse("chain:max=6,stop=0.4"), 10**8)


# -- the commands ----------------------------------------------------------------

COMMANDS = [["round", "seed"], ["prove", "order2", "--tokens", "2"], ["trace", "seed", "--seed", "3"],
            ["sample", "seed", "--rounds", "500"], ["generate", "seed", "--tokens", "8"]]


@pytest.mark.parametrize("argv", COMMANDS)
def test_every_toy_command_takes_the_scheme(cli_json, argv):
    out = cli_json(*argv, "--scheme", "chain:max=6,stop=0.45")
    assert out["scheme"] == "chain:max=6,stop=0.45" if "scheme" in out else out["schemes"] == ["chain:max=6,stop=0.45"]
    if argv[0] == "prove":
        assert out["exact"] and out["gammas"] == ["chain:max=6,stop=0.45"]  # shown by name, not by its most
    if argv[0] == "round":
        assert "iid_expected_tokens" not in out  # the i.i.d. chain formula is a fixed chain's
        assert F(out["expected_tokens"]) == F(227247, 62500)


def test_compare_reports_the_exact_drafting_cost(cli_json):
    out = cli_json("compare", "seed", "--scheme", "chain:4;chain:max=6,stop=0.45")
    by = {r["scheme"]: r for r in out["schemes"]}
    assert (by["chain:4"]["expected_drafts"], by["chain:4"]["drafter_passes"]) == ("4", "4")
    assert by["chain:max=6,stop=0.45"]["expected_drafts"] == by["chain:max=6,stop=0.45"]["drafter_passes"] == \
        str(drafting_cost(load_model("seed"), ("a",), ConfidenceChain(6, "0.45")).drafts) == "8513/2500"


def test_a_bad_scheme_on_the_command_line_is_one_line_and_exit_2(cli):
    code, out, err = cli("round", "seed", "--scheme", "chain:max=6,stop=1.5")
    assert code == 2 and "strictly between 0 and 1" in err and len(err.strip().splitlines()) <= 2


def test_equal_cost_chain_mixes_the_two_fixed_chains_around_the_expected_drafts():
    from specsim.schemes.adaptive import equal_cost_chain
    m = load_model("seed")
    e3, e4 = (Chain(g).enumerate(m, ("a",)).expected_tokens for g in (3, 4))
    assert equal_cost_chain(m, ("a",), 3) == e3 and equal_cost_chain(m, ("a",), F(13, 4)) == F(3, 4) * e3 + e4 / 4
    # on seed after "a" the top-probability stop beats fixed chains of the same expected drafts; after "c" it does not
    s = ConfidenceChain(6, "0.45")
    for ctx, wins in ((("a",), True), (("c",), False)):
        cost = drafting_cost(m, ctx, s).drafts
        assert (s.enumerate(m, ctx).expected_tokens > equal_cost_chain(m, ctx, cost)) is wins
    with pytest.raises(ValueError, match="from 1 to 64"):
        equal_cost_chain(m, ("a",), F(1, 2))
