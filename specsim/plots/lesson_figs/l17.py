"""Lesson 17's figure: the rule family's exact TV over (β, λ) on the lesson's two-token models A and B.

The lesson's own calls: ``family.grid(model, ("x",), Chain(1), 1)`` for model A
(p = (1/2, 1/2), q = (1, 0)) and model B (p = (1/4, 3/4), q = (1/2, 1/2)),
both with t = p_0 / q_0 = 1/2, drawn by ``specsim.plots.family.grid_figure``.
A slider switches the model: on both, the only square at TV 0 is β = 1, λ = 1.

>>> [f.name for f in FIGURES]
['17-family']
>>> family.exact_points(grid_rows(0)), family.exact_points(grid_rows(1))
([(1, Fraction(1, 1))], [(1, Fraction(1, 1))])
"""
from __future__ import annotations

from ...labs import family
from ...schemes import Chain
from ...toy import model_from_dict
from ..family import grid_figure
from .figure import Control, LessonFigure

MODELS = {0: ("A", ["1/2", "1/2"], ["1", "0"]), 1: ("B", ["1/4", "3/4"], ["1/2", "1/2"])}


def two_tokens(p, q):
    """The lesson's two-token model: the same rows p and q after either token."""
    rows = lambda r: {"x": r, "y": r}  # noqa: E731
    return model_from_dict({"vocab": ["x", "y"], "order": 1, "target": rows(p), "draft": rows(q)})


def grid_rows(model: int) -> list:
    """``family.grid`` of model A (0) or B (1) after "x", one draft, one token."""
    _, p, q = MODELS[model]
    return family.grid(two_tokens(p, q), ("x",), Chain(1), 1)


def grid(model: int = 0):
    """TV over the family's grid for model A or B: the exact square is the same on both."""
    model = 0 if int(model) <= 0 else 1
    name, p, q = MODELS[model]
    fig = grid_figure(grid_rows(model))
    fig.update_layout(title=dict(text=f"Model {name}: p = ({', '.join(p)}), q = ({', '.join(q)}): exact TV of "
                                      "accept min(1, (p/q)^β), replace from λ r + (1 − λ) p", x=0, xanchor="left", pad=dict(l=12),
                                 font_size=14), margin=dict(t=60))
    return fig


FIGURES = [LessonFigure("17-family", grid, (Control("model", "model (0: A, 1: B)", 0, 1, 1, 0),))]
