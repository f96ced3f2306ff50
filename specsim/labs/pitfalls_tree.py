"""Lossy cousins of tree and chain verification, as rule objects for ``specsim.labs.pitfalls``.

Chain rules (``RoundRule``): ``accept-if-ratio-at-least-u`` and Medusa's
``typical-acceptance``. Tree rules (``specsim.schemes.tree.TreeRule``), run by a
``specsim.schemes.tree.Tree`` scheme: ``tree-no-residual-update`` and
``top-k-tree-as-if-sampled``. Their descriptions are in ``pitfalls.json``.

``PeekingStop`` is the lossy cousin of a confidence-stopped chain
(``specsim.schemes.adaptive``): its stop rule reads the target. It is a rule
object for any chain, judged with ``specsim.labs.judge`` (not in the lab's
table): ``tests/test_adaptive_schemes.py`` measures its exact TV.
"""
from __future__ import annotations

import math

from ..rule import RoundRule, acceptance_probability, residual
from ..transforms import greedy
from ..schemes.tree import TreeRule, without

TYPICAL_EPSILON = 0.09  # Medusa's defaults: the hard floor epsilon and the entropy factor delta
TYPICAL_DELTA = 0.3
TYPICAL_TIE = 1e-12  # the threshold is a float: p(x) must exceed it by more than this


class AcceptIfRatioAtLeastU(RoundRule):
    """Accept x when u <= p(x)/q(x), u uniform on [0, 1).

    For a continuous u, P(u <= r) = min(1, r): in exact arithmetic this is the
    correct rule, including p(x) = 0 (the event u = 0 has probability 0).
    """

    name = "accept-if-ratio-at-least-u"

    def accept(self, p, q, x):
        return acceptance_probability(p[x], q[x])


def typical_threshold(p) -> float:
    """min(epsilon, delta * exp(-H(p))), H in nats, computed in floats."""
    h = -sum(float(v) * math.log(float(v)) for v in p if v > 0)
    return min(TYPICAL_EPSILON, TYPICAL_DELTA * math.exp(-h))


class ClosesWithArgmax(RoundRule):
    """A chain rule whose closing token, after a rejection or after every draft, is p's argmax."""

    def replacement(self, p, q):
        return greedy(p)

    def bonus(self, p):
        return greedy(p)


class TypicalAcceptance(ClosesWithArgmax):
    """Medusa's typical acceptance as published (Cai et al. 2024, arXiv:2401.10774).

    Step 3 (accept): keep x when p(x) > min(eps, delta exp(-H(p))), with no coin.
    Step 4 (correct) and step 5 (bonus): the token after the accepted prefix is
    the target's argmax, whether a draft was rejected or every draft was kept
    (the paper's "greedy decoding for the first token", the reference code's
    default path). Nothing in a round is drawn from p.
    """

    name = "typical-acceptance"

    def accept(self, p, q, x):
        one = p[x] - p[x] + 1
        return one if float(p[x]) - typical_threshold(p) > TYPICAL_TIE else one - one


class TreeNoResidualUpdate(TreeRule):
    """Every child against the node's original p and q; all rejected -> a draw from p."""

    name = "tree-no-residual-update"

    def accept(self, p, q, p_cur, q_cur, x):
        return acceptance_probability(p[x], q[x])

    def update(self, p, q, p_cur, q_cur, drafts, tried):
        return list(p), (q if drafts == "iid" else without(q, tried))

    def fallback(self, p, p_cur):
        return p


class TopKTreeAsIfSampled(TreeRule):
    """Children are q's top-W tokens (deterministic) but verified as distinct samples from q."""

    name = "top-k-tree-as-if-sampled"
    drafts = "distinct"  # the drafting mode it needs (``specsim.labs.pitfalls.cases`` picks it)

    def draft_row(self, q, q_cur, drafts, tried, width):
        if drafts != "distinct":
            raise ValueError("top-k-tree-as-if-sampled drafts distinct tokens: use drafts='distinct'")
        left = [i for i in range(len(q)) if q[i] > 0 and i not in tried]
        if not left:
            return None
        return min(left, key=lambda i: (-q[i], i))  # the next most probable token: a fixed child




class PeekingStop(RoundRule):
    """Stop drafting before a draft the target dislikes: a stop rule that peeks at p.

    After drawing x from q, the drafter looks up the target's p(x); when it is
    below ``threshold`` the draft is withdrawn and the round closes with a
    token from p, as a chain that stopped just before x would (skipping the
    verification that would likely reject x). Otherwise x is verified as usual.
    In the walk's terms: x with p(x) < threshold is rejected for certain, and
    the closing token after a rejection comes from the mixture of p (for the
    withdrawn drafts) and the residual (for the rejected ones), weighted by
    their probabilities. The residual was built assuming every draft is tested,
    so the output is not p whenever some drafts are kept and others withdrawn
    (withdrawing every draft is plain sampling from p, which is exact).

    >>> from fractions import Fraction as F
    >>> rule = PeekingStop(F(1, 2))
    >>> p, q = [F(3, 5), F(3, 10), F(1, 10)], [F(1, 2), F(2, 5), F(1, 10)]
    >>> rule.accept(p, q, 1), rule.replacement(p, q)
    (Fraction(0, 1), [Fraction(3, 5), Fraction(3, 10), Fraction(1, 10)])
    """

    name = "peeking-stop"

    def __init__(self, threshold):
        self.threshold = threshold

    def withdrawn(self, p, x) -> bool:
        return p[x] < self.threshold

    def accept(self, p, q, x):
        a = acceptance_probability(p[x], q[x])
        return a - a if self.withdrawn(p, x) else a

    def replacement(self, p, q):
        gone = sum((q[x] for x in range(len(q)) if q[x] and self.withdrawn(p, x)), 0)
        tested = sum((q[x] * (1 - acceptance_probability(p[x], q[x]))
                      for x in range(len(q)) if q[x] and not self.withdrawn(p, x)), 0)
        r = residual(p, q) if tested else None
        total = gone + tested
        return [(gone * pv + (tested * r[y] if r else 0)) / total for y, pv in enumerate(p)]
