"""Animated figures: frames computed by ``specsim.views.frames``, played and scrubbed by plotly in the browser.

Each builder takes the data a ``frames`` function returns and a ``speed``
(seconds per frame) and returns a ``go.Figure`` with one plotly frame per
data frame, a Play/Pause pair and a slider with one step per frame. Every
frame updates every trace (a static one with an empty update) and the
caption, a text trace at the top, so a frame changes data only: plotly
updates in place without a full redraw and shows every frame; Play stops at
the last frame by itself. No heatmaps (a frame that is not redrawn wipes
them: the best-γ map is a layout image). Bars
never start empty (a bar that appears without a redraw is drawn unstyled);
the round, whose frames recolour the token strip, redraws each frame.

Example
-------
>>> from specsim.toy import load_model
>>> from specsim.views import frames
>>> data = frames.round_frames(load_model("seed"), ("a",), 3, seed=0)
>>> fig = round_animation(data, speed=0.5)
>>> len(fig.frames), len(fig.layout.sliders[0].steps), fig.layout.updatemenus[0].buttons[0].args[1]["frame"]
(8, 8, {'duration': 484, 'redraw': True})
"""
from __future__ import annotations

import base64

import plotly.graph_objects as go
import plotly.colors as pc
from plotly.subplots import make_subplots

from .colors import (BLACK, BONUS_COLOR, DARK_GREY, GREY, MUTED, OVERLAP_COLOR, P_COLOR, Q_COLOR,
                     RESIDUAL_COLOR, WHITE, shade, tint)
from .charts import PROBABILITY, categorical, exact_dec, gamma_bins, label, style, text_side, wrap

MIN_SPEED, MAX_SPEED = 0.05, 10.0  # seconds per frame
MAX_FRAMES = 500
STATUS_COLORS = {"empty": WHITE, "pending": tint(Q_COLOR, 0.55), "accepted": OVERLAP_COLOR,
                 "rejected": tint(RESIDUAL_COLOR, 0.55), "discarded": MUTED,  # light red: red is the replacement's
                 "correct": RESIDUAL_COLOR, "bonus": BONUS_COLOR}
STATUS_WORDS = {"empty": "", "pending": "pending", "accepted": "accepted", "rejected": "rejected",
                "discarded": "discarded", "correct": "replacement", "bonus": "bonus"}
STATUS_MARKS = {"empty": "", "pending": "?", "accepted": "✓", "rejected": "✗", "discarded": "–",
                "correct": "repl.", "bonus": "bonus"}


def _f(row) -> list:
    return [] if row is None else [float(x) for x in row]


# -- the player: frames, Play/Pause and a slider, shared by every figure ---------------
def _caption_axes(fig: go.Figure, share: float) -> tuple:
    """Free axes for the caption across the top ``share`` of the plot area; every subplot moves down under it."""
    layout = fig.layout.to_plotly_json()
    used = {getattr(t, "xaxis", None) or "x" for t in fig.data} | {k[1:] for k in layout if k.startswith("xaxis")}
    k = 1 + max(int(a[1:] or 1) for a in used if a.startswith("x"))
    scale = 1 - share - 0.03
    for name in [n for n in layout if n.startswith("yaxis")] or ["yaxis"]:
        lo, hi = layout.get(name, {}).get("domain", [0, 1])
        fig.layout[name].domain = [lo * scale, hi * scale]
    for a in fig.layout.annotations:  # subplot titles sit on the subplots' top edges
        if a.yref == "paper":
            a.y = a.y * scale
    fig.layout[f"xaxis{k}"] = dict(domain=[0, 1], range=[0, 1], visible=False, fixedrange=True)
    fig.layout[f"yaxis{k}"] = dict(domain=[1 - share, 1], range=[0, 1], visible=False, fixedrange=True)
    fig.add_shape(type="rect", xref=f"x{k} domain", yref=f"y{k} domain", x0=-0.01, x1=1.01, y0=-0.05, y1=1.05,
                  fillcolor=WHITE, line_width=0, layer="below")  # no plot background behind the words
    return f"x{k}", f"y{k}"


