"""The Serving page's figures: speedup over batch x γ, the verify pass growing with the batch (played in
the browser), and the tiny GPT's measured points over the model's curve.

Data in, ``go.Figure`` out: ``specsim.views.serving_view`` computes every number.

>>> from specsim.views import serving_view as sv
>>> s = sv.Settings(context=128)
>>> fig = speedup_heatmap(sv.grid(s))
>>> [t.name for t in fig.data]
['speedup', 'best γ per batch', 'crossover: batch 324', 'memory: 2,931 sequences at most']
>>> fig = play_animation(sv.play_frames(s, 4, [1, 64, 4096]), speed=0.4)
>>> len(fig.frames), [st.label for st in fig.layout.sliders[0].steps]
(3, ['1', '64', '4,096'])
"""
from __future__ import annotations

import math

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .anim import animate
from .charts import style
from .colors import BLACK, DARK_GREY, GREY, OVERLAP_COLOR, P_COLOR, Q_COLOR, RESIDUAL_COLOR, WHITE

PASSES = (("plain", "target step"), ("verify", "verify pass"), ("draft", "drafter step"))
GAMMA_COLORS = [P_COLOR, Q_COLOR, OVERLAP_COLOR, RESIDUAL_COLOR, "#8455b8", "#17becf", DARK_GREY, "#b5a642",
                "#e377c2", "#7f7f7f"]


def _time(us: float) -> str:
    """A bar's label: "15.2 µs", "4.49 ms".

    >>> _time(15.24), _time(4490.0)
    ('15.2 µs', '4.49 ms')
    """
    return f"{us:.3g} µs" if us < 1000 else f"{us / 1000:.3g} ms"


def diverging_at_one(low: float, high: float) -> list:
    """A red-white-blue colour scale over [low, high] whose white sits exactly at 1x (plotly ignores ``zmid``
    once zmin and zmax are set, so the middle is placed by hand); low <= 1 < high.

    >>> diverging_at_one(0.5, 2.0)[1], diverging_at_one(1.0, 3.0)[0]
    ([0.3333333333333333, '#ffffff'], [0.0, '#ffffff'])
    """
    mid = (1.0 - low) / (high - low)
    scale = [[mid, WHITE], [1.0, P_COLOR]]
    return ([[0.0, RESIDUAL_COLOR]] + scale) if mid > 0 else scale


def speedup_heatmap(g: dict) -> go.Figure:
    """Speedup (× plain decoding) at every batch (x, one column each) and γ (y, 0 = plain); a star on each
    batch's best γ; a line at the crossover batch and at the largest batch that fits in memory.

    Colours diverge at 1×: red slower than plain decoding, blue faster.
    """
    batches, gammas = g["batches"], g["gammas"]
    xs = [f"{b:,}" for b in batches]
    z = [[row[j] for row in g["speedup"]] for j in range(len(gammas))]  # rows: γ, columns: batch
    low = min(1.0, min(min(r) for r in g["speedup"]))
    high = max(1.01, max(max(r) for r in g["speedup"]))
    fig = go.Figure()
    fig.add_heatmap(x=xs, y=gammas, z=z, zmin=low, zmax=high, colorscale=diverging_at_one(low, high), name="speedup",
                    colorbar=dict(title="×", thickness=12, len=0.8),
                    hovertemplate="batch %{x}, γ = %{y}: %{z:.2f}×<extra></extra>")
    fig.add_scatter(x=xs, y=g["best_gamma"], mode="markers", name="best γ per batch",
                    marker=dict(symbol="star", size=12, color=BLACK, line=dict(width=1, color=WHITE)),
                    customdata=[f"{s:.2f}" for s in g["best_speedup"]],
                    hovertemplate="batch %{x}: best γ = %{y} (%{customdata}×)<extra></extra>")
    lo, hi = min(gammas) - 0.5, max(gammas) + 0.5
    if g["crossover"] is not None:
        x = f"{g['crossover']:,}"
        fig.add_scatter(x=[x, x], y=[lo, hi], mode="lines", name=f"crossover: batch {g['crossover']:,}",
                        line=dict(color=BLACK, width=3), hovertemplate="from batch %{x} no γ pays<extra></extra>")
    if g["max_batch"] is not None and g["max_batch"] in batches:
        x = f"{g['max_batch']:,}"
        fig.add_scatter(x=[x, x], y=[lo, hi], mode="lines", name=f"memory: {g['max_batch']:,} sequences at most",
                        line=dict(color=DARK_GREY, width=3, dash="dot"),
                        hovertemplate="at most %{x} sequences fit<extra></extra>")
    fig.update_xaxes(type="category", tickangle=-90)
    fig.update_yaxes(dtick=1, range=[lo, hi])
    fig = style(fig, "Speedup over batch × γ (★ best γ of each batch)", "batch (sequences decoded together)",
                "γ (0 = plain)", height=460)
    fig.update_layout(margin=dict(b=150))
    return fig


