"""Lesson 14's figure: the formula's best speedup over (c, α), with one drafter to move around.

What the lesson's second table computes for each drafter, ``best_gamma(α, c,
max_gamma=8)``, drawn for every (c, α) by ``specsim.plots.gallery.alpha_cost_map``
(its contours), with a marker at the sliders' α and c. The figure reads no
measured drafter (the plots never import the tiny GPT); the lesson's table
gives each drafter's point to set the sliders to.

>>> [f.name for f in FIGURES]
['14-landscape']
>>> landscape(0.8, 0.4).data[1].x
(0.4,)
"""
from __future__ import annotations

from ...formulas import best_gamma
from ..gallery import MAX_GAMMA, alpha_cost_map
from .figure import Control, LessonFigure


def landscape(alpha: float = 0.8, cost: float = 0.1):
    """Contours of the best speedup (γ up to 8) over c and α, and a drafter at (c, α)."""
    g, s = best_gamma(min(float(alpha), 0.999), float(cost), MAX_GAMMA)
    row = {"drafter": f"α {float(alpha):.2f}, c {float(cost):.2f}: γ = {g}, {float(s):.2f}×",
           "alpha": float(alpha), "alpha_se": 0.0, "cost": float(cost), "speedup": float(s)}
    return alpha_cost_map([row], max_cost=0.5,
                          title=f"The formula's best speedup (γ ≤ {MAX_GAMMA}) over the drafter's cost c and "
                                "acceptance α")


FIGURES = [
    LessonFigure("14-landscape", landscape,
                 (Control("alpha", "α (acceptance rate)", 0.3, 0.99, 0.01, 0.8),
                  Control("cost", "c (drafter step / target step)", 0.0, 0.5, 0.01, 0.1))),
]
