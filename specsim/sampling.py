"""Sampled rounds: a seeded, fully recorded trace of one round or of a whole generation.

A round of any scheme (``specsim.schemes``) is played the same way: the
drafter drafts the whole layout (``scheme.draft``), one target pass gives p
at the root and after every draft, and ``scheme.verify`` decides, on plain
Python numbers. The uniforms come from ``numpy.random.default_rng(seed)``
in one layout: one uniform per drafted token to draw it, one per drafted
token for its test, one for the closing token (for a chain of gamma:
gamma, gamma, 1). So the same seed gives the same round, and round ``j`` of
a generation uses the ``j``-th block of uniforms.

The rule's decisions are the ``RoundRule`` (or ``TreeRule``) methods, the
same ones the exact engine calls, so a broken rule from
``specsim.labs.pitfalls`` is sampled exactly as it is enumerated.
``specsim.montecarlo`` plays many rounds with the same ``play``.

The traces (``RoundTrace``, ``GenerationTrace``) and their JSON events are
a public format, described field by field in ``specsim/TRACE_FORMAT.md``.

Example
-------
>>> from specsim.toy import load_model
>>> t = trace_round(load_model("seed"), ("a",), Chain(3), seed=0)
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
from .schemes import Chain, as_scheme
from .schemes.base import Verdict, draw

__all__ = ["draw", "make_rng", "play", "Played", "uniforms", "trace_round", "RoundTrace", "generate",
           "GenerationTrace", "plain_generate", "num", "row_json"]


TRACE_FORMAT = 2  # the version of the JSON below (specsim/TRACE_FORMAT.md, "Format version")


def make_rng(seed):
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def uniforms(rng, scheme) -> tuple:
    """(u_draft, u_test, u_final) for one round of ``scheme``: n, n and 1 uniforms (n drafted tokens)."""
    n = scheme.drafted_tokens
    return rng.random(n).tolist(), rng.random(n).tolist(), float(rng.random())


# -- the round, once ---------------------------------------------------------
@dataclass
class Played:
    """One sampled round: the drafted layout, the rows of the verify pass, the uniforms, the verdict.

    Token indices throughout. ``p_rows[0]``/``q_rows[0]`` are the rows at the
    root, ``p_rows[j + 1]``/``q_rows[j + 1]`` after draft node j (a leaf's q
    row is ``None``: never read).
    """

    drafts: list
    parents: list
    p_rows: list
    q_rows: list
    u_draft: list
    u_test: list
    u_final: float
    verdict: Verdict

    def path_of(self, node: int) -> tuple:
        """The drafted indices from the root down to ``node`` (inclusive)."""
        out = []
        while node != -1:
            out.append(self.drafts[node])
            node = self.parents[node]
        return tuple(reversed(out))

    @property
    def emitted(self) -> tuple:
        """Indices: the accepted drafts, then the closing token (if any)."""
        kept = tuple(self.drafts[j] for j in self.verdict.path)
        return kept if self.verdict.closing is None else kept + (self.verdict.closing,)


def play(rows, scheme, rule, u_draft, u_test, u_final) -> Played:
    """Draft, one verify pass, decide: one round of ``scheme`` on pre-drawn uniforms.

    ``rows(path) -> (p, q)`` gives the rows after the drafted indices ``path``
    (a tuple; ``()`` is the context).
    """
    drafts, parents = scheme.draft(lambda path: rows(path)[1], u_draft, rule)  # step 1
    has_child = set(parents)
    paths = [()]
    for j in range(len(drafts)):
        paths.append(paths[parents[j] + 1] + (drafts[j],))
    pq = [rows(path) for path in paths]  # step 2: one target pass scores every node
    p_rows = [p for p, _ in pq]
    q_rows = [q if j - 1 in has_child or j == 0 else None for j, (_, q) in enumerate(pq)]
    verdict = scheme.verify(drafts, p_rows, q_rows, u_test, u_final, rule, parents=parents)  # steps 3-5
    return Played(drafts, parents, p_rows, q_rows, list(u_draft), list(u_test), u_final, verdict)


# -- traces ------------------------------------------------------------------
def num(x):
    """A probability for JSON: a fraction string when exact, else a float."""
    if isinstance(x, (Fraction, int)) and not isinstance(x, bool):
        return str(Fraction(x))
    return float(x)


def row_json(row):
    return None if row is None else [num(x) for x in row]


@dataclass
class RoundTrace:
    """Everything that happened in one sampled round of any scheme (see ``specsim/TRACE_FORMAT.md``).

    Tokens are vocabulary strings; ``played`` keeps the indices, rows and
    uniforms. For a chain the fields below read as in the papers: ``drafts``
    the gamma drafted tokens, ``q_rows`` q at each draft position, ``p_rows``
    p at positions 0..gamma (the verify pass).
    """

    context: tuple
    scheme: object
    rule: str
    vocab: tuple
    played: Played
    draft_rows: list  # the rows each node was drawn from (== its parent's q for the correct rule)
    target_passes: int = 1

    # -- the summary ---------------------------------------------------------
    @property
    def gamma(self) -> int:
        return self.scheme.depth

    @property
    def drafts(self) -> tuple:
        return tuple(self.vocab[x] for x in self.played.drafts)

    @property
    def parents(self) -> list:
        return list(self.played.parents)

    @property
    def p_rows(self) -> list:
        return [tuple(r) for r in self.played.p_rows]

    @property
    def q_rows(self) -> list:
        """q at each node with children (for a chain: at draft positions 0..gamma-1)."""
        return [tuple(r) for r in self.played.q_rows if r is not None]

    @property
    def verdict(self) -> Verdict:
        return self.played.verdict

    @property
    def accepted(self) -> int:
        """K: the drafts kept (a block's τ, a tree's accepted depth)."""
        return self.verdict.accepted

    @property
    def acceptance(self) -> list:
        """The number each test compared its uniform with (min(1, p/q), a broken rule's, a block's h)."""
        return [t["h"] if "h" in t else t["acceptance"] for t in self.verdict.tests]

    @property
    def u(self) -> list:
        return [float(t["u"]) for t in self.verdict.tests]

    @property
    def accepted_flags(self) -> list:
        """For each test: True if it passed (a chain: K Trues, then one False unless K == gamma)."""
        return [bool(t["stop"] if "stop" in t else t["accepted"]) for t in self.verdict.tests]

    @property
    def closing_token(self) -> str | None:
        c = self.verdict.closing
        return None if c is None else self.vocab[c]

    @property
    def replacement_row(self) -> tuple | None:
        """The row the closing token was drawn from after a rejection (None after full acceptance)."""
        v = self.verdict
        return tuple(v.closing_row) if v.closing_kind == "correct" else None

    @property
    def replacement(self) -> str | None:
        return self.closing_token if self.verdict.closing_kind == "correct" else None

    @property
    def bonus(self) -> str | None:
        return self.closing_token if self.verdict.closing_kind == "bonus" else None

    @property
    def emitted(self) -> tuple:
        return tuple(self.vocab[x] for x in self.played.emitted)

    @property
    def kinds(self) -> list:
        """For each emitted token: "draft" (accepted draft), "correct" or "bonus"."""
        tail = [] if self.closing_token is None else [self.verdict.closing_kind]
        return ["draft"] * self.accepted + tail

    # -- events --------------------------------------------------------------
    def events(self) -> list:
        """The round as JSON-ready events in the order things happen (``specsim/TRACE_FORMAT.md``)."""
        pl, v, vocab = self.played, self.verdict, self.vocab
        out = []
        for j, x in enumerate(pl.drafts):  # step 1: every draft, before any verification
            parent = pl.parents[j]
            e = {"kind": "draft", "node": j, "parent": parent, "position": len(pl.path_of(j)) - 1,
                 "context": list(self.context) + [vocab[t] for t in pl.path_of(j)[:-1]],
                 "token": vocab[x], "q": row_json(pl.q_rows[parent + 1])}
            if self.draft_rows[j] is not None and tuple(self.draft_rows[j]) != tuple(pl.q_rows[parent + 1]):
                e["draft_row"] = row_json(self.draft_rows[j])
            out.append(e)
        out.append({"kind": "verify", "p": [row_json(r) for r in pl.p_rows]})  # step 2
        if "w" in v.extra:  # a block: the weights, then one stop coin per position
            out.append({"kind": "weights", "w": row_json(v.extra["w"])})
            for t in v.tests:
                out.append({"kind": "stop", "node": t["node"], "position": t["node"] + 1, "h": num(t["h"]),
                            "u": float(t["u"]), "stop": bool(t["stop"])})
        else:
            for t in v.tests:  # step 3: each test, accept or reject
                e = {"kind": "accept" if t["accepted"] else "reject", "node": t["node"],
                     "parent": t.get("parent", t["node"] - 1), "position": t.get("depth", t["node"]),
                     "token": vocab[t["token"]], "p_x": num(t["p_x"]), "q_x": num(t["q_x"]),
                     "acceptance": num(t["acceptance"]), "u": float(t["u"])}
                out.append(e)
                if "p_next" in t:  # a tree: the rows the next sibling is tried against
                    out.append({"kind": "update", "node": t["node"], "position": t["depth"],
                                "p": row_json(t["p_next"]), "q": row_json(t["q_next"])})
        k = v.accepted
        kept = set(v.path)
        if v.closing is not None and v.closing_kind == "correct":  # step 4
            out.append({"kind": "correct", "position": k, "row": row_json(v.closing_row),
                        "token": self.closing_token,
                        "discarded": [vocab[pl.drafts[j]] for j in self.scheme.discarded_drafts(kept, k, len(pl.drafts))]})
        elif v.closing is not None:  # step 5
            out.append({"kind": "bonus", "position": k, "p": row_json(v.closing_row), "token": self.closing_token})
        out.append({"kind": "emit", "tokens": list(self.emitted), "accepted": k,
                    "target_passes": self.target_passes})
        return out

    def to_dict(self) -> dict:
        return {"trace_format": TRACE_FORMAT, "context": list(self.context), "scheme": self.scheme.name,
                "gamma": self.gamma, "rule": self.rule, "vocab": list(self.vocab), "drafts": list(self.drafts),
                "parents": self.parents, "accepted": self.accepted, "emitted": list(self.emitted),
                "kinds": self.kinds, "target_passes": self.target_passes, "events": self.events()}


def trace_round(pair, context, scheme, seed=None, rule: RoundRule = CORRECT) -> RoundTrace:
    """Play one round of ``scheme`` from ``context`` and record it; same seed, same trace.

    ``scheme``: a ``specsim.schemes`` value (an int G is ``Chain(G)``).
    ``seed`` is an int (or None) for a fresh ``default_rng`` or a Generator to
    continue (as ``generate`` does). Rows are the model's own (Fractions for a
    toy model), so every recorded probability is exact.
    """
    scheme = as_scheme(scheme)
    rng = make_rng(seed)
    vocab, context = tuple(pair.vocab), tuple(context)

    def rows(path):
        ctx = context + tuple(vocab[x] for x in path)
        return pair.p(ctx), pair.q(ctx)

    played = play(rows, scheme, rule, *uniforms(rng, scheme))
    draft_rows = []
    for j in range(len(played.drafts)):
        q = played.q_rows[played.parents[j] + 1]
        draft_rows.append(tuple(rule.draft_row(q)) if isinstance(rule, RoundRule) else None)
    return RoundTrace(context, scheme, rule.name, vocab, played, draft_rows)


@dataclass
class GenerationTrace:
    """Rounds chained until at least ``n_tokens`` tokens are emitted.

    ``tokens`` keeps every token of every round (the last round may overshoot
    ``n_tokens``; ``output`` is the first ``n_tokens``). One target pass per round.
    """

    context: tuple
    scheme: object
    n_tokens: int
    rule: str
    rounds: list = field(default_factory=list)

    @property
    def gamma(self) -> int:
        return self.scheme.depth

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
        return {"trace_format": TRACE_FORMAT, "context": list(self.context), "scheme": self.scheme.name,
                "gamma": self.gamma, "tokens": self.n_tokens, "rule": self.rule, "output": list(self.output),
                "emitted": list(self.tokens), "kinds": [k for r in self.rounds for k in r.kinds],
                "target_passes": self.target_passes,
                "tokens_per_pass": str(self.tokens_per_pass), "rounds": rounds}


def generate(pair, context, scheme, n_tokens: int, seed=None, rule: RoundRule = CORRECT) -> GenerationTrace:
    """Chain seeded rounds of ``scheme`` from ``context`` until ``n_tokens`` tokens are out."""
    if n_tokens < 1:
        raise ValueError(f"the number of tokens must be >= 1, got {n_tokens}")
    scheme = as_scheme(scheme)
    rng = make_rng(seed)
    trace = GenerationTrace(tuple(context), scheme, n_tokens, rule.name)
    ctx = tuple(context)
    while len(trace.tokens) < n_tokens:
        r = trace_round(pair, ctx, scheme, rng, rule)
        trace.rounds.append(r)
        ctx = ctx + r.emitted
    return trace


def plain_generate(pair, context, n_tokens: int, seed=None) -> tuple:
    """Plain decoding from p, one token per target pass (the baseline to compare with)."""
    rng = make_rng(seed)
    vocab, ctx = tuple(pair.vocab), tuple(context)
    out = ()
    for _ in range(n_tokens):
        y = vocab[draw(pair.p(ctx + out), rng.random())]
        out = out + (y,)
    return out
