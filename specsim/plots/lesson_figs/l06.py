"""Lesson 6's figures: the rule on the greedy pair's one-hot rows, and an exact tie that floating point breaks.

The greedy pair is the lesson's ``transforms.greedy_pair(load_model("seed"))``; after "b" the target's
argmax is "b" and the drafter's "a", so nothing is accepted and the residual is the target's argmax
(``charts.residual_panels``). The tie is the lesson's two lists of three terms, equal as exact decimals,
summed in two orders by float64 addition.

>>> [round(d) for d in ulps_below_one([0.1, 0.2, 0.7])]   # left to right, right to left
[0, -1]
"""
from __future__ import annotations

import plotly.graph_objects as go

from ...toy import load_model
from ...transforms import greedy_pair
from ..charts import OVERLAP_COLOR, Q_COLOR, residual_panels, style
from .figure import LessonFigure

YES, NO = [0.1, 0.2, 0.7], [0.7, 0.2, 0.1]  # the lesson's two logits, three terms each
ULP = 2.0 ** -53                             # the spacing of float64 just below 1


def greedy_rows():
    """p and q after "b" for the greedy pair, with min(p, q), max(0, p − q) and the residual r."""
    m = load_model("seed")
    g = greedy_pair(m)
    return residual_panels(m.vocab, g.p(("b",)), g.q(("b",)))


def ulps_below_one(xs) -> list:
    """The sum of ``xs`` in float64, left to right then right to left, as a distance from 1 in ulps below 1."""
    left, right = (xs[0] + xs[1]) + xs[2], xs[0] + (xs[1] + xs[2])
    return [(left - 1) / ULP, (right - 1) / ULP]


def float_tie():
    """Two logits that are exactly equal, each summed in two orders: which one is larger flips."""
    orders = ["left to right", "right to left"]
    fig = go.Figure()
    for name, xs, colour, symbol in (("yes = 0.1 + 0.2 + 0.7", YES, OVERLAP_COLOR, "circle"),
                                     ("no = 0.7 + 0.2 + 0.1", NO, Q_COLOR, "diamond")):
        fig.add_scatter(x=ulps_below_one(xs), y=orders, mode="markers", name=name,
                        marker=dict(size=16, color=colour, symbol=symbol, line=dict(width=1, color="black")),
                        hovertemplate="%{y}: %{x:.0f} ulp from 1<extra>" + name + "</extra>")
    fig.update_xaxes(range=[-1.6, 0.6], dtick=1, zeroline=True)
    fig.update_yaxes(type="category", range=[-0.6, 1.6])
    return style(fig, "Two exactly equal sums in float64: which is larger depends on the order",
                 "sum − 1, in units of 2⁻⁵³ (one step of float64 just below 1)", None, height=300)


FIGURES = [
    LessonFigure("06-greedy-rows", greedy_rows),
    LessonFigure("06-float-tie", float_tie, height=320),
]
