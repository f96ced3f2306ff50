"""Exact enumeration of speculative decoding: every outcome, every probability.

Everything here is generic over a *model pair* (``specsim.pair.ModelPair``:
``vocab``, ``p(context)``, ``q(context)``, optionally ``state(context)``);
results are memoized on ``state_of(pair, context)``. Rows are Fractions for
exact answers (``specsim.toy.ToyModel``), floats for a real model (the tiny
GPT's float64 adapter). A context is a tuple of tokens.

Example (the reference numbers of the design document)
------------------------------------------------------
>>> from specsim.toy import load_model
>>> from specsim.schemes import Chain
>>> m = load_model("seed")
>>> r = round_distribution(m, ("a",), Chain(3))
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
from typing import Iterable

from .pair import state_of
from .rule import CORRECT, RoundRule
from .schemes import as_scheme
from .schemes.base import RoundDistribution

__all__ = ["RoundDistribution", "round_distribution", "speculative_joint", "naive_speculative_joint",
           "target_joint", "joint_total_variation", "max_abs_difference", "Check", "check_exactness"]


def round_distribution(pair, context, scheme, rule: RoundRule = CORRECT,
                       limit: int | None = None) -> RoundDistribution:
    """Enumerate one round of ``scheme`` from ``context``: every outcome and its probability.

    ``scheme`` is a ``specsim.schemes`` value (``Chain(3)``, ``Block(3)``,
    ``Tree((2, 1))``, a grammar string such as ``"tree:2,1"``, or an int G,
    shorthand for ``Chain(G)``); the scheme enumerates its own round and the
    rest of this module (chaining rounds into n-token joints, the comparison
    with the target) is shared.

    With ``limit`` only the first ``limit`` emitted tokens are kept (drafts
    beyond them cannot change those tokens), which the joint distribution
    uses to avoid enumerating what it would throw away; ``accepted`` and
    ``expected_tokens`` then describe the truncated round and are not meant
    to be read.
    """
    return as_scheme(scheme).enumerate(pair, tuple(context), rule, limit)


def speculative_joint(pair, context, scheme, n_tokens: int,
                      rule: RoundRule = CORRECT) -> dict:
    """Joint distribution of the next ``n_tokens`` tokens when rounds are chained.

    Returns {tuple of n tokens: probability}. Rounds are truncated at the
    tokens still needed and memoized on (model state, tokens needed).
    """
    _check_n(n_tokens)
    scheme = as_scheme(scheme)
    memo_round, memo_joint = {}, {}

    def joint(ctx, m):
        key = (state_of(pair, ctx), m)
        if key in memo_joint:
            return memo_joint[key]
        rkey = key
        if rkey not in memo_round:
            memo_round[rkey] = scheme.enumerate(pair, ctx, rule, limit=m).outcomes
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


def naive_speculative_joint(pair, context, scheme, n_tokens: int,
                            rule: RoundRule = CORRECT) -> dict:
    """The straightforward way, for benchmarks: full rounds, no truncation, no memo."""
    _check_n(n_tokens)

    def joint(ctx, m):
        out = defaultdict(int)
        for emitted, pr in round_distribution(pair, ctx, scheme, rule).outcomes.items():
            if len(emitted) >= m:
                out[emitted[:m]] += pr
            else:
                for tail, pt in joint(ctx + emitted, m - len(emitted)).items():
                    out[emitted + tail] += pr * pt
        return out

    return dict(joint(tuple(context), n_tokens))


def target_joint(pair, context, n_tokens: int) -> dict:
    """Joint distribution of the next ``n_tokens`` tokens sampled from p one by one."""
    _check_n(n_tokens)
    vocab = pair.vocab
    memo = {}

    def joint(ctx, m):
        key = (state_of(pair, ctx), m)
        if key not in memo:
            out = {}
            for y, py in enumerate(pair.p(ctx)):
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
    """One theorem check: speculative joint == target joint for (context, scheme)."""

    context: tuple
    scheme: object
    exact: bool
    max_abs_difference: object
    sequences: int
    speculative: dict
    target: dict

    @property
    def gamma(self) -> int:
        """The scheme's depth: the most drafts one round can keep (gamma for a chain)."""
        return self.scheme.depth


def check_exactness(pair, n_tokens: int, schemes: Iterable, contexts=None,
                    rule: RoundRule = CORRECT, tolerance=0) -> list:
    """Check the theorem for every context (default: all of the model's) and scheme (ints: chains).

    ``exact`` is ``max_abs_difference <= tolerance``: 0 for Fractions, a small
    number such as 1e-9 for float64 distributions of a real model.
    """
    if contexts is None:
        contexts = pair.contexts()
    checks = []
    for ctx in contexts:
        target = target_joint(pair, ctx, n_tokens)
        for g in schemes:
            spec = speculative_joint(pair, ctx, g, n_tokens, rule)
            diff = max_abs_difference(spec, target)
            checks.append(Check(tuple(ctx), as_scheme(g), diff <= tolerance, diff,
                                len(set(spec) | set(target)), spec, target))
    return checks


def _check_n(n_tokens):
    if n_tokens < 1:
        raise ValueError(f"the number of tokens must be >= 1, got {n_tokens}")
