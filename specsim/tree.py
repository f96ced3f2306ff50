"""Multi-draft tree verification: a tree of drafts checked in one target pass.

A tree of shape (W1, ..., Wd): the root has W1 children, each of them W2
children, and so on; a chain of gamma drafts is the shape (1,) * gamma.
Children of a node are drafted from the drafter's row q at that node, either
``iid`` (with replacement) or ``distinct`` (without replacement: each next
child from q with the tokens already drafted removed and renormalized).

Verification walks down from the root. At a node with target row p it tries
the children in order, keeping a current pair (p', q'), first (p, q):

* child x is accepted with ``child_acceptance(p', q', x)`` = min(1, p'(x)/q'(x));
  the walk then descends into x (its subtree's drafts are used);
* after a rejection ``p' <- residual_update(p', q')`` = normalize(max(0, p' - q'))
  and, for distinct drafts, ``q' <- without(q, tried tokens)``; for i.i.d.
  drafts q' stays q and every child is drawn from the original q;
* when every child is rejected one token is drawn from the current p' and
  the round ends; at a leaf (depth d) a bonus token is drawn from p.

The per-node step is written once (the three functions below) and used by
the exact enumeration (``Tree.round_distribution``, a ``specsim.exact.Scheme``)
and by the seeded sampler (``Tree.sample_round``).

Example
-------
>>> from specsim.toy import load_model
>>> from specsim import exact
>>> m = load_model("seed")
>>> exact.round_distribution(m, ("a",), Tree((1, 1, 1))).outcomes == \\
...     exact.round_distribution(m, ("a",), 3).outcomes
True
>>> all(c.exact for c in exact.check_exactness(m, 2, [Tree((2, 1), "distinct")]))
True
"""
from __future__ import annotations

from collections import defaultdict

from .bounds import LIMITS, parse_whole
from .exact import RoundDistribution
from .rule import CORRECT, acceptance_probability, residual

DRAFTS = ("iid", "distinct")


# -- the per-node step, written once -------------------------------------------
def child_acceptance(p_cur, q_cur, x):
    """min(1, p'(x) / q'(x)) for the child x tried against the current rows."""
    return acceptance_probability(p_cur[x], q_cur[x])


def residual_update(p_cur, q_cur):
    """p' after a rejected child: normalize(max(0, p' - q')); None when p' <= q' (no rejection)."""
    return residual(p_cur, q_cur)


def without(q, tried):
    """q with the ``tried`` tokens (indices) removed and renormalized; None when nothing is left."""
    kept = [(v - v) if i in tried else v for i, v in enumerate(q)]
    mass = sum(kept[1:], kept[0])
    if not mass > 0:
        return None
    return [v / mass for v in kept]


class TreeRule:
    """How a node verifies its children; ``CORRECT_TREE`` is the exact rule.

    Lossy variants (``specsim.pitfalls``) override a method: ``children`` (the
    draft row of the next child, or a deterministic token), ``accept``,
    ``update`` (the rows after a rejection) and ``fallback`` (the row the
    token is drawn from when every child is rejected).
    """

    name = "correct"

    def draft_row(self, q, q_cur, drafts, tried, width):
        """Row the next child is drawn from (i.i.d.: the original q; distinct: q')."""
        return q if drafts == "iid" else q_cur

    def accept(self, p, q, p_cur, q_cur, x):
        return child_acceptance(p_cur, q_cur, x)

    def update(self, p, q, p_cur, q_cur, drafts, tried):
        """(p', q') after the child tried last was rejected; ``tried`` includes it."""
        p_next = residual_update(p_cur, q_cur)
        q_next = q if drafts == "iid" else without(q, tried)
        return p_next, q_next

    def fallback(self, p, p_cur):
        return p_cur


CORRECT_TREE = TreeRule()


def parse_shape(text) -> tuple:
    """'2,2,1' -> (2, 2, 1), with a one-line ValueError for a bad tree."""
    parts = str(text).split(",")
    widths = []
    for part in parts:
        part = part.strip()
        if not part:
            raise ValueError(f"tree {text!r}: empty width (write widths like 2,2,1)")
        w = parse_whole(part, f"tree {str(text)[:40]!r}: width", noun="a whole number")  # ASCII digits only
        if w < 1:
            raise ValueError(f"tree {text!r}: every width must be >= 1, got {w}")
        widths.append(w)
    return check_shape(widths)


