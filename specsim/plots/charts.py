"""Plotly figures for specsim: data in, ``go.Figure`` out.

Every builder takes plain data (rows of Fractions or floats, dicts returned
by the library) and returns a figure with labelled axes. Probabilities are
plotted as floats and shown exactly (``3/5``) on hover when they are
Fractions. Nothing here imports Streamlit, so every figure is testable on
its own. Colours come from ``specsim.plots.colors``: p (target) blue, q (drafter)
orange, min(p, q) green, residual red, bonus purple.

The one-position figures, the exact engine's figures and the speedup
figures live here; the sampled round, the pitfalls and the tiny GPT's
figures live in ``specsim.plots.rounds`` and ``specsim.plots.gpt``.

Example
-------
>>> from fractions import Fraction as F
>>> fig = residual_stack(["a", "b", "c"], [F(3, 5), F(3, 10), F(1, 10)],
...                      [F(1, 2), F(2, 5), F(1, 10)])
>>> [t.name for t in fig.data]
['min(p, q)', '(1 − α)·r', 'p', 'q (drafter)']
"""
from __future__ import annotations

import re
from fractions import Fraction
from typing import Sequence

import plotly.colors as pc
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .. import rule
from .colors import (BONUS_COLOR, CYAN, DARK_GREY, GREY, MUTED, OVERLAP_COLOR, P_COLOR, PANEL,  # noqa: F401
                     Q_COLOR, RESIDUAL_COLOR)

FONT = dict(size=14)
PROBABILITY = "probability"
SPEEDUP_CAP = 6.0


def exact(x) -> str:
    """A number as readable text: Fractions exactly ("3/5"), floats to 4 digits."""
    if isinstance(x, Fraction):
        return str(x)
    if isinstance(x, int):
        return str(x)
    return f"{float(x):.4g}"


def label(x) -> str:
    """A short bar label: a Fraction of at most 5 characters as is ("3/5"), else a decimal ("0.729")."""
    text = exact(x)
    if isinstance(x, Fraction) and len(text) > 5:
        return f"{float(x):.3g}"
    return text


def exact_dec(x) -> str:
    """A Fraction with its decimal beside it when it is long ("729/1000 ≈ 0.729"), else ``exact(x)``."""
    text = exact(x)
    if isinstance(x, Fraction) and x.denominator != 1 and len(text) > 5:
        return f"{text} ≈ {float(x):.4g}"
    return text


def wrap(text: str | None, width: int = 46) -> str | None:
    """Break a title into lines of at most ``width`` characters (at spaces) with ``<br>``."""
    if not text or len(text) <= width:
        return text
    lines, line = [], ""
    for word in text.split(" "):
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return "<br>".join(lines + [line])


def shorten(text: str, width: int = 24) -> str:
    """``text`` cut to its last ``width`` characters with a leading "…" (long contexts in titles)."""
    return text if len(text) <= width else "…" + text[-(width - 1):]


def floats(row) -> list:
    return [float(x) for x in row]


def categorical(fig: go.Figure) -> go.Figure:
    """Token axes are categories: tokens "0" and "1" must not become numbers."""
    fig.update_xaxes(type="category")
    return fig


def style(fig: go.Figure, title: str | None = None, x: str | None = None, y: str | None = None,
          height: int = 380) -> go.Figure:
    """Shared layout: a wrapped title, axis labels, the legend below the plot, readable fonts.

    Bar labels that do not fit their bar are hidden (hover still shows them),
    so neighbouring labels never collide.
    """
    title = wrap(title)
    lines = title.count("<br>") + 1 if title else 0
    fig.update_layout(
        title=dict(text=title, x=0, xanchor="left", pad=dict(l=12), font_size=15) if title else None,
        font=FONT, height=height + 20 * max(lines - 1, 0),
        margin=dict(l=60, r=20, t=40 + 22 * lines if title else 30, b=100),
        legend=dict(orientation="h", yref="container", yanchor="bottom", y=0, xanchor="left", x=0),
        hoverlabel=dict(font_size=14), uniformtext=dict(minsize=10, mode="hide"),
    )
    if x is not None:
        fig.update_xaxes(title_text=x)
    if y is not None:
        fig.update_yaxes(title_text=y)
    return fig


PROJECTED_PX = 20  # the smallest text of a chart on a projector (``presented``)
_FONTS = ("font", "textfont", "tickfont", "insidetextfont", "outsidetextfont", "grouptitlefont")


