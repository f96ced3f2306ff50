"""Check your own rule: prove a ``RoundRule`` variant exact, or find its smallest counter-example.

``check_rule`` runs a rule through the exact engine (``specsim.exact``: the
next-N-token joint of chained rounds against the target's) on every preset
and on a seeded family of random rational models (vocabularies of 2-4
tokens, orders 1-2, with zero entries, rows where p == q, q = 0 < p and
p = 0 < q), for every context and each (γ, N). Every check exact: the rule is
*proved* on that family (not for all models: a proof over all models is an
algebraic one, see lesson 14). Otherwise the first violation is shrunk
(``specsim.shrink``) while it persists: fewer tokens, a lower order, smaller
γ and N, simpler fractions.

The rule is wrapped in ``ValidatedRule``: a method that raises, a row that is
negative, of the wrong length or not summing to 1, or an acceptance outside
[0, 1] is a one-line ``RuleError`` instead of a traceback from the engine.

Example
-------
>>> from specsim.pitfalls import ResampleFromTarget
>>> r = check_rule(ResampleFromTarget(), gammas=(1,), models=6)
>>> r.exact, r.counterexample.model.vocab, r.counterexample.gamma, r.counterexample.n_tokens
(False, ('b', 'c'), 1, 1)
>>> check_rule(RoundRule(), gammas=(1, 2), models=6).exact
True
"""
from __future__ import annotations

import json
import random
import time
from dataclasses import dataclass, field
from fractions import Fraction

from . import bounds, exact, shrink
from .rule import CORRECT, RoundRule
from .toy import PRESETS, ToyModel, random_row
from .transforms import identity

SHAPES = [(2, 1), (3, 1), (2, 2), (4, 1), (3, 2), (4, 2)]  # (vocab, order), smallest first
DENOMINATORS = (2, 3, 4, 5, 6, 8, 10, 12)
ROW_KINDS = ("random", "random", "equal", "q-zero", "p-zero")


class RuleError(ValueError):
    """A user's rule misbehaved (raised, or returned a bad row or probability); one line."""


# -- the validating proxy --------------------------------------------------------
def _row_text(row) -> str:
    return "(" + ", ".join(str(x) for x in row) + ")"


class ValidatedRule(RoundRule):
    """Calls the wrapped rule's methods and checks what they return (see module docstring)."""

    def __init__(self, inner):
        self.inner = inner
        name = getattr(inner, "name", None)
        inherited = name == RoundRule.name and type(inner) is not RoundRule  # "correct" from the base class
        self.name = type(inner).__name__ if name is None or inherited else str(name)

    def _call(self, method, *args):
        try:
            return getattr(self.inner, method)(*args)
        except RuleError:
            raise
        except Exception as e:  # the user's code: any exception becomes one line
            text = str(e).splitlines()[0] if str(e) else ""
            raise RuleError(f"rule {self.name!r}: {method}() raised {type(e).__name__}"
                            + (f": {text}" if text else "")) from None

    def _number(self, x, what):
        if isinstance(x, bool) or not isinstance(x, (int, Fraction)):
            raise RuleError(f"rule {self.name!r}: {what} returned {str(x)[:40]!r} "
                            f"({type(x).__name__}); return Fractions or ints (the check is exact)")
        return x

    def _row(self, row, size, what):
        try:
            row = list(row)
        except TypeError:
            raise RuleError(f"rule {self.name!r}: {what} returned {type(row).__name__}, not a row") from None
        if len(row) != size:
            raise RuleError(f"rule {self.name!r}: {what} returned {len(row)} entries; the vocabulary has {size}")
        for x in row:
            if self._number(x, what) < 0:
                raise RuleError(f"rule {self.name!r}: {what} returned a negative entry {x} in {_row_text(row)}")
        if sum(row, Fraction(0)) != 1:
            raise RuleError(f"rule {self.name!r}: {what} returned {_row_text(row)}, "
                            f"which sums to {sum(row, Fraction(0))}, not 1")
        return row

    def draft_row(self, q):
        return self._row(self._call("draft_row", q), len(q), f"draft_row(q = {_row_text(q)})")

    def accept(self, p, q, x):
        a = self._number(self._call("accept", p, q, x), "accept")
        if not 0 <= a <= 1:
            raise RuleError(f"rule {self.name!r}: accept(p = {_row_text(p)}, q = {_row_text(q)}, x = {x}) "
                            f"returned {a}, outside [0, 1]")
        return a

    def replacement(self, p, q):
        return self._row(self._call("replacement", p, q), len(p),
                         f"replacement(p = {_row_text(p)}, q = {_row_text(q)})")

    def bonus(self, p):
        row = self._call("bonus", p)
        return None if row is None else self._row(row, len(p), f"bonus(p = {_row_text(p)})")