DISPLAY_FRAME_MS = 16  # plotly starts each next frame on the display's next refresh after the wait


def frame_duration(speed: float) -> int:
    """The wait plotly is given per frame (ms) so that frames land ``speed`` seconds apart.

    plotly waits ``duration`` and then draws on the next display refresh, about one
    60 Hz frame later: asked for 100 ms it showed frames 117 ms apart in headless
    Chromium (``tests/browser_anim_check.py``), so one display frame is taken off.

    >>> frame_duration(0.1), frame_duration(0.5), frame_duration(0.01)
    (84, 484, 0)
    """
    return max(0, round(speed * 1000) - DISPLAY_FRAME_MS)


def animate(fig: go.Figure, frames: list, data: list, speed: float, redraw: bool = False,
            layouts: list | None = None) -> go.Figure:
    """Attach ``data[i]`` as frame i, named by ``frames[i]["name"]``: one entry per trace of ``fig``,
    the trace's new values, or None for a trace that never changes (an exact reference). ``layouts[i]``,
    when given, is frame i's layout change (an axis range that follows the data); the figure opens on
    ``layouts[0]``.

    Every frame updates every trace, and the caption of each frame is a
    text trace at the top of the figure (added here, last), so a frame changes
    data only: plotly moves from frame to frame without a full redraw (which
    would cost more than a frame at a fast speed) and shows every frame.
    Without a redraw plotly moves points, bars and their text but does not
    restyle them: a figure whose frames change colours, outlines or empty
    labels passes ``redraw=True``.
    """
    if not MIN_SPEED <= speed <= MAX_SPEED:
        raise ValueError(f"speed must be from {MIN_SPEED} to {MAX_SPEED} seconds per frame, got {speed}")
    if not frames or len(frames) != len(data) or len(frames) > MAX_FRAMES:
        raise ValueError(f"an animation takes 1 to {MAX_FRAMES} frames, one list of traces each; "
                         f"got {len(frames)} frames and {len(data)} lists")
    captions = [wrap(f["caption"], 46) for f in frames]
    lines = max(c.count("<br>") + 1 for c in captions)
    plot_px = fig.layout.height - fig.layout.margin.b - 20  # style() set both
    fig.update_layout(margin=dict(t=44, b=170))
    xa, ya = _caption_axes(fig, min(0.4, (19 * lines + 10) / plot_px))
    fig.add_scatter(x=[0], y=[1], mode="text", text=[captions[0]], textposition="bottom right", xaxis=xa, yaxis=ya,
                    textfont=dict(size=14, color=BLACK), showlegend=False, hoverinfo="skip", cliponaxis=False)
    # every frame lists every trace (a trace left out of a frame that is not redrawn is wiped): a static one
    # as an empty trace of its type, which changes nothing
    stub = [type(t)() for t in fig.data]
    fig.frames = [go.Frame(name=f["name"], data=[*(s if t is None else t for s, t in zip(stub, d)),
                                                 go.Scatter(text=[c])], layout=lay)
                  for f, d, c, lay in zip(frames, data, captions, layouts or [None] * len(frames))]
    if layouts:
        fig.update_layout(layouts[0])
    for trace, new in zip(fig.data, data[0]):  # the figure opens on frame 1
        if new is not None:
            trace.update({k: v for k, v in new.to_plotly_json().items() if k != "type"})
    instant = dict(frame=dict(duration=0, redraw=redraw), mode="immediate", transition=dict(duration=0))
    play = dict(instant, frame=dict(duration=frame_duration(speed), redraw=redraw), fromcurrent=True)
    many = len(frames) > 6  # step labels would collide: the current one shows above the slider instead
    fig.update_layout(
        height=fig.layout.height + 19 * lines + 74, title=None,
        # a frame without a redraw shrinks bar labels to fit (so does a redraw now): the bars keep their labels
        # at full size instead (constraintext="none"), a label taller than its bar reads across its edge
        uniformtext=dict(mode=False),
        updatemenus=[dict(type="buttons", direction="left", x=0, xanchor="left", y=0,
                          yanchor="top", pad=dict(t=82, r=4), showactive=False, font_size=13,
                          buttons=[dict(label="▶ Play", method="animate", args=[None, play]),
                                   dict(label="❚❚", method="animate", args=[[None], instant])])],
        # the rail starts 120 px in, right of the two buttons, at any width (x=0.3 let them overlap at 420 px)
        sliders=[dict(active=0, x=0, len=1, y=0, yanchor="top", pad=dict(t=72, b=0, l=120),
                      currentvalue=dict(font=dict(size=14, color=DARK_GREY), xanchor="right"),
                      transition=dict(duration=0), ticklen=3,
                      font=dict(size=12, color="rgba(0,0,0,0)" if many else DARK_GREY),
                      steps=[dict(label=f["name"], method="animate", args=[[f["name"]], instant]) for f in frames])],
    )
    return fig


