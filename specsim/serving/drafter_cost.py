"""What a drafter costs a round: one pass or γ steps, and the LM head it reads.

**One pass or γ steps.** A round's cost, in target steps, is linear in γ::

    round cost(γ) = fixed + γ · per_draft

A chain drafter (lesson 9) runs one step per draft: ``chain(c, v, w)`` has
fixed = v (the verify pass) and per_draft = c + w. A one-pass drafter (a
block or parallel drafter, multi-token-prediction heads) proposes all γ
drafts in one pass of cost c_pass: ``one_pass(c_pass, v, w)`` has fixed =
c_pass + v and per_draft = w. ``w`` is what one more position adds to the
round's passes (0 while they are memory-bound, lesson 23).

Acceptance may change with the position: ``rates`` are the conditional
rates a_1, a_2, ... (a_i = P(draft i kept | drafts 1..i-1 kept), the
``conditional`` of ``specsim.acceptance``), so P(K >= i) = a_1 ... a_i and::

    tokens per round(γ) = 1 + sum_{i=1..γ} a_1 a_2 ... a_i          (exact, any rates)
    speedup(γ)          = tokens per round(γ) / round cost(γ)

With every a_i = α, v = 1 and w = 0, ``chain(c)`` is ``formulas.speedup``.

**The LM head.** A drafter step reads its body (layers, input projection)
and its LM head, a d × V matrix: ``head_share``. A reduced draft vocabulary
V' (the V' most frequent tokens, as EAGLE-3 and FR-Spec keep) replaces V by
V' in the head. Restricting a drafter row q to V' and renormalizing gives
q' = q / q(V') on V' (``restricted``) and the acceptance rate::

    α' = sum_{y in V'} min(p(y), q(y) / q(V'))                      (``reduced_alpha``)

which obeys α − sum_{y not in V'} min(p(y), q(y)) <= α' <= p(V'): the
target's mass outside V' is never drafted. The rule still corrects every
rejection from the residual max(0, p − q'), so the output stays exactly p.

Example
-------
>>> from fractions import Fraction as F
>>> a = [F(4, 5)] * 8
>>> round(float(speedup(a, chain(F(1, 20)))), 4), round(float(speedup(a, one_pass(F(1, 20)))), 4)   # γ = 8
(3.0921, 4.1228)
>>> reduced_alpha([F(3, 5), F(3, 10), F(1, 10)], [F(1, 2), F(2, 5), F(1, 10)], [0, 1])
Fraction(77, 90)
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction

from .. import acceptance, rule
from .models import EAGLE_8B, LLAMA_3_8B, ModelShape

__all__ = ["RoundCost", "chain", "one_pass", "tokens_per_round", "decaying_rates", "speedup", "speedup_curve",
           "best_gamma", "head_share", "drafter_cost", "with_vocab", "restricted", "reduced_alpha", "mass",
           "zipf_row", "token_frequencies", "frequent_tokens", "reduced_model", "EAGLE_8B", "LLAMA_3_8B"]


# -- one pass or γ steps ----------------------------------------------------------------------------

@dataclass(frozen=True)
class RoundCost:
    """A round's cost in target steps: ``fixed + γ · per_draft``."""
    fixed: Fraction       # paid once a round: the verify pass v (and a one-pass drafter's pass)
    per_draft: Fraction   # paid per draft: a chain drafter's step c (and w, one more position's cost)
    name: str

    def of(self, gamma: int):
        """The cost of a round of ``gamma`` drafts."""
        return self.fixed + gamma * self.per_draft


def _number(x, what: str):
    x = Fraction(x) if isinstance(x, int) and not isinstance(x, bool) else x
    if not x >= 0:
        raise ValueError(f"{what} must be >= 0, got {x}")
    return x


def chain(cost, verify=1, per_position=0) -> RoundCost:
    """A drafter that runs one step (``cost`` c) per draft: γ (c + w) + v.

    >>> chain(Fraction(1, 20)).of(4)
    Fraction(6, 5)
    """
    c, v, w = _number(cost, "c"), _number(verify, "v"), _number(per_position, "w")
    return RoundCost(v, c + w, f"chain, c = {c}")


def one_pass(pass_cost, verify=1, per_position=0) -> RoundCost:
    """A drafter that proposes all γ drafts in one pass (``pass_cost`` c_pass): c_pass + v + γ w.

    >>> one_pass(Fraction(1, 20)).of(4) == chain(Fraction(1, 80)).of(4)   # c_pass = γ c
    True
    """
    c, v, w = _number(pass_cost, "c_pass"), _number(verify, "v"), _number(per_position, "w")
    return RoundCost(c + v, w, f"one pass, c_pass = {c}")


def _rates(rates) -> list:
    rates = list(rates)
    if not rates:
        raise ValueError("need at least one acceptance rate (one per draft position)")
    if any(not 0 <= a <= 1 for a in rates):
        raise ValueError("every acceptance rate must lie in [0, 1]")
    return rates


