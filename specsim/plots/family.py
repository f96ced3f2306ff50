"""The rule family's grid as a heatmap (``specsim.labs.family.grid`` computes it)."""
from __future__ import annotations

from fractions import Fraction

import plotly.graph_objects as go

from ..labs.family import EXACT_POINT
from .colors import OVERLAP_COLOR, RESIDUAL_COLOR


def grid_figure(rows, current=None) -> go.Figure:
    """Heatmap of the TV over (λ, β), the exact point ringed in green, the current choice in red."""
    betas = sorted({r["beta"] for r in rows})
    lambdas = sorted({r["lam"] for r in rows})
    tv = {(r["beta"], r["lam"]): r["total_variation"] for r in rows}
    z = [[float(tv[b, lam]) for lam in lambdas] for b in betas]
    text = [[str(tv[b, lam]) for lam in lambdas] for b in betas]
    xs = [str(lam) for lam in lambdas]
    fig = go.Figure(go.Heatmap(z=z, x=xs, y=[str(b) for b in betas], text=text, texttemplate="%{text}",
                               colorscale="Greys", zmin=0, colorbar=dict(title="TV"),
                               hovertemplate="β = %{y}, λ = %{x}: TV = %{text}<extra></extra>"))
    marks = [(EXACT_POINT, "exact point (β = 1, λ = 1)", OVERLAP_COLOR, 34)]
    if current is not None:
        marks.append((current, "your rule", RESIDUAL_COLOR, 24))
    for (b, lam), label, colour, size in marks:
        if b in betas and Fraction(lam) in lambdas:
            fig.add_trace(go.Scatter(x=[str(Fraction(lam))], y=[str(b)], mode="markers", name=label,
                                     marker=dict(symbol="square-open", size=size, color=colour, line=dict(width=3))))
    fig.update_xaxes(type="category")  # "1/4" and "1" on one axis: never let plotly read them as numbers
    fig.update_yaxes(type="category")
    fig.update_layout(xaxis_title="λ (weight of the residual in the replacement)",
                      yaxis_title="β (acceptance min(1, (p/q)^β))", legend=dict(orientation="h", y=-0.25),
                      margin=dict(t=30))
    return fig
