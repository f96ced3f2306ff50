"""Token-wise verification of a chain of gamma drafts (Leviathan et al. 2023; Chen et al. 2023).

One round: draft X_1..X_gamma from q, one target pass gives p at every
position, keep X_i while u_i < min(1, p_i(X_i) / q_i(X_i)), and close with
a token from the residual at the first rejection or from p after the whole
chain (the bonus). The three decisions are the ``RoundRule``'s methods
(``specsim.rule``), so a broken rule is a subclass and runs through the
same walk, exactly (``enumerate``) and sampled (``verify``).

>>> from specsim.toy import load_model
>>> r = Chain(3).enumerate(load_model("seed"), ("a",))
>>> len(r.outcomes), r.expected_tokens
(94, Fraction(1659, 500))
>>> Chain(3).name, Chain(3).parents()
('chain:3', [-1, 0, 1])
"""
from __future__ import annotations

from collections import defaultdict

from ..limits import geom
from ..rule import CORRECT, RoundRule
from .base import Param, RoundDistribution, Scheme, Verdict, draw, expected_length, nonempty, register
from .masks import lower_right_grid


def round_work(vocab_size: int, gamma: int, p_branch: int | None = None) -> int:
    """Outcomes one exact chain round enumerates with at most ``vocab_size`` drafts per position.

    Without ``p_branch``: V^(gamma + 1), the plain upper bound. With it: every
    prefix of accepted drafts (b^i of length i) emits up to ``p_branch``
    replacement or bonus tokens. (``Chain.round_work`` reads it.)
    """
    if p_branch is None:
        return vocab_size ** (gamma + 1)
    return p_branch * geom(vocab_size, gamma)




def check_gamma(gamma) -> int:
    if isinstance(gamma, bool) or not isinstance(gamma, int) or gamma < 1:
        raise ValueError(f"gamma must be an integer >= 1, got {gamma!r}")
    return gamma


