"""Check your own rule: prove a ``RoundRule`` variant exact, or find its smallest counter-example.

``check_rule`` runs a rule through the exact engine (``specsim.exact``: the
next-N-token joint of chained rounds against the target's) on every preset
and on a seeded family of random rational models (vocabularies of 2-4
tokens, orders 1-2, with zero entries, rows where p == q, q = 0 < p and
p = 0 < q), for every context and each (γ, N). Every check exact: the rule is
*proved* on that family (not for all models: a proof over all models is an
algebraic one, see lesson 17). Otherwise the first violation is shrunk
(``specsim.labs.shrink``) while it persists: fewer tokens, a lower order, smaller
γ and N, simpler fractions.

The rule is wrapped in ``ValidatedRule`` (``specsim.labs.rule_proxy``): what it
returns is read into plain numbers first (bounded), then a method that
raises, a row that is negative, of the wrong length or not summing to 1, or
an acceptance outside [0, 1] is a one-line ``RuleError`` instead of a
traceback from the engine. ``check_total_work`` bounds the whole check
(every model, γ and N together) before it starts.

This runs the rule in *this* process, with no clock: for a rule from a file
you did not write, use ``specsim.labs.sandbox.check_rule_file`` (what
``specsim check-rule`` does), where a child process imports the file and
only answers the rule's questions, and this checker judges the answers.

Example
-------
>>> from specsim.labs.pitfalls import ResampleFromTarget
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

from .. import bounds
from . import shrink
from .judge import Judgement, judge
from .rule_proxy import RuleError, ValidatedRule  # noqa: F401 (part of this module's API)
from ..rule import RoundRule
from ..schemes import Chain
from ..toy import PRESETS, ToyModel, model_from_dict, random_row
from ..transforms import identity

SHAPES = [(2, 1), (3, 1), (2, 2), (4, 1), (3, 2), (4, 2)]  # (vocab, order), smallest first
DENOMINATORS = (2, 3, 4, 5, 6, 8, 10, 12)
ROW_KINDS = ("random", "random", "equal", "q-zero", "p-zero")


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

    @classmethod
    def from_dict(cls, d: dict) -> "CounterExample":
        """The inverse of ``to_dict``, strict: a wrong key or type is a ValueError (or KeyError, TypeError)."""
        diffs = [(_strs(x["tokens"], "tokens"), _fraction(x["target"]), _fraction(x["rule"]))
                 for x in _typed(d["differences"], list, "differences")]
        return cls(model_from_dict(d["model"]), _strs(d["context"], "context"), _typed(d["gamma"], int, "gamma"),
                   _typed(d["n_tokens"], int, "n_tokens"), _fraction(d["total_variation"]), diffs,
                   _typed(d["found_on"], str, "found_on"), _fraction(d["tokens_per_round"]),
                   _fraction(d["tokens_per_round_correct"]))


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
    # a rule judged from a file (specsim.labs.sandbox): was its process isolated, how many questions were
    # asked, and the first question whose answer changed when asked again (then exact is False)
    isolation: dict | None = None
    questions: int | None = None
    changed: dict | None = None

    def to_dict(self) -> dict:
        return {"rule": self.rule, "exact": self.exact, "models": self.models, "contexts": self.contexts,
                "pairs": [list(p) for p in self.pairs], "checks": self.checks, "skipped": self.skipped,
                "tokens_per_round": [{"gamma": g, "rule": str(a), "correct": str(b)} for g, a, b in self.tokens],
                "counterexample": self.counterexample.to_dict() if self.counterexample else None,
                "seconds": {k: round(v, 3) for k, v in self.seconds.items()},
                "isolation": self.isolation, "questions": self.questions, "changed": self.changed}

    @classmethod
    def from_dict(cls, d: dict) -> "CheckResult":
        """The inverse of ``to_dict`` (for a report read back from a child process), strict."""
        ce = d["counterexample"]
        exact_ = _typed(d["exact"], bool, "exact")
        changed = d.get("changed")
        if changed is not None and not (isinstance(changed, dict) and set(changed) == {"question", "first", "again"}
                                        and all(type(v) is str for v in changed.values())):
            raise ValueError("report: changed has the wrong type")
        if exact_ != (ce is None and changed is None):
            raise ValueError("report: exact and counterexample disagree")
        ints = {k: _typed(d[k], int, k) for k in ("models", "contexts", "checks", "skipped")}
        pairs = [(_typed(g, int, "pairs"), _typed(n, int, "pairs")) for g, n in _typed(d["pairs"], list, "pairs")]
        tokens = [(_typed(t["gamma"], int, "gamma"), _fraction(t["rule"]), _fraction(t["correct"]))
                  for t in _typed(d["tokens_per_round"], list, "tokens_per_round")]
        seconds = {_typed(k, str, "seconds"): float(_typed(v, (int, float), "seconds"))
                   for k, v in _typed(d["seconds"], dict, "seconds").items()}
        return cls(_typed(d["rule"], str, "rule"), exact_, ints["models"], ints["contexts"], pairs,
                   ints["checks"], ints["skipped"], tokens, None if ce is None else CounterExample.from_dict(ce),
                   seconds, changed=changed)


def _typed(value, kinds, what):
    kinds = kinds if isinstance(kinds, tuple) else (kinds,)
    if type(value) not in kinds:
        raise ValueError(f"report: {what} has the wrong type")
    return value


def _fraction(text) -> Fraction:
    return Fraction(_typed(text, str, "a number")[:4000])


def _strs(items, what) -> tuple:
    return tuple(_typed(x, str, what) for x in _typed(items, list, what))


def model_json(model) -> str:
    """A toy model as compact JSON (one line per table), readable by ``toy.loads_model``."""
    d = model.to_dict()
    head = json.dumps({k: d[k] for k in ("name", "vocab", "order")})[:-1]
    return f"{head},\n \"target\": {json.dumps(d['target'])},\n \"draft\": {json.dumps(d['draft'])}}}"


# -- the work of a whole check ----------------------------------------------------------
TOTAL_WORK = 10**8  # estimated steps of one whole check (every model, γ and N): a few minutes on this machine


def model_work(model, gammas, n_tokens: int) -> float:
    """Estimated steps of checking one model (``bounds.exact_work``: the joints and the rounds counted)."""
    c = len(model.contexts())
    return bounds.exact_work(model, n_tokens=n_tokens, schemes=gammas, contexts=c, rounds=2 * c * len(gammas))


def _densest(v: int, order: int) -> ToyModel:
    """The costliest model of a family shape: every entry positive, two-digit fractions (denominator 12)."""
    vocab = tuple(f"t{k}" for k in range(v))
    row = tuple([Fraction(1, 12)] * (v - 1) + [Fraction(13 - v, 12)])
    contexts = ToyModel(vocab, order, {}, {}).contexts()
    return ToyModel(vocab, order, {c: row for c in contexts}, {c: row for c in contexts}, f"densest-{v}-{order}")


def total_work(models: int, gammas, n_tokens: int) -> float:
    """Upper bound on the steps of ``check_rule``, computed without building the random models.

    The presets' own estimates, plus for each random model its shape's densest
    model (every family model has denominators <= 12), capped at the per-model
    limit: a model over it is skipped, not checked. Shrinking is not counted.

    >>> total_work(6, (1,), 1) < total_work(600, (1,), 1) < total_work(600, (1, 2, 3), 2)
    True
    """
    gammas = sorted(set(gammas))
    work = sum(model_work(make(), gammas, n_tokens) for make in PRESETS.values())
    for i, (v, order) in enumerate(SHAPES):
        count = len(range(i, models, len(SHAPES)))  # family model i has shape SHAPES[i % len(SHAPES)]
        if count:
            work += count * min(model_work(_densest(v, order), gammas, n_tokens), bounds.LIMITS.exact_work)
    return work


def check_total_work(models: int, gammas, n_tokens: int, limit: int | None = None) -> None:
    """Refuse (``bounds.WorkRefused``, one line) a whole check over ``limit`` (default ``TOTAL_WORK``)."""
    gammas = sorted(set(gammas))
    gamma = f"γ = {gammas[0]}" if len(gammas) == 1 else f"{len(gammas)} values of γ up to {gammas[-1]}"
    what = f"checking {len(PRESETS)} presets + {models:,} random models with {gamma} and N = {n_tokens}"
    bounds.check(total_work(models, gammas, n_tokens), what, "the number of models, γ or N",
                 TOTAL_WORK if limit is None else limit, "steps")


# -- the check --------------------------------------------------------------------
@dataclass(frozen=True)
class Setup:
    """What is checked: a (validated) rule on ``speculative(model)`` against ``target(model)``."""

    rule: RoundRule
    speculative: object = identity
    target: object = identity

    def judge(self, model, context, gamma: int, n_tokens: int) -> Judgement:
        """The rule judged at one context with a chain of ``gamma`` drafts (``specsim.labs.judge``)."""
        return judge(self.speculative(model), context, Chain(gamma), self.rule, n_tokens, self.target(model))

    def violation(self, model, gamma: int, n_tokens: int, contexts=None) -> Judgement | None:
        """The judgement at the first context where the rule is not exact, or None."""
        for ctx in contexts or model.contexts():
            j = self.judge(model, ctx, gamma, n_tokens)
            if not j.exact:
                return j
        return None


def check_rule(rule, gammas=(1, 2, 3), n_tokens: int = 2, models: int = 500, seed: int = 0,
               speculative=identity, target=identity, shrink_it: bool = True,
               max_work: int | None = None) -> CheckResult:
    """Prove ``rule`` exact on the presets and ``models`` random models, or return its smallest counter-example.

    ``rule`` is a ``RoundRule`` instance (wrapped in ``ValidatedRule``);
    ``speculative`` and ``target`` transform the model pair as a pitfall does
    (``specsim.labs.pitfalls.Pitfall``). Raises ``RuleError`` for a misbehaving
    rule and ``bounds.WorkRefused`` when the whole check is over ``max_work``
    steps (``check_total_work``) or a preset is over the per-model limit (a
    random model over it is skipped and counted).
    """
    gammas = sorted(set(int(g) for g in gammas))
    if not gammas or gammas[0] < 1 or n_tokens < 1 or models < 0:
        raise ValueError("gammas must be >= 1, the number of tokens >= 1 and models >= 0")
    check_total_work(models, gammas, n_tokens, max_work)
    setup = Setup(ValidatedRule(rule), speculative, target)
    start = time.perf_counter()
    n_models = n_contexts = checks = skipped = 0
    sums = {g: [Fraction(0), Fraction(0), 0] for g in gammas}
    found = None
    for k, model in enumerate(models_checked(models, seed)):
        contexts = model.contexts()
        try:
            bounds.check(model_work(model, gammas, n_tokens), f"{model.name}: {n_tokens} token(s) with γ up to "
                         f"{max(gammas)} from {len(contexts)} context(s)", "γ or N", unit="steps")
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
                j = setup.judge(model, ctx, g, n_tokens)
                sums[g][0] += j.tokens_per_round
                sums[g][1] += j.correct_tokens_per_round
                sums[g][2] += 1
                if not j.exact:
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


class _AlwaysAccept(RoundRule):
    """A broken rule for ``preload``: it keeps every draft."""
    name = "always accept"

    def accept(self, p, q, x):
        return Fraction(1)


def preload() -> None:
    """Load every module a check uses (the engines, the schemes, the judge, the shrinker) by running a tiny
    check that fails and shrinks: the sandbox calls it before a child exists, so that nothing a child could
    write is imported afterwards."""
    check_rule(_AlwaysAccept(), gammas=(1,), n_tokens=1, models=0)


def _describe(setup, model, ctx, gamma, n_tokens, found_on, top: int = 5) -> CounterExample:
    j = setup.judge(model, ctx, gamma, n_tokens)
    got, want = j.produced, j.wanted
    rows = [(t, want.get(t, Fraction(0)), got.get(t, Fraction(0))) for t in set(got) | set(want)]
    rows.sort(key=lambda r: (-abs(r[1] - r[2]), r[0]))
    return CounterExample(model, ctx, gamma, n_tokens, j.total_variation, [r for r in rows if r[1] != r[2]][:top],
                          found_on, j.tokens_per_round, j.correct_tokens_per_round)
