"""Sampled rounds: a seeded, fully recorded trace of one round or of a whole generation.

A round is played on uniforms drawn from ``numpy.random.default_rng(seed)``,
always in the same layout: gamma uniforms for the drafts, gamma uniforms u
for the acceptance tests, one uniform for the final draw (replacement or
bonus). So the same seed gives the same round, and round ``j`` of a
generation uses the ``j``-th block of 2 * gamma + 1 uniforms.

``play_round`` is the round, written once for sampling; it calls the
``RoundRule`` methods (``specsim.rule``), the same ones the exact engine
calls, so a broken rule from ``specsim.pitfalls`` is sampled exactly as it is
enumerated. ``trace_round`` runs it on exact rows and records everything;
``specsim.montecarlo.sample_rounds_loop`` runs it once per round on float
rows (the plain Python baseline); ``specsim.montecarlo.sample_rounds`` is the same
correct rule in vectorized numpy form.

The traces (``RoundTrace``, ``GenerationTrace``) and their JSON events are
a public format, described field by field in ``specsim/TRACE_FORMAT.md``.

Example
-------
>>> from specsim.toy import load_model
>>> t = trace_round(load_model("seed"), ("a",), gamma=3, seed=0)
>>> [e["kind"] for e in t.events()]
['draft', 'draft', 'draft', 'verify', 'accept', 'reject', 'correct', 'emit']
>>> t.drafts, t.acceptance, t.replacement_row
(('b', 'a', 'a'), [Fraction(3, 4), Fraction(1, 2)], (Fraction(0, 1), Fraction(1, 1), Fraction(0, 1)))
>>> t.emitted, t.accepted, t.accepted_flags, t.replacement, t.bonus
(('b', 'b'), 1, [True, False], 'b', None)
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from .rule import CORRECT, RoundRule


# -- the round, once ---------------------------------------------------------
def draw(row, u):
    """Inverse-CDF draw: the first token whose cumulative probability exceeds u.

    Zero entries are never chosen; if rounding leaves u above the total, the
    last token with positive probability is returned. Exact for Fraction rows
    (Python compares a float u with a Fraction exactly).
    """
    total, last = 0, None
    for j, v in enumerate(row):
        if v > 0:
            total = total + v
            last = j
            if u < total:
                return j
    if last is None:
        raise ValueError("cannot draw from a row with no positive entry")
    return last


def play_round(rows, step, state, gamma: int, rule: RoundRule, u_draft, u_accept, u_final):
    """Steps 1-5 of one round on pre-drawn uniforms.

    ``rows(state) -> (p, q)`` gives the rows at a state, ``step(state, x)``
    the state after token index x. Returns ``(states, drafts, accepted,
    closing)``: the gamma + 1 states visited, the gamma drafted indices, K, and
    the closing token's index, the replacement or the bonus (None when the
    rule gives no bonus).
    """
    states, drafts = [state], []
    for i in range(gamma):  # step 1: the drafter proposes gamma tokens
        x = draw(rule.draft_row(rows(states[i])[1]), u_draft[i])
        drafts.append(x)
        states.append(step(states[i], x))
    # step 2: verify. rows(state) gives p at all gamma + 1 states: one target pass.
    for i in range(gamma):  # step 3: accept left to right while u < acceptance
        p, q = rows(states[i])
        if not u_accept[i] < rule.accept(p, q, drafts[i]):
            return states, drafts, i, draw(rule.replacement(p, q), u_final)  # step 4: correct
    b = rule.bonus(rows(states[gamma])[0])  # step 5: bonus token after full acceptance
    return states, drafts, gamma, (None if b is None else draw(b, u_final))


def make_rng(seed):
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


# -- traces ------------------------------------------------------------------
def _num(x):
    if isinstance(x, (Fraction, int)) and not isinstance(x, bool):
        return str(Fraction(x))
    return float(x)


def _row(row):
    return [_num(x) for x in row]


@dataclass
class RoundTrace:
    """Everything that happened in one sampled round (see ``specsim/TRACE_FORMAT.md``)."""

    context: tuple
    gamma: int
    rule: str
    vocab: tuple
    drafts: tuple  # gamma drafted tokens (those after a rejection are discarded)
    q_rows: list  # q at each draft position
    draft_rows: list  # the rows drafts were drawn from (== q_rows for the correct rule)
    p_rows: list  # p at positions 0..gamma (the verify pass)
    u: list  # acceptance uniforms for positions 0..gamma-1
    acceptance: list  # rule.accept at each examined position
    accepted: int  # K
    replacement_row: tuple | None  # rule.replacement(p, q) at the rejection (the residual for CORRECT)
    closing_token: str | None  # the replacement (K < gamma) or the bonus (K == gamma) token
    emitted: tuple
    target_passes: int = 1

    @property
    def accepted_flags(self) -> list:
        """For each examined draft: True if kept (K Trues, then one False unless K == gamma)."""
        return [i < self.accepted for i in range(len(self.acceptance))]

    @property
    def replacement(self) -> str | None:
        """The token drawn from ``replacement_row`` after a rejection (None without one)."""
        return self.closing_token if self.accepted < self.gamma else None

    @property
    def bonus(self) -> str | None:
        """The token drawn from p after full acceptance (None otherwise, or if the rule gives none)."""
        return self.closing_token if self.accepted == self.gamma else None

    @property
    def kinds(self) -> list:
        """For each emitted token: "draft" (accepted draft), "correct" or "bonus"."""
        tail = [] if self.closing_token is None else ["correct" if self.accepted < self.gamma else "bonus"]
        return ["draft"] * self.accepted + tail

    def events(self) -> list:
        out = []
        for i, x in enumerate(self.drafts):
            e = {"kind": "draft", "position": i, "context": list(self.context + self.drafts[:i]),
                 "token": x, "q": _row(self.q_rows[i])}
            if tuple(self.draft_rows[i]) != tuple(self.q_rows[i]):
                e["draft_row"] = _row(self.draft_rows[i])
            out.append(e)
        out.append({"kind": "verify", "p": [_row(r) for r in self.p_rows]})
        index = {t: j for j, t in enumerate(self.vocab)}
        for i, a in enumerate(self.acceptance):
            x = index[self.drafts[i]]
            out.append({"kind": "accept" if i < self.accepted else "reject", "position": i,
                        "token": self.drafts[i], "p_x": _num(self.p_rows[i][x]),
                        "q_x": _num(self.q_rows[i][x]), "acceptance": _num(a), "u": self.u[i]})
        if self.accepted < self.gamma:
            out.append({"kind": "correct", "position": self.accepted, "row": _row(self.replacement_row),
                        "token": self.closing_token, "discarded": list(self.drafts[self.accepted + 1:])})
        elif self.closing_token is not None:
            out.append({"kind": "bonus", "position": self.gamma, "p": _row(self.p_rows[self.gamma]),
                        "token": self.closing_token})
        out.append({"kind": "emit", "tokens": list(self.emitted), "accepted": self.accepted,
                    "target_passes": self.target_passes})
        return out

    def to_dict(self) -> dict:
        return {"context": list(self.context), "gamma": self.gamma, "rule": self.rule,
                "vocab": list(self.vocab), "drafts": list(self.drafts), "accepted": self.accepted,
                "emitted": list(self.emitted), "kinds": self.kinds,
                "target_passes": self.target_passes, "events": self.events()}


def trace_round(models, context, gamma: int, seed=None, rule: RoundRule = CORRECT) -> RoundTrace:
    """Play one round from ``context`` and record it; same seed, same trace.

    ``seed`` is an int (or None) for a fresh ``default_rng`` or a Generator to
    continue (as ``generate`` does). Rows are the model's own (Fractions for a
    toy model), so every recorded probability is exact.
    """
    if gamma < 1:
        raise ValueError(f"gamma must be >= 1, got {gamma}")
    rng = make_rng(seed)
    vocab, context = tuple(models.vocab), tuple(context)
    u_draft, u_accept, u_final = rng.random(gamma), rng.random(gamma), rng.random()

    def rows(ctx):
        return models.p(ctx), models.q(ctx)

    states, drafts, k, closing = play_round(rows, lambda c, x: c + (vocab[x],), context, gamma,
                                          rule, u_draft, u_accept, u_final)
    p_rows = [tuple(models.p(s)) for s in states]
    q_rows = [tuple(models.q(s)) for s in states[:gamma]]
    examined = min(k + 1, gamma)
    acceptance = [rule.accept(p_rows[i], q_rows[i], drafts[i]) for i in range(examined)]
    replacement_row = tuple(rule.replacement(p_rows[k], q_rows[k])) if k < gamma else None
    tokens = tuple(vocab[x] for x in drafts)
    closing_token = None if closing is None else vocab[closing]
    emitted = tokens[:k] + (() if closing_token is None else (closing_token,))
    return RoundTrace(context, gamma, rule.name, vocab, tokens, q_rows,
                      [tuple(rule.draft_row(q)) for q in q_rows], p_rows,
                      [float(u) for u in u_accept[:examined]], acceptance, k, replacement_row,
                      closing_token, emitted)


@dataclass
class GenerationTrace:
    """Rounds chained until at least ``n_tokens`` tokens are emitted.

    ``tokens`` keeps every token of every round (the last round may overshoot
    ``n_tokens``; ``output`` is the first ``n_tokens``). One target pass per round.
    """

    context: tuple
    gamma: int
    n_tokens: int
    rule: str
    rounds: list = field(default_factory=list)

    @property
    def tokens(self) -> tuple:
        return tuple(t for r in self.rounds for t in r.emitted)

    @property
    def output(self) -> tuple:
        return self.tokens[:self.n_tokens]

    @property
    def target_passes(self) -> int:
        return sum(r.target_passes for r in self.rounds)

    @property
    def tokens_per_pass(self) -> Fraction:
        return Fraction(len(self.tokens), self.target_passes)

    def running_totals(self) -> list:
        """After each round: {"tokens": emitted so far, "target_passes": passes so far}."""
        totals, tokens, passes = [], 0, 0
        for r in self.rounds:
            tokens, passes = tokens + len(r.emitted), passes + r.target_passes
            totals.append({"tokens": tokens, "target_passes": passes})
        return totals

    def to_dict(self) -> dict:
        rounds = []
        for r, total in zip(self.rounds, self.running_totals()):
            d = r.to_dict()
            d["tokens_so_far"], d["target_passes_so_far"] = total["tokens"], total["target_passes"]
            rounds.append(d)
        return {"context": list(self.context), "gamma": self.gamma, "tokens": self.n_tokens,
                "rule": self.rule, "output": list(self.output), "emitted": list(self.tokens),
                "kinds": [k for r in self.rounds for k in r.kinds],
                "target_passes": self.target_passes,
                "tokens_per_pass": str(self.tokens_per_pass), "rounds": rounds}


def generate(models, context, gamma: int, n_tokens: int, seed=None,
             rule: RoundRule = CORRECT) -> GenerationTrace:
    """Chain seeded rounds from ``context`` until ``n_tokens`` tokens are out."""
    if n_tokens < 1:
        raise ValueError(f"the number of tokens must be >= 1, got {n_tokens}")
    rng = make_rng(seed)
    trace = GenerationTrace(tuple(context), gamma, n_tokens, rule.name)
    ctx = tuple(context)
    while len(trace.tokens) < n_tokens:
        r = trace_round(models, ctx, gamma, rng, rule)
        trace.rounds.append(r)
        ctx = ctx + r.emitted
    return trace


def plain_generate(models, context, n_tokens: int, seed=None) -> tuple:
    """Plain decoding from p, one token per target pass (the baseline to compare with)."""
    rng = make_rng(seed)
    vocab, ctx = tuple(models.vocab), tuple(context)
    out = ()
    for _ in range(n_tokens):
        y = vocab[draw(models.p(ctx + out), rng.random())]
        out = out + (y,)
    return out
