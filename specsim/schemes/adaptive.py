"""Confidence-stopped chains: draft until the drafter is unsure, then verify token-wise.

``chain:max=G,stop=T`` drafts at most G tokens and stops after a draft
whose confidence is below T (0 < T < 1); ``on`` names the confidence:

* ``on=top`` (the default): the drafter's top probability max q at the
  position just drafted, the row's own certainty;
* ``on=draft``: the probability q(x) of the token x actually drafted there,
  the criterion of Hugging Face's assisted generation (transformers 5.24.0:
  ``candidate_generator.py`` passes ``assistant_confidence_threshold`` to the
  assistant's own ``generate``, whose ``utils.py`` adds ``ConfidenceCriteria``
  to its stopping criteria; ``stopping_criteria.py`` ``ConfidenceCriteria.__call__``
  stops when the probability of the last generated token is below it).

The token that fell below the threshold is still drafted and verified, as
in transformers: a stopping criterion of the assistant's ``generate`` loop
is checked after each new token, which stays in the candidates. So every
round drafts at least one token. With greedy drafting the two criteria agree (the drafted
token is the top one); with sampled drafts ``on=draft`` also stops after an
unlikely draw from a confident row.

Why the output is still exactly p: the decision to stop reads only the
drafter's rows and the drafted tokens, never the target. Conditioned on the
drafted prefix, each position is the usual min(1, p/q) test with its
residual, and a stop is an end of the chain where the bonus is drawn from p,
so the proof of a fixed chain goes through position by position. The walk
is ``Chain``'s own (``Chain.ends`` is the one hook); ``tests/test_adaptive_schemes.py``
checks it against an independent enumeration and the exact joints.

A stop rule that peeks at the target (stop when p of the draft is low) is
not a scheme: ``specsim.labs.pitfalls_tree.PeekingStopChain`` is that cousin,
and the exact engine measures its bias.

>>> from specsim.toy import load_model
>>> m = load_model("seed")
>>> s = ConfidenceChain(4, "0.45")
>>> s.name, s.depth, s.drafted_tokens
('chain:max=4,stop=0.45', 4, 4)
>>> s.enumerate(m, ("a",)).expected_tokens, drafting_cost(m, ("a",), s).drafts
(Fraction(8463, 2500), Fraction(149, 50))
>>> draft_lengths(m, ("a",), s)   # P(L = 1..4): after "b" the top probability is 0.4 < 0.45
[0, Fraction(2, 5), Fraction(11, 50), Fraction(19, 50)]
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from ..limits import LIMITS
from ..parsing import parse_number
from .base import Param, register, stop_text  # noqa: F401 (stop_text: re-exported, the grammar's form of a threshold)
from .chain import Chain

ON = ("top", "draft")  # what the threshold is compared with: the row's top probability, or the drafted token's


def check_stop(stop) -> Fraction:
    """The threshold as a Fraction strictly between 0 and 1 ("0.4", "2/5", 0.4 or a Fraction)."""
    t = parse_number(stop, "stop", digits=LIMITS.option_digits)
    if not 0 < t < 1:
        raise ValueError(f"stop must be strictly between 0 and 1, got {stop_text(t)}")
    return t


def confidence(q, x, on: str):
    """The number compared with the threshold: max q (``top``) or q(x) (``draft``)."""
    return max(q) if on == "top" else q[x]


class ConfidenceChain(Chain):
    """At most ``gamma`` drafts, stopping after the first whose confidence is below ``stop``."""

    kind = "confidence"
    keyword, form = "chain", "options"  # chain:max=G,stop=T[,on=top|draft]
    title, summary = "confidence chain", "stop drafting when the drafter is unsure"
    params = (Param("max", "whole", "the chain never drafts more than this many tokens a round", metavar="G", low=1,
                    high="gamma", attr="gamma", label="most drafts (max)", start=6, key="max"),
              Param("stop", "fraction", "stop after a draft whose confidence is below this, strictly between 0 and 1 "
                    "(0.45 or 9/20); that draft is still verified", metavar="T", attr="stop",
                    label="stop below (threshold)", start="0.45", key="stop", noun="the threshold",
                    chars=20),
              Param("on", "choice", "top: the drafter's top probability at the position; draft: q of the token "
                    "drafted (Hugging Face's assistant_confidence_threshold)", choices=ON, default="top", attr="on",
                    label="confidence", start="top", key="on"))
    _iid = False  # 1..G drafts a round: no i.i.d. formula for one γ, never shown by γ alone
    _drawn_as = "path"  # a path of its own length each round, drawn from its drafted layout
    _adaptive = True  # the drafter's confidence decides how many drafts a round makes
    round_note = (" The chain stops after the first draft whose confidence is below the threshold (that draft is "
                  "still verified), so its length differs from round to round; it is drawn as the path it drafted.")
    # no kernel: sampled one round at a time

    @classmethod
    def budget_schemes(cls, budget: int, settings: dict | None = None) -> list:
        """With ``settings`` (stop, on): a confidence chain of at most b drafts for b = 1..budget."""
        if settings is None:
            return []
        given = {p.name: p.start for p in cls.params} | settings
        return [cls(b, given["stop"], given["on"]) for b in range(1, budget + 1)]

    def __init__(self, gamma: int, stop, on: str = "top"):
        super().__init__(gamma)
        if on not in ON:
            raise ValueError(f"on must be {' or '.join(ON)}, got {str(on)[:20]!r}")
        self.stop, self.on = check_stop(stop), on

    @property
    def name(self) -> str:
        tail = "" if self.on == "top" else f",on={self.on}"
        return f"chain:max={self.gamma},stop={stop_text(self.stop)}{tail}"

    def __repr__(self):
        return f"ConfidenceChain({self.gamma}, {stop_text(self.stop)!r}, {self.on!r})"

    def ends(self, q, x) -> bool:
        return confidence(q, x, self.on) < self.stop

    def drafter_passes(self) -> None:
        return None  # its length depends on the drafter's confidence

    def settings(self) -> dict:
        return {"stop": self.stop, "on": self.on}

    def capped(self, gamma: int) -> "ConfidenceChain":
        """The same rule with at most ``gamma`` drafts (a drafter that proposes fewer this round)."""
        return ConfidenceChain(gamma, self.stop, self.on)


register(ConfidenceChain)


def draft_lengths(pair, context, scheme: ConfidenceChain) -> list:
    """[P(L = 1), ..., P(L = gamma)]: the exact law of the number of drafts L, from the drafter's rows alone."""
    vocab, law = pair.vocab, [0] * (scheme.gamma + 1)

    def walk(ctx, i, prob):
        q = pair.q(ctx)
        for x, qx in enumerate(q):
            if not qx:
                continue
            if i + 1 == scheme.gamma or scheme.ends(q, x):
                law[i + 1] += prob * qx
            else:
                walk(ctx + (vocab[x],), i + 1, prob * qx)

    walk(tuple(context), 0, 1)
    return law[1:]