def _grow_fonts(node, scale: float, smallest: int) -> None:
    """Every font size set anywhere in ``node`` (a figure as plain dicts) times ``scale``, at least
    ``smallest``; the pads and margins set in px (the animation's buttons and slider sit below the plot at
    fixed offsets) times ``scale``, so the larger text keeps its room."""
    if isinstance(node, list):
        for item in node:
            _grow_fonts(item, scale, smallest)
        return
    if not isinstance(node, dict):
        return
    for key, value in node.items():
        if key in _FONTS and isinstance(value, dict) and "size" in value:
            size = value["size"]
            value["size"] = ([max(round(x * scale), smallest) for x in size] if isinstance(size, list)
                             else max(round(size * scale), smallest))
        elif key in ("pad", "margin") and isinstance(value, dict):
            for side in ("t", "b", "l", "r"):
                if isinstance(value.get(side), (int, float)):
                    value[side] = round(value[side] * scale)
        _grow_fonts(value, scale, smallest)


def presented(fig: go.Figure, screen_height: int, share: float = 0.75, smallest: int = PROJECTED_PX) -> go.Figure:
    """A copy of ``fig`` for a projector: ``share`` of a screen ``screen_height`` px high (never shorter than
    it was; the rest of the screen holds a step bar or a caption), and every text in it, in every frame,
    at least ``smallest`` px: titles, axes and their ticks, the legend, annotations and subplot titles, bar
    and marker labels, the animation's buttons and slider, the hover. Text grows by one factor (the base
    font's to ``smallest``, at least 1.3), so sizes keep their order; the margins and the animation's pads
    grow with it. Bar labels too small to fit their bar at ``smallest`` are hidden (hover shows them), not
    shrunk.

    >>> fig = style(go.Figure(go.Bar(x=[1], y=[1], text=["1"], textfont_size=10)), "t", height=380)
    >>> fig.add_annotation(text="note", font_size=11, x=1, y=1) and None
    >>> big = presented(fig, 1080)
    >>> big.layout.height, big.layout.font.size, big.layout.title.font.size, fig.layout.height
    (810, 20, 21, 380)
    >>> big.data[0].textfont.size, big.layout.annotations[0].font.size, big.layout.uniformtext.minsize
    (20, 20, 20)
    """
    spec = fig.to_dict()
    layout = spec.setdefault("layout", {})
    base = (layout.get("font") or {}).get("size") or FONT["size"]
    scale = max(smallest / base, 1.3)
    _grow_fonts(spec, scale, smallest)
    size = max(round(base * scale), smallest)
    layout.setdefault("font", {})["size"] = size
    layout.setdefault("hoverlabel", {}).setdefault("font", {})["size"] = size
    # text that inherits the figure's font gets its size set here: the app's theme (Streamlit's template)
    # sets ticks and axis titles in rem, smaller than the figure's font
    for name, axis in layout.items():
        if re.fullmatch(r"[xy]axis\d*", name) and isinstance(axis, dict):
            axis.setdefault("tickfont", {}).setdefault("size", size)
            title = axis.setdefault("title", {})
            if isinstance(title, dict):
                title.setdefault("font", {}).setdefault("size", size)
    layout.setdefault("legend", {}).setdefault("font", {}).setdefault("size", size)
    for note in layout.get("annotations", []):
        note.setdefault("font", {}).setdefault("size", size)
    for menu in layout.get("sliders", []) + layout.get("updatemenus", []):
        menu.setdefault("font", {}).setdefault("size", size)
        if "currentvalue" in menu or menu in layout.get("sliders", []):
            menu.setdefault("currentvalue", {}).setdefault("font", {}).setdefault("size", size)
    for trace in spec.get("data", []):
        if isinstance(trace.get("colorbar"), dict):
            trace["colorbar"].setdefault("tickfont", {}).setdefault("size", size)
            trace["colorbar"].setdefault("title", {}).setdefault("font", {}).setdefault("size", size)
    if (layout.get("uniformtext") or {}).get("mode"):
        layout["uniformtext"]["minsize"] = max(layout["uniformtext"].get("minsize", 0), smallest)
    margin = layout.setdefault("margin", {})
    margin.setdefault("l", round(80 * scale))
    margin.setdefault("b", round(80 * scale))
    layout["height"] = max(round(screen_height * share), fig.layout.height or 0)
    return go.Figure(spec)


# -- one position: p, q, the rule and the residual -------------------------