# -- the models it is checked on -------------------------------------------------
def _zero_one(rng, a, b):
    """Move a's mass at a token where b > 0 elsewhere: a = 0 < b there (a copy of a)."""
    a = list(a)
    ks = [k for k in range(len(a)) if b[k] > 0]
    k = rng.choice(ks)
    j = rng.choice([i for i in range(len(a)) if i != k])
    a[j], a[k] = a[j] + a[k], Fraction(0)
    return tuple(a)


def family_model(i: int, seed: int = 0) -> ToyModel:
    """The i-th random model of the checked family (seeded; shapes cycle smallest first).

    >>> m = family_model(4, seed=0)
    >>> len(m.vocab), m.order
    (3, 2)
    """
    v, order = SHAPES[i % len(SHAPES)]
    rng = random.Random(f"specsim-checker-{seed}-{i}")
    den = rng.choice(DENOMINATORS)
    vocab = tuple(f"t{k}" for k in range(v))
    target, draft = {}, {}
    for ctx in ToyModel(vocab, order, {}, {}).contexts():
        p = random_row(rng, v, den)
        kind = rng.choice(ROW_KINDS)
        q = p if kind == "equal" else random_row(rng, v, den)
        if kind == "q-zero":
            q = _zero_one(rng, q, p)
        elif kind == "p-zero":
            p = _zero_one(rng, p, q)
        target[ctx], draft[ctx] = p, q
    return ToyModel(vocab, order, target, draft, f"family-{seed}-{i}")


def models_checked(models: int, seed: int = 0):
    """The presets, then ``models`` models of the random family."""
    for name, make in PRESETS.items():
        yield make()
    for i in range(models):
        yield family_model(i, seed)


# -- results ----------------------------------------------------------------------
@dataclass
class CounterExample:
    """The smallest violation found: a model (toy JSON), a context, γ and N."""

    model: ToyModel
    context: tuple
    gamma: int
    n_tokens: int
    total_variation: Fraction
    differences: list  # (tokens, target probability, rule's probability), largest |difference| first
    found_on: str  # the model it was first found on, before shrinking
    tokens_rule: Fraction  # E[tokens per round] of the rule at this context and γ
    tokens_correct: Fraction

    def to_dict(self) -> dict:
        return {"model": self.model.to_dict(), "context": list(self.context), "gamma": self.gamma,
                "n_tokens": self.n_tokens, "total_variation": str(self.total_variation),
                "differences": [{"tokens": list(t), "target": str(a), "rule": str(b)}
                                for t, a, b in self.differences],
                "found_on": self.found_on, "tokens_per_round": str(self.tokens_rule),
                "tokens_per_round_correct": str(self.tokens_correct)}


@dataclass
class CheckResult:
    rule: str
    exact: bool
    models: int  # models checked (presets included)
    contexts: int  # contexts checked, summed over models
    pairs: list  # the (γ, N) pairs asked
    checks: int  # (model, context, γ, N) checks run
    skipped: int  # models the work estimator refused
    tokens: list  # per γ: (γ, mean E[tokens per round] of the rule, of the correct rule)
    counterexample: CounterExample | None = None
    seconds: dict = field(default_factory=dict)  # first counter-example, shrunk, total

    def to_dict(self) -> dict:
        return {"rule": self.rule, "exact": self.exact, "models": self.models, "contexts": self.contexts,
                "pairs": [list(p) for p in self.pairs], "checks": self.checks, "skipped": self.skipped,
                "tokens_per_round": [{"gamma": g, "rule": str(a), "correct": str(b)} for g, a, b in self.tokens],
                "counterexample": self.counterexample.to_dict() if self.counterexample else None,
                "seconds": {k: round(v, 3) for k, v in self.seconds.items()}}


def model_json(model) -> str:
    """A toy model as compact JSON (one line per table), readable by ``toy.loads_model``."""
    d = model.to_dict()
    head = json.dumps({k: d[k] for k in ("name", "vocab", "order")})[:-1]
    return f"{head},\n \"target\": {json.dumps(d['target'])},\n \"draft\": {json.dumps(d['draft'])}}}"


