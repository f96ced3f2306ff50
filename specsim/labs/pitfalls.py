"""The pitfalls lab: broken versions of the rule, measured exactly.

Each pitfall is a ``RoundRule`` subclass (the round itself is never copied)
plus, where the mistake is about what the models are asked, a transform of
the model pair. ``evaluate`` runs it through the exact engine and reports the
total variation distance between the next-N-token distribution it produces
and the distribution it was meant to produce, and the expected tokens per
round. A pitfall's source says in a few words where the rule or the claim
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
>>> r = evaluate(PITFALLS["always-accept"], m, ("a",), gamma=1, n_tokens=1)
>>> r.total_variation, r.expected_tokens   # TV(p, q) = 1 - alpha after "a"
(Fraction(1, 10), Fraction(2, 1))
>>> evaluate(PITFALLS["correct"], m, ("a",), 3, 2).exact
True
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Callable

from .. import exact
from .pitfalls_tree import (AcceptIfRatioAtLeastU, TopKTreeAsIfSampled, TreeNoResidualUpdate,
                            TypicalAcceptance)
from ..rule import CORRECT, RoundRule, acceptance_probability, residual, total_variation
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

    def to_dict(self) -> dict:
        return {"name": self.name, "source": self.source, "description": self.description,
                "total_variation": str(Fraction(self.total_variation)),
                "expected_tokens": str(Fraction(self.expected_tokens)), "exact": self.exact}


def joints(pitfall: Pitfall, models, context, gamma: int, n_tokens: int) -> tuple:
    """(produced, wanted): the next-``n_tokens`` joint the broken round produces, and the intended one."""
    produced = exact.speculative_joint(pitfall.speculative(models), context, gamma, n_tokens, pitfall.rule)
    return produced, exact.target_joint(pitfall.target(models), context, n_tokens)


def evaluate(pitfall: Pitfall, models, context, gamma: int, n_tokens: int) -> PitfallResult:
    """Exact TV between the speculative and intended joints of the next ``n_tokens``."""
    pair = pitfall.speculative(models)
    spec, wanted = joints(pitfall, models, context, gamma, n_tokens)
    tv = exact.joint_total_variation(spec, wanted)
    tokens = exact.round_distribution(pair, context, gamma, pitfall.rule).expected_tokens
    return PitfallResult(pitfall.name, pitfall.source, pitfall.description, tv, tokens, tv == 0)


def run_lab(models, context, gamma: int, n_tokens: int, names=None) -> list:
    """``evaluate`` every pitfall (or the named ones, in the order given)."""
    return [evaluate(get(n), models, context, gamma, n_tokens) for n in (names or PITFALLS)]


def get(name: str) -> Pitfall:
    if name not in PITFALLS:
        raise ValueError(f"unknown rule {name!r}; known: {', '.join(PITFALLS)}")
    return PITFALLS[name]




def _temper_target(models):
    return TransformedPair(models, target=lambda row: temperature(row, LAB_TEMPERATURE),
                           label=f"p at temperature {LAB_TEMPERATURE}")


def _temper_draft(models):
    return TransformedPair(models, draft=lambda row: temperature(row, LAB_TEMPERATURE),
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
# tree rules: evaluated with a ``specsim.schemes.tree.Tree`` as the scheme (``evaluate(p, m, ctx, Tree(...), n)``)
TREE_PITFALLS = {p.name: p for p in [_pitfall("tree-no-residual-update", TreeNoResidualUpdate()),
                                     _pitfall("top-k-tree-as-if-sampled", TopKTreeAsIfSampled())]}


# -- errors that are not a rule ------------------------------------------------
def extra_pass_cost(models, context, gamma: int) -> dict:
    """A common rollback claim: one more target pass after every rejection, priced exactly.

    The real round costs one target pass; with the extra pass a round costs
    1 + P(K < gamma). The tokens per round are the same, so the target passes
    per emitted token rise by that factor (and the fresh draw is from p, which
    is the resample-from-target bias on top).

    >>> from specsim.toy import load_model
    >>> r = extra_pass_cost(load_model("seed"), ("a",), 3)
    >>> r["passes_per_token"], r["extra_passes_per_token"]
    (Fraction(500, 1659), Fraction(676, 1659))
    """
    r = exact.round_distribution(models, tuple(context), gamma)
    rejected = 1 - r.accepted[gamma]
    return {"tokens_per_round": r.expected_tokens, "rejection_probability": rejected,
            "passes_per_token": 1 / r.expected_tokens,
            "extra_passes_per_token": (1 + rejected) / r.expected_tokens}


def off_by_one_first_token(models, context) -> dict:
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
    p, q = models.p(ctx), models.q(ctx)
    kept = [q[i] * acceptance_probability(models.p(ctx + (t,))[i], q[i]) if q[i] else 0 * q[i]
            for i, t in enumerate(models.vocab)]
    r = residual(p, q) or p
    out = [k + (1 - sum(kept)) * ri for k, ri in zip(kept, r)]
    return {"first_token": out, "total_variation": total_variation(out, p)}
