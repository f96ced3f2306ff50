"""Burst sizes as a side channel (specsim.labs.side_channel): entropies, padding and pacing.

Exact probabilities are compared exactly (Fractions with ==); entropies are floats (math.log2), compared with
a stated tolerance of 1e-12 bits. The pacing law is checked three ways: a small case worked by hand, the
float walk against the exact one, and a seeded simulation of paced streams written independently of the
library's walk, judged by a two-sided z-test at a false-alarm rate of 1e-4.
"""
from __future__ import annotations

import math
from fractions import Fraction as F

import numpy as np
import pytest

from specsim import acceptance, exact
from specsim.formulas import expected_checked, expected_tokens
from specsim.labs import side_channel as sc
from specsim.schemes import Chain
from specsim.toy import load_model

TOL = 1e-12
SEED = load_model("seed")
ALPHAS = [F(k, 10) for k in range(1, 10)]


def test_entropy_of_hand_computed_laws():
    assert sc.entropy_bits([F(1, 4), F(1, 4), F(1, 2)]) == 1.5
    assert sc.entropy_bits({1: F(1, 2), 2: F(1, 2)}) == 1.0
    assert sc.entropy_bits([F(1), F(0), F(0)]) == 0.0
    lk = sc.leak_iid(F(1, 2), 1)   # K = 0 or 1, each 1/2: one bit; 3/2 tokens per round
    assert (lk.bits_per_round, lk.tokens_per_round, lk.most_bits) == (1.0, F(3, 2), 1.0)
    assert abs(lk.bits_per_token - 2 / 3) < TOL
    lk = sc.leak_iid(F(1, 2), 2)   # 1/2, 1/4, 1/4: 1.5 bits
    assert lk.bits_per_round == 1.5 and lk.bursts == {1: F(1, 2), 2: F(1, 4), 3: F(1, 4)}


@pytest.mark.parametrize("gamma", range(1, 7))
def test_no_leak_when_the_size_is_certain(gamma):
    for a in (0, 1):
        lk = sc.leak_iid(a, gamma)
        assert lk.bits_per_round == 0.0 and lk.bits_per_token == 0.0
    assert sc.leak_iid(1, gamma).tokens_per_round == gamma + 1


@pytest.mark.parametrize("gamma", [1, 2, 4, 8])
def test_iid_entropy_is_one_coin_per_judged_draft(gamma):
    """H(K) = h(α) · E[drafts judged]; per token below h(α); never above log2(γ + 1)."""
    for a in ALPHAS:
        lk = sc.leak_iid(a, gamma)
        assert abs(lk.bits_per_round - sc.binary_entropy(a) * float(expected_checked(a, gamma))) < TOL
        assert lk.tokens_per_round == expected_tokens(a, gamma)
        assert lk.bits_per_token < sc.binary_entropy(a)
        assert lk.bits_per_round <= lk.most_bits + TOL


def test_bits_per_token_approach_one_coin_as_gamma_grows():
    """Per token H(K) / E[K + 1] = h(α) (1 − α^γ) / (1 − α^(γ+1)): the factor (exact) rises towards 1 with γ."""
    for a in ALPHAS:
        factors = [(1 - a ** g) / (1 - a ** (g + 1)) for g in (1, 4, 16, 64)]
        assert all(x < y < 1 for x, y in zip(factors, factors[1:]))
        for g, f in zip((1, 4, 16, 64), factors):
            assert abs(sc.leak_iid(a, g).bits_per_token - sc.binary_entropy(a) * float(f)) < TOL
        assert 1 - factors[-1] < F(1, 10 ** 3)


def test_exact_law_obeys_the_chain_rule_on_every_context():
    for c in SEED.contexts():
        for gamma in (1, 2, 3):
            law = exact.round_distribution(SEED, c, Chain(gamma)).accepted
            m = acceptance.exact(law)
            judged = [F(1)] + list(m.per_position[:-1])
            chain = sum(float(w) * sc.binary_entropy(a) for w, a in zip(judged, m.conditional))
            assert abs(chain - sc.leak(law).bits_per_round) < TOL