def pq_bars(vocab: Sequence[str], p: Sequence, q: Sequence, title: str | None = None,
            highlight: int | None = None) -> go.Figure:
    """Grouped bars of p (target) and q (drafter) over the vocabulary.

    ``highlight`` is the index of a drafted token, outlined on both bars.
    """
    fig = go.Figure()
    for name, row, colour in (("p (target)", p, P_COLOR), ("q (drafter)", q, Q_COLOR)):
        line = [3 if i == highlight else 0 for i in range(len(vocab))]
        fig.add_bar(x=list(vocab), y=floats(row), name=name, marker_color=colour,
                    marker_line=dict(width=line, color="black"),
                    text=[label(v) for v in row], customdata=[exact_dec(v) for v in row],
                    textposition="outside", cliponaxis=False,
                    hovertemplate="%{x}: %{customdata}<extra>" + name + "</extra>")
    fig.update_layout(barmode="group", yaxis_range=[0, 1.12])
    return categorical(style(fig, title, "token", PROBABILITY, height=340))


def residual_panels(vocab: Sequence[str], p: Sequence, q: Sequence) -> go.Figure:
    """Four panels: p and q; min(p, q); max(0, p − q); the normalized residual r."""
    over, ex, r = rule.overlap(p, q), rule.excess(p, q), rule.residual(p, q)
    titles = ("p and q", "min(p, q):<br>accepted<br>as drafted", "max(0, p − q):<br>under-<br>proposed",
              "r = max(0, p − q)<br>/ Σ max(0, p − q)" if r is not None else "r: undefined<br>(p ≤ q everywhere)")
    fig = make_subplots(rows=1, cols=4, subplot_titles=titles, shared_yaxes=True,
                        horizontal_spacing=0.04)
    x = list(vocab)
    fig.add_bar(x=x, y=floats(p), name="p (target)", marker_color=P_COLOR, row=1, col=1,
                text=[label(v) for v in p], customdata=[exact_dec(v) for v in p],
                hovertemplate="%{x}: %{customdata}<extra>p</extra>")
    fig.add_bar(x=x, y=floats(q), name="q (drafter)", marker_color=Q_COLOR, row=1, col=1,
                text=[label(v) for v in q], customdata=[exact_dec(v) for v in q],
                hovertemplate="%{x}: %{customdata}<extra>q</extra>")
    for col, (name, row_, colour) in enumerate(
            (("min(p, q)", over, OVERLAP_COLOR), ("max(0, p − q)", ex, RESIDUAL_COLOR),
             ("r", r if r is not None else [0] * len(x), RESIDUAL_COLOR)), start=2):
        fig.add_bar(x=x, y=floats(row_), name=name, marker_color=colour, showlegend=False,
                    text=[label(v) for v in row_], customdata=[exact_dec(v) for v in row_],
                    textposition="outside", cliponaxis=False,
                    opacity=1 if col < 4 else 0.75, row=1, col=col,
                    hovertemplate="%{x}: %{customdata}<extra>" + name + "</extra>")
    fig.update_traces(textfont_size=12)
    fig.update_layout(barmode="group", yaxis_range=[0, 1.15])
    fig.update_annotations(font_size=11)
    fig.update_xaxes(title_text="token")
    fig.update_yaxes(title_text=PROBABILITY, row=1, col=1)
    style(fig, None, None, None, height=420)
    fig.update_layout(margin_t=90)
    return categorical(fig)