def tokens_per_round(rates):
    """E[K + 1] = 1 + sum_i a_1 ... a_i for conditional rates a_1..a_γ (exact for any rates).

    Built on ``acceptance.mean_length`` (from P(K >= i)); equal rates give the i.i.d. formula:

    >>> from specsim.formulas import expected_tokens
    >>> tokens_per_round([Fraction(9, 10)] * 3) == expected_tokens(Fraction(9, 10), 3)
    True
    >>> tokens_per_round([Fraction(9, 10), Fraction(1, 2)])
    Fraction(47, 20)
    """
    at_least, running = [], None
    for a in _rates(rates):
        running = a if running is None else running * a
        at_least.append(running)
    return acceptance.mean_length(at_least)


def decaying_rates(first, decay, gamma: int) -> list:
    """Conditional rates that fall with the position: a_i = first · decay^(i-1), i = 1..gamma.

    >>> decaying_rates(Fraction(9, 10), Fraction(9, 10), 3)
    [Fraction(9, 10), Fraction(81, 100), Fraction(729, 1000)]
    """
    if isinstance(gamma, bool) or not isinstance(gamma, int) or gamma < 1:
        raise ValueError(f"gamma must be a whole number >= 1, got {gamma!r}")
    first, decay = _number(first, "the first rate"), _number(decay, "decay")
    return _rates([first * decay ** i for i in range(gamma)])


def speedup(rates, cost: RoundCost):
    """Tokens per round over the round's cost, for a round of len(rates) drafts.

    >>> speedup([Fraction(4, 5)] * 4, chain(Fraction(1, 20)))   # lesson 9's 2101/750
    Fraction(2101, 750)
    """
    rates = _rates(rates)
    return tokens_per_round(rates) / cost.of(len(rates))


def speedup_curve(rates, cost: RoundCost) -> dict:
    """The speedup at γ = 1..len(rates) (the first γ rates each) and the best γ (``best_gamma``).

    Returns {"gammas", "speedups", "best_gamma", "best_speedup"}.
    """
    rates = _rates(rates)
    gammas = list(range(1, len(rates) + 1))
    speedups = [speedup(rates[:g], cost) for g in gammas]
    best = max(gammas, key=lambda g: (speedups[g - 1], -g))   # ties go to the smaller γ
    return {"gammas": gammas, "speedups": speedups, "best_gamma": best, "best_speedup": speedups[best - 1]}


def best_gamma(rates, cost: RoundCost) -> tuple:
    """(γ, speedup) maximizing the speedup over γ = 1..len(rates); ties go to the smaller γ.

    With w = 0 a one-pass round's cost does not grow with γ, so its speedup never falls and the
    search limit decides (len(rates)); a chain's peaks where α^(γ+1)/c stops beating the speedup:

    >>> a = [Fraction(4, 5)] * 32
    >>> best_gamma(a, chain(Fraction(1, 20)))[0], best_gamma(a, one_pass(Fraction(1, 20)))[0]
    (8, 32)
    """
    curve = speedup_curve(rates, cost)
    return curve["best_gamma"], curve["best_speedup"]


# -- the LM head --------------------------------------------------------------------------------------

def head_share(shape: ModelShape) -> Fraction:
    """The LM head's share of what one step reads: d · V / (body + d · V).

    >>> round(float(head_share(EAGLE_8B)), 3)   # EAGLE's layer on Llama 3 8B's shapes, V = 128,256
    0.676
    """
    return Fraction(shape.d_model * shape.vocab, shape.streamed_params)


def drafter_cost(draft: ModelShape, target: ModelShape = LLAMA_3_8B) -> Fraction:
    """c counted in weights read: the drafter step's streamed parameters over the target step's.

    Decoding one token at batch 1 is memory-bound (lesson 23), so a step's time is about the bytes
    it reads; with both in the same dtype that is the ratio of the parameters each reads.

    >>> round(float(drafter_cost(EAGLE_8B)), 4)
    0.1035
    """
    return Fraction(draft.streamed_params, target.streamed_params)


def with_vocab(shape: ModelShape, vocab: int) -> ModelShape:
    """The same drafter with a head over ``vocab`` tokens (a reduced draft vocabulary V').

    >>> with_vocab(EAGLE_8B, 32000).streamed_params - EAGLE_8B.streamed_params == 4096 * (32000 - 128256)
    True
    """
    return replace(shape, name=f"{shape.name} (V' = {vocab:,})", vocab=vocab)


def mass(row, kept) -> Fraction:
    """row(V'): the mass of ``row`` on the token indices ``kept``."""
    return sum((row[i] for i in set(kept)), row[0] - row[0])


