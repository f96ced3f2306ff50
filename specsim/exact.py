"""Exact enumeration of speculative decoding: every outcome, every probability.

Everything here is generic over a *model pair* (``specsim.pair.ModelPair``:
``vocab``, ``p(context)``, ``q(context)``, optionally ``state(context)``);
results are memoized on ``state_of(pair, context)``. Rows are Fractions for
exact answers (``specsim.toy.ToyModel``), floats for a real model (the tiny
GPT's float64 adapter). A context is a tuple of tokens.

Example (the reference numbers of the design document)
------------------------------------------------------
>>> from specsim.toy import load_model
>>> m = load_model("seed")
>>> r = round_distribution(m, ("a",), gamma=3)
>>> len(r.outcomes), r.expected_tokens
(94, Fraction(1659, 500))
>>> r.accepted
[Fraction(1, 10), Fraction(13, 100), Fraction(61, 500), Fraction(81, 125)]
>>> speculative_joint(m, ("a",), 3, 2) == target_joint(m, ("a",), 2)
True
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable, Protocol

from .pair import state_of
from .rule import CORRECT, RoundRule


@dataclass
class RoundDistribution:
    """All outcomes of one round from one context.

    outcomes: emitted sequence (tuple of tokens) -> probability, distinct sequences
    accepted: P(K = k) for k = 0..gamma (K = drafts accepted)
    expected_tokens: E[number of tokens emitted by the round]
    """

    context: tuple
    gamma: int
    outcomes: dict
    accepted: list
    expected_tokens: object


class Scheme(Protocol):
    """A verification scheme other than token-wise checking of a chain.

    Wherever the engine takes ``gamma`` (``round_distribution``, the joints,
    ``check_exactness``), it also takes a scheme: an int means token-wise
    verification of a chain of gamma drafts; a scheme object enumerates its
    own round and the rest of the engine (chaining rounds into n-token
    joints, the comparison with the target) is shared.
    """

    name: str

    def round_distribution(self, models, context, rule: RoundRule, limit: int | None) -> RoundDistribution:
        ...


def round_distribution(models, context, gamma: int | Scheme, rule: RoundRule = CORRECT,
                       limit: int | None = None) -> RoundDistribution:
    """Enumerate one round: draft, verify, accept left to right, correct, bonus.

    ``gamma`` is the draft length (token-wise verification) or a ``Scheme``,
    whose own ``round_distribution`` is called.

    The drafts after a rejection are never looked at, so the enumeration
    follows drafts one position at a time and stops at the first rejection:
    this is the same probability space as drafting all gamma first.

    With ``limit`` only the first ``limit`` emitted tokens are kept (drafts
    beyond them cannot change those tokens), which the joint distribution
    uses to avoid enumerating what it would throw away; ``accepted`` and
    ``expected_tokens`` then describe the truncated round and are not meant
    to be read.
    """
    if not isinstance(gamma, int):  # a verification scheme: it enumerates its own round
        return gamma.round_distribution(models, context, rule, limit)
    if gamma < 1:
        raise ValueError(f"gamma must be >= 1, got {gamma}")
    vocab = models.vocab
    context = tuple(context)
    outcomes = defaultdict(int)
    accepted = [0] * (gamma + 1)

    def emit(tokens, prob):
        outcomes[tokens] += prob

    def step(emitted, prob):
        i = len(emitted)  # drafts accepted so far
        if limit is not None and i >= limit:
            emit(emitted[:limit], prob)
            return
        ctx = context + emitted
        p = models.p(ctx)
        if i == gamma:  # step 5: bonus token from the p the verify pass already computed
            accepted[gamma] += prob
            b = rule.bonus(p)
            if b is not None:
                b = _row(b, rule, "bonus")
            if b is None:
                emit(emitted, prob)
            else:
                for y, by in enumerate(b):
                    if by:
                        emit(emitted + (vocab[y],), prob * by)
            return
        q = models.q(ctx)
        rejected = 0
        for x, dx in enumerate(rule.draft_row(q)):  # step 1: draft x with probability dx
            if not dx:
                continue
            a = rule.accept(p, q, x)  # step 3: keep x with probability a
            if a:
                step(emitted + (vocab[x],), prob * dx * a)
            rejected += dx * (1 - a)
        if rejected:  # step 4: first rejection at position i, replacement drawn
            accepted[i] += prob * rejected
            for y, ry in enumerate(_row(rule.replacement(p, q), rule, "replacement")):
                if ry:
                    emit(emitted + (vocab[y],), prob * rejected * ry)

    step((), 1)
    expected = sum((len(t) * pr for t, pr in outcomes.items()), 0)
    return RoundDistribution(context, gamma, dict(outcomes), accepted, expected)


def _row(row, rule, what):
    """A rule's replacement or bonus row must hand out all of its probability."""
    if not any(v > 0 for v in row):
        raise ValueError(f"rule {rule.name!r}: the {what} row has no positive entry "
                         "(a round must emit a token)")
    return row