# -- 1. a round, event by event -----------------------------------------------------
def round_animation(data: dict, speed: float = 0.8) -> go.Figure:
    """The round(s) of ``frames.round_frames``: the token strip, the rows of each event, u against min(1, p/q)."""
    vocab, g = list(data["vocab"]), data["gamma"]
    fig = make_subplots(rows=3, cols=1, row_heights=[0.2, 0.58, 0.22], vertical_spacing=0.12)
    slots = list(range(1, g + 2))
    fig.add_scatter(x=slots, y=[0] * (g + 1), mode="markers+text", showlegend=False, row=1, col=1,
                    marker=dict(symbol="square", size=30, line=dict(width=1.5, color=DARK_GREY)),
                    textfont=dict(size=16, color=BLACK), hoverinfo="skip")
    fig.add_scatter(x=slots, y=[-1.1] * (g + 1), mode="text", showlegend=False, row=1, col=1,
                    textfont=dict(size=11, color=DARK_GREY), hoverinfo="skip")
    for name, colour in (("p (target)", P_COLOR), ("q (drafter)", Q_COLOR), ("residual r", RESIDUAL_COLOR)):
        fig.add_bar(x=vocab, y=[], name=name, marker_color=colour, textposition="inside", textangle=0, constraintext="none",
                    insidetextanchor="end", hovertemplate="%{x}: %{customdata}<extra>" + name + "</extra>", row=2, col=1)
    fig.add_bar(x=[], y=["u vs"], orientation="h", name="min(1, p/q)", row=3, col=1, textposition="inside", width=0.7,
                marker_color=OVERLAP_COLOR,  # green in the legend, as on the stepper's own chart
                insidetextanchor="start", hovertemplate="keep with probability %{text}<extra></extra>")
    fig.add_scatter(x=[], y=["u vs"], mode="markers+text", name="u", textposition="top center", row=3, col=1,
                    marker=dict(symbol="line-ns", size=26, line=dict(width=4, color=BLACK)),
                    hovertemplate="u = %{x:.3f}<extra></extra>")
    words = STATUS_WORDS if g <= 4 else STATUS_MARKS
    traces = []
    for f in data["frames"]:
        strip = f["strip"]
        bars = []
        for key in ("p", "q", "r"):  # a row the event is not about: zero bars, no labels
            row = f[key]
            line = [3 if row and t == f["highlight"] else 0 for t in vocab]
            bars.append(go.Bar(y=_f(row) or [0] * len(vocab),
                               text=[label(v) for v in row] if row else [""] * len(vocab),
                               customdata=[exact_dec(v) for v in row] if row else ["—"] * len(vocab),
                               marker_line=dict(width=line, color=BLACK)))
        test = f["acceptance"] is not None
        kept = f["kind"] == "accept"
        traces.append([
            go.Scatter(text=[s["token"] or "" for s in strip],
                       marker_color=[STATUS_COLORS[s["status"]] for s in strip]),
            go.Scatter(text=[words[s["status"]] for s in strip]),
            *bars,
            go.Bar(x=[float(f["acceptance"]) if test else 0], text=[exact_dec(f["acceptance"]) if test else ""],
                   marker_color=RESIDUAL_COLOR if test and not kept else OVERLAP_COLOR),  # red only when rejected
            go.Scatter(x=[f["u"] if test else None], text=[f"u = {f['u']:.3f}" if test else ""]),
        ])
    fig.update_layout(barmode="group", bargap=0.25)
    fig.update_xaxes(row=1, col=1, range=[0.5, g + 1.5], tickvals=slots, showgrid=False, zeroline=False,
                     ticktext=[f"draft {i}" if g <= 4 else str(i) for i in slots[:-1]] + ["closing"])
    fig.update_yaxes(row=1, col=1, visible=False, range=[-1.6, 0.8])
    fig.update_xaxes(row=2, col=1, type="category", categoryorder="array", categoryarray=vocab, title_text="token")
    fig.update_yaxes(row=2, col=1, range=[0, 1.18], title_text=PROBABILITY)
    fig.update_xaxes(row=3, col=1, range=[0, 1.02], title_text="keep the draft when u < min(1, p/q)")
    fig.update_yaxes(row=3, col=1, type="category", categoryarray=["u vs"], showticklabels=False)
    style(fig, None, height=560)
    return animate(fig, data["frames"], traces, speed, redraw=True)  # statuses change colours


