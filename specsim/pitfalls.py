"""The pitfalls lab: broken versions of the rule, measured exactly.

Each pitfall is a ``RoundRule`` subclass (the round itself is never copied)
plus, where the mistake is about what the models are asked, a transform of
the model pair. ``evaluate`` runs it through the exact engine and reports the
total variation distance between the next-N-token distribution it produces
and the distribution it was meant to produce, and the expected tokens per
round. Sources are the file names of the source documents a misconception
comes from (see ``shared/seeds/README.md``), or None.

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

from dataclasses import dataclass
from fractions import Fraction
from typing import Callable

from . import exact
from .rule import CORRECT, RoundRule, residual
from .transforms import TransformedPair, greedy, identity, temperature

SEED_001 = "001_5fa6a468e5bdda45.txt"
SEED_002 = "002_87f9b1c167a166f7.txt"
SEED_003 = "003_633e0d3e3c72db96.txt"
SEED_004 = "004_e0eca397a2d578e0.txt"
LAB_TEMPERATURE = Fraction(1, 2)


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


_ALL = [
    Pitfall("correct", None,
            "The real rule: keep a draft x with probability min(1, p(x)/q(x)), replace the first "
            "rejected one by a draw from the normalized residual max(0, p - q), and add a bonus "
            "token from p when every draft survives. Its output is the target's distribution, "
            "exactly, whatever the drafter is."),
    Pitfall("resample-from-target", SEED_004,
            "Acceptance is right, but after a rejection the replacement is drawn from p itself. "
            "The accepted drafts already delivered min(p, q) of every token's mass; drawing the "
            "rejection branch from p hands out those tokens a second time, so tokens the drafter "
            "likes are over-represented. Running a fresh target step after the rejection (another "
            "reading of the same advice) gives this distribution too, at the cost of an extra pass.",
            ResampleFromTarget()),
    Pitfall("accept-if-u-below-p", SEED_001,
            "A draft is kept when a uniform u falls below p(x), as if the target's probability "
            "alone were the acceptance chance; the replacement still comes from the residual. "
            "Ignoring q rejects tokens the target likes even when the drafter proposes them at "
            "exactly the right rate, and then the residual, built for the real rule, refills the "
            "wrong tokens.",
            AcceptIfUBelowP()),
    Pitfall("accept-if-p-at-least-q", SEED_002,
            "A draft is kept exactly when p(x) >= q(x) and always rejected otherwise. A token the "
            "drafter over-proposes is then never emitted through the draft, although the target "
            "still wants it with probability p(x); only the residual, which is zero there, could "
            "supply it. Acceptance must be a coin with bias p/q, not a yes/no comparison.",
            AcceptIfPAtLeastQ()),
    Pitfall("always-accept", None,
            "Every draft is kept and a bonus token is drawn from p. The first gamma tokens of each "
            "round then follow the drafter, not the target: with one position the output is q "
            "and the distance is exactly TV(p, q) = 1 - alpha. Fast and wrong.",
            AlwaysAccept()),
    Pitfall("no-bonus-token", None,
            "The bonus token after full acceptance is dropped. Nothing is biased (the next round "
            "samples that position from p anyway), so the output is still exact; the loss is "
            "speed: one token fewer in every fully accepted round, for the same target pass.",
            NoBonusToken()),
    Pitfall("temperature-on-target-only", SEED_003,
            f"The target samples at temperature {LAB_TEMPERATURE} and the drafter at 1, and the "
            "rule sees both as they are. The rule reproduces whatever p it is given, so the "
            f"output is exactly the target at temperature {LAB_TEMPERATURE}: the mismatch costs "
            "acceptance rate, not correctness. What breaks exactness is telling the rule a "
            "different q from the one the drafts were drawn from (see draft-temperature-not-in-q).",
            CORRECT, _temper_target, _temper_target),
    Pitfall("temperature-on-draft-only", SEED_003,
            f"The drafter samples at temperature {LAB_TEMPERATURE} (and the rule uses that q) but "
            "the target's rows are left at temperature 1, while the user asked for "
            f"{LAB_TEMPERATURE}. The rule faithfully delivers the untempered target, so the "
            "output is off by exactly the distance between the two targets.",
            CORRECT, _temper_draft, _temper_target),
    Pitfall("greedy-draft-with-sampled-q", None,
            "The drafter proposes its argmax every time, but the acceptance test and the residual "
            "use its full distribution q. The ratio p/q then describes a proposal that never "
            "happened: tokens other than the argmax are never drafted, the argmax is drafted far "
            "more often than q says, and the output drifts toward it.",
            GreedyDraftSampledQ()),
    Pitfall("draft-temperature-not-in-q", SEED_003,
            f"Drafts are sampled from q at temperature {LAB_TEMPERATURE}, but the rule divides by "
            "the untempered q. Same mistake as the greedy drafter, milder: the proposal the rule "
            "corrects for is not the proposal that was made.",
            DraftTemperatureNotInQ()),
    Pitfall("ratio-upside-down", None,
            "The acceptance probability is written min(1, q(x)/p(x)), the letters swapped. Tokens "
            "the target likes more than the drafter are now rejected, tokens the drafter "
            "over-proposes always pass, and a token with p(x) = 0 can be emitted.",
            AcceptQOverP()),
    Pitfall("residual-backwards", None,
            "Acceptance is right but the replacement is drawn from max(0, q - p), normalized: the "
            "tokens the drafter already over-proposes instead of the ones it under-proposes. "
            "Every rejection pushes the output further from the target.",
            ResidualBackwards()),
]

PITFALLS = {p.name: p for p in _ALL}
