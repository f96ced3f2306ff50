"""specsim.serving.drafter_cost: a one-pass drafter against a chain, the LM head's share, reduced draft vocabularies.

Every comparison is exact (Fractions with ==). Quantities are written two ways where the library allows:
the one-pass model against the chain model, the chain model against ``formulas``, tokens per round from
conditional rates against the exact engine, a reduced drafter's output against the target's.
"""
from __future__ import annotations

import itertools
import random
from fractions import Fraction as F

import pytest

from specsim import acceptance, formulas, rule
from specsim.serving import drafter_cost as dc
from specsim.exact import check_exactness, round_distribution
from specsim.schemes import Chain
from specsim.toy import load_model, random_model, random_row
from specsim.transforms import temperature


def random_rates(rng, n, denominator=20):
    return [F(rng.randint(0, denominator), denominator) for _ in range(n)]


# ---- one pass or γ steps ----------------------------------------------------------------------------

def test_one_pass_equals_the_chain_when_its_pass_costs_gamma_chain_steps():
    rng = random.Random(1)
    for _ in range(50):
        rates = random_rates(rng, rng.randint(1, 12))
        g = len(rates)
        c, v, w = F(rng.randint(0, 30), 100), F(rng.randint(50, 150), 100), F(rng.randint(0, 5), 100)
        assert dc.speedup(rates, dc.one_pass(g * c, v, w)) == dc.speedup(rates, dc.chain(c, v, w))
        assert dc.one_pass(g * c, v, w).of(g) == dc.chain(c, v, w).of(g)


def test_the_chain_model_is_lesson_nines_formula_and_the_refined_one():
    for alpha, c, g in itertools.product([F(3, 5), F(4, 5), F(9, 10), F(1)], [F(0), F(1, 20), F(1, 5)], range(1, 13)):
        assert dc.speedup([alpha] * g, dc.chain(c)) == formulas.speedup(alpha, g, c)
        v = F(5, 4)
        assert dc.speedup([alpha] * g, dc.chain(c, v)) == formulas.refined_speedup(
            formulas.expected_tokens(alpha, g), g, c, v)
    for alpha, c in itertools.product([F(3, 5), F(4, 5), F(9, 10)], [F(1, 20), F(1, 5)]):
        assert dc.best_gamma([alpha] * 32, dc.chain(c)) == formulas.best_gamma(alpha, c)


def test_tokens_per_round_from_conditional_rates_is_the_exact_engines():
    """The exact law of K of a toy round, turned into conditional rates, gives back its expected tokens."""
    for name in ("seed", "zeros"):
        m = load_model(name)
        for ctx, g in itertools.product(m.contexts(), range(1, 5)):
            r = round_distribution(m, ctx, Chain(g))
            rates = [a if a is not None else F(0) for a in acceptance.exact(r.accepted).conditional]
            assert dc.tokens_per_round(rates) == r.expected_tokens


def _first_stop(rates, cost):
    """The first γ where one more draft does not pay: P(K >= γ+1) / per_draft <= speedup(γ) (lesson 9)."""
    for g in range(1, len(rates)):
        gain = dc.tokens_per_round(rates[:g + 1]) - dc.tokens_per_round(rates[:g])
        if not (gain > 0 if cost.per_draft == 0 else gain / cost.per_draft > dc.speedup(rates[:g], cost)):
            return g
    return len(rates)


def test_the_best_gamma_is_where_one_more_draft_first_stops_paying():
    rng = random.Random(2)
    for _ in range(150):
        rates = sorted(random_rates(rng, 16), reverse=rng.random() < 0.5) if rng.random() < 0.3 else \
            dc.decaying_rates(F(rng.randint(10, 20), 20), F(rng.randint(15, 20), 20), 16)
        for cost in (dc.chain(F(rng.randint(0, 20), 100), 1, F(rng.randint(0, 3), 100)),
                     dc.one_pass(F(rng.randint(0, 60), 100), 1, F(rng.randint(0, 3), 100))):
            assert dc.best_gamma(rates, cost)[0] == _first_stop(rates, cost)


def test_a_one_pass_drafters_best_gamma_is_never_shorter_than_a_chains_whatever_its_pass_costs():
    """Same rates, v and w: the chain's test passing at γ implies the one-pass test passes (Going deeper)."""
    rng = random.Random(3)
    checked = 0
    for _ in range(120):
        rates = random_rates(rng, 12) if rng.random() < 0.4 else \
            dc.decaying_rates(F(rng.randint(8, 20), 20), F(rng.randint(14, 20), 20), 12)
        c, v, w = F(rng.randint(0, 30), 100), F(rng.randint(80, 200), 100), F(rng.randint(0, 4), 100)
        chain_best = dc.best_gamma(rates, dc.chain(c, v, w))[0]
        for c_pass in (F(0), c, 3 * c, 20 * c + 1):        # cheaper, equal, dearer, far dearer than a step
            assert dc.best_gamma(rates, dc.one_pass(c_pass, v, w))[0] >= chain_best
            checked += 1
    assert checked == 480