# -- 2. the residual morph -------------------------------------------------------------
def morph_animation(data: dict, speed: float = 0.3) -> go.Figure:
    """q_t sliding (``frames.morph_frames``): p, q_t, min(p, q_t) and the residual r_t, α_t in the caption."""
    vocab = list(data["vocab"])
    fig = go.Figure()
    names = (("p (target)", P_COLOR), ("q_t", Q_COLOR), ("min(p, q_t)", OVERLAP_COLOR),
             ("residual r_t", RESIDUAL_COLOR))
    for name, colour in names:
        fig.add_bar(x=vocab, y=[], name=name, marker_color=colour, textposition="inside", textangle=0, constraintext="none",
                    insidetextanchor="end", hovertemplate="%{x}: %{customdata}<extra>" + name + "</extra>")
    traces = []
    for f in data["frames"]:
        rows = (data["p"], f["q"], f["overlap"], f["residual"] or [0 * x for x in data["p"]])
        traces.append([go.Bar(x=vocab, y=_f(r), text=[label(v) for v in r], customdata=[exact_dec(v) for v in r])
                       for r in rows])
    fig.update_layout(barmode="group", yaxis_range=[0, 1.18])
    categorical(style(fig, None, "token", PROBABILITY, height=420))
    return animate(fig, data["frames"], traces, speed)