def speculative_joint(models, context, gamma: int, n_tokens: int,
                      rule: RoundRule = CORRECT) -> dict:
    """Joint distribution of the next ``n_tokens`` tokens when rounds are chained.

    Returns {tuple of n tokens: probability}. Rounds are truncated at the
    tokens still needed and memoized on (model state, tokens needed).
    """
    _check_n(n_tokens)
    memo_round, memo_joint = {}, {}

    def joint(ctx, m):
        key = (state_of(models, ctx), m)
        if key in memo_joint:
            return memo_joint[key]
        rkey = key
        if rkey not in memo_round:
            memo_round[rkey] = round_distribution(models, ctx, gamma, rule, limit=m).outcomes
        out = defaultdict(int)
        for emitted, pr in memo_round[rkey].items():
            if not emitted:
                raise ValueError(f"rule {rule.name!r} emitted no token in a round")
            if len(emitted) >= m:
                out[emitted[:m]] += pr
            else:
                for tail, pt in joint(ctx + emitted, m - len(emitted)).items():
                    out[emitted + tail] += pr * pt
        memo_joint[key] = dict(out)
        return memo_joint[key]

    return joint(tuple(context), n_tokens)


def naive_speculative_joint(models, context, gamma: int, n_tokens: int,
                            rule: RoundRule = CORRECT) -> dict:
    """The straightforward way, for benchmarks: full rounds, no truncation, no memo."""
    _check_n(n_tokens)

    def joint(ctx, m):
        out = defaultdict(int)
        for emitted, pr in round_distribution(models, ctx, gamma, rule).outcomes.items():
            if len(emitted) >= m:
                out[emitted[:m]] += pr
            else:
                for tail, pt in joint(ctx + emitted, m - len(emitted)).items():
                    out[emitted + tail] += pr * pt
        return out

    return dict(joint(tuple(context), n_tokens))


def target_joint(models, context, n_tokens: int) -> dict:
    """Joint distribution of the next ``n_tokens`` tokens sampled from p one by one."""
    _check_n(n_tokens)
    vocab = models.vocab
    memo = {}

    def joint(ctx, m):
        key = (state_of(models, ctx), m)
        if key not in memo:
            out = {}
            for y, py in enumerate(models.p(ctx)):
                if not py:
                    continue
                if m == 1:
                    out[(vocab[y],)] = py
                else:
                    for tail, pt in joint(ctx + (vocab[y],), m - 1).items():
                        out[(vocab[y],) + tail] = py * pt
            memo[key] = out
        return memo[key]

    return joint(tuple(context), n_tokens)


def joint_total_variation(a: dict, b: dict):
    """(1/2) sum |a(s) - b(s)| over the union of two sparse joints {sequence: probability}.

    (``specsim.rule.total_variation`` is the same distance between two rows.)
    """
    keys = set(a) | set(b)
    return sum((abs(a.get(k, 0) - b.get(k, 0)) for k in keys), 0) / 2


def max_abs_difference(a: dict, b: dict):
    keys = set(a) | set(b)
    return max((abs(a.get(k, 0) - b.get(k, 0)) for k in keys), default=0)


@dataclass
class Check:
    """One theorem check: speculative joint == target joint for (context, gamma)."""

    context: tuple
    gamma: int
    exact: bool
    max_abs_difference: object
    sequences: int
    speculative: dict
    target: dict


def check_exactness(models, n_tokens: int, gammas: Iterable[int], contexts=None,
                    rule: RoundRule = CORRECT, tolerance=0) -> list:
    """Check the theorem for every context (default: all of the model's) and gamma.

    ``exact`` is ``max_abs_difference <= tolerance``: 0 for Fractions, a small
    number such as 1e-9 for float64 distributions of a real model.
    """
    if contexts is None:
        contexts = models.contexts()
    checks = []
    for ctx in contexts:
        target = target_joint(models, ctx, n_tokens)
        for g in gammas:
            spec = speculative_joint(models, ctx, g, n_tokens, rule)
            diff = max_abs_difference(spec, target)
            checks.append(Check(tuple(ctx), g, diff <= tolerance, diff,
                                len(set(spec) | set(target)), spec, target))
    return checks


def _check_n(n_tokens):
    if n_tokens < 1:
        raise ValueError(f"the number of tokens must be >= 1, got {n_tokens}")