def restricted(q, kept) -> list:
    """q restricted to the indices ``kept`` and renormalized: q(y) / q(V') on V', 0 elsewhere.

    A one-line ValueError when q gives V' no mass (a drafter that can propose nothing).

    >>> restricted([Fraction(1, 2), Fraction(2, 5), Fraction(1, 10)], [0, 1])
    [Fraction(5, 9), Fraction(4, 9), Fraction(0, 1)]
    """
    kept = set(kept)
    if not kept or any(not 0 <= i < len(q) for i in kept):
        raise ValueError(f"the kept tokens must be indices 0..{len(q) - 1}, at least one")
    total = mass(q, kept)
    if not total > 0:
        raise ValueError("q gives the kept tokens no mass: the reduced drafter could propose nothing")
    zero = q[0] - q[0]
    return [q[i] / total if i in kept else zero for i in range(len(q))]


def reduced_alpha(p, q, kept):
    """α' = sum_{y in V'} min(p(y), q(y) / q(V')): the acceptance of the drafter restricted to V'.

    >>> F = Fraction
    >>> reduced_alpha([F(1, 5), F(1, 2), F(3, 10)], [F(2, 5), F(3, 10), F(3, 10)], [0, 1, 2])   # V' = V
    Fraction(4, 5)
    """
    return rule.alpha(p, restricted(q, kept))


def zipf_row(n: int, s: int = 1) -> list:
    """The Zipf row over n ranked tokens: p(k) proportional to 1 / k^s, k = 1..n, exactly.

    >>> zipf_row(3)
    [Fraction(6, 11), Fraction(3, 11), Fraction(2, 11)]
    """
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 4096:
        raise ValueError(f"n must be a whole number from 1 to 4096, got {n!r}")
    if isinstance(s, bool) or not isinstance(s, int) or s < 0:
        raise ValueError(f"s must be a whole number >= 0, got {s!r}")
    weights = [Fraction(1, k ** s) for k in range(1, n + 1)]
    total = sum(weights)
    return [w / total for w in weights]


# -- the toy models: which tokens are frequent, and a drafter restricted to them ----------------------

def token_frequencies(model) -> list:
    """How often each token occurs in the target's own long-run text (exact): the stationary
    distribution of the chain of contexts, summed over the contexts that end in each token.

    A one-line ValueError when the chain has no unique stationary distribution.

    >>> from specsim.toy import load_model
    >>> token_frequencies(load_model("seed"))
    [Fraction(19, 50), Fraction(17, 50), Fraction(7, 25)]
    """
    if model.order == 0:
        return list(model.p(()))
    states = model.contexts()
    index = {s: i for i, s in enumerate(states)}
    n = len(states)
    # pi = pi P with sum(pi) = 1: the rows of (P^T - I), one replaced by the normalization
    eq = [[Fraction(0)] * n + [Fraction(0)] for _ in range(n)]
    for s in states:
        for y, prob in zip(model.vocab, model.p(s)):
            nxt = index[(tuple(s) + (y,))[1:]]
            eq[nxt][index[s]] += prob
    for i in range(n):
        eq[i][i] -= 1
    eq[-1] = [Fraction(1)] * n + [Fraction(1)]
    for col in range(n):  # Gauss-Jordan elimination in Fractions
        pivot = next((r for r in range(col, n) if eq[r][col] != 0), None)
        if pivot is None:
            raise ValueError(f"{model.name}: the target's chain has no unique long-run distribution")
        eq[col], eq[pivot] = eq[pivot], eq[col]
        eq[col] = [x / eq[col][col] for x in eq[col]]
        for r in range(n):
            if r != col and eq[r][col] != 0:
                eq[r] = [x - eq[r][col] * y for x, y in zip(eq[r], eq[col])]
    pi = {s: eq[index[s]][-1] for s in states}
    return [sum((pi[s] for s in states if s[-1] == y), Fraction(0)) for y in model.vocab]


def frequent_tokens(model, k: int) -> list:
    """The indices of the ``k`` most frequent tokens (``token_frequencies``; ties in vocabulary order).

    >>> from specsim.toy import load_model
    >>> frequent_tokens(load_model("seed"), 2)
    [0, 1]
    """
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= len(model.vocab):
        raise ValueError(f"k must be a whole number from 1 to {len(model.vocab)}, got {k!r}")
    f = token_frequencies(model)
    return sorted(sorted(range(len(f)), key=lambda i: (-f[i], i))[:k])


def reduced_model(model, kept):
    """The toy model whose drafter proposes only the tokens ``kept`` (every row q restricted to V').

    >>> from specsim.toy import load_model
    >>> reduced_model(load_model("seed"), [0, 1]).q(("c",))
    (Fraction(1, 3), Fraction(2, 3), Fraction(0, 1))
    """
    from ..toy import ToyModel

    draft = {s: tuple(restricted(model.q(s), kept)) for s in model.contexts()}
    names = ",".join(model.vocab[i] for i in sorted(set(kept)))
    return ToyModel(model.vocab, model.order, dict(model.target), draft, f"{model.name} drafting in {{{names}}}")