# -- 3. the visual proof ------------------------------------------------------------------
def proof_animation(data: dict, speed: float = 0.2) -> go.Figure:
    """First tokens of seeded rounds (``frames.proof_frames``) stacked by source, converging to p."""
    vocab, p = list(data["vocab"]), data["p"]
    fig = go.Figure()
    fig.add_bar(x=vocab, y=[], name="accepted draft (→ min(p, q))", marker_color=OVERLAP_COLOR,
                textposition="inside", textangle=0, constraintext="none", hovertemplate="%{x}: %{text} rounds<extra>accepted draft</extra>")
    fig.add_bar(x=vocab, y=[], name="replacement (→ (1 − α)·r)", marker_color=RESIDUAL_COLOR,
                textposition="inside", textangle=0, constraintext="none", hovertemplate="%{x}: %{text} rounds<extra>replacement</extra>")
    fig.add_scatter(x=vocab, y=_f(data["overlap"]), name="exact min(p, q)", mode="markers",
                    marker=dict(symbol="line-ew-open", size=40, color=shade(OVERLAP_COLOR),
                                line=dict(width=3, color=shade(OVERLAP_COLOR))),
                    customdata=[exact_dec(v) for v in data["overlap"]],
                    hovertemplate="%{x}: min(p, q) = %{customdata}<extra></extra>")
    fig.add_scatter(x=vocab, y=_f(p), name="exact p = min(p, q) + (1 − α)·r", mode="markers",
                    marker=dict(symbol="line-ew-open", size=46, color=BLACK, line=dict(width=3, color=BLACK)),
                    text=["p = " + label(v) for v in p],
                    customdata=[exact_dec(v) for v in data["excess"]],
                    hovertemplate="%{x}: %{text}, (1 − α)·r = %{customdata}<extra></extra>")
    for x, v in zip(vocab, p):  # on a white ground: legible where a growing bar passes behind it
        fig.add_annotation(x=x, y=float(v), text="p = " + label(v), showarrow=False, yshift=16,
                           bgcolor="rgba(255,255,255,0.85)", font=dict(color=BLACK, size=13))
    traces = []
    for f in data["frames"]:
        n = f["n"]
        traces.append([go.Bar(x=vocab, y=[c / n for c in f["drafted"]], text=f["drafted"]),
                       go.Bar(x=vocab, y=[c / n for c in f["replaced"]], text=f["replaced"]), None, None])
    fig.update_layout(barmode="stack", yaxis_range=[0, 1.05])
    categorical(style(fig, None, f"first token of a round (γ = {data['gamma']})", "share of rounds", height=500))
    return animate(fig, data["frames"], traces, speed)


# -- 4. acceptance: K and the per-position rate ------------------------------------------
def acceptance_animation(data: dict, speed: float = 0.2) -> go.Figure:
    """``frames.acceptance_frames``: the sampled K histogram beside the exact P(K) and the i.i.d. formula's
    bars, and the per-position conditional acceptance settling on its exact value."""
    g, exact, iid = data["gamma"], data["exact"], data["iid"]
    ks, pos = list(range(g + 1)), list(range(1, g + 1))
    fig = make_subplots(rows=2, cols=1, vertical_spacing=0.2, row_heights=[0.58, 0.42],
                        subplot_titles=("drafts accepted per round K",
                                        "accepted at position i, among rounds that reached it"))
    fig.add_bar(x=ks, y=[], name="sampled", marker_color=OVERLAP_COLOR, row=1, col=1,
                hovertemplate="K = %{x}: %{customdata}<extra>sampled</extra>")
    fig.add_bar(x=ks, y=_f(exact), name="exact P(K)", marker_color=P_COLOR, row=1, col=1,
                customdata=[exact_dec(v) for v in exact], hovertemplate="K = %{x}: %{customdata}<extra>exact</extra>")
    fig.add_bar(x=ks, y=_f(iid), name="i.i.d. formula: α^k(1 − α), α^γ at K = γ", marker_color=GREY,
                row=1, col=1,
                customdata=[exact_dec(v) for v in iid], hovertemplate="K = %{x}: %{customdata}<extra>i.i.d.</extra>")
    fig.add_scatter(x=pos, y=[], name="sampled rate", mode="lines+markers", line_color=OVERLAP_COLOR, row=2, col=1,
                    hovertemplate="position %{x}: %{customdata}<extra>sampled</extra>")
    rates = data["exact_rates"]
    fig.add_scatter(x=pos, y=[None if r is None else float(r) for r in rates], name="exact rate", mode="markers",
                    marker=dict(symbol="line-ew-open", size=30, color=P_COLOR, line=dict(width=3, color=P_COLOR)),
                    row=2, col=1,
                    customdata=[exact_dec(r) if r is not None else "—" for r in rates],
                    hovertemplate="position %{x}: %{customdata}<extra>exact</extra>")
    fig.add_scatter(x=pos, y=[float(data["alpha"])] * g, name=f"i.i.d.: α = {exact_dec(data['alpha'])}", mode="lines",
                    line=dict(color=GREY, dash="dash"), row=2, col=1, hoverinfo="skip")
    traces = []
    for f in data["frames"]:
        n = f["n"]
        traces.append([go.Bar(y=[c / n for c in f["counts"]], customdata=[f"{c} of {n}" for c in f["counts"]]),
                       None, None,
                       go.Scatter(y=[None if r is None else float(r) for r in f["rates"]],
                                  customdata=[f"{k} of {r}" for k, r in zip(f["kept"], f["reached"])]),
                       None, None])
    fig.update_layout(barmode="group")
    fig.update_xaxes(row=1, col=1, tickvals=ks, title_text="K")
    fig.update_xaxes(row=2, col=1, tickvals=pos, range=[0.5, g + 0.5], title_text="draft position i")
    fig.update_yaxes(row=1, col=1, range=[0, 1.05], title_text=PROBABILITY)
    fig.update_yaxes(row=2, col=1, range=[0, 1.05], title_text="rate")
    style(fig, None, height=620)
    fig.update_annotations(font_size=12)
    return animate(fig, data["frames"], traces, speed)


