"""The audit's figure: how often an engine emitted each likely sequence, beside the target's exact probability."""
from __future__ import annotations

import plotly.graph_objects as go

from .charts import style
from .colors import P_COLOR, Q_COLOR


def emitted_vs_exact(top: list, title: str = "Emitted frequency against the target's exact probability") -> go.Figure:
    """Grouped bars per sequence (``top``: dicts with text, observed and exact, as ``specsim audit --json``)."""
    labels = [repr(t["text"]) for t in top]
    fig = go.Figure([go.Bar(x=labels, y=[t["exact"] for t in top], name="exact p (target)", marker_color=P_COLOR,
                            hovertemplate="%{x}: p = %{y:.4f}<extra></extra>"),
                     go.Bar(x=labels, y=[t["observed"] for t in top], name="emitted (engine)", marker_color=Q_COLOR,
                            hovertemplate="%{x}: %{y:.4f} of the runs<extra></extra>")])
    fig.update_layout(barmode="group", xaxis_title="first tokens", yaxis_title="probability")
    return style(fig, title)


def detectable_tv(curves: dict, title: str = "The smallest TV an audit detects (probability 0.8, false-alarm rate "
                                           "0.001), against its runs", mark: tuple | None = None) -> go.Figure:
    """One line per number of cells: ``curves`` maps a label to (runs, detectable TV) pairs (log axes).
    ``mark`` = (runs, detectable TV, label): an audit placed on the curves, as a star.

    >>> fig = detectable_tv({"5 cells": [(100, 0.3), (1000, 0.1)]}, mark=(500, 0.15, "this audit"))
    >>> [t.name for t in fig.data]
    ['5 cells', 'this audit']
    """
    fig = go.Figure([go.Scatter(x=[n for n, _ in pts], y=[d for _, d in pts], mode="lines+markers", name=label,
                                hovertemplate="%{x} runs: TV %{y:.3f}<extra>" + label + "</extra>")
                     for label, pts in curves.items()])
    runs = sorted({n for pts in curves.values() for n, _ in pts})
    tvs = [d for pts in curves.values() for _, d in pts]
    if mark is not None:
        n, d, label = mark
        fig.add_scatter(x=[n], y=[d], mode="markers", name=label, cliponaxis=False,
                        marker=dict(symbol="star", size=18, color=Q_COLOR, line=dict(width=1, color="black")),
                        hovertemplate="%{x} runs: detectable TV %{y:.3f}<extra>" + label + "</extra>")
        tvs.append(d)
    ticks = [t for t in (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0) if min(tvs) / 2 <= t <= max(tvs) * 2]
    fig.update_xaxes(type="log", title="runs (N)", tickvals=runs, ticktext=[f"{n:,}" for n in runs])
    fig.update_yaxes(type="log", title="detectable TV", tickvals=ticks, ticktext=[f"{t:g}" for t in ticks])
    return style(fig, title)