def test_one_burst_tells_its_whole_entropy_about_its_text_and_several_less():
    one = sc.text_information(SEED, ("a",), Chain(3), 1)
    assert abs(one["about_text"] - one["bursts"]) < TOL and abs(one["cuts_given_text"]) < TOL
    assert abs(one["bursts"] - sc.leak(exact.round_distribution(SEED, ("a",), Chain(3)).accepted).bits_per_round) < TOL
    two = sc.text_information(SEED, ("a",), Chain(2), 2)
    assert abs(two["about_text"] + two["cuts_given_text"] - two["bursts"]) < TOL
    assert 0 < two["about_text"] < two["bursts"]


def test_a_short_burst_ends_with_a_residual_token():
    for c in SEED.contexts():
        r = exact.round_distribution(SEED, c, Chain(3))
        last = sc.closing_tokens(SEED, c, Chain(3))
        assert sorted(last) == [1, 2, 3, 4]
        for n, row in last.items():
            assert sum(row.values()) == 1
            # rebuild P(size n, last token t) from the round's outcomes and compare exactly
            for t, pr in row.items():
                assert pr * r.accepted[n - 1] == sum(v for e, v in r.outcomes.items() if len(e) == n and e[-1] == t)
    residual_support = {t for t in SEED.vocab for c in SEED.contexts() if SEED.residual(c)[SEED.vocab.index(t)]}
    last = sc.closing_tokens(SEED, ("a",), Chain(3))
    assert residual_support == {"a", "b"}
    assert all(last[n]["c"] == 0 for n in (1, 2, 3)) and last[4]["c"] > 0


@pytest.mark.parametrize("gamma", [1, 3, 4])
def test_padding_ends(gamma):
    a = F(4, 5)
    law = sc.iid_law(a, gamma)
    tokens = expected_tokens(a, gamma)
    none = sc.pad(law, range(1, gamma + 2))
    assert none.overhead == 0 and abs(none.bits_per_round - sc.leak(law).bits_per_round) < TOL
    full = sc.pad(law, (gamma + 1,))
    assert full.bits_per_round == 0.0 and full.overhead == (gamma + 1) / tokens - 1
    assert full.sent == {gamma + 1: 1}
    if gamma > 1:
        first = sc.pad(law, (1, gamma + 1))   # says only whether the first draft was rejected
        assert abs(first.bits_per_round - sc.binary_entropy(a)) < TOL
        assert first.slots_per_round == (1 - a) + a * (gamma + 1)


def test_paddings_and_their_frontier():
    law = sc.iid_law(F(4, 5), 4)
    pads = sc.paddings(law)
    assert len(pads) == 2 ** 4 and len({p.sizes for p in pads}) == 16
    best = sc.frontier(pads)
    assert best[0].overhead == 0 and best[-1].bits_per_round == 0.0
    assert all(x.overhead < y.overhead and x.bits_per_round > y.bits_per_round for x, y in zip(best, best[1:]))
    for p in pads:   # nothing off the frontier beats a point on it
        assert any(b.overhead <= p.overhead and b.bits_per_round <= p.bits_per_round + TOL for b in best)
    for b in best:
        assert not any(p.overhead <= b.overhead and p.bits_per_round < b.bits_per_round - TOL for p in pads)


@pytest.mark.parametrize("sizes", [(1, 2), (0, 5), (2, 2, 5), (2.5, 5), ("x", 5), ()])
def test_bad_paddings_are_one_line_errors(sizes):
    with pytest.raises(ValueError) as err:
        sc.pad(sc.iid_law(F(4, 5), 4), sizes)
    assert "\n" not in str(err.value)


