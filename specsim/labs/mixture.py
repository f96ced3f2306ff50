"""Lossy on purpose: verify the drafts against the mixture v = w·p + (1 − w)·q instead of p.

``MixtureTarget(w)`` is a ``RoundRule`` (the round is never copied): a draft x
drawn from q is kept with probability

    min(1, v(x) / q(x)) = min(1, (1 − w) + w · p(x) / q(x)),

a rejection draws from the residual of v against q, which is w·max(0, p − q)
normalized, so the residual of p itself; and the token after a full
acceptance is drawn from p. That is what transformers 5.25.0 runs when
``assistant_ensemble_weight`` is set (``generation/utils.py``,
``_speculative_sampling``), the "static ensemble" of DIVERSED.

At one position the drafts are judged against v, so the emitted token follows
v exactly (lesson 4's argument with v in place of p) and

    acceptance  Σ_x min(v(x), q(x)) = 1 − w · TV(p, q) = α + (1 − w) · TV(p, q)
    distance    TV(v, p)            = (1 − w) · TV(p, q)

so the acceptance bought is exactly the distance paid: acceptance = α + TV(v, p).
No rule can do better at one position: a kept draft x is emitted as x, so the
chance of keeping it is at most min(o(x), q(x)) for the output o, and
Σ min(o, q) ≤ Σ min(p, q) + TV(o, p) (``best_acceptance``). w = 1 is the
exact rule; w = 0 keeps every draft (the pitfalls lab's always-accept).

``curve`` runs the exact engine for a list of weights: each weight's exact
TV from the target over the next N tokens (``specsim.labs.judge``), its
exact tokens per round, and the i.i.d. formula at the context's acceptance.

Example
-------
>>> from fractions import Fraction as F
>>> from specsim.toy import load_model
>>> from specsim.schemes import Chain
>>> m = load_model("seed")
>>> p, q = m.p(("b",)), m.q(("b",))
>>> acceptance(p, q, F(1, 2)), distance(p, q, F(1, 2))
(Fraction(9, 10), Fraction(1, 10))
>>> pt = curve(m, ("a",), Chain(3), 2, weights=(0, 1))
>>> [(str(x.weight), str(x.total_variation), str(x.tokens_per_round)) for x in pt]
[('0', '17/100', '4'), ('1', '0', '1659/500')]
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from .. import bounds, exact, formulas
from ..rule import RoundRule, alpha, residual, total_variation
from ..schemes import Chain, as_scheme
from .judge import judge
from .pitfalls import PITFALLS

WEIGHTS = tuple(Fraction(k, 20) for k in range(21))  # the curve's weights: 0, 1/20, ..., 1


def parse_weight(w) -> Fraction:
    """w as an exact Fraction in [0, 1] ("1/2", 0.25, 1); a one-line ValueError otherwise."""
    try:
        value = Fraction(w.strip()) if isinstance(w, str) else Fraction(w)
    except (ValueError, TypeError, ZeroDivisionError, OverflowError):
        raise ValueError(f"the weight w must be a number in [0, 1], got {str(w)[:40]!r}") from None
    if isinstance(w, bool) or not 0 <= value <= 1:
        raise ValueError(f"the weight w must be in [0, 1], got {str(w)[:40]}")
    return value


def mixture(p, q, w) -> list:
    """v = w·p + (1 − w)·q, token by token."""
    w = parse_weight(w)
    if len(p) != len(q):
        raise ValueError(f"p has {len(p)} entries but q has {len(q)}")
    return [w * a + (1 - w) * b for a, b in zip(p, q)]


def acceptance(p, q, w):
    """Σ_x min(v(x), q(x)): the chance one draft from q is kept when judged against v (= 1 − w·TV(p, q))."""
    return alpha(mixture(p, q, w), q)


def distance(p, q, w):
    """TV(v, p): how far one emitted token is from the target (= (1 − w)·TV(p, q))."""
    return total_variation(mixture(p, q, w), p)


def best_acceptance(p, q, tv):
    """The most any rule can keep of one draft from q when its output is within ``tv`` of p: min(1, α + tv).

    >>> from fractions import Fraction as F
    >>> best_acceptance([F(1, 2), F(1, 2)], [F(1), F(0)], F(1, 10))
    Fraction(3, 5)
    """
    bound = alpha(p, q) + tv
    return bound if bound < 1 else bound / bound


class MixtureTarget(RoundRule):
    """Judge drafts against v = w·p + (1 − w)·q; correct from the residual; the bonus token from p."""

    def __init__(self, weight=Fraction(1, 2)):
        self.weight = parse_weight(weight)
        self.name = f"mixture w = {self.weight}"

    def accept(self, p, q, x):
        if q[x] <= 0:
            raise ValueError("the drafter proposed a token it gives probability 0 (q(x) = 0)")
        w = self.weight
        ratio = (1 - w) + w * p[x] / q[x]  # v(x) / q(x)
        return ratio if ratio < 1 else ratio / ratio

    def replacement(self, p, q):
        r = residual(mixture(p, q, self.weight), q)  # w·max(0, p − q) normalized: p's residual
        return p if r is None else r  # no residual where p == q (transformers draws from p there)

    def bonus(self, p):
        return p


@dataclass(frozen=True)
class CurvePoint:
    """One weight w at one context: the one-position numbers and the whole-round ones, all exact."""

    weight: Fraction
    acceptance: object        # Σ min(v, q) at the context: one draft's chance of being kept
    first_token_tv: object    # TV(v, p) at the context: the first emitted token's distance
    total_variation: object   # TV of the next N tokens' joint from the target's (exact engine)
    tokens_per_round: object  # E[K + 1] of one round from the context (exact engine)
    iid_tokens_per_round: object  # the i.i.d. formula at ``acceptance``

    def to_dict(self) -> dict:
        return {k: str(v) for k, v in self.__dict__.items()}


def curve(pair, context, scheme, n_tokens: int, weights=WEIGHTS, limit=None) -> list:
    """``CurvePoint`` for each weight: the trade-off between speed and distance, exactly.

    Refused with one line (``bounds.WorkRefused``) when the joints are too large to enumerate.
    """
    context, scheme = tuple(context), as_scheme(scheme)
    weights = [parse_weight(w) for w in weights]
    if not weights:
        raise ValueError("give at least one weight w")
    bounds.check_joint(pair, n_tokens, [scheme], rules=len(weights), rounds=1, limit=limit)
    p, q = pair.p(context), pair.q(context)
    out = []
    for w in weights:
        j = judge(pair, context, scheme, MixtureTarget(w), n_tokens)
        a = acceptance(p, q, w)
        out.append(CurvePoint(w, a, distance(p, q, w), j.total_variation, j.tokens_per_round,
                              formulas.expected_tokens(a, scheme.depth)))
    return out


def one_position(rule: RoundRule, pair, context) -> tuple:
    """(acceptance, TV): the chance one draft is kept, and the first emitted token's distance from p, for
    any chain rule at ``context`` (one draft, the exact engine)."""
    context = tuple(context)
    kept = exact.round_distribution(pair, context, Chain(1), rule).accepted[1]
    return kept, judge(pair, context, Chain(1), rule, 1).total_variation


def lab_rules(pair) -> dict:
    """The pitfalls lab's chain rules that run on ``pair`` itself and are judged against its own p (no
    temperature on one side): name -> ``RoundRule``, the correct rule first."""
    return {name: pit.rule for name, pit in PITFALLS.items()
            if pit.speculative(pair) is pair and pit.target(pair) is pair}


def lab_one_position(pair, context) -> dict:
    """``one_position`` of each of ``lab_rules`` that drafts from q itself at ``context`` (the bound
    ``best_acceptance`` is stated for drafts from q): name -> (acceptance, TV)."""
    q = list(pair.q(tuple(context)))
    return {name: one_position(rule, pair, context) for name, rule in lab_rules(pair).items()
            if list(rule.draft_row(q)) == q}