class Chain(Scheme):
    """gamma drafts in a row, each checked against p in turn."""

    kind = "chain"
    params = (Param("G", "whole", "the number of drafts a round makes", metavar="G", low=1, high="gamma",
                    attr="gamma", label="γ: draft length", start=3, key="gamma"),)
    summary = "token by token"
    gpt_round = "chain"  # the tiny GPT's part of a round (specsim.gpt.rounds): fed one draft at a time, cropped
    _kernel = ("chain", 1)  # montecarlo's vectorized chain kernel (the unit of a kernel's draw cost)

    def __init__(self, gamma: int):
        self.gamma = check_gamma(gamma)
        self.drafted_tokens = self.depth = self.gamma

    @property
    def chain_gamma(self) -> int | None:
        """Its γ: chain:γ itself (a subclass changes the round or at least its name, so it is told by its name)."""
        return self.gamma if type(self) is Chain else None

    @classmethod
    def budget_schemes(cls, budget: int, settings: dict | None = None) -> list:
        """kind:1 .. kind:budget (γ drafts a round)."""
        return [cls(g) for g in range(1, budget + 1)]

    def capped(self, gamma: int) -> "Chain":
        """The same scheme with at most ``gamma`` drafts (a drafter that proposes fewer this round)."""
        return type(self)(gamma)

    def round_positions(self) -> int:
        """Positions one round may add to a cache beyond the last token: its drafts and the closing token."""
        return self.drafted_tokens + 1

    def check_window(self, window: int) -> None:
        """A one-line refusal when a round cannot fit in half a context window of ``window`` positions
        (decoding slides the window by half when it fills), before any model is loaded."""
        if self.round_positions() + 1 > window // 2:
            raise ValueError(f"{self.name} drafts {self.drafted_tokens} tokens: too many for the context window "
                             f"of {window} (a round must fit in half of it)")

    def check_rule(self, rule) -> None:
        """A one-line refusal of a rule this scheme cannot run: a chain runs the correct rule or any
        ``RoundRule`` (a pitfall, a gallery entry), never a tree's rule."""
        if rule is not CORRECT and rule is not None and not isinstance(rule, RoundRule):
            raise ValueError(f"rule {getattr(rule, 'name', rule)!r} is a tree rule; a {self.kind} takes a chain rule")

    @property
    def name(self) -> str:
        return f"{self.kind}:{self.gamma}"

    def __repr__(self):
        return f"{type(self).__name__}({self.gamma})"

    # -- layout --------------------------------------------------------------
    def parents(self) -> list:
        return [i - 1 for i in range(self.gamma)]

    def mask(self, n: int):
        """(gamma + 1, n + gamma + 1) booleans: query i sees the n cached keys and new keys 0..i."""
        return lower_right_grid(n, self.gamma)

    def positions(self, n: int) -> list:
        return list(range(n, n + self.gamma + 1))

    def ends(self, q, x) -> bool:
        """Whether drafting stops after drawing x from the drafter's row q before gamma drafts
        (never for a fixed chain; ``specsim.schemes.adaptive.ConfidenceChain`` stops on confidence)."""
        return False

    # -- exact ---------------------------------------------------------------
    def enumerate(self, pair, context, rule: RoundRule = CORRECT, limit: int | None = None) -> RoundDistribution:
        """Every outcome of one round, walking the drafts one position at a time.

        The drafts after a rejection are never looked at, so the walk stops at
        the first rejection: the same probability space as drafting all gamma
        first. With ``limit`` only the first ``limit`` emitted tokens are kept
        (the joint distribution throws the rest away); ``accepted`` and
        ``expected_tokens`` then describe the truncated round.
        """
        gamma, vocab, context = self.gamma, pair.vocab, tuple(context)
        outcomes = defaultdict(int)
        accepted = [0] * (gamma + 1)

        def emit_row(emitted, prob, row, what):
            for y, ry in enumerate(nonempty(row, rule, what)):
                if ry:
                    outcomes[emitted + (vocab[y],)] += prob * ry

        def step(emitted, prob, ended=False):
            i = len(emitted)  # drafts accepted so far
            if limit is not None and i >= limit:
                outcomes[emitted[:limit]] += prob
                return
            ctx = context + emitted
            p = pair.p(ctx)
            if i == gamma or ended:  # step 5: bonus token from the p the verify pass already computed
                accepted[i] += prob
                b = rule.bonus(p)
                if b is None:
                    outcomes[emitted] += prob
                else:
                    emit_row(emitted, prob, b, "bonus")
                return
            q = pair.q(ctx)
            rejected = 0
            for x, dx in enumerate(rule.draft_row(q)):  # step 1: draft x with probability dx
                if not dx:
                    continue
                a = rule.accept(p, q, x)  # step 3: keep x with probability a
                if a:
                    step(emitted + (vocab[x],), prob * dx * a, self.ends(q, x))
                rejected += dx * (1 - a)
            if rejected:  # step 4: first rejection at position i, replacement drawn
                accepted[i] += prob * rejected
                emit_row(emitted, prob * rejected, rule.replacement(p, q), "replacement")

        step((), 1)
        return RoundDistribution(context, gamma, dict(outcomes), accepted, expected_length(outcomes))

    # -- sampled -------------------------------------------------------------
    def draft(self, q_at, u_draft, rule: RoundRule = CORRECT) -> tuple:
        """(tokens, parents): gamma drafts, each from ``rule.draft_row(q)`` after the ones before.

        ``q_at(path)`` is the drafter's row after the drafted indices ``path``.
        """
        tokens = []
        for i in range(self.gamma):  # step 1: the drafter proposes gamma tokens
            q = q_at(tuple(tokens))
            tokens.append(draw(rule.draft_row(q), u_draft[i]))
            if self.ends(q, tokens[-1]):
                break
        return tokens, self.parents()[:len(tokens)]

    def verify(self, drafts, p_rows, q_rows, u_test, u_final, rule: RoundRule = CORRECT, parents=None) -> Verdict:
        """Steps 3-5 on the rows of one target pass (row layout of ``specsim.schemes.base``).

        Each test records ``{"node", "token", "p_x", "q_x", "acceptance", "u", "accepted"}``.
        """
        tests = []
        for i, x in enumerate(drafts):  # step 3: accept left to right while u < acceptance
            p, q = p_rows[i], q_rows[i]
            a = rule.accept(p, q, x)
            ok = u_test[i] < a
            tests.append({"node": i, "token": x, "p_x": p[x], "q_x": q[x], "acceptance": a,
                          "u": u_test[i], "accepted": ok})
            if not ok:  # step 4: the replacement
                row = nonempty(rule.replacement(p, q), rule, "replacement")
                return Verdict(list(range(i)), draw(row, u_final), "correct", row, tests)
        b = rule.bonus(p_rows[len(drafts)])  # step 5: bonus token after full acceptance
        path = list(range(len(drafts)))
        if b is None:
            return Verdict(path, None, "bonus", None, tests)
        b = nonempty(b, rule, "bonus")
        return Verdict(path, draw(b, u_final), "bonus", b, tests)

    # -- work ------------------------------------------------------------------
    def round_work(self, s) -> int:
        """Outcomes one enumerated round touches (``s``: a ``specsim.limits.Shape``)."""
        return round_work(s.branch, self.gamma, s.p_branch)

    def prefix_work(self, s, depth: int) -> int:
        """A chain's walk stops after ``depth`` kept drafts (``enumerate``'s ``limit``)."""
        return self.round_work(s) if depth >= self.depth else round_work(s.branch, depth, s.p_branch)

    def label(self) -> str:
        return f"γ = {self.gamma}" if self.chain_gamma else super().label()


register(Chain)
