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
the exact enumeration (``Tree.enumerate``) and by the sampled round
(``Tree.draft`` drafts the whole tree level by level, then ``Tree.verify``
walks it), which ``specsim.sampling`` and ``specsim.montecarlo`` play.

Example
-------
>>> from specsim.toy import load_model
>>> from specsim.schemes import Chain
>>> m = load_model("seed")
>>> Tree((1, 1, 1)).enumerate(m, ("a",)).outcomes == Chain(3).enumerate(m, ("a",)).outcomes
True
>>> t = Tree((2, 1), "distinct")
>>> t.name, t.drafted_tokens, t.depth, t.parents()
('tree:2,1:distinct', 4, 2, [-1, -1, 0, 1])
"""
from __future__ import annotations

from collections import defaultdict
from fractions import Fraction

from ..limits import LIMITS
from ..parsing import echo, parse_whole
from ..rule import CORRECT, acceptance_probability, residual
from .base import Param, RoundDistribution, Scheme, Verdict, draw, expected_length, nonempty, register
from .chain import Chain
from .masks import shape_parents, tree_grid, tree_positions

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


class Walk:
    """The bookkeeping an exact tree walk shares: each outcome's probability, the mass that ends
    at each depth, and the cut at ``limit`` emitted tokens."""

    def __init__(self, pair, context: tuple, depth: int, rule_name: str, limit=None):
        self.pair, self.context, self.limit, self.rule_name = pair, context, limit, rule_name
        self.outcomes = defaultdict(int)
        self.accepted = [0] * (depth + 1)

    def target_row(self, emitted: tuple, prob):
        """p after ``emitted``; None where the limit cuts the round there (its mass kept, cut)."""
        if self.limit is not None and len(emitted) >= self.limit:
            self.outcomes[emitted[:self.limit]] += prob
            return None
        return self.pair.p(self.context + emitted)

    def end(self, emitted: tuple, prob, row, what: str) -> None:
        """The round ends after ``emitted`` with one token drawn from ``row`` (``what``: bonus,
        fallback): ``emitted + (y,)`` gains ``prob * row[y]``; a row with no positive entry is a
        one-line error naming the rule and the row."""
        if row is None or not any(v > 0 for v in row):
            raise ValueError(f"rule {self.rule_name!r}: the {what} row has no positive entry")
        self.accepted[len(emitted)] += prob
        for y, ry in enumerate(row):
            if ry:
                self.outcomes[emitted + (self.pair.vocab[y],)] += prob * ry

    def result(self, depth: int, expected) -> RoundDistribution:
        return RoundDistribution(self.context, depth, dict(self.outcomes), self.accepted, expected)


class TreeRule:
    """How a node verifies its children; ``CORRECT_TREE`` is the exact rule.

    Lossy variants (``specsim.labs.pitfalls``) override a method: ``children`` (the
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
            raise ValueError(f"tree {echo(text)}: empty width (write widths like 2,2,1)")
        w = parse_whole(part, f"tree {str(text)[:40]!r}: width", noun="a whole number")  # ASCII digits only
        if w < 1:
            raise ValueError(f"tree {echo(text)}: every width must be >= 1, got {w}")
        widths.append(w)
    return check_shape(widths)


def check_shape(widths) -> tuple:
    widths = tuple(int(w) for w in widths)
    if not widths:
        raise ValueError("a tree needs at least one level of drafts")
    if any(w < 1 for w in widths):
        raise ValueError(f"tree {echo(list(widths))}: every width must be >= 1")
    if len(widths) > LIMITS.gamma:
        raise ValueError(f"tree depth {len(widths)} is above the limit {LIMITS.gamma}: lower the depth")
    n = drafted(widths)
    if n > LIMITS.gamma:
        raise ValueError(f"tree {echo(','.join(map(str, widths)))} drafts {n:,} tokens; the limit is "
                         f"{LIMITS.gamma}: lower the widths or the depth")
    return widths


def node_work(b: int, width: int, distinct: bool) -> int:
    """Child draws one tree node enumerates: i.i.d. pools its rejections (width x b);
    distinct keeps one state per tried set (at most b^j ordered tries at child j)."""
    if not distinct:
        return width * b
    return sum(min(b ** j, 10**12) * b for j in range(min(width, b)))


def tree_round_work(s, widths, distinct: bool) -> int:
    """Outcomes + node work of one tree round: b^i accepted prefixes at depth i
    (``Tree.round_work`` reads it; ``s``: a ``specsim.limits.Shape``)."""
    total, prefixes = 0, 1
    for w in widths:
        total += prefixes * (node_work(s.branch, w, distinct) + s.p_branch)
        prefixes = min(prefixes * s.branch, 10**15)  # any drafted token can be the accepted child
    return total + prefixes * s.p_branch


def budget_shapes(budget: int, prefix=(), width=1, used=0):
    """Every tuple (W1, ..., Wd), W >= 1, whose node count W1 + W1·W2 + ... is <= budget."""
    for w in range(1, budget + 1):
        nodes = width * w
        if used + nodes > budget:
            break
        shape = prefix + (w,)
        yield shape
        yield from budget_shapes(budget, shape, nodes, used + nodes)


def drafted(widths) -> int:
    """W1 + W1*W2 + ... : the tokens a tree of this shape drafts."""
    total, level = 0, 1
    for w in widths:
        level *= w
        total += level
        if total > 10**9:
            break
    return total


class Tree(Scheme):
    """A draft tree: shape (W1, ..., Wd) and drafting mode (``iid`` or ``distinct``)."""

    kind = "tree"
    params = (Param("widths", "widths", "W1,W2,...: the root gets W1 children, each of them W2, ...; 1,1,1 is a chain "
                    "of 3 drafts", metavar="W1,W2,...", attr="shape", label="tree shape: widths per depth",
                    start="2,2,1", key="shape", noun="the tree shape", chars=40),
              Param("drafts", "choice", "iid: each child from q (repeats possible); distinct: without replacement",
                    choices=DRAFTS, default="iid", attr="drafts", label="children drafted", start="iid",
                    key="drafts"))
    summary = "several children per position, one target pass"
    _iid = _token_wise = False
    _drawn_as = "tree"
    sample_share = Fraction(1, 10)  # a round takes ~1 ms (exact residuals, one round at a time)
    lower, size, flag = ("the widths", "the depth"), "the tree", "--tree"
    step_words = "accept while u < min(1, p(x)/q(x)), a rejected node's next sibling tried:"
    gpt_round = "tree"  # the tiny GPT's part of a round (specsim.gpt.rounds): drafted level by level, gathered

    def __init__(self, shape, drafts: str = "iid"):
        if drafts not in DRAFTS:
            raise ValueError(f"drafts must be one of {', '.join(DRAFTS)}, got {drafts!r}")
        self.shape = check_shape(shape)
        self.drafts = drafts
        self.depth = len(self.shape)
        self.drafted_tokens = drafted(self.shape)

    @property
    def name(self) -> str:
        """The grammar string: ``tree:2,2,1`` (i.i.d. drafts) or ``tree:2,2,1:distinct``."""
        tail = "" if self.drafts == "iid" else f":{self.drafts}"
        return f"tree:{','.join(map(str, self.shape))}{tail}"

    @property
    def draft_modes(self) -> tuple:
        return DRAFTS

    def in_mode(self, mode: str) -> "Tree":
        return Tree(self.shape, mode)

    @classmethod
    def budget_schemes(cls, budget: int, settings: dict | None = None) -> list:
        """Every shape (W1, ..., Wd) with W1 + W1·W2 + ... <= budget, each with i.i.d. and distinct drafts."""
        return [cls(shape, drafts=d) for shape in budget_shapes(budget) for d in DRAFTS]

    @classmethod
    def parse(cls, text, drafts: str = "iid") -> "Tree":
        return cls(parse_shape(text), drafts)

    def __repr__(self):
        return f"Tree({self.shape}, {self.drafts!r})"

    # -- layout (a full tree, drafted level by level) ----------------------------
    def parents(self) -> list:
        """Node i's parent (-1: the root), nodes numbered level by level as ``draft`` draws them."""
        return shape_parents(self.shape, "bfs")

    def mask(self, n: int):
        """(N + 1, n + N + 1) booleans: each query sees the cache, the root and its own ancestors."""
        return tree_grid(self.parents(), n)

    def positions(self, n: int) -> list:
        return tree_positions(self.parents(), n)

    round_positions = Chain.round_positions
    check_window = Chain.check_window

    def check_rule(self, rule) -> None:
        """A one-line refusal of a chain's rule: a tree runs the correct rule or a ``TreeRule``."""
        self._tree_rule(rule)

    def _tree_rule(self, rule):
        if rule is CORRECT or rule is None:
            return CORRECT_TREE
        if isinstance(rule, TreeRule):
            return rule
        raise ValueError(f"rule {getattr(rule, 'name', rule)!r} is a chain rule; a tree takes the "
                         "correct rule or a tree rule")

    # -- exact ---------------------------------------------------------------
    def enumerate(self, pair, context, rule=CORRECT, limit=None) -> RoundDistribution:
        """Every outcome of one tree round with its exact probability.

        Only the subtree of an accepted child is enumerated: the drafts under
        rejected children never reach the output. Rejected i.i.d. children
        all lead to the same (p', q'), so their mass is pooled; distinct ones
        are pooled by (p', tried set). With ``limit`` only the first ``limit``
        emitted tokens are kept (``accepted``/``expected_tokens`` then describe
        the truncated round).
        """
        tr = self._tree_rule(rule)
        vocab, depth = pair.vocab, self.depth
        walk = Walk(pair, tuple(context), depth, tr.name, limit)

        def node(emitted, prob):
            p = walk.target_row(emitted, prob)
            if p is None:
                return
            if len(emitted) == depth:
                walk.end(emitted, prob, p, "bonus")
                return
            q = pair.q(walk.context + emitted)
            descend, states = self._children(tr, p, q, self.shape[len(emitted)], prob)
            for (p_cur, _q, _t), pr in states.items():  # every child rejected
                if pr:
                    walk.end(emitted, pr, tr.fallback(p, list(p_cur)), "fallback")
            for x, pr in descend.items():
                node(emitted + (vocab[x],), pr)

        node((), 1)
        return walk.result(depth, sum((len(t) * pr for t, pr in walk.outcomes.items()), 0))

    def _children(self, tr, p, q, width: int, prob) -> tuple:
        """One node's ``width`` child draws, exactly: (accepted child -> probability, pooled over the
        child index; (p', q', tried) -> probability of every child rejected that way)."""
        descend = defaultdict(int)
        states = {(tuple(p), tuple(q), ()): prob}
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
        return descend, states

    # -- sampled -------------------------------------------------------------
    def draft(self, q_at, u_draft, rule=CORRECT):
        """(tokens, parents): the whole tree drafted level by level, before any verification.

        ``q_at(path)`` is the drafter's row after the drafted indices ``path``.
        Node j is the j-th draw (``u_draft[j]``). Distinct children come from q
        without the siblings drawn before them; a node whose q runs out of
        tokens gets fewer children (so a tree can be ragged).
        """
        tr = self._tree_rule(rule)
        tokens, parents, paths, frontier = [], [], {-1: ()}, [-1]
        for width in self.shape:
            level = []
            for node in frontier:
                q = q_at(paths[node])
                tried = []
                for _ in range(width):
                    q_cur = q if self.drafts == "iid" else without(q, set(tried))
                    row = None if q_cur is None else tr.draft_row(q, q_cur, self.drafts, set(tried), width)
                    if row is None:  # distinct drafts ran out of tokens
                        break
                    x = row if isinstance(row, int) else draw(row, u_draft[len(tokens)])
                    tried.append(x)
                    paths[len(tokens)] = paths[node] + (x,)
                    level.append(len(tokens))
                    tokens.append(x)
                    parents.append(node)
            frontier = level
        return tokens, parents

    def verify(self, drafts, p_rows, q_rows, u_test, u_final, rule=CORRECT, parents=None) -> Verdict:
        """Walk down from the root: at each node try its children in order against (p', q').

        ``drafts`` is the token per node (``parents`` defaults to the full
        shape's; pass the list ``draft`` returned for a ragged tree). Each
        test records ``{"node", "parent", "depth", "token", "p_x", "q_x",
        "acceptance", "u", "accepted"}``; a rejected one also ``p_next`` and
        ``q_next``, the rows the next sibling is tried against.
        """
        tr = self._tree_rule(rule)
        if parents is None:
            parents = self.parents()
        children = {-1: []}
        for j, parent in enumerate(parents):
            children.setdefault(parent, []).append(j)
        node, path, tests = -1, [], []
        while True:
            p = p_rows[node + 1]
            if len(path) == self.depth or not children.get(node):  # a leaf: the bonus from p
                row = nonempty(p, tr, "bonus")
                return Verdict(path, draw(row, u_final), "bonus", row, tests)
            q = q_rows[node + 1]
            p_cur, q_cur, tried, chosen = list(p), list(q), set(), None
            for c in children[node]:
                x = drafts[c]
                a = tr.accept(p, q, p_cur, q_cur, x)
                test = {"node": c, "parent": node, "depth": len(path), "token": x, "p_x": p_cur[x],
                        "q_x": q_cur[x], "acceptance": a, "u": u_test[c], "accepted": u_test[c] < a}
                tests.append(test)
                if test["accepted"]:
                    chosen = c
                    break
                if self.drafts == "distinct":
                    tried.add(x)
                p_cur, q_cur = tr.update(p, q, p_cur, q_cur, self.drafts, set(tried))
                test["p_next"], test["q_next"] = p_cur, q_cur
            if chosen is None:  # every child rejected: the fallback row
                row = nonempty(tr.fallback(p, p_cur), tr, "fallback")
                return Verdict(path, draw(row, u_final), "correct", row, tests)
            path.append(chosen)
            node = chosen

    # -- work ------------------------------------------------------------------
    @property
    def tested(self) -> int:
        return sum(self.shape)

    def json_keys(self) -> dict:
        return {"tree": list(self.shape), "drafts": self.drafts}

    def closed_words(self, k: int) -> str:
        return f"every child at depth {k + 1} rejected"

    def prefix_work(self, s, depth: int) -> int:
        """A tree's walk stops after ``depth`` kept drafts (``enumerate``'s ``limit``)."""
        if depth >= self.depth:
            return self.round_work(s)
        return tree_round_work(s, self.shape[:depth], self.drafts == "distinct")

    def round_work(self, s) -> int:
        """Outcomes and node steps one enumerated round takes (``s``: a ``limits.Shape``)."""
        return tree_round_work(s, self.shape, self.drafts == "distinct")


register(Tree)
