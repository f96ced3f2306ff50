"""Which verification scheme gets the most tokens per round from a budget of drafted tokens?

``schemes(budget)`` lists every scheme whose round drafts at most ``budget``
tokens: token-wise chains and block chains of γ = 1..budget and every
tree shape (W1, ..., Wd) with
W1 + W1·W2 + ... ≤ budget, with i.i.d. and distinct drafts.
``compare`` computes each one's exact expected tokens per round.

>>> from specsim.toy import load_model
>>> [(r["verify"], r["drafted_tokens"], str(r["expected_tokens"]))
...  for r in compare(load_model("seed"), ("a",), 2) if r["tree"] is None]
[('block', 2, '27/10'), ('token', 2, '267/100'), ('token', 1, '19/10'), ('block', 1, '19/10')]
"""
from __future__ import annotations

from .. import exact

from ..schemes import tree
from ..schemes.block import Block

MAX_BUDGET = 8


def _shapes(budget: int, prefix=(), width=1, used=0):
    """Every tuple (W1, ..., Wd), W >= 1, whose node count W1 + W1·W2 + ... is <= budget."""
    for w in range(1, budget + 1):
        nodes = width * w
        if used + nodes > budget:
            break
        shape = prefix + (w,)
        yield shape
        yield from _shapes(budget, shape, nodes, used + nodes)


def schemes(budget: int):
    """(verify, scheme) pairs: ``gamma`` ints are token-wise chains."""
    if isinstance(budget, bool) or not isinstance(budget, int) or not 1 <= budget <= MAX_BUDGET:
        raise ValueError(f"budget must be an integer in 1..{MAX_BUDGET}, got {budget!r}")
    for g in range(1, budget + 1):
        yield "token", g
        yield "block", Block(g)
    for shape in _shapes(budget):
        for d in ("iid", "distinct"):
            yield "tree", tree.Tree(shape, drafts=d)


def compare(models, context, budget: int) -> list:
    """Rows {verify, tree, drafts, drafted_tokens, expected_tokens}, most expected tokens first."""
    rows = []
    for verify, s in schemes(budget):
        r = exact.round_distribution(models, tuple(context), s)
        tree = verify == "tree"
        rows.append({"verify": verify, "tree": list(s.shape) if tree else None,
                     "drafts": s.drafts if tree else None,
                     "drafted_tokens": s if verify == "token" else s.drafted_tokens,
                     "expected_tokens": r.expected_tokens})
    rows.sort(key=lambda r: (-r["expected_tokens"], r["drafted_tokens"]))
    return rows
