"""The implementations gallery: the verification rules of systems people run, checked exactly.

Each entry (``IMPLEMENTATIONS``) is a named rule, written from the system's
published code or paper (cited in ``implementations.json`` next to this
file, with the description, the number type of its uniforms and how it
closes a round), plus the scheme it verifies: a ``RoundRule`` for a chain,
a ``TreeRule`` for a tree. Nothing here walks a round: ``evaluate`` runs the
entry's rule through the exact engine (``specsim.labs.judge``) and the rule
checker (``specsim.labs.checker``) and reports

- whether it is exact: TV 0 at the context asked AND on the presets plus the
  checker's random family (``prove``), with the smallest counter-example
  when it is not;
- the exact TV from the intended target over the next N tokens (greedy
  decoding of p for an entry whose target is greedy, p otherwise);
- its tokens per round against the textbook rule's on the same scheme;
- for an entry whose uniforms are floats, the float edge: a uniform exactly
  0 passes ``u <= p(x)/q(x)`` for a token with p(x) = 0. ``float_hazard`` is
  the exact probability per round that the round emits such a token, from
  the same round with every p = 0 test accepted with P(u = 0)
  (``zero_probability``, derived per generator in the JSON).

Example
-------
>>> from specsim.toy import load_model
>>> r = evaluate(IMPLEMENTATIONS["medusa-typical"], load_model("zeros"), ("z",), 2, scheme=Chain(1))
>>> r.exact, r.total_variation
(False, Fraction(7, 16))
>>> r = evaluate(IMPLEMENTATIONS["hf-sampling"], load_model("zeros"), ("x",), 1, scheme=Chain(1), models=0)
>>> r.exact, r.float_hazard == Fraction(1, 2) / 2**24
(True, True)
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Callable

from .. import bounds, exact
from . import checker
from .judge import judge
from .pitfalls import GreedyDraftSampledQ
from .pitfalls_tree import (TYPICAL_DELTA, TYPICAL_EPSILON, AcceptIfRatioAtLeastU, ClosesWithArgmax, TopKTreeAsIfSampled,
                            TypicalAcceptance)
from ..rule import CORRECT, RoundRule, acceptance_probability, residual
from ..schemes import Chain, ConfidenceChain, Tree, as_scheme
from ..schemes.tree import CORRECT_TREE, TreeRule, without
from ..transforms import TransformedPair, greedy, identity

DATA = json.loads(Path(__file__).with_name("implementations.json").read_text(encoding="utf-8"))
FAMILY_MODELS = 40  # random models of the checker's family an entry is proved on (besides the presets)
LLAMA_CPP_P_MIN = Fraction(3, 4)  # common_speculative_params::p_min default (see the JSON's source)
MEDUSA_LOG_FLOOR = 1e-5  # Medusa's entropy: -sum p log(p + 1e-5)


# -- the rules that are not already in the pitfalls lab ------------------------------------
class SampleAndMatch(RoundRule):
    """A deterministic draft (q's most probable token) verified as a point mass.

    Keeping x when a draw from p equals x (llama.cpp's server, Hugging Face's
    prompt lookup), or when a uniform u <= p(x) (vLLM's V1 kernel, given no
    draft probabilities), is the textbook rule with q replaced by the point mass
    on x: kept with min(1, p(x)/1) = p(x), else a draw from max(0, p - point)
    normalized = p without x.

    >>> from fractions import Fraction as F
    >>> r = SampleAndMatch()
    >>> r.accept([F(1, 2), F(1, 2)], [F(1, 4), F(3, 4)], 1), r.replacement([F(1, 2), F(1, 2)], [F(1, 4), F(3, 4)])
    (Fraction(1, 2), [Fraction(1, 1), Fraction(0, 1)])
    """

    def __init__(self, name: str = "sample-and-match"):
        self.name = name

    def draft_row(self, q):
        return greedy(q)

    def accept(self, p, q, x):
        return acceptance_probability(p[x], greedy(q)[x])

    def replacement(self, p, q):
        return residual(p, greedy(q))


def medusa_threshold(p) -> float:
    """min(epsilon, delta * exp(-H)) with H = -sum p log(p + 1e-5), as Medusa's code computes it."""
    h = -sum(float(v) * math.log(float(v) + MEDUSA_LOG_FLOOR) for v in p)
    return min(TYPICAL_EPSILON, TYPICAL_DELTA * math.exp(-h))


class MedusaTypical(TypicalAcceptance):
    """Typical acceptance on the heads' top candidate: keep x when p(x) > the threshold; close with argmax p."""

    name = "medusa-typical"

    def draft_row(self, q):
        return greedy(q)

    def accept(self, p, q, x):
        one = p[x] - p[x] + 1
        return one if float(p[x]) > medusa_threshold(p) else one - one


class MedusaGreedy(ClosesWithArgmax):
    """Keep the top candidate while it equals the target's argmax; close with the argmax."""

    name = "medusa-greedy"

    def draft_row(self, q):
        return greedy(q)

    def accept(self, p, q, x):
        return greedy(p)[x]  # 1 at the argmax, 0 elsewhere


class PointMassTree(TopKTreeAsIfSampled):
    """Top-W children (deterministic) verified as point masses: keep x with p'(x); else p'(x) <- 0, renormalize."""

    name = "point-mass-tree"

    def accept(self, p, q, p_cur, q_cur, x):
        return p_cur[x]

    def update(self, p, q, p_cur, q_cur, drafts, tried):
        return without(p_cur, tried), without(q, tried)


# -- the float edge: a uniform that is exactly 0 ----------------------------------------------
class ZeroUniform(RoundRule):
    """``inner`` with a test of a p(x) = 0 draft passing with probability ``chance`` (u = 0 <= 0)."""

    def __init__(self, inner: RoundRule, chance):
        self.inner, self.chance, self.name = inner, chance, f"{inner.name} (u = 0 possible)"

    def draft_row(self, q):
        return self.inner.draft_row(q)

    def accept(self, p, q, x):
        return self.inner.accept(p, q, x) if p[x] else p[x] + self.chance

    def replacement(self, p, q):
        return self.inner.replacement(p, q)

    def bonus(self, p):
        return self.inner.bonus(p)


class ZeroUniformTree(TreeRule):
    """The same for a tree rule: a child with p'(x) = 0 passes with probability ``chance``."""

    def __init__(self, inner: TreeRule, chance):
        self.inner, self.chance, self.name = inner, chance, f"{inner.name} (u = 0 possible)"
        self.drafts = getattr(inner, "drafts", None)

    def draft_row(self, q, q_cur, drafts, tried, width):
        return self.inner.draft_row(q, q_cur, drafts, tried, width)

    def accept(self, p, q, p_cur, q_cur, x):
        return self.inner.accept(p, q, p_cur, q_cur, x) if p_cur[x] else p_cur[x] + self.chance

    def update(self, p, q, p_cur, q_cur, drafts, tried):
        return self.inner.update(p, q, p_cur, q_cur, drafts, tried)

    def fallback(self, p, p_cur):
        return self.inner.fallback(p, p_cur)


def greedy_target(pair):
    """The intended target of a greedy system: argmax of p at every step."""
    return TransformedPair(pair, target=greedy, label="greedy p")


# -- the gallery -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Implementation:
    """A real system's verification as a rule and a scheme (text fields from implementations.json).

    ``scheme`` is the default scheme (a chain entry takes any chain, a tree entry any
    tree, a confidence-chain entry any chain length with its own stop); ``target`` the pair transform whose target joint it means to produce
    (``identity``: sampling from p); ``zero_probability`` P(u = 0) of one test's
    uniform (None: no uniform compared with a ratio).
    """

    name: str
    system: str
    source: str
    description: str
    uniforms: str
    closing: str
    scheme: object
    rule: object
    expected_exact: bool
    zero_probability: Fraction | None = None
    zero_derivation: str | None = None
    target: Callable = identity
    intended: str = "p"

    @property
    def kind(self) -> str:
        """The scheme's grammar keyword, shown (never branched on): chain, confidence or tree."""
        return self.scheme.kind


def _entry(name, scheme, rule, expected_exact, zero=None, target=identity, intended="p") -> Implementation:
    d = DATA[name]
    return Implementation(name, d["system"], d["source"], d["description"], d["uniforms"], d["closing"], scheme,
                          rule, expected_exact, zero, d["zero_derivation"], target, intended)


IMPLEMENTATIONS = {e.name: e for e in [
    _entry("hf-sampling", Chain(2), AcceptIfRatioAtLeastU(), True, Fraction(1, 2**24)),
    _entry("hf-prompt-lookup", Chain(2), SampleAndMatch("hf-prompt-lookup"), True),
    _entry("vllm", Chain(2), SampleAndMatch("vllm"), True, Fraction(1, 2**53)),
    _entry("medusa-typical", Chain(2), MedusaTypical(), False),
    _entry("medusa-greedy", Chain(2), MedusaGreedy(), True, target=greedy_target, intended="greedy decoding of p"),
    _entry("eagle2", Tree((2, 1), "distinct"), PointMassTree(), True, Fraction(1, 2**53)),
    _entry("specinfer", Tree((2, 1)), CORRECT_TREE, True),
    _entry("llama-cpp", ConfidenceChain(2, LLAMA_CPP_P_MIN), SampleAndMatch("llama-cpp"), True),
    _entry("llama-cpp-example", Chain(2), GreedyDraftSampledQ(), False, Fraction(1, (2**31 - 2) ** 2)),
    _entry("gpt-fast", Chain(2), AcceptIfRatioAtLeastU(), True, Fraction(1, 2**9) + Fraction(1, 2**24)),
]}


def get(name: str) -> Implementation:
    """The entry called ``name``, or a one-line ValueError naming every entry."""
    if name not in IMPLEMENTATIONS:
        raise ValueError(f"unknown implementation {str(name)[:60]!r}; known: {', '.join(IMPLEMENTATIONS)}")
    return IMPLEMENTATIONS[name]


def scheme_for(entry: Implementation, scheme=None):
    """The scheme an entry runs on: its default, or ``scheme``: a chain entry takes a fixed or a
    confidence-stopped chain; a confidence-chain entry turns chain:G into its own stop with at most
    G drafts; a tree entry takes a tree, in the drafting mode its rule needs."""
    if scheme is None:
        return entry.scheme
    scheme = as_scheme(scheme)
    if entry.scheme.draft_modes:  # a fixed tree's entry: the tree asked for, in its own drafting mode
        tree = scheme.in_mode(entry.scheme.drafts)
        if tree is None:
            raise ValueError(f"{entry.name} verifies a tree, not {scheme.name}: write tree:W1,W2")
        return tree
    if not scheme.runs(entry.rule):  # a RoundRule runs on a chain (fixed or confidence-stopped)
        raise ValueError(f"{entry.name} verifies a chain, not {scheme.name}: write chain:G")
    g = scheme.chain_gamma
    return entry.scheme.capped(g) if g and not entry.scheme.chain_gamma else scheme


# -- evaluation --------------------------------------------------------------------------------
@dataclass
class Proof:
    """An entry checked on the presets and ``models`` random models of the checker's family."""

    exact: bool
    models: int
    checks: int
    counter_example: checker.CounterExample | None = None


def prove(entry: Implementation, n_tokens: int = 2, scheme=None, models: int = FAMILY_MODELS,
          seed: int = 0) -> Proof:
    """Every context of the presets and of ``models`` family models, exactly (Fraction ==).

    A rule on a fixed chain goes through ``checker.check_rule`` (its counter-example shrunk); on
    any other scheme it is judged model by model, and its first failure is reported as found.
    """
    scheme = scheme_for(entry, scheme)
    if scheme.chain_gamma:
        r = checker.check_rule(entry.rule, (scheme.chain_gamma,), n_tokens, models, seed, target=entry.target)
        return Proof(r.exact, r.models, r.checks, r.counterexample)
    n_models = checks = 0
    for model in checker.models_checked(models, seed):
        n_models += 1
        for ctx in model.contexts():
            checks += 1
            j = judge(model, ctx, scheme, entry.rule, n_tokens, entry.target(model))
            if not j.exact:
                diffs = sorted(((t, j.wanted.get(t, 0), j.produced.get(t, 0)) for t in set(j.produced) | set(j.wanted)),
                               key=lambda r: (-abs(r[1] - r[2]), r[0]))
                found = f"{model.name} after {' '.join(ctx)!r}, {scheme.name}, N = {n_tokens}"
                return Proof(False, n_models, checks, checker.CounterExample(
                    model, ctx, scheme.depth, n_tokens, j.total_variation, [d for d in diffs if d[1] != d[2]][:5],
                    found, j.tokens_per_round, j.correct_tokens_per_round))
    return Proof(True, n_models, checks)


@dataclass
class ImplementationReport:
    """One entry judged at one context (see the module docstring for each number)."""

    name: str
    system: str
    scheme: str
    context: tuple
    n_tokens: int
    intended: str
    exact: bool  # TV 0 here and on the presets + family
    expected_exact: bool
    total_variation: Fraction  # from the intended target, next n_tokens tokens, at this context
    tokens_per_round: Fraction
    textbook_tokens_per_round: Fraction
    float_hazard: Fraction | None  # P(the round emits a token with p = 0 through a uniform equal to 0)
    hazard_emits: str
    counter_example: checker.CounterExample | None = None
    family: dict = field(default_factory=dict)  # {"models", "checks", "exact"} of ``prove``

    @property
    def verdict(self) -> str:
        return "exact" if self.exact else "NOT exact"

    def to_dict(self) -> dict:
        def frac(x):
            return None if x is None else str(Fraction(x))
        return {"name": self.name, "system": self.system, "scheme": self.scheme, "context": list(self.context),
                "tokens": self.n_tokens, "intended": self.intended, "exact": self.exact,
                "expected_exact": self.expected_exact, "verdict": self.verdict,
                "total_variation": frac(self.total_variation), "tokens_per_round": frac(self.tokens_per_round),
                "textbook_tokens_per_round": frac(self.textbook_tokens_per_round),
                "float_hazard": frac(self.float_hazard), "hazard_emits": self.hazard_emits, "family": self.family,
                "counter_example": self.counter_example.to_dict() if self.counter_example else None}


def forbidden_mass(pair, context, outcomes: dict) -> Fraction:
    """Probability of the round outcomes that contain a token the target gives probability 0 there."""
    context, total = tuple(context), 0
    for tokens, pr in outcomes.items():
        for k, t in enumerate(tokens):
            if not pair.p(context + tokens[:k])[pair.vocab.index(t)]:
                total += pr
                break
    return Fraction(total)


def float_edge(entry: Implementation, pair, context, scheme=None) -> tuple:
    """(hazard, what it emits): the exact probability per round that a uniform equal to 0 lets a
    p = 0 token through, and a sentence saying what is emitted then; (None, reason) without uniforms."""
    if entry.zero_probability is None:
        return None, "no uniform is compared with a ratio: no float edge of this kind"
    scheme = scheme_for(entry, scheme)
    wrap = ZeroUniformTree if isinstance(entry.rule, TreeRule) else ZeroUniform  # the rule's own kind of uniforms
    rnd = exact.round_distribution(pair, context, scheme, wrap(entry.rule, entry.zero_probability))
    hazard = forbidden_mass(pair, context, rnd.outcomes)
    if not hazard:
        return hazard, "none here: no token with p = 0 is ever tested at this context"
    return hazard, ("a drafted token with p(x) = 0 passes its test (u <= 0) when u = 0 and is emitted: "
                    f"the output holds a token the target forbids (P(u = 0) = {entry.zero_probability} per test)")


def evaluate(entry: Implementation, pair, context, n_tokens: int = 2, scheme=None,
             models: int = FAMILY_MODELS, seed: int = 0) -> ImplementationReport:
    """Judge ``entry`` on ``pair`` after ``context`` (its default scheme, or ``scheme``), prove it on the
    family (``models`` random models; 0: the presets only), and price its float edge."""
    scheme, context = scheme_for(entry, scheme), tuple(context)
    j = judge(pair, context, scheme, entry.rule, n_tokens, entry.target(pair))
    proof = prove(entry, n_tokens, scheme, models, seed)
    hazard, emits = float_edge(entry, pair, context, scheme)
    return ImplementationReport(entry.name, entry.system, scheme.name, context, n_tokens, entry.intended,
                                j.exact and proof.exact, entry.expected_exact, j.total_variation,
                                j.tokens_per_round, j.correct_tokens_per_round, hazard, emits,
                                None if proof.exact else proof.counter_example,
                                {"models": proof.models, "checks": proof.checks, "exact": proof.exact})


def check(pair, n_tokens: int = 2, names=None, models: int = FAMILY_MODELS, limit=None) -> None:
    """Refuse ``table(pair, context, n_tokens, names, models)`` before it starts (one line,
    ``bounds.WorkRefused``): each entry's joints and three rounds on ``pair``, and its family proof."""
    entries = [get(n) for n in names] if names else list(IMPLEMENTATIONS.values())
    schemes = list(dict.fromkeys(e.scheme for e in entries))
    bounds.check_joint(pair, n_tokens, schemes, rules=len(entries), rounds=3, limit=limit)
    chains = sorted({e.scheme.depth for e in entries})
    checker.check_total_work(models, chains, n_tokens)


def table(pair, context, n_tokens: int = 2, names=None, models: int = FAMILY_MODELS) -> list:
    """``evaluate`` every entry (or the named ones, in that order) with its default scheme."""
    entries = [get(n) for n in names] if names else list(IMPLEMENTATIONS.values())
    return [evaluate(e, pair, context, n_tokens, models=models) for e in entries]