# -- 5. the speedup curve swept over α or c ---------------------------------------------
def _map_image(grid: dict, colours: list) -> dict:
    """The best-γ map as a layout image (an SVG of one rectangle per run of equal cells), placed on its cells.

    A heatmap would be wiped by a frame that is not redrawn (plotly does not
    animate heatmaps); an image is part of the layout, which frames leave alone.
    ``colours[i][j]`` is the colour of cost i and alpha j.
    """
    alphas, costs = grid["alphas"], grid["costs"]
    da, dc = alphas[1] - alphas[0], costs[1] - costs[0]  # the grids are evenly spaced
    rects = []
    for i, row in enumerate(colours):
        y, j = len(costs) - 1 - i, 0  # SVG rows run top down, costs bottom up
        while j < len(row):
            k = j
            while k + 1 < len(row) and row[k + 1] == row[j]:
                k += 1
            rects.append(f'<rect x="{j}" y="{y}" width="{k - j + 1}" height="1" fill="{row[j]}"/>')
            j = k + 1
    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {len(alphas)} {len(costs)}" '
           f'preserveAspectRatio="none" shape-rendering="crispEdges">{"".join(rects)}</svg>')
    return dict(source="data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode(), layer="below",
                x=alphas[0] - da / 2, y=costs[-1] + dc / 2, sizex=len(alphas) * da, sizey=len(costs) * dc,
                xanchor="left", yanchor="top", sizing="stretch")


