"""Lesson 9's figures: the speedup against γ (α and c on sliders) and the best γ over the (α, c) plane.

The numbers are the lesson's: ``formulas.speedup_curve`` and ``formulas.best_gamma_verdict`` at its worked
example α = 4/5, c = 1/20, and ``formulas.best_gamma_grid`` marked at the Try-it point α = 0.6, c = 0.2.
"""
from __future__ import annotations

from fractions import Fraction

from ... import formulas
from .. import charts
from .figure import Control, LessonFigure

ALPHA = Control("alpha", "α (acceptance rate)", 0.0, 0.99, 0.01, 0.8)
COST = Control("cost", "c (drafter step / target step)", 0.0, 0.5, 0.01, 0.05)


def _exact(x) -> Fraction:
    """A slider's value as the Fraction it names (0.8 -> 4/5), so the curve is the lesson's exact one."""
    return Fraction(str(round(float(x), 2)))


def speedup(alpha: float = 0.8, cost: float = 0.05):
    """The speedup at γ = 1..32 for α and c, the best γ starred when speculating pays."""
    a, c = _exact(alpha), _exact(cost)
    curve = formulas.speedup_curve(a, c)
    verdict = formulas.best_gamma_verdict(a, c)
    best = (verdict["gamma"], verdict["speedup"]) if verdict["kind"] in ("speculate", "limit-reached") else None
    return charts.speedup_curve(curve["gammas"], curve["speedups"], best,
                                f"Speedup against γ at α = {a}, c = {c}")


def best_map(alpha: float = 0.6, cost: float = 0.2):
    """The best γ and its speedup over α and c, with a cross at (α, c)."""
    grid = formulas.best_gamma_grid()
    return charts.best_gamma_heatmaps(grid["alphas"], grid["costs"], grid["best_gamma"], grid["best_speedup"],
                                      mark=(float(alpha), float(cost)), max_gamma=formulas.DEFAULT_MAX_GAMMA)


FIGURES = [
    LessonFigure("09-speedup", speedup, (ALPHA, COST)),
    LessonFigure("09-best-gamma", best_map, (Control("alpha", "α (acceptance rate)", 0.02, 0.98, 0.02, 0.6),
                                             Control("cost", "c (drafter step / target step)", 0.01, 0.6, 0.01,
                                                     0.2)), height=740),
]