# -- the check --------------------------------------------------------------------
@dataclass(frozen=True)
class Setup:
    """What is checked: a (validated) rule on ``speculative(model)`` against ``target(model)``."""

    rule: RoundRule
    speculative: object = identity
    target: object = identity

    def violation(self, model, gamma: int, n_tokens: int, contexts=None):
        """(context, TV, spec joint, target joint) of the first context where the rule is not exact, or None."""
        spair, tpair = self.speculative(model), self.target(model)
        for ctx in contexts or model.contexts():
            want = exact.target_joint(tpair, ctx, n_tokens)
            got = exact.speculative_joint(spair, ctx, gamma, n_tokens, self.rule)
            if got != want and exact.max_abs_difference(got, want) != 0:
                return ctx, exact.joint_total_variation(got, want), got, want
        return None

    def tokens(self, model, context, gamma: int):
        pair = self.speculative(model)
        return (exact.round_distribution(pair, context, gamma, self.rule).expected_tokens,
                exact.round_distribution(pair, context, gamma, CORRECT).expected_tokens)


def check_rule(rule, gammas=(1, 2, 3), n_tokens: int = 2, models: int = 500, seed: int = 0,
               speculative=identity, target=identity, shrink_it: bool = True) -> CheckResult:
    """Prove ``rule`` exact on the presets and ``models`` random models, or return its smallest counter-example.

    ``rule`` is a ``RoundRule`` instance (wrapped in ``ValidatedRule``);
    ``speculative`` and ``target`` transform the model pair as a pitfall does
    (``specsim.pitfalls.Pitfall``). Raises ``RuleError`` for a misbehaving
    rule and ``bounds.WorkRefused`` when a preset is over the work limit
    (a random model over it is skipped and counted).
    """
    gammas = sorted(set(int(g) for g in gammas))
    if not gammas or gammas[0] < 1 or n_tokens < 1 or models < 0:
        raise ValueError("gammas must be >= 1, the number of tokens >= 1 and models >= 0")
    setup = Setup(ValidatedRule(rule), speculative, target)
    start = time.perf_counter()
    n_models = n_contexts = checks = skipped = 0
    sums = {g: [Fraction(0), Fraction(0), 0] for g in gammas}
    found = None
    for k, model in enumerate(models_checked(models, seed)):
        contexts = model.contexts()
        try:
            bounds.check_joint(model, n_tokens, gammas, len(contexts), rounds=2 * len(contexts) * len(gammas))
        except bounds.WorkRefused:
            if k < len(PRESETS):
                raise
            skipped += 1
            continue
        n_models += 1
        n_contexts += len(contexts)
        for g in gammas:
            for ctx in contexts:
                checks += 1
                hit = setup.violation(model, g, n_tokens, [ctx])
                a, b = setup.tokens(model, ctx, g)
                sums[g][0] += a
                sums[g][1] += b
                sums[g][2] += 1
                if hit:
                    found = (model, ctx, g)
                    break
            if found:
                break
        if found:
            break
    tokens = [(g, s[0] / s[2], s[1] / s[2]) for g, s in sums.items() if s[2]]
    seconds = {}
    result = CheckResult(setup.rule.name, found is None, n_models, n_contexts,
                         [(g, n_tokens) for g in gammas], checks, skipped, tokens, None, seconds)
    if found:
        seconds["first_counterexample"] = time.perf_counter() - start
        model, ctx, g = found
        small = shrink.shrink(setup, model, ctx, g, n_tokens) if shrink_it else (model, ctx, g, n_tokens)
        result.counterexample = _describe(setup, *small, found_on=f"{model.name} after {' '.join(ctx)!r}, "
                                          f"γ = {g}, N = {n_tokens}")
        seconds["shrunk"] = time.perf_counter() - start
    seconds["total"] = time.perf_counter() - start
    return result


def _describe(setup, model, ctx, gamma, n_tokens, found_on, top: int = 5) -> CounterExample:
    _, tv, got, want = setup.violation(model, gamma, n_tokens, [ctx])
    rows = [(t, want.get(t, Fraction(0)), got.get(t, Fraction(0))) for t in set(got) | set(want)]
    rows.sort(key=lambda r: (-abs(r[1] - r[2]), r[0]))
    a, b = setup.tokens(model, ctx, gamma)
    return CounterExample(model, ctx, gamma, n_tokens, tv, [r for r in rows if r[1] != r[2]][:top],
                          found_on, a, b)
