"""Lesson 26's figures: tokens arriving in bursts, and the mean gap (TPOT) and the p99 gap against the batch.

Both use the lesson's pair (a Llama-3-8B-shaped target, a Llama-3.2-1B-shaped drafter, an H100 SXM) at
context 128, α = 0.8 and γ = 4, through ``specsim.serving.latency_point`` / ``latency_table``. No chart of
``specsim.plots`` draws a stream of tokens against time or latencies against the batch, so the two small
builders here compose plotly from those numbers.
"""
from __future__ import annotations

import math
import random
from fractions import Fraction

import plotly.graph_objects as go

from ...serving import crossover_batch, latency_point, latency_table, max_batch, tokens_distribution
from .. import charts
from ..colors import GREY, P_COLOR, Q_COLOR, RESIDUAL_COLOR
from .figure import LessonFigure

PAIR = ("llama-3-8b", "llama-3.2-1b", "h100-sxm")
CONTEXT, ALPHA, GAMMA = 128, Fraction(4, 5), 4
STEPS = 14  # plain steps shown in the burst figure
SEED = 0


def bursts():
    """Tokens one sequence has received against time at batch 1 (time 0: the first token). Plain decoding
    gains one token per step; speculation gains K + 1 per round, K drawn from the i.i.d. law (seed 0)."""
    r = latency_point(*PAIR, 1, CONTEXT, float(ALPHA), GAMMA)
    law = tokens_distribution(ALPHA, GAMMA)
    rng = random.Random(SEED)
    horizon = STEPS * r.tpot_plain_ms
    plain_t = [k * r.tpot_plain_ms for k in range(STEPS + 1)]
    spec_t, spec_n, n, t = [0.0], [0], 0, 0.0
    while t + r.round_ms <= horizon:
        t += r.round_ms
        n += rng.choices(list(law), weights=[float(w) for w in law.values()])[0]
        spec_t.append(t)
        spec_n.append(n)
    fig = go.Figure()
    fig.add_scatter(x=plain_t, y=list(range(STEPS + 1)), mode="lines+markers", line_shape="hv",
                    name=f"plain: a token every {r.tpot_plain_ms:.3f} ms", line=dict(color=P_COLOR, width=3),
                    hovertemplate="%{x:.1f} ms: %{y} tokens<extra>plain</extra>")
    fig.add_scatter(x=spec_t, y=spec_n, mode="lines+markers", line_shape="hv",
                    name=f"speculative: K + 1 every {r.round_ms:.3f} ms", line=dict(color=Q_COLOR, width=3),
                    hovertemplate="%{x:.1f} ms: %{y} tokens<extra>speculative</extra>")
    for tpot, colour, who in ((r.tpot_plain_ms, P_COLOR, "plain"), (r.tpot_spec_ms, Q_COLOR, "speculative")):
        fig.add_scatter(x=[0, horizon], y=[0, horizon / tpot], mode="lines", line=dict(color=colour, dash="dot"),
                        name=f"{who} TPOT {tpot:.3f} ms", hoverinfo="skip")
    fig.update_xaxes(range=[0, horizon * 1.02])
    return charts.style(fig, f"Tokens received at batch 1: γ = {GAMMA}, α = {ALPHA}, context {CONTEXT}",
                        "time since the first token (ms)", "tokens received", height=440)


def against_batch():
    """TPOT plain and speculative and the speculative p99 gap against the batch (log axis), the crossover
    batch marked."""
    cross = crossover_batch(*PAIR, CONTEXT, float(ALPHA), gammas=[GAMMA])
    top = max_batch(*PAIR, CONTEXT)
    batches = sorted({2 ** k for k in range(12) if 2 ** k < top} | {cross, top})
    rows = latency_table(*PAIR, batches, CONTEXT, float(ALPHA), GAMMA)
    fig = go.Figure()
    for key, name, colour, dash in (("tpot_plain_ms", "plain: every gap (TPOT = one step)", P_COLOR, "solid"),
                                    ("tpot_spec_ms", "speculative TPOT (mean gap)", Q_COLOR, "solid"),
                                    ("gap_p99_ms", "speculative p99 gap (a whole round)", RESIDUAL_COLOR, "dash")):
        fig.add_scatter(x=[r.batch for r in rows], y=[getattr(r, key) for r in rows], mode="lines+markers",
                        name=name, line=dict(color=colour, dash=dash, width=3),
                        hovertemplate="batch %{x}: %{y:.3f} ms<extra>" + name + "</extra>")
    fig.add_shape(type="line", x0=cross, x1=cross, xref="x", y0=0, y1=1, yref="paper",
                  line=dict(color=GREY, dash="dot"))
    fig.add_annotation(x=math.log10(cross), xref="x", y=1, yref="paper", text=f"crossover: batch {cross}",
                       showarrow=False, xanchor="right", yanchor="top", xshift=-4)  # log axis: log10 of the value
    fig.update_xaxes(type="log", tickvals=batches, ticktext=[f"{b:,}" for b in batches], tickangle=-45)
    fig.update_yaxes(type="log")
    return charts.style(fig, f"Gaps between tokens against the batch: γ = {GAMMA}, α = {ALPHA}, context {CONTEXT}",
                        "batch (sequences decoded together)", "ms (log)", height=460)


FIGURES = [
    LessonFigure("26-bursts", bursts),
    LessonFigure("26-batch", against_batch),
]