def residual_stack(vocab: Sequence[str], p: Sequence, q: Sequence) -> go.Figure:
    """min(p, q) + (1 − α)·r stacked for each token: the two ways to emit it add up to p; q as diamonds."""
    over = rule.overlap(p, q)
    a, r = rule.alpha(p, q), rule.residual(p, q)
    rest = [(1 - a) * x for x in r] if r is not None else [0 * x for x in p]
    x = list(vocab)
    fig = go.Figure()
    # labels away from the boundary of the two segments, where q's diamond sits when q < p (a label under it
    # was covered, on a projector above all): min(p, q) at its bottom, (1 − α)·r at its top
    fig.add_bar(x=x, y=floats(over), name="min(p, q)", marker_color=OVERLAP_COLOR, insidetextanchor="start",
                text=[label(v) for v in over], customdata=[exact_dec(v) for v in over], textposition="inside",
                hovertemplate="%{x}: drafted and accepted %{customdata}<extra></extra>")
    fig.add_bar(x=x, y=floats(rest), name="(1 − α)·r", marker_color=RESIDUAL_COLOR, insidetextanchor="end",
                text=[label(v) for v in rest], customdata=[exact_dec(v) for v in rest], textposition="inside",
                hovertemplate="%{x}: rejected, then drawn from r: %{customdata}<extra></extra>")
    fig.add_scatter(x=x, y=floats(p), name="p", mode="markers+text",
                    marker=dict(symbol="line-ew-open", size=44, color="black",
                                line=dict(width=3, color="black")),
                    text=["p = " + label(v) for v in p], textposition="top center",
                    hovertemplate="%{x}: %{text}<extra></extra>")
    fig.add_scatter(x=x, y=floats(q), name="q (drafter)", mode="markers",
                    marker=dict(symbol="diamond", size=13, color=Q_COLOR, line=dict(width=1.5, color="black")),
                    customdata=[exact_dec(v) for v in q],
                    hovertemplate="%{x}: q = %{customdata}<extra></extra>")
    fig.update_layout(barmode="stack", yaxis_range=[0, 1.12])
    return categorical(style(fig, f"min(p, q) + (1 − α)·r = p   (α = {exact_dec(a)})", "token", PROBABILITY))


# -- the exact engine --------------------------------------------------------

STOP = "■"
LENGTH_COLORS = [RESIDUAL_COLOR, Q_COLOR, OVERLAP_COLOR, P_COLOR, BONUS_COLOR, DARK_GREY, CYAN]


def outcome_sunburst(outcomes: dict, context: Sequence[str] = ()) -> go.Figure:
    """Sunburst of every emitted sequence of one round, token by token.

    ``outcomes`` maps a tuple of emitted tokens to its probability (as
    ``exact.round_distribution(...).outcomes``). A ring per emitted token; a
    sequence that ends where a longer one continues gets a ``■`` (stop) leaf.
    """
    children = {}
    for seq in outcomes:
        for i in range(1, len(seq)):
            children.setdefault(seq[:i], True)
    ids, labels, parents, values, hover = [], [], [], [], []
    prefixes = set()
    for seq in outcomes:
        for i in range(1, len(seq) + 1):
            prefixes.add(seq[:i])
    for pre in sorted(prefixes, key=lambda s: (len(s), s)):
        ids.append("/".join(pre))
        labels.append(pre[-1])
        parents.append("/".join(pre[:-1]))
        own = outcomes.get(pre, 0)
        ends_here = pre in outcomes and pre not in children
        values.append(float(own) if ends_here else 0.0)
        hover.append(" ".join(pre) + (f"  P = {exact(own)}" if ends_here else ""))
        if pre in outcomes and pre in children:  # emitted, and also a prefix of a longer outcome
            ids.append("/".join(pre) + "/" + STOP)
            labels.append(STOP)
            parents.append("/".join(pre))
            values.append(float(own))
            hover.append(" ".join(pre) + f" (round ends)  P = {exact(own)}")
    colours = [LENGTH_COLORS[(len(i.split("/")) - (1 if i.endswith(STOP) else 0) - 1) % len(LENGTH_COLORS)]
               if v else PANEL for i, v in zip(ids, values)]
    fig = go.Figure(go.Sunburst(ids=ids, labels=labels, parents=parents, values=values,
                                marker=dict(colors=colours, line=dict(color="white", width=1)),
                                branchvalues="remainder", hovertext=hover,
                                hovertemplate="%{hovertext}<br>share of the round: %{percentRoot:.2%}<extra></extra>",
                                insidetextorientation="horizontal", sort=False, textfont_size=18))
    ctx = shorten(" ".join(context))
    fig.add_annotation(text="rings, from the centre: 1st, 2nd, 3rd … emitted token;<br>"  # short lines: a phone
                       f"{STOP} = the round stops there<br>colour = tokens the round emits: " + ", ".join(
                           f"<span style='color:{c}'>■</span> {n}"
                           for n, c in enumerate(LENGTH_COLORS[:max(map(len, outcomes))], 1)),
                       xref="paper", yref="paper", x=0, y=-0.02, yanchor="top", showarrow=False,
                       font_size=12, align="left")
    fig = style(fig, f"{len(outcomes)} outcomes of one round from context \"{ctx}\"", height=560)
    fig.update_layout(margin_b=60, uniformtext_mode=False)  # each slice's label as large as it fits
    return fig


