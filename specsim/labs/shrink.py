"""Shrinking a counter-example while the violation persists (used by ``specsim.labs.checker``).

It knows the check only through ``setup.violation(model, gamma, n_tokens)`` (a ``checker.Setup``:
a judgement or None), so it imports nothing of the checker.

A violation is a model, a context, γ and N where a rule's next-N-token
joint differs from the target's. ``shrink`` tries smaller candidates in a
fixed order and keeps the first that still violates, until none does:

1. smaller γ, then smaller N (every context of the model is tried);
2. a lower order (the first context token fixed, for each choice of it);
3. one token fewer (its entry dropped from every row, the rest renormalized);
4. simpler rows: one row at a time rounded to a smaller denominator.

Every step makes the size (V, order, γ, N, sum of row denominators) smaller,
so shrinking ends. Candidates on which the rule misbehaves (``RuleError``)
or the work estimator refuses are skipped.

Example
-------
>>> round_row((Fraction(1, 3), Fraction(2, 3)), 2)
(Fraction(1, 2), Fraction(1, 2))
>>> round_row((Fraction(1, 10), Fraction(9, 10)), 4)
(Fraction(0, 1), Fraction(1, 1))
"""
from __future__ import annotations

import itertools
import math
from fractions import Fraction

from .. import bounds
from .rule_proxy import RuleError
from ..toy import ToyModel

MAX_STEPS = 200  # shrinking steps at most (each strictly smaller; a guard, never reached in the tests)


def denominator(row) -> int:
    return math.lcm(*(Fraction(x).denominator for x in row))


def round_row(row, d: int) -> tuple:
    """The row on the grid k/d closest by largest remainders (it still sums to 1)."""
    scaled = [Fraction(x) * d for x in row]
    floors = [math.floor(s) for s in scaled]
    left = d - sum(floors)
    order = sorted(range(len(row)), key=lambda i: (-(scaled[i] - floors[i]), i))
    for i in order[:left]:
        floors[i] += 1
    return tuple(Fraction(f, d) for f in floors)


def size(model, gamma, n_tokens) -> tuple:
    rows = sum(denominator(r) for t in (model.target, model.draft) for r in t.values())
    return (len(model.vocab), model.order, gamma, n_tokens, rows)


def _model(vocab, order, target, draft) -> ToyModel:
    return ToyModel(tuple(vocab), order, target, draft, "counterexample")


def lower_order(model):
    """Order k -> k - 1: the rows of the contexts that start with token s, for each s."""
    if model.order < 2:
        return
    for s in model.vocab:
        t = {c[1:]: r for c, r in model.target.items() if c[0] == s}
        d = {c[1:]: r for c, r in model.draft.items() if c[0] == s}
        yield _model(model.vocab, model.order - 1, t, d)


def _drop(row, k):
    rest = row[:k] + row[k + 1:]
    mass = sum(rest, Fraction(0))
    if mass == 0:
        return tuple(Fraction(1, len(rest)) for _ in rest)
    return tuple(Fraction(x) / mass for x in rest)


def fewer_tokens(model):
    """Every model with one token removed (V >= 3: two tokens are the smallest that can fail)."""
    if len(model.vocab) < 3:
        return
    for k, tok in enumerate(model.vocab):
        keep = [c for c in model.contexts() if tok not in c]
        vocab = [v for v in model.vocab if v != tok]
        yield _model(vocab, model.order, {c: _drop(model.target[c], k) for c in keep},
                     {c: _drop(model.draft[c], k) for c in keep})


def simpler_rows(model):
    """One row (p or q of one context) rounded to each smaller denominator, smallest first."""
    for which, ctx in itertools.product(("target", "draft"), model.contexts()):
        row = getattr(model, which)[ctx]
        for d in range(1, denominator(row)):
            new = round_row(row, d)
            if new == row:
                continue
            tables = {"target": dict(model.target), "draft": dict(model.draft)}
            tables[which][ctx] = new
            yield _model(model.vocab, model.order, tables["target"], tables["draft"])


def _candidates(model, ctx, gamma, n_tokens):
    for g in range(1, gamma):
        yield model, g, n_tokens
    for n in range(1, n_tokens):
        yield model, gamma, n
    for make in (lower_order, fewer_tokens, simpler_rows):
        for m in make(model):
            yield m, gamma, n_tokens


def _violates(setup, model, gamma, n_tokens):
    try:
        bounds.check_joint(model, n_tokens, [gamma], len(model.contexts()))
        return setup.violation(model, gamma, n_tokens)
    except (RuleError, bounds.WorkRefused) as e:
        if getattr(e, "fatal", False):  # the rule's process is gone or out of time: no candidate can be judged
            raise
        return None


def shrink(setup, model, ctx, gamma: int, n_tokens: int) -> tuple:
    """(model, context, γ, N): the smallest violation reached from the one given."""
    model = _model(model.vocab, model.order, dict(model.target), dict(model.draft))
    for _ in range(MAX_STEPS):
        here = size(model, gamma, n_tokens)
        for m, g, n in _candidates(model, ctx, gamma, n_tokens):
            if size(m, g, n) >= here:
                continue
            hit = _violates(setup, m, g, n)
            if hit:
                model, ctx, gamma, n_tokens = m, hit.context, g, n
                break
        else:
            break
    return model, ctx, gamma, n_tokens