def check_shape(widths) -> tuple:
    widths = tuple(int(w) for w in widths)
    if not widths:
        raise ValueError("a tree needs at least one level of drafts")
    if any(w < 1 for w in widths):
        raise ValueError(f"tree {list(widths)}: every width must be >= 1")
    if len(widths) > LIMITS.gamma:
        raise ValueError(f"tree depth {len(widths)} is above the limit {LIMITS.gamma}: lower the depth")
    n = drafted(widths)
    if n > LIMITS.gamma:
        raise ValueError(f"tree {','.join(map(str, widths))} drafts {n:,} tokens; the limit is "
                         f"{LIMITS.gamma}: lower the widths or the depth")
    return widths


def drafted(widths) -> int:
    """W1 + W1*W2 + ... : the tokens a tree of this shape drafts."""
    total, level = 0, 1
    for w in widths:
        level *= w
        total += level
        if total > 10**9:
            break
    return total


class Tree:
    """A draft tree shape and drafting mode: a verification scheme for ``specsim.exact``."""

    def __init__(self, shape, drafts: str = "iid"):
        if drafts not in DRAFTS:
            raise ValueError(f"drafts must be one of {', '.join(DRAFTS)}, got {drafts!r}")
        self.shape = check_shape(shape)
        self.drafts = drafts
        self.depth = len(self.shape)
        self.drafted_tokens = drafted(self.shape)
        self.name = f"tree {','.join(map(str, self.shape))} {drafts}"

    @classmethod
    def parse(cls, text, drafts: str = "iid") -> "Tree":
        return cls(parse_shape(text), drafts)

    def __repr__(self):
        return f"<Tree {self.name}>"

    def _tree_rule(self, rule):
        if rule is CORRECT or rule is None:
            return CORRECT_TREE
        if isinstance(rule, TreeRule):
            return rule
        raise ValueError(f"rule {getattr(rule, 'name', rule)!r} is a chain rule; a tree takes the "
                         "correct rule or a tree rule")

    # -- exact ---------------------------------------------------------------
    def round_distribution(self, models, context, rule=CORRECT, limit=None) -> RoundDistribution:
        """Every outcome of one tree round with its exact probability.

        Only the subtree of an accepted child is enumerated: the drafts under
        rejected children never reach the output. Rejected i.i.d. children
        all lead to the same (p', q'), so their mass is pooled; distinct ones
        are pooled by (p', tried set). With ``limit`` only the first ``limit``
        emitted tokens are kept (``accepted``/``expected_tokens`` then describe
        the truncated round).
        """
        tr = self._tree_rule(rule)
        vocab, depth = models.vocab, self.depth
        context = tuple(context)
        outcomes = defaultdict(int)
        accepted = [0] * (depth + 1)

        def emit_row(emitted, prob, row, what):
            if row is None or not any(v > 0 for v in row):
                raise ValueError(f"rule {tr.name!r}: the {what} row has no positive entry")
            for y, ry in enumerate(row):
                if ry:
                    outcomes[emitted + (vocab[y],)] += prob * ry

        def node(emitted, prob):
            i = len(emitted)
            if limit is not None and i >= limit:
                outcomes[emitted[:limit]] += prob
                return
            ctx = context + emitted
            p = models.p(ctx)
            if i == depth:
                accepted[depth] += prob
                emit_row(emitted, prob, p, "bonus")
                return
            q = models.q(ctx)
            width = self.shape[i]
            descend = defaultdict(int)  # accepted child -> probability (pooled over child index)
            states = {(tuple(p), tuple(q), ()): prob}  # (p', q', tried) -> probability
            for _ in range(width):
                nxt = defaultdict(int)
                for (p_cur, q_cur, tried), pr in states.items():
                    row = tr.draft_row(q, q_cur, self.drafts, tried, width)
                    if row is None:  # distinct drafts ran out of tokens: the node ends
                        nxt[(p_cur, q_cur, tried)] += pr
                        continue
                    draws = [(row, 1)] if isinstance(row, int) else enumerate(row)  # int: a fixed child
                    for x, dx in draws:
                        if not dx:
                            continue
                        a = tr.accept(p, q, p_cur, q_cur, x)
                        if a:
                            descend[x] += pr * dx * a
                        if a != 1:
                            t = tried + (x,) if self.drafts == "distinct" else tried
                            pn, qn = tr.update(p, q, p_cur, q_cur, self.drafts, set(t))
                            nxt[(tuple(pn), None if qn is None else tuple(qn), t)] += pr * dx * (1 - a)
                states = nxt
            for (p_cur, _q, _t), pr in states.items():  # every child rejected
                if pr:
                    accepted[i] += pr
                    emit_row(emitted, pr, tr.fallback(p, list(p_cur)), "fallback")
            for x, pr in descend.items():
                node(emitted + (vocab[x],), pr)

        node((), 1)
        expected = sum((len(t) * pr for t, pr in outcomes.items()), 0)
        return RoundDistribution(context, depth, dict(outcomes), accepted, expected)

    # -- sampled -------------------------------------------------------------
    def sample_round(self, models, context, rng, rule=CORRECT, events=None):
        """One seeded tree round: (emitted tokens, K). ``rng``: a numpy Generator.

        ``events``, when a list, receives the steps of the walk as dicts
        (``draft``, ``accept``/``reject``, ``update``, ``fallback``/``bonus``;
        see ``specsim/TRACE_FORMAT.md``).
        """
        from .sampling import _num, _row, draw
        tr = self._tree_rule(rule)
        vocab = models.vocab
        emitted = ()
        for i in range(self.depth + 1):
            ctx = tuple(context) + emitted
            p = models.p(ctx)
            if i == self.depth:
                y = draw(p, rng.random())
                _log(events, "bonus", i, vocab[y], row=_row(p))
                return emitted + (vocab[y],), i
            q = models.q(ctx)
            p_cur, q_cur, tried, child = list(p), list(q), (), None
            for j in range(self.shape[i]):
                row = tr.draft_row(q, q_cur, self.drafts, tried, self.shape[i])
                if row is None:
                    break
                x = row if isinstance(row, int) else draw(row, rng.random())
                a = tr.accept(p, q, p_cur, q_cur, x)
                u = rng.random()
                _log(events, "draft", i, vocab[x], child=j, context=list(ctx),
                     q=None if isinstance(row, int) else _row(row))
                test = {"child": j, "p_x": _num(p_cur[x]), "q_x": _num(q_cur[x]), "acceptance": _num(a), "u": u}
                if u < a:
                    _log(events, "accept", i, vocab[x], **test)
                    child = x
                    break
                _log(events, "reject", i, vocab[x], **test)
                tried = tried + (x,) if self.drafts == "distinct" else tried
                p_cur, q_cur = tr.update(p, q, p_cur, q_cur, self.drafts, set(tried))
                _log(events, "update", i, None, p=_row(p_cur), q=None if q_cur is None else _row(q_cur))
            if child is None:
                fallback = tr.fallback(p, p_cur)
                y = draw(fallback, rng.random())
                _log(events, "fallback", i, vocab[y], row=_row(fallback))
                return emitted + (vocab[y],), i
            emitted += (vocab[child],)
        raise AssertionError("unreachable")

    def sample_rounds(self, models, context, rounds: int, seed=None, rule=CORRECT):
        """``rounds`` seeded tree rounds, counted: a ``specsim.montecarlo.SampleResult``."""
        from .montecarlo import SampleResult
        from .sampling import make_rng
        rng = make_rng(seed)
        outcomes, k_counts = defaultdict(int), [0] * (self.depth + 1)
        for _ in range(rounds):
            out, k = self.sample_round(models, context, rng, rule)
            outcomes[out] += 1
            k_counts[k] += 1
        return SampleResult(tuple(context), self.depth, rounds, dict(outcomes), k_counts)

    def trace(self, models, context, seed=None, rule=CORRECT) -> dict:
        """A seeded trace of one tree round: ``{"emitted", "accepted", "events"}``, deterministic for a seed."""
        from .sampling import make_rng
        events = []
        out, k = self.sample_round(models, context, make_rng(seed), rule, events)
        return {"tree": list(self.shape), "drafts": self.drafts, "emitted": list(out),
                "accepted": k, "events": events}


def _log(events, kind, depth, token, **extra):
    if events is not None:
        events.append({"kind": kind, "depth": depth, "token": token, **extra})
