"""The pitfalls lab: broken versions of the rule, measured exactly.

Each pitfall is a ``RoundRule`` subclass (the round itself is never copied)
plus, where the mistake is about what the models are asked, a transform of
the model pair. ``evaluate`` runs it through the exact engine and reports the
total variation distance between the next-N-token distribution it produces
and the distribution it was meant to produce, and the expected tokens per
round (``specsim.labs.judge``). ``run_lab`` runs every pitfall that applies
to a scheme (a chain: the chain rules; a tree: the tree rules; a block: the
correct rule only); ``check_lab`` is its work bound, which the CLI and the
Pitfalls page both ask. A pitfall's source says in a few words where the rule or the claim
is found ("common pseudocode", a paper), or is None; the source, a longer
``source_text`` and the description are data, in ``pitfalls.json`` next to
this file.

Two seed errors are not a rule of the round and are priced by functions at
the end: the extra target pass after a rejection (``extra_pass_cost``) and
the logit row read one position late (``off_by_one_first_token``).

Example
-------
>>> from specsim.toy import load_model
>>> m = load_model("seed")
>>> r = evaluate(PITFALLS["always-accept"], m, ("a",), Chain(1), n_tokens=1)
>>> r.total_variation, r.expected_tokens   # TV(p, q) = 1 - alpha after "a"
(Fraction(1, 10), Fraction(2, 1))
>>> evaluate(PITFALLS["correct"], m, ("a",), Chain(3), 2).exact
True
>>> [r.name for r in run_lab(m, ("a",), Tree((2, 1)), 1)]
['correct', 'tree-no-residual-update', 'top-k-tree-as-if-sampled']
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Callable

from .. import bounds, exact
from . import judge
from .pitfalls_tree import (AcceptIfRatioAtLeastU, TopKTreeAsIfSampled, TreeNoResidualUpdate,
                            TypicalAcceptance)
from ..rule import CORRECT, RoundRule, acceptance_probability, residual, total_variation
from ..schemes import Chain, Tree, as_scheme, example
from ..schemes import families as registered
from ..transforms import TransformedPair, greedy, identity, temperature

LAB_TEMPERATURE = Fraction(1, 2)
LAB_COST = Fraction(1, 5)  # the drafter cost read into the common pseudocode's p / (c q)
DESCRIPTIONS = json.loads((Path(__file__).with_name("pitfalls.json")).read_text(encoding="utf-8"))


def _one_like(x):
    return x / x if x else x + 1  # 1 of x's number type


# -- broken rules ------------------------------------------------------------
class _ResidualWhereDefined(RoundRule):
    """Replacement from the residual; from p where p == q (no residual exists there).

    A broken acceptance test can reject where p == q, which the real rule
    never does; drawing from p there is the natural reading of such code.
    """

    def replacement(self, p, q):
        r = residual(p, q)
        return p if r is None else r


class ResampleFromTarget(RoundRule):
    name = "resample-from-target"

    def replacement(self, p, q):
        return p


class AcceptIfUBelowP(_ResidualWhereDefined):
    name = "accept-if-u-below-p"

    def accept(self, p, q, x):
        return p[x]


class AcceptIfPAtLeastQ(_ResidualWhereDefined):
    name = "accept-if-p-at-least-q"

    def accept(self, p, q, x):
        one = _one_like(q[x])
        return one if p[x] >= q[x] else one - one


class AcceptIfPAboveQ(_ResidualWhereDefined):
    name = "accept-if-p-above-q"

    def accept(self, p, q, x):
        one = _one_like(q[x])
        return one if p[x] > q[x] else one - one


class AcceptPOverCQ(ResampleFromTarget):
    """Common pseudocode: keep x with probability p(x) / (c q(x)) (clamped at 1), else draw from p.

    ``cost=None`` reads c as the rejection-sampling bound max_x p(x)/q(x) of the row.
    """

    def __init__(self, name, cost=None):
        self.name, self.cost = name, cost

    def accept(self, p, q, x):
        c = self.cost if self.cost is not None else max(a / b for a, b in zip(p, q) if b)
        ratio = p[x] / (c * q[x])
        return ratio if ratio < 1 else _one_like(ratio)


class AlwaysAccept(RoundRule):
    name = "always-accept"

    def accept(self, p, q, x):
        return _one_like(q[x])


class NoBonusToken(RoundRule):
    name = "no-bonus-token"

    def bonus(self, p):
        return None


class GreedyDraftSampledQ(RoundRule):
    name = "greedy-draft-with-sampled-q"

    def draft_row(self, q):
        return greedy(q)


class AcceptQOverP(_ResidualWhereDefined):
    name = "ratio-upside-down"

    def accept(self, p, q, x):
        if not p[x]:
            return _one_like(q[x])  # q / 0 is "infinite": min(1, .) = 1
        ratio = q[x] / p[x]
        return ratio if ratio < 1 else _one_like(ratio)


class ResidualBackwards(RoundRule):
    name = "residual-backwards"

    def replacement(self, p, q):
        r = residual(q, p)  # max(0, q - p) normalized: the letters swapped
        return p if r is None else r


class DraftTemperatureNotInQ(RoundRule):
    name = "draft-temperature-not-in-q"

    def draft_row(self, q):
        return temperature(q, LAB_TEMPERATURE)


# -- the lab -----------------------------------------------------------------
@dataclass(frozen=True)
class Pitfall:
    """A named broken rule: the round runs ``rule`` on ``speculative(models)``
    and is judged against the target distribution of ``target(models)``."""

    name: str
    source: str | None
    description: str
    rule: RoundRule = CORRECT
    speculative: Callable = identity
    target: Callable = identity


@dataclass
class PitfallResult:
    name: str
    source: str | None
    description: str
    total_variation: object  # exact Fraction for toy models
    expected_tokens: object
    exact: bool
    scheme: str = "chain:1"  # the scheme's grammar name

    def to_dict(self) -> dict:
        return {"name": self.name, "source": self.source, "description": self.description,
                "scheme": self.scheme, "total_variation": str(Fraction(self.total_variation)),
                "expected_tokens": str(Fraction(self.expected_tokens)), "exact": self.exact}


def joints(pitfall: Pitfall, pair, context, scheme, n_tokens: int) -> tuple:
    """(produced, wanted): the next-``n_tokens`` joint the broken round produces, and the intended one."""
    return judge.joints(pitfall.speculative(pair), context, scheme, pitfall.rule, n_tokens,
                        pitfall.target(pair))


def evaluate(pitfall: Pitfall, pair, context, scheme, n_tokens: int) -> PitfallResult:
    """Exact TV between the speculative and intended joints of the next ``n_tokens``
    (``judge.judge``), and the rule's expected tokens per round."""
    scheme = as_scheme(scheme)
    j = judge.judge(pitfall.speculative(pair), context, scheme, pitfall.rule, n_tokens, pitfall.target(pair))
    return PitfallResult(pitfall.name, pitfall.source, pitfall.description, j.total_variation,
                         j.tokens_per_round, j.exact, scheme.name)


