"""Dynamic draft trees (EAGLE-2, Li et al. 2024, arXiv:2406.16858): grown from the drafter's confidence.

``tree:dynamic,budget=B,depth=D,topk=K`` builds its layout each round from
the drafter's rows, as EAGLE-2's ``topK_genrate`` does (SafeAILab/EAGLE,
``eagle/model/cnets.py``, commit cb7e0841):

* a node's score is its cumulative draft probability, the product of q
  along its path (EAGLE-2 adds log-probabilities: the same order);
* expansion: the root's K most probable tokens form level 1; at each next
  level the K best-scored nodes of the level before are expanded, each into
  its own K most probable tokens. Every node so made is a candidate;
* reranking: the B best-scored candidates are kept (at most B, fewer when
  the rows have fewer positive entries). A child scores at most its parent,
  so the kept nodes form a connected subtree.

Ties are broken by (depth, the path's token indices), so the layout is a
function of the rows alone: a parent always ranks before its children.

Verification treats each child as a point mass, as EAGLE-2's
``evaluate_posterior`` does (``eagle/model/utils.py``: ``qx = 1.0``; a
rejected candidate's probability is set to 0 and the row renormalized): at
a node with target row p, child x is kept with probability p'(x), else x is
removed from p' and the next child is tried; when every child is rejected
the token is drawn from what is left of p'. That is the same as drawing y
from p and walking to the child equal to y: the output is exactly p. The
walk is ``Tree.verify`` with ``POINT_MASS`` as its rule; verifying the same
candidates as if they had been sampled from q (min(1, p'/q'), the residual)
is ``specsim.labs.pitfalls_tree.TopKTreeAsIfSampled``, and it is biased.

>>> from specsim.toy import load_model
>>> m = load_model("seed")
>>> s = DynamicTree(4, 2, 2)
>>> s.name, s.drafted_tokens, s.depth
('tree:dynamic,budget=4,depth=2,topk=2', 4, 2)
>>> tokens, parents = s.layout(lambda path: m.q(("a",) + tuple(m.vocab[x] for x in path)))
>>> [m.vocab[x] for x in tokens], parents
(['a', 'b', 'a', 'b'], [-1, -1, 0, 0])
>>> s.enumerate(m, ("a",)).expected_tokens
Fraction(61, 25)
"""
from __future__ import annotations

from collections import defaultdict

from ..limits import LIMITS
from ..rule import CORRECT, acceptance_probability
from .base import Param, RoundDistribution, Scheme, expected_length, register
from .masks import tree_grid, tree_positions
from .tree import Tree, TreeRule, Walk, without


class PointMassRule(TreeRule):
    """Each child is a fixed token, a point mass: keep x with p'(x), else remove x from p'.

    The children of a node are distinct tokens, and ``tried`` holds the rejected ones
    (the walk tracks them as for distinct drafts).
    """

    name = "point-mass"

    def accept(self, p, q, p_cur, q_cur, x):
        return acceptance_probability(p_cur[x], 1)

    def update(self, p, q, p_cur, q_cur, drafts, tried):
        """p with every rejected child removed, renormalized (removing them one at a time gives the same)."""
        return without(p, tried), q_cur


POINT_MASS = PointMassRule()


def top_tokens(q, k: int) -> list:
    """The k most probable tokens of q with positive probability, ties to the lower index."""
    return sorted((x for x in range(len(q)) if q[x] > 0), key=lambda x: (-q[x], x))[:k]


def rank(path, score) -> tuple:
    """The order of candidates: higher score first, then shallower, then by token indices."""
    return (-score, len(path), path)