def accepted_distribution(exact_probs: Sequence, iid_probs: Sequence | None = None,
                          title: str | None = None) -> go.Figure:
    """P(K = k) for k = 0..γ: the exact engine's values beside the i.i.d. formula's."""
    k = list(range(len(exact_probs)))
    fig = go.Figure()
    fig.add_bar(x=k, y=floats(exact_probs), name="exact (enumerated)", marker_color=P_COLOR,
                text=[label(v) for v in exact_probs], customdata=[exact_dec(v) for v in exact_probs],
                textposition="outside", cliponaxis=False,
                hovertemplate="K = %{x}: %{customdata}<extra>exact</extra>")
    if iid_probs is not None:
        fig.add_bar(x=k, y=floats(iid_probs), name="i.i.d. formula: α^k(1 − α) for k < γ, α^γ for k = γ",
                    marker_color=GREY,
                    text=[label(v) for v in iid_probs], customdata=[exact_dec(v) for v in iid_probs],
                    textposition="outside", cliponaxis=False,
                    hovertemplate="K = %{x}: %{customdata}<extra>i.i.d.</extra>")
    fig.update_layout(barmode="group", yaxis_range=[0, 1.1])
    fig.update_xaxes(tickmode="array", tickvals=k)
    return style(fig, title or "Accepted drafts per round K", "K (drafts accepted in the round)",
                 PROBABILITY)


def gamma_bins(max_gamma: int) -> list:
    """Doubling bins of γ for a discrete colour scale: [(1, 1), (2, 2), (3, 4), (5, 8), …] up to ``max_gamma``.

    >>> gamma_bins(10)
    [(1, 1), (2, 2), (3, 4), (5, 8), (9, 10)]
    """
    bins, lo, hi = [], 1, 1
    while lo <= max_gamma:
        bins.append((lo, min(hi, max_gamma)))
        lo, hi = hi + 1, hi * 2
    return bins


def _bin_of(g: int, bins) -> int:
    return next(i for i, (lo, hi) in enumerate(bins) if lo <= g <= hi)


# -- speedup -----------------------------------------------------------------

def text_side(x: float, lo: float, hi: float) -> str:
    """Where a marker's label goes so that it stays inside the plot: right of a point in the first quarter
    of [lo, hi], left of one in the last quarter, centred above the others.

    >>> text_side(1, 1, 32), text_side(16, 1, 32), text_side(32, 1, 32)
    ('top right', 'top center', 'top left')
    """
    span = max(hi - lo, 1)
    return "top right" if x - lo < span / 4 else "top left" if hi - x < span / 4 else "top center"


def speedup_curve(gammas: Sequence[int], speedups: Sequence, best: tuple | None = None,
                  title: str | None = None) -> go.Figure:
    """Speedup against γ, the best γ marked and the break-even line at 1×."""
    fig = go.Figure()
    fig.add_hrect(y0=0, y1=1, fillcolor=RESIDUAL_COLOR, opacity=0.08, line_width=0,
                  annotation_text="slower than plain decoding", annotation_position="bottom right")
    fig.add_hline(y=1, line_dash="dash", line_color=GREY)
    fig.add_scatter(x=list(gammas), y=floats(speedups), mode="lines+markers", name="speedup",
                    line_color=P_COLOR, hovertemplate="γ = %{x}: %{y:.3f}×<extra></extra>")
    if best is not None:
        g, s = best
        fig.add_scatter(x=[g], y=[float(s)], mode="markers+text", name=f"best γ = {g}",
                        marker=dict(size=16, color=OVERLAP_COLOR, symbol="star"),
                        text=[f"best γ = {g}: {float(s):.2f}×"], textposition=text_side(g, min(gammas), max(gammas)),
                        hovertemplate="best γ = %{x}: %{y:.3f}×<extra></extra>")
    top = max([float(s) for s in speedups] + [1.0])
    fig.update_yaxes(range=[0, top * 1.15])
    return style(fig, title, "draft length γ (tokens per round)", "speedup (× plain decoding)")


