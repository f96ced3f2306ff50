"""The drafter gallery's figure: where each drafter sits on the alpha / c landscape.

``alpha_cost_map`` draws the contours of the formula's best speedup
max over gamma of ``specsim.formulas.speedup(alpha, gamma, c)`` on an
(c, alpha) grid, and one marker per drafter at its measured (c, alpha), with
its standard error as a vertical bar. Rows are those of
``specsim.gpt.gallery.run_set`` (plain dicts: no torch needed here).

>>> rows = [{"drafter": "lookup:3", "alpha": 0.4, "alpha_se": 0.05, "cost": 0.0, "speedup": 1.3},
...         {"drafter": "distilled", "alpha": 0.8, "alpha_se": 0.03, "cost": 0.1, "speedup": 2.0}]
>>> fig = alpha_cost_map(rows)
>>> [t.type for t in fig.data], len(fig.data[1].x)
(['contour', 'scatter'], 2)
"""
from __future__ import annotations

import math

import plotly.graph_objects as go

from .. import formulas
from .charts import style

MAX_GAMMA = 8


def best_speedup(alpha: float, cost: float, max_gamma: int = MAX_GAMMA) -> float:
    """The formula's speedup at the best gamma (floats; alpha clipped below 1)."""
    return float(formulas.best_gamma(min(max(alpha, 0.0), 0.999), max(cost, 0.0), max_gamma)[1])


def alpha_cost_map(rows, max_cost: float | None = None, steps: int = 41, title: str | None = None) -> go.Figure:
    """Speedup contours over (c, alpha) and the measured drafters as markers."""
    costs_seen = [r["cost"] for r in rows if r.get("cost") is not None]
    top = max_cost or max(0.5, 1.2 * max(costs_seen, default=0.5))
    cs = [top * i / (steps - 1) for i in range(steps)]
    alphas = [0.99 * i / (steps - 1) for i in range(steps)]
    z = [[best_speedup(a, c) for c in cs] for a in alphas]
    fig = go.Figure(go.Contour(x=cs, y=alphas, z=z, colorscale="Blues", name="formula speedup",
                               contours=dict(showlabels=True), colorbar=dict(title="best speedup"),
                               hovertemplate="c %{x:.2f}<br>α %{y:.2f}<br>speedup %{z:.2f}<extra></extra>"))
    se = [r.get("alpha_se") if r.get("alpha_se") == r.get("alpha_se") else 0 for r in rows]
    measured = [r.get("speedup") for r in rows]
    fig.add_trace(go.Scatter(
        x=[r["cost"] for r in rows], y=[r["alpha"] for r in rows], mode="markers+text",
        text=[r["drafter"] for r in rows], textposition="top right", name="drafters",
        error_y=dict(type="data", array=[s or 0 for s in se], visible=True),
        marker=dict(size=11, color="orange", line=dict(color="black", width=1)),
        customdata=[m if m is not None and not math.isnan(m) else None for m in measured],
        hovertemplate="%{text}<br>c %{x:.3f}<br>α %{y:.3f}<br>measured speedup %{customdata:.2f}<extra></extra>"))
    return style(fig, title or "Drafters on the α / c landscape (contours: the formula's best speedup)",
                 x="c = drafter step / target step", y="α (acceptance rate)")