def check_whole(value, field: str, low: int, high: int) -> int:
    """``value`` when it is an int from ``low`` to ``high``, else a one-line ValueError naming ``field``."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{field} must be a whole number from {low} to {high}, got {value!r}")
    return value


class DynamicTree(Tree):
    """EAGLE-2's dynamic tree: at most ``budget`` nodes, ``depth`` levels, ``topk`` children per expanded node."""

    kind = "dynamic"
    keyword, form, tag = "tree", "options", "dynamic"  # tree:dynamic,budget=B,depth=D,topk=K
    title, summary = "dynamic tree", "EAGLE-2's tree grown from the drafter's rows"
    params = (Param("budget", "whole", "the best-scored candidates kept for verification", metavar="B", low=1,
                    high="gamma", attr="budget", label="budget: nodes kept", start=6, key="nodes"),
              Param("depth", "whole", "levels grown (at most the budget)", metavar="D", low=1, high="budget",
                    attr="depth", label="depth", start=3, key="depth"),
              Param("topk", "whole", "each expanded node's most probable tokens; the top-k nodes of a level are "
                    "expanded", metavar="K", low=1, high="budget", attr="topk", label="top-k", start=2, key="topk"))
    gpt_round = "dynamic_tree"  # the tiny GPT drafts it as the scheme grows it (specsim.gpt.tree_decode.draft_dynamic)
    drafts = "distinct"  # the children of a node are distinct tokens (what a tree rule's update is told)
    sample_share = 1
    _adaptive = _chosen = True  # grown from the drafter's rows each round; its children are top-k, not sampled
    round_note = (" The layout is EAGLE-2's, grown this round from the drafter's rows (the top-k tokens of the best "
                  "nodes, the best-scored nodes kept), so it can differ from round to round; each chosen child is a "
                  "point mass, kept with probability p'(x), and a rejected one is removed from p'.")

    @property
    def draft_modes(self) -> tuple:
        return ()  # its children are the top-k tokens: no drafting mode to choose

    def in_mode(self, mode: str):
        return None

    @classmethod
    def budget_schemes(cls, budget: int, settings: dict | None = None) -> list:
        """With ``settings`` (depth, topk): a dynamic tree of b nodes for b = 1..budget, depth and top-k capped at b."""
        if settings is None:
            return []
        given = {p.name: p.start for p in cls.params} | settings
        return [cls(b, min(given["depth"], b), min(given["topk"], b)) for b in range(1, budget + 1)]

    lower, flag = ("the budget", "the depth", "topk"), "--gamma"
    step_words = ("each child a point mass: accept while u < p'(x), a rejected child removed from p' and the "
                  "next sibling tried:")

    def __init__(self, budget: int, depth: int, topk: int):
        self.budget = check_whole(budget, "budget", 1, LIMITS.gamma)
        self.depth = check_whole(depth, "depth", 1, self.budget)
        self.topk = check_whole(topk, "topk", 1, self.budget)
        self.drafted_tokens = self.budget

    @property
    def name(self) -> str:
        return f"tree:dynamic,budget={self.budget},depth={self.depth},topk={self.topk}"

    def __repr__(self):
        return f"DynamicTree({self.budget}, {self.depth}, {self.topk})"

    # -- layout: from the drafter's rows ----------------------------------------
    def expand(self, q_at) -> list:
        """Every candidate (path, score), level by level; ``q_at(path)`` is q after the drafted indices."""
        frontier, scores, pool = [()], {(): 1}, []
        for _ in range(self.depth):
            level = []
            for node in frontier:
                q = q_at(node)
                level += [(node + (x,), scores[node] * q[x]) for x in top_tokens(q, self.topk)]
            pool += level
            scores.update(level)
            frontier = [path for path, _ in sorted(level, key=lambda c: rank(*c))[:self.topk]]
        return pool

    def layout(self, q_at) -> tuple:
        """(tokens, parents) of the kept nodes, level by level (parents before children)."""
        kept = sorted(self.expand(q_at), key=lambda c: rank(*c))[:self.budget]
        paths = [path for path, _ in sorted(kept, key=lambda c: (len(c[0]), rank(*c)))]
        index = {path: j for j, path in enumerate(paths)}
        return [path[-1] for path in paths], [index.get(path[:-1], -1) for path in paths]

    def parents(self, given=None) -> list:
        """The layout is the drafter's: pass the parents ``draft`` returned."""
        if given is None:
            raise ValueError(f"{self.name}: the layout depends on the drafter's rows; "
                             "pass the parents draft() returned")
        return list(given)

    def mask(self, n: int, parents=None):
        """(N + 1, n + N + 1) booleans for the drafted layout ``parents`` (``masks.tree_grid``)."""
        return tree_grid(self.parents(parents), n)

    def positions(self, n: int, parents=None) -> list:
        return tree_positions(self.parents(parents), n)

    def _tree_rule(self, rule):
        return POINT_MASS if rule is CORRECT or rule is None else super()._tree_rule(rule)

    # -- exact ---------------------------------------------------------------
    def enumerate(self, pair, context, rule=CORRECT, limit=None) -> RoundDistribution:
        """Every outcome of one round: the layout from the drafter's rows, then the walk down it.

        The children are fixed, so each node's tries form one sequence: child c
        is reached with the probability that every child before it was rejected.
        """
        tr = self._tree_rule(rule)
        vocab, context = pair.vocab, tuple(context)
        tokens, parents = self.layout(lambda path: pair.q(context + tuple(vocab[x] for x in path)))
        kids = defaultdict(list)
        for j, a in enumerate(parents):
            kids[a].append(j)
        walk = Walk(pair, context, self.depth, tr.name, limit)

        def node(j, emitted, prob):
            p = walk.target_row(emitted, prob)
            if p is None:
                return
            if not kids[j]:  # a leaf: the bonus from p
                walk.end(emitted, prob, p, "bonus")
                return
            q = pair.q(context + emitted)
            p_cur, q_cur, tried = list(p), list(q), set()
            for c in kids[j]:
                x = tokens[c]
                a = tr.accept(p, q, p_cur, q_cur, x)
                if a:
                    node(c, emitted + (vocab[x],), prob * a)
                prob = prob * (1 - a)
                if not prob:
                    return
                tried.add(x)
                p_cur, q_cur = tr.update(p, q, p_cur, q_cur, self.drafts, set(tried))
            walk.end(emitted, prob, tr.fallback(p, p_cur), "fallback")  # every child rejected

        node(-1, (), 1)
        return walk.result(self.depth, expected_length(walk.outcomes))

    # -- sampled -------------------------------------------------------------
    def round_positions(self) -> int:
        """The drafter scores 1 + topk (depth - 1) paths a round, the target budget + 1 positions."""
        return max(self.topk * (self.depth - 1), self.budget) + 1

    def check_window(self, window: int) -> None:
        half = window // 2
        if self.topk * (self.depth - 1) + 2 > half:
            fits = half - 2
            raise ValueError(f"{self.name}: the drafter scores topk x (depth - 1) = {self.topk * (self.depth - 1)} "
                             f"paths a round, over half the context window of {window}: keep topk x (depth - 1) "
                             f"at most {fits} (for example depth {min(self.depth, fits // self.topk + 1)} with "
                             f"topk {self.topk})" if fits >= self.topk else
                             f"{self.name}: the drafter scores topk x (depth - 1) paths a round, over half the "
                             f"context window of {window}: keep topk x (depth - 1) at most {fits}")
        super().check_window(window)

    def draft(self, q_at, u_draft=None, rule=CORRECT) -> tuple:
        """(tokens, parents): the layout, deterministic (no uniform is used)."""
        return self.layout(q_at)

    # ``verify`` is ``Tree.verify``: the walk with this scheme's rule (``POINT_MASS`` for the correct one)

    # -- work ------------------------------------------------------------------
    tested = property(Scheme.tested.fget)  # its depth (it has no fixed widths to add up)

    def json_keys(self) -> dict:
        return {}

    def settings(self) -> dict:
        return {"depth": self.depth, "topk": self.topk}

    def drafter_passes(self) -> list:
        """The root, then its ``topk`` best nodes of each level expanded."""
        return [1] + [self.topk] * (self.depth - 1)

    def prefix_work(self, s, depth: int) -> int:
        """A dynamic tree still grows its whole layout when fewer tokens are kept."""
        return self.round_work(s)

    def round_work(self, s) -> int:
        """Rows and candidates of the layout, then each node's children and emitted tokens."""
        rows = 1 + self.topk * (self.depth - 1)
        return rows * s.branch + (self.budget + 1) * (s.p_branch + self.topk)


register(DynamicTree)