def play_animation(d: dict, speed: float = 0.4) -> go.Figure:
    """The batch grows, one frame each: per sequence, the time each pass would take from its bytes
    alone and from its FLOPs alone (log axis; the longer bar bounds the pass), and the best speedup
    against the batch with the current batch marked."""
    frames = d["frames"]
    fig = make_subplots(rows=2, cols=1, row_heights=[0.55, 0.45], vertical_spacing=0.2)
    names = [label for _, label in PASSES]

    def bars(f, key):
        xs = [f[p][key] for p, _ in PASSES]
        return xs, [_time(x) for x in xs]

    for key, name, colour in (("memory_us", "from bytes (memory)", P_COLOR),
                              ("compute_us", "from FLOPs (compute)", Q_COLOR)):
        xs, text = bars(frames[0], key)
        fig.add_bar(x=xs, y=names, orientation="h", name=name, marker_color=colour, text=text,
                    textposition="outside", cliponaxis=False, row=1, col=1,
                    hovertemplate="%{y}: %{x:.3g} µs per sequence<extra>" + name + "</extra>")
    batches = [f["batch"] for f in frames]
    best = [f["best_speedup"] for f in frames]
    fig.add_scatter(x=batches, y=best, mode="lines", name="best speedup", line_color=OVERLAP_COLOR, row=2, col=1,
                    hovertemplate="batch %{x}: %{y:.2f}×<extra></extra>")
    fig.add_scatter(x=[batches[0]], y=[best[0]], mode="markers", name="this batch", row=2, col=1,
                    marker=dict(size=13, color=BLACK), hovertemplate="batch %{x}: %{y:.2f}×<extra></extra>")
    fig.add_hline(y=1, line_dash="dash", line_color=GREY, row=2, col=1)
    if d["max_batch"] is not None:
        fig.add_vline(x=max(d["max_batch"], 1), line_dash="dot", line_color=DARK_GREY, row=2, col=1)
    values = [f[p][k] for f in frames for p, _ in PASSES for k in ("memory_us", "compute_us")]
    lo, hi = min(values), max(values)
    # a label at each power of ten only (plotly's default adds 2 and 5 between them, and a stray 0.5 before batch 1)
    fig.update_xaxes(type="log", range=[math.log10(lo) - 0.3, math.log10(hi) + 1.2], row=1, col=1, dtick=1,
                     title_text="µs per sequence (log)")
    fig.update_xaxes(type="log", title_text="batch (log; dotted: memory limit)", row=2, col=1, dtick=1,
                     range=[-0.05, math.log10(max(batches)) + 0.05])
    fig.update_yaxes(autorange="reversed", row=1, col=1)
    fig.update_yaxes(title_text="best speedup (×)", range=[0, max(best + [1.0]) * 1.15], row=2, col=1)
    fig = style(fig, None, height=560)
    data = []
    for f in frames:
        row = []
        for key in ("memory_us", "compute_us"):
            xs, text = bars(f, key)
            row.append(go.Bar(x=xs, text=text))
        row += [None, go.Scatter(x=[f["batch"]], y=[f["best_speedup"]])]
        data.append(row)
    return animate(fig, frames, data, speed)


def measured_chart(m: dict, title: str | None = None) -> go.Figure:
    """The tiny GPT's serve-bench: measured speedup (markers) and the calibrated roofline's prediction
    (lines) against the batch, one colour per γ, with the break-even line at 1×."""
    fig = go.Figure()
    fig.add_hline(y=1, line_dash="dash", line_color=GREY)
    for i, (g, pts) in enumerate(m["points"].items()):
        colour = GAMMA_COLORS[i % len(GAMMA_COLORS)]
        b = [p[0] for p in pts]
        fig.add_scatter(x=b, y=[p[2] for p in pts], mode="lines", name=f"γ = {g} model", line=dict(color=colour),
                        hovertemplate="batch %{x}: predicted %{y:.2f}×<extra></extra>")
        fig.add_scatter(x=b, y=[p[1] for p in pts], mode="markers", name=f"γ = {g} measured",
                        marker=dict(color=colour, size=10),
                        hovertemplate="batch %{x}: measured %{y:.2f}×<extra></extra>")
    batches = sorted({p[0] for pts in m["points"].values() for p in pts})
    fig.update_xaxes(type="log", tickvals=batches, ticktext=[f"{b:,}" for b in batches])  # the batches measured only
    cross = lambda c: "none" if c is None else f"{c:,}"  # noqa: E731
    title = title or (f"Tiny GPT, {m['threads']} thread(s): crossover measured {cross(m['crossover'])}, "
                      f"predicted {cross(m['predicted_crossover'])}")
    return style(fig, title, "batch (log)", "speedup (× plain decoding)", height=420)