def test_stall_free_hand_computed():
    """γ = 1, α = 1/2 (bursts of 1 or 2), 3 tokens at 2 tokens per round. No delay: after a burst of 1 the
    next token is due at 1 + 1/2 but ready at 2: stalls, P = 1/2. Half a round of delay: only 1 then 1 stalls
    (the third token due at 1 + 1/2 + 1, ready at 3), P = 3/4."""
    law = sc.iid_law(F(1, 2), 1)
    assert sc.stall_free(law, 2, 0, 3) == F(1, 2)
    assert sc.stall_free(law, 2, F(1, 2), 3) == F(3, 4)
    assert sc.stall_free(law, 2, 2, 3) == 1


def test_one_token_per_round_never_stalls_and_faster_paces_can():
    law = sc.iid_law(F(4, 5), 4)
    assert sc.stall_free(law, 1, 0, 300) == 1 and sc.stall_free(law, F(1, 2), 0, 300) == 1
    for pace in (F(11, 10), 2, 3):
        p = sc.stall_free(law, pace, 0, 300)
        assert 0 < p < 1


def test_stall_free_orders_and_floats_agree():
    law = sc.iid_law(F(4, 5), 4)
    floats = [float(x) for x in law]
    for pace in (2, 3):
        values = [sc.stall_free(law, pace, d, 80) for d in range(6)]
        assert all(a <= b for a, b in zip(values, values[1:]))
        assert all(abs(float(v) - sc.stall_free(floats, float(pace), d, 80)) < 1e-12 for d, v in enumerate(values))
    assert sc.stall_free(law, 3, 2, 80) < sc.stall_free(law, 2, 2, 80)


def test_stall_free_matches_simulated_paced_streams():
    """20,000 seeded 100-token answers paced at 3 tokens per round after 2 rounds of delay: a stall is a token
    shown before the round that makes it has ended (written here from the timeline, not the library's walk)."""
    law, pace, delay, n = sc.iid_law(F(4, 5), 4), 3, 2, 100
    want = float(sc.stall_free(law, pace, delay, n))
    rng = np.random.default_rng(0)
    sizes = np.array(list(sc.bursts(law)))
    probs = np.array([float(x) for x in law])
    runs = 20_000
    ok = 0
    for _ in range(runs):
        ready = []                   # ready[j]: the time token j exists (the end of the round that made it)
        r = 0
        while len(ready) < n:
            r += 1
            ready += [r] * int(rng.choice(sizes, p=probs))
        ok += all(ready[j] <= 1 + delay + j / pace for j in range(n))
    se = math.sqrt(want * (1 - want) / runs)
    assert abs(ok / runs - want) / se < 3.89, (ok / runs, want)   # two-sided, false alarm 1e-4


def test_delay_needed_is_the_smallest_that_holds():
    law = sc.iid_law(F(4, 5), 4)
    for pace, n in ((2, 100), (3, 100), (sc.leak(law).tokens_per_round, 100)):
        d = sc.delay_needed(law, pace, n, F(1, 100))
        assert 1 - sc.stall_free(law, pace, d, n) <= F(1, 100)
        assert d == 0 or 1 - sc.stall_free(law, pace, d - 1, n) > F(1, 100)


@pytest.mark.parametrize("call", [
    lambda law: sc.stall_free(law, 0, 0, 10),
    lambda law: sc.stall_free(law, 2, -1, 10),
    lambda law: sc.stall_free(law, 2, 0, 0),
    lambda law: sc.stall_free(law, 2, 0, 10 ** 6),
    lambda law: sc.delay_needed(law, 2, 10, 0),
    lambda law: sc.leak([F(1, 2), F(1, 3)]),
    lambda law: sc.leak([F(1)]),
    lambda law: sc.text_information(SEED, ("a",), Chain(1), 4),
])
def test_bad_input_is_one_line(call):
    with pytest.raises(ValueError) as err:
        call(sc.iid_law(F(4, 5), 4))
    assert "\n" not in str(err.value)