@dataclass(frozen=True)
class DraftCost:
    """What one round asks of the drafter at one context, exactly: E[drafted tokens], E[drafter passes]."""

    drafts: object
    passes: object


def drafting_cost(pair, context, scheme) -> DraftCost:
    """The drafter's side of one round of any scheme at ``context``.

    A chain drafts with one drafter pass per draft (a confidence chain: the
    law of L); a tree with one pass per level, all the nodes of a level at
    once (a dynamic tree: its layout at this context, one pass per level
    it expanded, as ``specsim.gpt.tree_decode`` drafts it).

    >>> from specsim.toy import load_model
    >>> from specsim.schemes import Chain, DynamicTree, Tree
    >>> m = load_model("seed")
    >>> [drafting_cost(m, ("a",), s) for s in (Chain(3), Tree((2, 1)), DynamicTree(6, 3, 2))]
    [DraftCost(drafts=3, passes=3), DraftCost(drafts=4, passes=2), DraftCost(drafts=6, passes=3)]
    >>> drafting_cost(m, ("a",), ConfidenceChain(4, "0.45")).passes
    Fraction(149, 50)
    """
    if isinstance(scheme, ConfidenceChain):
        mean = sum((k * pr for k, pr in enumerate(draft_lengths(pair, context, scheme), start=1)), 0)
        return DraftCost(mean, mean)
    from .dynamic_tree import DynamicTree  # here: registered after the confidence chain (the grammar's order)
    if isinstance(scheme, DynamicTree):
        asked, vocab, context = set(), pair.vocab, tuple(context)

        def q_at(path):
            asked.add(len(path))
            return pair.q(context + tuple(vocab[x] for x in path))

        return DraftCost(len(scheme.layout(q_at)[0]), len(asked))
    return DraftCost(scheme.drafted_tokens, scheme.depth)


def equal_cost_chain(pair, context, drafts) -> object:
    """E[tokens per round] of fixed chains that draft ``drafts`` tokens per round on average.

    For a fractional ``drafts`` = g + f (0 <= f < 1), each round is chain:g with probability
    1 - f and chain:(g + 1) with probability f, decided before drafting (so still exact): its
    expected tokens are the same mixture of theirs. This is the fixed-γ baseline at the equal
    expected drafting cost of a confidence-stopped chain (``drafting_cost``).

    >>> from specsim.toy import load_model
    >>> m = load_model("seed")
    >>> cost = drafting_cost(m, ("a",), ConfidenceChain(6, "0.45")).drafts
    >>> cost, equal_cost_chain(m, ("a",), cost) < ConfidenceChain(6, "0.45").enumerate(m, ("a",)).expected_tokens
    (Fraction(8513, 2500), True)
    """
    g = int(drafts)
    if not 1 <= g <= LIMITS.gamma or (g == LIMITS.gamma and drafts > g):
        raise ValueError(f"expected drafts must be from 1 to {LIMITS.gamma}, got {drafts}")
    f = drafts - g
    low = Chain(g).enumerate(pair, context).expected_tokens
    return low if not f else (1 - f) * low + f * Chain(g + 1).enumerate(pair, context).expected_tokens