def test_with_no_cost_per_position_a_one_pass_speedup_never_falls():
    rates = dc.decaying_rates(F(9, 10), F(9, 10), 32)
    curve = dc.speedup_curve(rates, dc.one_pass(F(1, 20)))
    assert all(a < b for a, b in zip(curve["speedups"], curve["speedups"][1:]))
    assert curve["best_gamma"] == 32
    # and once every later rate is 0, nothing is gained: ties go to the shorter draft
    assert dc.best_gamma([F(1, 2), F(1, 2), F(0), F(1)], dc.one_pass(F(1, 20)))[0] == 2


def test_the_lessons_worked_example():
    a = [F(4, 5)] * 32
    assert dc.best_gamma(a, dc.chain(F(1, 20)))[0] == 8
    assert dc.best_gamma(a, dc.one_pass(F(1, 20), per_position=F(1, 100)))[0] == 14
    decaying = dc.decaying_rates(F(9, 10), F(19, 20), 32)
    assert [dc.best_gamma(decaying, cost(F(1, 20), 1, F(1, 100)))[0] for cost in (dc.chain, dc.one_pass)] == [6, 9]


@pytest.mark.parametrize("bad", [[], [F(3, 2)], [F(-1, 10)]])
def test_rates_outside_zero_one_are_refused_in_one_line(bad):
    with pytest.raises(ValueError, match="rate"):
        dc.tokens_per_round(bad)


def test_negative_costs_are_refused():
    for make in (dc.chain, dc.one_pass):
        with pytest.raises(ValueError, match=">= 0"):
            make(F(-1, 10))


# ---- the LM head -------------------------------------------------------------------------------------

def test_the_eagle_layer_on_llama_3_8b_counted_by_hand():
    d, kv, mlp, vocab = 4096, 8 * 128, 14336, 128256
    layer = 2 * d * d + 2 * d * kv + 3 * d * mlp + d          # Q, O; K, V; SwiGLU; its one norm
    fuse = 2 * d * d + d                                      # fc over [embedding; feature], with bias
    assert dc.EAGLE_8B.body_params == layer + fuse
    assert dc.head_share(dc.EAGLE_8B) == F(d * vocab, layer + fuse + d * vocab)
    target = 32 * (2 * d * d + 2 * d * kv + 3 * d * mlp + 2 * d) + d + d * vocab   # the input table is a lookup
    assert dc.drafter_cost(dc.EAGLE_8B) == F(layer + fuse + d * vocab, target)


def test_a_reduced_vocabulary_cuts_only_the_head():
    for v in (64000, 32000, 16000, 8000):
        small = dc.with_vocab(dc.EAGLE_8B, v)
        assert small.body_params == dc.EAGLE_8B.body_params
        assert dc.EAGLE_8B.streamed_params - small.streamed_params == 4096 * (128256 - v)
        assert dc.drafter_cost(small) < dc.drafter_cost(dc.EAGLE_8B)
        assert dc.head_share(small) < dc.head_share(dc.EAGLE_8B)


# ---- a reduced draft vocabulary: α' --------------------------------------------------------------------

def test_keeping_the_whole_vocabulary_gives_back_alpha():
    rng = random.Random(4)
    for size in (2, 3, 5, 8):
        for _ in range(30):
            p, q = random_row(rng, size, 60), random_row(rng, size, 60)
            assert dc.reduced_alpha(p, q, range(size)) == rule.alpha(p, q)


def test_a_hand_computed_reduced_alpha():
    """Seed model after "a", V' = {a, b}: q' = (1/2, 2/5) / (9/10) = (5/9, 4/9, 0);
    min(3/5, 5/9) + min(3/10, 4/9) = 5/9 + 3/10 = 77/90."""
    p, q = [F(3, 5), F(3, 10), F(1, 10)], [F(1, 2), F(2, 5), F(1, 10)]
    assert dc.restricted(q, [0, 1]) == [F(5, 9), F(4, 9), F(0)]
    assert dc.reduced_alpha(p, q, [0, 1]) == F(5, 9) + F(3, 10) == F(77, 90)