def speedup_animation(data: dict, speed: float = 0.2) -> go.Figure:
    """``frames.speedup_frames`` or ``cost_frames``: the speedup-vs-γ curve, the best-γ star travelling,
    and a cursor on the map of the best γ over (α, c) (grey: slower than plain decoding for every γ)."""
    grid, frames = data["grid"], data["frames"]
    fig = make_subplots(rows=2, cols=1, vertical_spacing=0.16, row_heights=[0.55, 0.45])
    fig.add_scatter(x=[], y=[], mode="lines+markers", name="speedup", line_color=P_COLOR, row=1, col=1,
                    hovertemplate="γ = %{x}: %{y:.3f}×<extra></extra>")
    fig.add_scatter(x=[], y=[], mode="markers+text", name="best γ", textposition="top center", row=1, col=1,
                    marker=dict(size=16, color=OVERLAP_COLOR, symbol="star", line=dict(width=1, color=BLACK)),
                    hovertemplate="best γ = %{x}: %{y:.3f}×<extra></extra>")
    bins = gamma_bins(data["max_gamma"])
    palette = [pc.sample_colorscale("Viridis", i / max(len(bins) - 1, 1), colortype="tuple")[0]
               for i in range(len(bins))]
    palette = ["#%02x%02x%02x" % tuple(round(255 * v) for v in c) for c in palette]
    colours = [[MUTED if s <= 1 else palette[next(i for i, (lo, hi) in enumerate(bins) if lo <= g <= hi)]
                for g, s in zip(grow, srow)] for grow, srow in zip(grid["best_gamma"], grid["best_speedup"])]
    fig.add_layout_image(_map_image(grid, colours), row=2, col=1)
    scale = [[(i + e) / len(bins), c] for i, c in enumerate(palette) for e in (0, 1)]
    fig.add_scatter(x=[None], y=[None], mode="markers", showlegend=False, hoverinfo="skip", row=2, col=1,
                    marker=dict(color=[0], colorscale=scale, cmin=-0.5, cmax=len(bins) - 0.5, showscale=True,
                                colorbar=dict(title="best γ", y=0, yanchor="bottom", len=0.42, thickness=12,
                                              tickvals=list(range(len(bins))),
                                              ticktext=[f"{lo}" if lo == hi else f"{lo}-{hi}" for lo, hi in bins])))
    fig.add_scatter(x=[], y=[], mode="markers", name="α, c now", row=2, col=1,
                    marker=dict(symbol="x", size=15, color=WHITE, line=dict(width=2, color=BLACK)),
                    hovertemplate="α = %{x:.2f}, c = %{y:.2f}: %{text}<extra>now</extra>")
    traces = [[go.Scatter(x=f["gammas"], y=_f(f["speedups"])),
               go.Scatter(x=[f["best_gamma"]], y=[float(f["best_speedup"])],
                          textposition=text_side(f["best_gamma"], 1, data["max_gamma"]),
                          text=[f"best γ = {f['best_gamma']}: {float(f['best_speedup']):.2f}×"
                                if f["best_label"] == f"best γ = {f['best_gamma']}" else
                                f"γ = {f['best_gamma']}: {float(f['best_speedup']):.2f}× (no γ gains)"]),
               None,
               go.Scatter(x=[float(f["alpha"])], y=[float(f["cost"])], text=[f["best_label"]])]
              for f in frames]
    # each frame's own y range (a range fixed for the whole sweep was flat for most α: the largest speedup,
    # at α near 1, set it), with room above the star for its label
    layouts = [dict(yaxis=dict(range=[0, max([float(s) for s in f["speedups"]] + [1.0]) * 1.3]))
               for f in frames]
    fig.add_hrect(y0=0, y1=1, fillcolor=RESIDUAL_COLOR, opacity=0.08, line_width=0, row=1, col=1)
    fig.add_hline(y=1, line_dash="dash", line_color=GREY, row=1, col=1)
    fig.update_xaxes(row=1, col=1, range=[0.5, data["max_gamma"] + 0.5], title_text="draft length γ")
    fig.update_yaxes(row=1, col=1, title_text="speedup (×)")
    img = fig.layout.images[0]
    low_a = min(float(f["alpha"]) for f in frames)  # the cursor stays in view
    low_c = min(float(f["cost"]) for f in frames)
    fig.update_xaxes(row=2, col=1, range=[min(img.x, low_a - 0.01), img.x + img.sizex],
                     title_text="α (acceptance rate)", showgrid=False)
    fig.update_yaxes(row=2, col=1, range=[min(img.y - img.sizey, low_c - 0.01), img.y], title_text="c (drafter cost)",
                     showgrid=False)
    fig.update_traces(cliponaxis=False, selector=dict(mode="markers+text"))  # the star at γ = 32 whole
    fig.update_traces(cliponaxis=False, selector=dict(name="α, c now"))  # the cursor at c = 0 whole
    style(fig, None, height=720)
    return animate(fig, frames, traces, speed, layouts=layouts)