def best_gamma_heatmaps(alphas: Sequence[float], costs: Sequence[float], best_gammas, best_speedups,
                        mark=None, max_gamma: int | None = None) -> go.Figure:
    """Heatmaps over (α, c) of the best γ and of the best speedup.

    ``best_gammas[i][j]`` and ``best_speedups[i][j]`` belong to ``costs[i]``
    and ``alphas[j]``. Cells where even the best γ is slower than plain
    decoding (speedup ≤ 1) are greyed out in both. ``mark`` = (α, c) puts a
    cross on the currently chosen point. The speedup colours stop at
    ``SPEEDUP_CAP``× (larger values share the top colour; hover shows them).
    Best γ gets one colour per doubling bin (``gamma_bins``), so 1, 2, 3-4 and
    5-8 look different; ``max_gamma`` is the search limit.
    """
    top_g = max([v for row in best_gammas for v in row] + [1]) if max_gamma is None else max_gamma
    fig = make_subplots(rows=2, cols=1, vertical_spacing=0.14,  # stacked: readable at 420 px too
                        subplot_titles=(f"best γ (searched up to {top_g})", "best speedup (×)"))
    slower = [[float(s) <= 1 for s in row] for row in best_speedups]
    g = [[None if sl else v for v, sl in zip(row, srow)] for row, srow in zip(best_gammas, slower)]
    s = [[None if sl else float(v) for v, sl in zip(row, srow)] for row, srow in zip(best_speedups, slower)]
    grey = [[1 if sl else None for sl in srow] for srow in slower]
    for row in (1, 2):
        fig.add_heatmap(x=list(alphas), y=list(costs), z=grey, showscale=False, hoverinfo="skip",
                        colorscale=[[0, MUTED], [1, MUTED]], row=row, col=1)
    bins = gamma_bins(top_g)
    palette = [pc.sample_colorscale("Viridis", i / max(len(bins) - 1, 1))[0] for i in range(len(bins))]
    scale = []
    for i, colour in enumerate(palette):
        scale += [[i / len(bins), colour], [(i + 1) / len(bins), colour]]
    zb = [[None if v is None else _bin_of(v, bins) for v in row] for row in g]
    names = [f"{lo}" if lo == hi else f"{lo}-{hi}" for lo, hi in bins]
    fig.add_heatmap(x=list(alphas), y=list(costs), z=zb, customdata=g, colorscale=scale, row=1, col=1,
                    zmin=-0.5, zmax=len(bins) - 0.5,
                    colorbar=dict(title="γ", y=0.79, len=0.42, thickness=14, tickvals=list(range(len(bins))),
                                  ticktext=names),
                    hovertemplate="α = %{x:.2f}, c = %{y:.2f}: best γ = %{customdata}<extra></extra>")
    top = max([v for row in s for v in row if v is not None] + [1.0])
    fig.add_heatmap(x=list(alphas), y=list(costs), z=s, colorscale="YlGnBu", row=2, col=1, zmin=1,
                    zmax=min(top, SPEEDUP_CAP), colorbar=dict(title="×", y=0.21, len=0.42, thickness=14),
                    hovertemplate="α = %{x:.2f}, c = %{y:.2f}: %{z:.2f}×<extra></extra>")
    if mark is not None:
        for row in (1, 2):
            fig.add_scatter(x=[float(mark[0])], y=[float(mark[1])], mode="markers", showlegend=False,
                            marker=dict(symbol="x", size=14, color="white", line=dict(width=2, color="black")),
                            hovertemplate="chosen α, c<extra></extra>", row=row, col=1)
    fig.update_xaxes(title_text="α (acceptance rate)")
    fig.update_yaxes(title_text="c (drafter cost)")  # short: a phone's chart cut "c (drafter / target step)"
    fig = style(fig, "grey: slower than plain decoding for every γ; ✕: your α and c", height=720)
    fig.update_layout(title_font_size=13, margin_b=60)
    return fig


def expected_tokens_curve(gammas: Sequence[int], exact_tokens: Sequence, iid_tokens: Sequence,
                          title: str | None = None) -> go.Figure:
    """Expected tokens per round: the exact (non-i.i.d.) value of a toy model against the formula."""
    fig = go.Figure()
    fig.add_scatter(x=list(gammas), y=floats(exact_tokens), mode="lines+markers", name="exact (toy model)",
                    line_color=P_COLOR, text=[exact_dec(v) for v in exact_tokens],
                    hovertemplate="γ = %{x}: %{text}<extra>exact</extra>")
    fig.add_scatter(x=list(gammas), y=floats(iid_tokens), mode="lines+markers", name="i.i.d. formula",
                    line=dict(color=GREY, dash="dash"), text=[exact_dec(v) for v in iid_tokens],
                    hovertemplate="γ = %{x}: %{text}<extra>i.i.d.</extra>")
    fig.update_xaxes(tickmode="array", tickvals=list(gammas))
    return style(fig, title, "draft length γ (tokens per round)", "E[tokens per round]")
