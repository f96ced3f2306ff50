"""Plotly figures for trees and schemes: a drafted tree mid-walk, tokens per round against the
drafting budget, the tree attention mask.

Data in (from ``specsim.views.tree_view``, ``specsim.views.scheme_view``, ``specsim.schemes.masks``), ``go.Figure`` out;
no Streamlit. Colours from ``specsim.plots.colors``: accepted green, rejected red, not reached grey, the
child being tested outlined in q's orange, a bonus purple, a correcting token blue (drawn from p').

>>> from specsim.toy import load_model
>>> from specsim.schemes import Tree
>>> from specsim.sampling import trace_round
>>> from specsim.views import tree_view
>>> trace = trace_round(load_model("seed"), ("a",), Tree((2, 1)), seed=0)
>>> nodes, steps = tree_view.drafted_tree(trace), tree_view.walk_steps(trace)
>>> fig = tree_figure(("a",), nodes, steps, len(steps))
>>> [t.name for t in fig.data if t.showlegend is not False]
['accepted', 'rejected', 'not reached', 'bonus']
"""
from __future__ import annotations

import plotly.graph_objects as go

from ..views import tree_view
from .colors import BONUS_COLOR, DARK_GREY, GREY, OVERLAP_COLOR, P_COLOR, PANEL, Q_COLOR, RESIDUAL_COLOR, WHITE
from .charts import FONT, exact, style

STATUS_COLOR = {"accepted": OVERLAP_COLOR, "rejected": RESIDUAL_COLOR, "not reached": PANEL, "testing": WHITE}
CLOSING_COLOR = {"bonus": BONUS_COLOR, "correct": P_COLOR}
# one colour and dash per family of schemes (``specsim.views.scheme_view.FAMILIES``)
KIND_COLOR = {"chain": Q_COLOR, "block": RESIDUAL_COLOR, "tree": OVERLAP_COLOR, "tree:distinct": P_COLOR,
              "confidence": BONUS_COLOR, "dynamic": DARK_GREY}
KIND_DASH = {"chain": "solid", "block": "dash", "tree": "dot", "tree:distinct": "dashdot",
             "confidence": "longdash", "dynamic": "longdashdot"}


def tree_figure(context, nodes, steps, k: int, title: str | None = None) -> go.Figure:
    """The drafted tree after ``k`` walk steps: edges, one marker per node with its token, by status.

    The root is the context's last token; the closing token (bonus or
    fallback) appears once the last step is shown, in its own slot.
    """
    status = tree_view.statuses(nodes, steps, k)
    end = tree_view.closing_path(steps)
    pos = tree_view.layout(nodes, end)
    xy = {(): pos["root"], **{n["path"]: pos["nodes"][i] for i, n in enumerate(nodes)}}
    fig = go.Figure()
    ex, ey = [], []
    for n in nodes:
        (x0, y0), (x1, y1) = xy[n["path"][:-1]], xy[n["path"]]
        ex += [x0, x1, None]
        ey += [y0, y1, None]
    fig.add_scatter(x=ex, y=ey, mode="lines", line=dict(color=GREY, width=2), hoverinfo="skip", showlegend=False)
    walked = [()] + [s["path"] for s in steps[:k] if s["kind"] == "accept"]
    fig.add_scatter(x=[xy[p][0] for p in walked], y=[xy[p][1] for p in walked], mode="lines",
                    line=dict(color=OVERLAP_COLOR, width=5), hoverinfo="skip", showlegend=False)
    rx, ry = pos["root"]
    fig.add_scatter(x=[rx], y=[ry], mode="markers+text", text=[context[-1] if context else "·"],
                    marker=dict(size=34, color=DARK_GREY, symbol="square"), textfont=dict(color=WHITE, size=15),
                    name="context", hovertext=[f"context: {' '.join(context)}"], hoverinfo="text", showlegend=False)
    for name in ("accepted", "rejected", "not reached", "testing"):
        idx = [i for i, s in enumerate(status) if s == name]
        if not idx and name == "testing":
            continue
        fig.add_scatter(
            x=[pos["nodes"][i][0] for i in idx], y=[pos["nodes"][i][1] for i in idx], mode="markers+text",
            text=[nodes[i]["token"] for i in idx], name=name if name != "testing" else "being tested",
            marker=dict(size=32, color=STATUS_COLOR[name],
                        line=dict(width=4 if name == "testing" else 1, color=Q_COLOR if name == "testing" else DARK_GREY)),
            textfont=dict(color=WHITE if name in ("accepted", "rejected") else "black", size=15),
            hovertext=[f"node {'.'.join(str(j + 1) for j in nodes[i]['path'])}: {nodes[i]['token']} ({name})"
                       for i in idx], hoverinfo="text")
    if end is not None and k == len(steps):
        last = steps[-1]
        cx, cy = pos["closing"]
        (px, py) = xy[end]
        fig.add_scatter(x=[px, cx], y=[py, cy], mode="lines", line=dict(color=CLOSING_COLOR[last["kind"]], width=2,
                        dash="dot"), hoverinfo="skip", showlegend=False)
        fig.add_scatter(x=[cx], y=[cy], mode="markers+text", text=[last["token"]], name=last["kind"],
                        marker=dict(size=32, color=CLOSING_COLOR[last["kind"]], symbol="diamond"),
                        textfont=dict(color=WHITE, size=15),
                        hovertext=[f"{last['kind']}: {last['token']}"], hoverinfo="text")
    depth = max([n["depth"] for n in nodes] + [0 if pos["closing"] is None else -pos["closing"][1]])
    fig.update_xaxes(visible=False)
    fig.update_yaxes(tickvals=[-d for d in range(depth + 1)], ticktext=["context"] + [f"depth {d}" for d in
                     range(1, depth + 1)], range=[-depth - 0.5, 0.5], showgrid=False, zeroline=False)
    fig = style(fig, title, height=120 + 90 * depth)
    fig.update_layout(margin=dict(l=70, r=20, t=fig.layout.margin.t, b=70), font=FONT)
    return fig


