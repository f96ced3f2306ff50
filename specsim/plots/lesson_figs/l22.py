"""Lesson 22's figures: EAGLE-2's dynamic tree after "a", walked by point-mass verification, and the best
exact tokens per round of each family of schemes for each drafting budget.

The Trees page's own charts and data: ``tree.tree_figure`` over ``tree_view.drafted_tree`` /
``walk_steps`` of one seeded round (``sampling.trace_round``), and ``tree.budget_figure`` over
``scheme_view.best_by_budget`` of ``scheme_view.budget_rows`` (the exact engine, every fixed and adaptive
scheme within the budget).
"""
from __future__ import annotations

from ...sampling import trace_round
from ...schemes import parse
from ...toy import load_model
from ...views import scheme_view, tree_view
from .. import tree
from .figure import LessonFigure

CONTEXT = ("a",)
DYNAMIC = "tree:dynamic,budget=6,depth=3,topk=2"
SEED = 0  # a round with a rejected child, its sibling kept, and a correction at depth 2
BUDGET = 6


def dynamic_tree():
    """One round of the dynamic tree (B = 6, D = 3, K = 2) from "a", every step of its walk shown."""
    trace = trace_round(load_model("seed"), CONTEXT, parse(DYNAMIC), seed=SEED)
    nodes, steps = tree_view.drafted_tree(trace), tree_view.walk_steps(trace)
    return tree.tree_figure(CONTEXT, nodes, steps, len(steps),
                            f"EAGLE-2's dynamic tree after \"a\" (B = 6, D = 3, K = 2), one round (seed {SEED})")


def by_budget():
    """For budgets 1..6 after "a": the best exact tokens per round of each family drafting at most that many."""
    curve = scheme_view.best_by_budget(scheme_view.budget_rows(load_model("seed"), CONTEXT, BUDGET), BUDGET)
    return tree.budget_figure(curve, "After \"a\": the best exact tokens per round of each family, "
                                     "drafting at most the budget")


FIGURES = [
    LessonFigure("22-dynamic-tree", dynamic_tree),
    LessonFigure("22-budget", by_budget),
]
