"""The best static draft tree for a budget of drafted tokens (Sequoia's dynamic program).

Sequoia (Chen et al. 2024, "Sequoia: Scalable, Robust, and Hardware-aware
Speculative Decoding", arXiv:2402.12374) scores a draft tree under the
*positional acceptance assumption*: the probability that the child of rank
k of an accepted node is the one accepted, p_k, depends on k only (not on
the depth, the context or the tokens). Verification tries the children in
rank order and keeps at most one, so p_k is the chance that children
1..k-1 are rejected and child k is accepted, and p_1 + p_2 + ... <= 1; with
a_k the chance that child k is accepted once 1..k-1 were rejected,
p_k = (1 - a_1)...(1 - a_{k-1}) a_k. (In github.com/Infini-AI-Lab/Sequoia,
tests/test_accept.py measures the vector as the histogram of which child
was accepted, and tree_search.py, commit 2bc5a7e5, runs the DP, bounded in
depth too. The code here is written from the definition.)

A drafted node is accepted when every node on its path from the root is,
so under the assumption it is accepted with the product of the p's of the
ranks along that path, and one round emits on average

    E[tokens] = 1 + sum over drafted nodes v of prod_{u on the path to v} p_rank(u)

(the 1 is the token every round emits: the correction or the bonus; this is
Sequoia's F(T) with the root counted as 1, and specsim's ``expected_tokens``).

Two searches, both dynamic programs over the budget:

* ``best_tree(...).general``: the best tree of any layout with at most B
  drafted nodes (Sequoia's DP): T(n) = best value below an accepted node
  with n nodes to place, G(j, n) = best use of n nodes by children of ranks
  j, j+1, ...: G(j, n) = max(0, max_s p_j (1 + T(s - 1)) + G(j + 1, n - s)).
* ``best_tree(...).shape``: the best tree specsim's ``Tree`` scheme can
  draft, widths per level (every node of level i has W_i children). Level i
  then holds W_1...W_i nodes whose path products sum to S(W_1)...S(W_i) with
  S(w) = p_1 + ... + p_w, so E = 1 + S(W_1) + S(W_1) S(W_2) + ...; the DP
  g(n, m) (n nodes left, m nodes on the last level) picks each width.

The general value is an upper bound on the level-width one (a level shape is
one layout). Both are predictions: the exact engine's tokens per round for
the chosen shape (``check``) differ, because real acceptance depends on the
context and on the depth.

>>> from fractions import Fraction as F
>>> b = best_tree([F(1, 2), F(1, 4)], 3)
>>> b.shape, b.expected_tokens
((1, 1, 1), Fraction(15, 8))
>>> b.general.parents, b.general.expected_tokens  # two children at the root, one below the first
((-1, 0, -1), Fraction(2, 1))
>>> predicted_tokens([F(1, 2), F(1, 4)], (2, 1))
Fraction(17, 8)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from .. import bounds, exact
from ..schemes import Tree
from ..schemes.tree import drafted
from .kseq import one_position_pair

MAX_BUDGET = 16  # measured: best_tree(16) on the seed and order2 vectors (Fractions) in 0.05-0.1 s here


@dataclass(frozen=True)
class GeneralTree:
    """A draft tree of any layout: node i's parent (-1: the root) and its rank among its siblings
    (1: tried first); nodes numbered depth first, children in rank order."""

    parents: tuple
    ranks: tuple
    expected_tokens: object  # predicted E[tokens per round] under the positional assumption


@dataclass(frozen=True)
class BestTree:
    """The DP's answer for one acceptance vector and budget.

    shape: the best level-width shape (a specsim ``Tree``'s widths), expected_tokens its predicted
    E[tokens per round]; general: the best tree of any layout, whose value bounds it from above.
    """

    budget: int
    acceptance: tuple
    shape: tuple
    expected_tokens: object
    general: GeneralTree

    @property
    def drafted_tokens(self) -> int:
        """Nodes the level shape drafts (at most ``budget``)."""
        return drafted(self.shape)


def check_acceptance(acceptance) -> tuple:
    """The vector as a tuple, refused in one line unless it is probabilities p_1, p_2, ... summing to <= 1."""
    values = tuple(acceptance)
    if not values:
        raise ValueError("the acceptance vector is empty: give p_1, p_2, ... (one per child rank)")
    if any(isinstance(v, (bool, str)) or not 0 <= v <= 1 for v in values):
        raise ValueError(f"every acceptance p_k must be a number in [0, 1], got {list(values)[:8]}")
    if sum(values) > 1 + (1e-9 if any(isinstance(v, float) for v in values) else 0):
        raise ValueError(f"the acceptance vector sums to {float(sum(values)):.6g} > 1: p_k is the chance that "
                         "child k is THE accepted one, so the p_k add up to at most 1")
    return values


def _check_budget(budget) -> int:
    if isinstance(budget, bool) or not isinstance(budget, int) or not 1 <= budget <= MAX_BUDGET:
        raise ValueError(f"budget must be an integer in 1..{MAX_BUDGET}, got {budget!r}")
    return budget


def predicted_tokens(acceptance: Sequence, shape) -> object:
    """E[tokens per round] of a level-width tree under the positional assumption:
    1 + S(W1) + S(W1) S(W2) + ... with S(w) = p_1 + ... + p_w (ranks past the vector count 0)."""
    values = check_acceptance(acceptance)
    total = product = values[0] - values[0] + 1
    for w in shape:
        product = product * sum(values[:w], values[0] - values[0])
        total = total + product
    return total


def _best_general(values, budget):
    """Sequoia's DP: (value of the best subtree below an accepted node, its layout) for n = 0..budget."""
    zero = values[0] - values[0]
    k_max = min(len(values), budget)
    below = [(zero, ())]  # T(n): (value, children as nested tuples)
    for n in range(1, budget + 1):
        # G(j, m) for j = k_max down to 1, m = 0..n: best use of m nodes by children of ranks j..k_max
        nxt = [(zero, ())] * (n + 1)  # G(k_max + 1, m)
        for j in range(k_max, 0, -1):
            cur = []
            for m in range(n + 1):
                best = (zero, ())
                for s in range(1, m + 1):
                    sub_value, sub_layout = below[s - 1]
                    rest_value, rest_layout = nxt[m - s]
                    value = values[j - 1] * (1 + sub_value) + rest_value
                    if value > best[0]:
                        best = (value, (sub_layout,) + rest_layout)
                cur.append(best)
            nxt = cur
        below.append(nxt[n])
    return below[budget]


def _layout_parents(children) -> tuple:
    """Nested children tuples -> (parents, ranks), depth first."""
    parents, ranks = [], []

    def walk(kids, parent):
        for rank, sub in enumerate(kids, 1):
            parents.append(parent)
            ranks.append(rank)
            walk(sub, len(parents) - 1)

    walk(children, -1)
    return tuple(parents), tuple(ranks)


def _best_levels(values, budget):
    """g(n, m): (value, -nodes, widths) of the best levels below a level of m nodes with n nodes left."""
    zero = values[0] - values[0]
    sums = [zero]
    for v in values:
        sums.append(sums[-1] + v)
    memo = {}

    def g(n, m):
        if (n, m) not in memo:
            best = (zero, 0, ())
            for w in range(1, min(len(values), n // m) + 1):
                value, neg_nodes, widths = g(n - m * w, m * w)
                cand = (sums[w] * (1 + value), neg_nodes - m * w, (w,) + widths)
                if cand[:2] > best[:2]:
                    best = cand
            memo[(n, m)] = best
        return memo[(n, m)]

    return g(budget, 1)


def best_tree(acceptance: Sequence, budget: int) -> BestTree:
    """The tree of at most ``budget`` drafted nodes with the most predicted tokens per round.

    ``acceptance``: Sequoia's positional vector p_1, p_2, ... (Fractions or floats; see the module
    docstring). Ties go to fewer drafted nodes, then to the shape found first (narrower first level).
    """
    values = check_acceptance(acceptance)
    budget = _check_budget(budget)
    value, _neg, shape = _best_levels(values, budget)
    if not shape:  # every p_k is 0: nothing is ever accepted, the smallest tree is as good as any
        shape = (1,)
    g_value, layout = _best_general(values, budget)
    if not layout:
        layout = ((),)
    parents, ranks = _layout_parents(layout)
    return BestTree(budget, values, shape, 1 + value, GeneralTree(parents, ranks, 1 + g_value))


# -- estimates from the exact engine ----------------------------------------------

def acceptance_vector(pair, contexts, k_max: int, drafts: str = "iid", limit=None) -> tuple:
    """Sequoia's p_1..p_{k_max} at the root, from the exact engine, averaged over ``contexts``.

    At each context c, p_k(c) = P_c(child k accepted, children 1..k-1 rejected) at the root of a
    one-level tree of ``drafts`` children: the exact engine's P(one draft accepted) with k children
    minus that with k - 1 (a later child never changes an earlier child's test), on the rows p(c)
    and q(c) alone (``kseq.one_position_pair``: the pair is asked for nothing else). The vector is the
    plain mean over the contexts given, each with weight 1/len(contexts) (not weighted by how often
    a context occurs). Exact Fractions for a toy pair, floats for a float pair (the tiny GPT's
    ``GPTPair``). ``limit``: the work limit of each round (``bounds.check_round``).

    >>> from specsim.toy import load_model
    >>> acceptance_vector(load_model("seed"), [("a",)], 3)
    (Fraction(9, 10), Fraction(1, 20), Fraction(1, 40))
    """
    contexts = [tuple(c) for c in contexts]
    if not contexts:
        raise ValueError("give at least one context to average the acceptance vector over")
    if isinstance(k_max, bool) or not isinstance(k_max, int) or not 1 <= k_max <= MAX_BUDGET:
        raise ValueError(f"k_max must be an integer in 1..{MAX_BUDGET}, got {k_max!r}")
    trees = [Tree((k,), drafts) for k in range(1, k_max + 1)]
    for t in trees:
        bounds.check_round(pair, t, limit, rounds=len(contexts))
    total = None
    for c in contexts:  # only the root's rows matter: the round runs on them alone (no call below the root)
        root = one_position_pair(pair.p(c), pair.q(c))
        accepted = [exact.round_distribution(root, (), t).accepted[1] for t in trees]
        row = [accepted[0]] + [b - a for a, b in zip(accepted, accepted[1:])]
        total = row if total is None else [x + y for x, y in zip(total, row)]
    return tuple(x / len(contexts) for x in total)


@dataclass(frozen=True)
class TreeCheck:
    """The DP's prediction set against the exact engine.

    best: the DP's answer for the vector averaged over ``contexts``; exact_tokens: the exact
    engine's E[tokens per round] of ``Tree(best.shape, drafts)`` at ``context``; exact_mean: the
    plain mean of that over ``contexts`` (the figure the averaged prediction estimates). When the
    exact rounds are over the work limit both are None and ``refused`` says why in one line.
    """

    context: tuple
    contexts: tuple
    drafts: str
    best: BestTree
    exact_tokens: object
    exact_mean: object
    refused: str | None = None


def check(pair, context, budget: int, drafts: str = "iid", contexts=None, limit=None) -> TreeCheck:
    """Estimate p_k exactly over ``contexts`` (default every context of the pair), run the DP for
    ``budget``, and compute the exact engine's tokens per round of the chosen shape (when its
    rounds fit in ``limit``, an int or a ``bounds.Budget``; the estimate itself must fit).

    >>> from specsim.toy import load_model
    >>> c = check(load_model("seed"), ("a",), 2)
    >>> c.best.shape, c.best.expected_tokens, c.exact_tokens
    ((1, 1), Fraction(91, 36), Fraction(267, 100))
    """
    contexts = [tuple(c) for c in (pair.contexts() if contexts is None else contexts)]
    _check_budget(budget)
    vector = acceptance_vector(pair, contexts, budget, drafts, limit)
    best = best_tree(vector, budget)
    scheme = Tree(best.shape, drafts)
    try:
        bounds.check_round(pair, scheme, limit, rounds=len(contexts) + 1)
    except bounds.WorkRefused as e:  # the prediction stands; only its exact check is out of reach
        return TreeCheck(tuple(context), tuple(contexts), drafts, best, None, None, str(e))
    at = exact.round_distribution(pair, tuple(context), scheme).expected_tokens
    mean = sum((exact.round_distribution(pair, c, scheme).expected_tokens for c in contexts), 0) / len(contexts)
    return TreeCheck(tuple(context), tuple(contexts), drafts, best, at, mean)
