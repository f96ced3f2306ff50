"""Lesson 31's figures: what a serving benchmark reports (TTFT, TPOT, ITL per chunk) and the goodput under
a TPOT target, for the MoE pair of lesson 30 and the dense pair of lessons 23 and 26.

Every number comes from ``specsim.serving.latency`` (``latency_point``, ``goodput``) at the settings of
lesson 30 (``l30.MOE``, ``l30.DENSE``, context 1024, α = 0.8), with a chain of γ = 4. No chart of
``specsim.plots`` draws a few latency figures side by side or goodput against a latency target, so the
small builders here compose plotly from the library's numbers.
"""
from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ...serving import goodput, latency_point
from .. import charts
from ..colors import P_COLOR, Q_COLOR
from .figure import LessonFigure
from .l30 import ALPHA, CONTEXT, DENSE, MOE

METRICS_BATCH, METRICS_GAMMA = 16, 4
SLOS = [1.5 + 0.25 * k for k in range(115)]  # TPOT targets, ms: 1.5 .. 30


def metrics():
    """TTFT, TPOT and ITL per streamed chunk, plain and speculative, for the MoE pair at batch 16, γ = 4."""
    r = latency_point(*MOE, METRICS_BATCH, CONTEXT, ALPHA, METRICS_GAMMA)
    names = ["TTFT", "TPOT", "ITL (per chunk)"]
    fig = go.Figure()
    for who, values, colour in (("plain decoding", (r.ttft_plain_ms, r.tpot_plain_ms, r.itl_chunk_plain_ms), P_COLOR),
                                (f"speculative, γ = {METRICS_GAMMA}",
                                 (r.ttft_spec_ms, r.tpot_spec_ms, r.itl_chunk_spec_ms), Q_COLOR)):
        fig.add_bar(x=names, y=list(values), name=who, marker_color=colour, text=[f"{v:.2f} ms" for v in values],
                    textposition="outside", cliponaxis=False, hovertemplate="%{x}: %{y:.3f} ms<extra>" + who + "</extra>")
    fig.update_layout(barmode="group")
    fig.update_yaxes(range=[0, max(r.ttft_spec_ms, r.itl_chunk_spec_ms) * 1.2])
    return charts.style(fig, f"What a benchmark reports: qwen3-30b-a3b at batch {METRICS_BATCH}, context "
                             f"{CONTEXT:,}, α = {ALPHA}", None, "ms", height=420)


def goodput_curves():
    """Requests per second within a TPOT target, against the target: plain decoding and a chain of γ = 4,
    for the dense pair (top) and the MoE pair (bottom); 256 tokens a request, batches up to memory."""
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.12,
                        subplot_titles=("llama-3-8b drafted by llama-3.2-1b",
                                        "qwen3-30b-a3b drafted by qwen3-0.6b"))
    for row, pair in ((1, DENSE), (2, MOE)):
        g = [goodput(*pair, CONTEXT, ALPHA, METRICS_GAMMA, tpot_slo_ms=slo) for slo in SLOS]
        for key, who, colour in (("requests_plain", "plain decoding", P_COLOR),
                                 ("requests_spec", f"speculative, γ = {METRICS_GAMMA}", Q_COLOR)):
            fig.add_scatter(x=SLOS, y=[getattr(x, key) for x in g], mode="lines", name=who, showlegend=row == 1,
                            line=dict(color=colour, width=3), row=row, col=1,
                            hovertemplate="TPOT ≤ %{x} ms: %{y:.1f} requests/s<extra>" + who + "</extra>")
        fig.update_yaxes(title_text="requests/s", rangemode="tozero", row=row, col=1)
    fig.update_xaxes(title_text="TPOT target (ms)", row=2, col=1)
    fig.update_annotations(font_size=14)
    return charts.style(fig, f"Goodput: requests per second whose TPOT meets the target (context {CONTEXT:,}, "
                             f"α = {ALPHA})", None, None, height=560)


FIGURES = [
    LessonFigure("31-metrics", metrics),
    LessonFigure("31-goodput", goodput_curves, height=560),
]
