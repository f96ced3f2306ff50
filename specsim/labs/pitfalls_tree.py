"""Lossy cousins of tree and chain verification, as rule objects for ``specsim.labs.pitfalls``.

Chain rules (``RoundRule``): ``accept-if-ratio-at-least-u`` and Medusa's
``typical-acceptance``. Tree rules (``specsim.schemes.tree.TreeRule``), run by a
``specsim.schemes.tree.Tree`` scheme: ``tree-no-residual-update`` and
``top-k-tree-as-if-sampled``. Their descriptions are in ``pitfalls.json``.
"""
from __future__ import annotations

import math

from ..rule import RoundRule, acceptance_probability
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


class TypicalAcceptance(RoundRule):
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

    def replacement(self, p, q):
        return greedy(p)

    def bonus(self, p):
        return greedy(p)


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


