"""Lesson 21's figure: the same drafter under the textbook rule and under the point mass, on the α / c map.

The drafter gallery's chart (``gallery.alpha_cost_map``: contours of the formula's best speedup over
(c, α)) with one marker per acceptance the lesson computes on the seed model: the textbook rule keeps a
sampled draft with α = Σ min(p, q), the point mass (llama.cpp's server, vLLM's V1 engine) keeps q's top
token with p(argmax q). Every marker sits at the same drafter cost c, the figure's slider.
"""
from __future__ import annotations

from ...toy import load_model
from .. import gallery
from .figure import Control, LessonFigure


def acceptances() -> dict:
    """{label: α} for each rule after each context of the seed model; equal values share one label."""
    m = load_model("seed")
    found: dict = {}
    for c in m.contexts():
        p, q = m.p(c), m.q(c)
        for rule, alpha in (("textbook", sum(min(a, b) for a, b in zip(p, q))),
                            ("point mass", p[q.index(max(q))])):
            found.setdefault((rule, alpha), []).append(c[-1])
    return {f"{rule}, after {' and '.join(ctx)}": alpha for (rule, alpha), ctx in found.items()}


def landscape(cost: float = 0.1):
    rows = [{"drafter": label, "alpha": float(alpha), "alpha_se": 0.0, "cost": float(cost), "speedup": None}
            for label, alpha in acceptances().items()]
    fig = gallery.alpha_cost_map(rows, title=f"The seed drafter at c = {float(cost):g}: textbook rule "
                                             "against point mass")
    fig.update_traces(textposition="middle right", selector=dict(type="scatter"))  # labels beside, not above
    return fig


FIGURES = [
    LessonFigure("21-alpha-cost", landscape, (Control("cost", "c (drafter step / target step)", 0.0, 0.4, 0.02, 0.1),)),
]
