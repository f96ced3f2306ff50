"""Lesson 19's figures: a tree round walked, the tree's attention mask, and trees against chains by budget.

The lesson's own calls: the seeded round ``trace_round(load_model("seed"),
("a",), Tree((2, 1)), seed=0)`` (drawn by ``specsim.plots.tree.tree_figure``,
one slider step per decision of the walk); the same round's one-pass mask
after the text "b a" (``tree_view.verify_mask``: the seed model reads only the
last token, so the round is the same, with one cached key); and
``compare.compare`` on the seed model after "a" and the zeros model after "x",
the best scheme of each family within each drafting budget
(``scheme_view.best_by_budget``).

>>> [f.name for f in FIGURES]
['19-round', '19-mask', '19-depth', '19-width']
>>> round_trace().drafts, len(tree_view.walk_steps(round_trace()))
(('b', 'a', 'a', 'a'), 4)
"""
from __future__ import annotations

from functools import lru_cache

from ...labs import compare
from ...sampling import trace_round
from ...schemes import Tree
from ...toy import load_model
from ...views import scheme_view, tree_view
from ..tree import budget_figure, mask_figure, tree_figure
from .figure import Control, LessonFigure

BUDGET = 4


@lru_cache(maxsize=1)
def round_trace():
    """The lesson's sampled tree round: shape (2, 1) after "a" on the seed model, seed 0."""
    return trace_round(load_model("seed"), ("a",), Tree((2, 1)), seed=0)


def walked(k: int = 4):
    """The drafted tree after ``k`` decisions of the walk (0: nothing decided yet; 4: the round is over)."""
    t = round_trace()
    nodes, steps = tree_view.drafted_tree(t), tree_view.walk_steps(t)
    k = max(0, min(int(k), len(steps)))
    return tree_figure(t.context, nodes, steps, k,
                       f"A tree round of shape (2, 1) after \"a\": {k} of {len(steps)} decisions")


def mask():
    """Which keys each query of the one verify pass may see: the cached prefix, the root, its own ancestors."""
    v = tree_view.verify_mask(("b", "a"), tree_view.drafted_tree(round_trace()))
    return mask_figure(v["grid"], v["rows"], v["columns"],
                       "One pass verifies the whole tree: each node sees the prefix, the root and its ancestors")


def _by_budget(model: str, context: tuple, title: str):
    rows = compare.compare(load_model(model), context, BUDGET)
    fig = budget_figure(scheme_view.best_by_budget(rows, BUDGET), title)
    fig.update_yaxes(title_text="E[tokens per round] (exact)")
    return fig


def depth():
    """Seed model after "a" (α = 9/10): with a few drafted tokens, a chain beats every tree."""
    return _by_budget("seed", ("a",),
                      "Seed model after \"a\" (α = 9/10): depth pays; the best tree is a chain, block-verified best")


def width():
    """Zeros model after "x" (α = 1/2): two distinct children beat any chain of the same budget."""
    return _by_budget("zeros", ("x",), "Zeros model after \"x\" (α = 1/2): width pays, distinct children lead")


FIGURES = [
    LessonFigure("19-round", walked, (Control("k", "decisions of the walk", 0, 4, 1, 4),)),
    LessonFigure("19-mask", mask),
    LessonFigure("19-depth", depth),
    LessonFigure("19-width", width),
]