def applicable(scheme) -> dict:
    """The pitfalls a scheme can run: every chain rule on a chain; the correct rule and the tree
    rules on a tree (a dynamic tree too: its correct rule is the point-mass one); the correct rule
    alone on a block (block verification has its own rule) and on a confidence-stopped chain."""
    scheme = as_scheme(scheme)
    if scheme.chain_gamma:  # chain:γ runs every chain rule (the lab's chain pitfalls are chain:γ rounds)
        return dict(PITFALLS)
    return {"correct": PITFALLS["correct"], **{n: p for n, p in TREE_PITFALLS.items() if scheme.runs(p.rule)}}


def families() -> tuple:
    """The kinds of the scheme families the lab has a broken rule for (its first scheme runs one beyond the
    correct rule): the Pitfalls page offers these, so a family registered later that can run a chain or a
    tree pitfall is offered with no line of its own.

    >>> families()
    ('chain', 'tree', 'dynamic')
    """
    return tuple(kind for kind, cls in registered().items() if len(applicable(example(cls))) > 1)


def cases(scheme, names=None) -> list:
    """(pitfall, scheme) pairs the lab runs, in the order of ``names`` (default: every applicable one).

    A rule that needs its own drafting mode gets it (``top-k-tree-as-if-sampled`` drafts
    distinct tokens). A name that is unknown or does not apply is a one-line ValueError.
    """
    scheme = as_scheme(scheme)
    table = applicable(scheme)
    out = []
    for name in names or table:
        if name not in table:
            get(name)  # unknown: names every rule
            raise ValueError(f"rule {name!r} does not apply to {scheme.name}; use: {', '.join(table)}")
        pit = table[name]
        drafts = getattr(pit.rule, "drafts", None)  # a tree rule bound to one drafting mode
        out.append((pit, Tree(scheme.shape, drafts) if drafts and drafts != scheme.drafts else scheme))
    return out


def check_lab(pair, scheme, n_tokens: int, names=None, limit=None) -> None:
    """Refuse ``run_lab(models, context, scheme, n_tokens, names)`` before it starts (one line,
    ``bounds.WorkRefused``; ``limit``: an int or a ``bounds.Budget``). The CLI and the page ask this."""
    todo = cases(scheme, names)
    schemes = list(dict.fromkeys(s for _, s in todo))  # each distinct scheme once, in order
    # each rule: its speculative joint, the intended joint and one round (its tokens per round);
    # the temperature pitfalls square the rows' digits
    bounds.check_joint(pair, n_tokens, schemes, rules=len(todo), rounds=1,
                       power=bounds.temperature_power(LAB_TEMPERATURE), limit=limit)


def run_lab(pair, context, scheme, n_tokens: int, names=None) -> list:
    """``evaluate`` every pitfall that applies to ``scheme`` (or the named ones, in the order given)."""
    return [evaluate(pit, pair, context, s, n_tokens) for pit, s in cases(scheme, names)]