def test_reduced_alpha_lies_between_its_bounds_and_can_fall_or_rise():
    """alpha - sum_{y not in V'} min(p, q) <= alpha' <= p(V'), on random rows and every V'."""
    rng = random.Random(5)
    fell = rose = 0
    for _ in range(200):
        size = rng.randint(2, 6)
        p, q = random_row(rng, size, 30), random_row(rng, size, 30)
        for k in range(1, size + 1):
            for kept in itertools.combinations(range(size), k):
                if dc.mass(q, kept) == 0:
                    continue
                outside = [i for i in range(size) if i not in kept]
                a, a_kept = rule.alpha(p, q), dc.reduced_alpha(p, q, kept)
                assert a - sum((min(p[i], q[i]) for i in outside), F(0)) <= a_kept <= dc.mass(p, kept)
                fell, rose = fell + (a_kept < a), rose + (a_kept > a)
    assert fell and rose


def test_a_perfect_drafter_restricted_accepts_exactly_the_targets_mass_in_v_prime():
    p = dc.zipf_row(64)
    for k in (1, 4, 16, 64):
        assert dc.reduced_alpha(p, p, range(k)) == dc.mass(p, range(k))
    sharp = temperature(p, F(1, 2))
    assert dc.reduced_alpha(p, sharp, range(64)) == rule.alpha(p, sharp)


def test_the_output_stays_exactly_the_targets_with_a_reduced_drafter():
    """The rule corrects from max(0, p - q'), which holds all of p outside V'."""
    models = [load_model("seed"), load_model("order2"), random_model(4, seed=7, zeros=False)]
    for m in models:
        for k in range(1, len(m.vocab)):
            reduced = dc.reduced_model(m, dc.frequent_tokens(m, k))
            checks = check_exactness(reduced, 3, [1, 2, 3], contexts=m.contexts()[:3])
            assert checks and all(ch.exact for ch in checks), m.name


def test_token_frequencies_are_the_long_run_distribution_and_bound_the_average_alpha():
    for m in (load_model("seed"), load_model("order2"), random_model(3, order=2, seed=3, zeros=False)):
        f = dc.token_frequencies(m)
        assert sum(f) == 1
        states = m.contexts()
        pi = _stationary_contexts(m)      # the long-run law of the contexts, solved another way
        for s in states:
            into = sum((pi[t] * m.p(t)[m.index[s[-1]]] for t in states if t[1:] == s[:-1]), F(0))
            assert into == pi[s]
        assert [sum((pi[s] for s in states if s[-1] == y), F(0)) for y in m.vocab] == f
        kept = dc.frequent_tokens(m, 2)
        coverage = sum(pi[s] * dc.mass(m.p(s), kept) for s in states)
        assert coverage == dc.mass(f, kept)        # the text's share of tokens in V'
        reduced = dc.reduced_model(m, kept)
        assert sum(pi[s] * reduced.alpha(s) for s in states) <= coverage


def _stationary_contexts(m):
    """pi over contexts solved independently of the library (sympy's exact solver): pi = pi P, sum pi = 1."""
    import sympy

    states = m.contexts()
    idx = {s: i for i, s in enumerate(states)}
    n = len(states)
    a = sympy.zeros(n, n)
    for t in states:
        for y, pr in zip(m.vocab, m.p(t)):
            a[idx[t[1:] + (y,)], idx[t]] += sympy.Rational(pr.numerator, pr.denominator)
    a -= sympy.eye(n)
    a[0, :] = sympy.ones(1, n)
    b = sympy.zeros(n, 1)
    b[0] = 1
    sol = a.solve(b)
    return {s: F(int(sol[idx[s]].p), int(sol[idx[s]].q)) for s in states}


def test_the_frequent_tokens_of_the_seed_model():
    m = load_model("seed")
    assert dc.token_frequencies(m) == [F(19, 50), F(17, 50), F(7, 25)]   # 0.6 pi_a + 0.2 pi_b + 0.3 pi_c = pi_a ...
    assert dc.frequent_tokens(m, 2) == [0, 1]


@pytest.mark.parametrize("call, match", [
    (lambda: dc.restricted([F(1, 2), F(1, 2), F(0)], [2]), "no mass"),
    (lambda: dc.restricted([F(1, 2), F(1, 2)], [5]), "indices"),
    (lambda: dc.zipf_row(0), "n must"),
    (lambda: dc.frequent_tokens(load_model("seed"), 4), "k must"),
])
def test_bad_input_is_one_clear_line(call, match):
    with pytest.raises(ValueError, match=match):
        call()