def budget_figure(curve: dict, title: str | None = None) -> go.Figure:
    """Exact expected tokens per round against the drafting budget, one line per kind of scheme."""
    fig = go.Figure()
    for kind in curve:
        if kind == "budgets" or kind.endswith(" scheme"):
            continue
        values = curve[kind]
        fig.add_scatter(x=curve["budgets"], y=[None if v is None else float(v) for v in values],
                        mode="lines+markers", name=kind,
                        line=dict(color=KIND_COLOR.get(kind, GREY), dash=KIND_DASH.get(kind, "solid"), width=3),
                        marker=dict(size=9), customdata=[[exact(v), s] for v, s in zip(values, curve[kind + " scheme"])],
                        hovertemplate="budget %{x}: %{customdata[0]} (%{customdata[1]})<extra>" + kind + "</extra>")
    fig.update_xaxes(dtick=1)
    return style(fig, title, "drafted tokens per round (budget)", "E[tokens per round]")


def mask_figure(grid, row_labels, col_labels, title: str | None = None) -> go.Figure:
    """A boolean attention grid (rows: queries, columns: keys) as a two-colour heatmap, labels on both axes.

    Labels must be distinct (plotly merges equal category labels).
    """
    rows = [[int(v) for v in row] for row in grid]
    if len(set(row_labels)) != len(row_labels) or len(set(col_labels)) != len(col_labels):
        raise ValueError("mask labels must be distinct")
    fig = go.Figure(go.Heatmap(
        z=rows, x=list(col_labels), y=list(row_labels), zmin=0, zmax=1, showscale=False, xgap=2, ygap=2,
        colorscale=[[0, PANEL], [1, P_COLOR]],
        customdata=[["sees" if v else "hidden" for v in row] for row in rows],
        hovertemplate="query %{y} · key %{x}: %{customdata}<extra></extra>"))
    fig.update_yaxes(autorange="reversed", type="category", title_text="query (verified position)")
    fig.update_xaxes(type="category", title_text="key (cached or verified position)", tickangle=-60)
    fig = style(fig, title, height=160 + 34 * len(rows))
    fig.update_layout(margin=dict(l=90, r=20, t=fig.layout.margin.t, b=120))
    return fig