def get(name: str) -> Pitfall:
    if name not in PITFALLS and name not in TREE_PITFALLS:
        raise ValueError(f"unknown rule {name!r}; known: {', '.join([*PITFALLS, *TREE_PITFALLS])}")
    return PITFALLS.get(name) or TREE_PITFALLS[name]


def _temper_target(pair):
    return TransformedPair(pair, target=lambda row: temperature(row, LAB_TEMPERATURE),
                           label=f"p at temperature {LAB_TEMPERATURE}")


def _temper_draft(pair):
    return TransformedPair(pair, draft=lambda row: temperature(row, LAB_TEMPERATURE),
                           label=f"q at temperature {LAB_TEMPERATURE}")


def _pitfall(name, rule=CORRECT, speculative=identity, target=identity) -> Pitfall:
    """A table entry: the code here, the source and the description from pitfalls.json."""
    d = DESCRIPTIONS[name]
    text = d["description"].format(temperature=LAB_TEMPERATURE, cost=LAB_COST)
    return Pitfall(name, d["source"], text, rule, speculative, target)


_ALL = [
    _pitfall("correct"),
    _pitfall("resample-from-target", ResampleFromTarget()),
    _pitfall("p-over-cq-envelope", AcceptPOverCQ("p-over-cq-envelope")),
    _pitfall("p-over-cq-cost", AcceptPOverCQ("p-over-cq-cost", LAB_COST)),
    _pitfall("accept-if-u-below-p", AcceptIfUBelowP()),
    _pitfall("accept-if-p-above-q", AcceptIfPAboveQ()),
    _pitfall("accept-if-p-at-least-q", AcceptIfPAtLeastQ()),
    _pitfall("always-accept", AlwaysAccept()),
    _pitfall("no-bonus-token", NoBonusToken()),
    _pitfall("temperature-on-target-only", CORRECT, _temper_target, _temper_target),
    _pitfall("temperature-on-draft-only", CORRECT, _temper_draft, _temper_target),
    _pitfall("greedy-draft-with-sampled-q", GreedyDraftSampledQ()),
    _pitfall("draft-temperature-not-in-q", DraftTemperatureNotInQ()),
    _pitfall("ratio-upside-down", AcceptQOverP()),
    _pitfall("residual-backwards", ResidualBackwards()),
    _pitfall("accept-if-ratio-at-least-u", AcceptIfRatioAtLeastU()),
    _pitfall("typical-acceptance", TypicalAcceptance()),
]

PITFALLS = {p.name: p for p in _ALL}
# tree rules: evaluated with a ``specsim.schemes.Tree`` as the scheme (``run_lab(m, ctx, Tree(...), n)``)
TREE_PITFALLS = {p.name: p for p in [_pitfall("tree-no-residual-update", TreeNoResidualUpdate()),
                                     _pitfall("top-k-tree-as-if-sampled", TopKTreeAsIfSampled())]}


# -- errors that are not a rule ------------------------------------------------
def extra_pass_cost(pair, context, scheme) -> dict:
    """A common rollback claim: one more target pass after every rejection, priced exactly.

    The real round costs one target pass; with the extra pass a round costs
    1 + P(K < γ) (γ: the scheme's depth). The tokens per round are the same, so the target passes
    per emitted token rise by that factor (and the fresh draw is from p, which
    is the resample-from-target bias on top).

    >>> from specsim.toy import load_model
    >>> r = extra_pass_cost(load_model("seed"), ("a",), Chain(3))
    >>> r["passes_per_token"], r["extra_passes_per_token"]
    (Fraction(500, 1659), Fraction(676, 1659))
    """
    r = exact.round_distribution(pair, tuple(context), as_scheme(scheme))
    rejected = 1 - r.accepted[-1]
    return {"tokens_per_round": r.expected_tokens, "rejection_probability": rejected,
            "passes_per_token": 1 / r.expected_tokens,
            "extra_passes_per_token": (1 + rejected) / r.expected_tokens}


def off_by_one_first_token(pair, context) -> dict:
    """Common pseudocode that scores draft y_i with the row one position later.

    ``softmax(logits_L[i])[y]`` over the draft positions reads p(. | prefix, y)
    (the row that predicts the token *after* y) instead of p(. | prefix). All
    else is the real rule. Returns the first emitted token's exact
    distribution and its TV from p.

    >>> from specsim.toy import load_model
    >>> off_by_one_first_token(load_model("seed"), ("a",))["total_variation"]
    Fraction(1, 10)
    """
    ctx = tuple(context)
    p, q = pair.p(ctx), pair.q(ctx)
    kept = [q[i] * acceptance_probability(pair.p(ctx + (t,))[i], q[i]) if q[i] else 0 * q[i]
            for i, t in enumerate(pair.vocab)]
    r = residual(p, q) or p
    out = [k + (1 - sum(kept)) * ri for k, ri in zip(kept, r)]
    return {"first_token": out, "total_variation": total_variation(out, p)}
