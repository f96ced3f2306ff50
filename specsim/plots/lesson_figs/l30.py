"""Lesson 30's figures: the union of experts a pass reads, v and the best γ of a mixture-of-experts target,
and its speedup over batch x γ.

Every number comes from ``specsim.serving`` with the lesson's settings: the MoE pair (a Qwen3-30B-A3B-shaped
target, a Qwen3-0.6B-shaped drafter) and the dense pair of lesson 23 (Llama-3-8B, Llama-3.2-1B), on an H100
SXM in bf16, at context 1024 and α = 0.8. ``charts.speedup_curve`` and ``serving.speedup_heatmap`` are
reused; no chart of ``specsim.plots`` draws a union against the positions or v against γ, so the small
builders here compose plotly from the library's numbers.
"""
from __future__ import annotations

from dataclasses import replace

import plotly.graph_objects as go

from ...serving import MODELS, best_gamma, expected_experts, serving_point, union_bounds
from ...views import serving_view
from .. import charts, serving
from ..colors import DARK_GREY, GREY, P_COLOR, Q_COLOR, WHITE
from .figure import LessonFigure

MOE = ("qwen3-30b-a3b", "qwen3-0.6b", "h100-sxm")
DENSE = ("llama-3-8b", "llama-3.2-1b", "h100-sxm")
CONTEXT, ALPHA = 1024, 0.8
GAMMAS = list(range(1, 11))
DEEPSEEK = (256, 8)  # DeepSeek-V3: routed experts, experts per token


def same_routing(name: str = MOE[0]):
    """The MoE target priced as a dense roofline prices it: every position reads the same experts."""
    return replace(MODELS[name], routing="same")


def union():
    """Expected distinct experts per layer against the positions n of a pass, DeepSeek-V3's with its bounds
    (k when all positions agree, min(E, n k) when none share), and the MoE target's."""
    ns = list(range(1, 13))
    fig = go.Figure()
    e, k = DEEPSEEK
    lo = [union_bounds(e, k, n)[0] for n in ns]
    hi = [union_bounds(e, k, n)[1] for n in ns]
    fig.add_scatter(x=ns, y=hi, mode="lines", name="most: no two positions share (n k)",
                    line=dict(color=GREY, dash="dash"), hovertemplate="n = %{x}: %{y}<extra></extra>")
    fig.add_scatter(x=ns, y=lo, mode="lines", name="fewest: all positions agree (k)",
                    line=dict(color=DARK_GREY, dash="dot"), hovertemplate="n = %{x}: %{y}<extra></extra>")
    for (experts, per_token), name, colour in ((DEEPSEEK, "DeepSeek-V3: E = 256, k = 8", P_COLOR),
                                               ((MODELS[MOE[0]].experts, MODELS[MOE[0]].experts_per_token),
                                                "Qwen3-30B-A3B: E = 128, k = 8", Q_COLOR)):
        ys = [float(expected_experts(experts, per_token, n)) for n in ns]
        fig.add_scatter(x=ns, y=ys, mode="lines+markers", name=f"{name}, uniform routing",
                        line=dict(color=colour, width=3),
                        hovertemplate="n = %{x}: %{y:.2f} experts<extra>" + name + "</extra>")
    four = float(expected_experts(e, k, 4))
    fig.add_annotation(x=4, y=four, text=f"4 positions: {four:.2f} experts, {four / k:.2f}× one token's",
                       showarrow=True, arrowhead=2, ax=120, ay=22, bgcolor=WHITE)
    fig.update_yaxes(rangemode="tozero")
    fig.update_xaxes(dtick=1)
    return charts.style(fig, "Distinct experts per layer a pass over n positions reads (expected)",
                        "positions in the pass, n = γ + 1", "distinct experts per layer", height=440)


def verify_cost():
    """v, the verify pass in plain steps, against γ at batch 1: the MoE target (uniform routing), the same
    target priced as a dense roofline prices it, and the dense target of lesson 23."""
    fig = go.Figure()
    for target, draft, name, colour, dash in (
            (MOE[0], MOE[1], "qwen3-30b-a3b, uniform routing", Q_COLOR, "solid"),
            (same_routing(), MOE[1], "qwen3-30b-a3b priced as dense (same experts)", DARK_GREY, "dot"),
            (DENSE[0], DENSE[1], "llama-3-8b (dense)", P_COLOR, "solid")):
        vs = [serving_point(target, draft, MOE[2], 1, CONTEXT, ALPHA, g).v for g in GAMMAS]
        fig.add_scatter(x=GAMMAS, y=vs, mode="lines+markers", name=name, line=dict(color=colour, dash=dash, width=3),
                        hovertemplate="γ = %{x}: v = %{y:.3f}<extra>" + name + "</extra>")
    fig.update_xaxes(dtick=1)
    fig.update_yaxes(rangemode="tozero")
    return charts.style(fig, f"The verify pass in plain steps, v, at batch 1 (context {CONTEXT:,})",
                        "γ (drafts per round; the pass has γ + 1 positions)", "v (verify pass / plain step)",
                        height=420)


def best_gamma_moves():
    """Speedup against γ at batch 1 for the MoE pair (``charts.speedup_curve``, its best γ starred), with
    the same pair priced by a dense roofline beside it."""
    speedups = [serving_point(*MOE, 1, CONTEXT, ALPHA, g).speedup for g in GAMMAS]
    best = best_gamma(*MOE, 1, CONTEXT, ALPHA, gammas=GAMMAS)
    fig = charts.speedup_curve(GAMMAS, speedups, (best.gamma, best.speedup),
                               f"Speedup against γ at batch 1, α = {ALPHA}: qwen3-30b-a3b drafted by qwen3-0.6b")
    fig.data[0].name = "uniform routing (the union of experts)"
    fig.data[0].line.color = Q_COLOR
    dense = same_routing()
    same = [serving_point(dense, MOE[1], MOE[2], 1, CONTEXT, ALPHA, g).speedup for g in GAMMAS]
    top = best_gamma(dense, MOE[1], MOE[2], 1, CONTEXT, ALPHA, gammas=GAMMAS)
    fig.add_scatter(x=GAMMAS, y=same, mode="lines+markers", name="priced as dense (same experts, v ≈ 1)",
                    line=dict(color=DARK_GREY, dash="dot"), hovertemplate="γ = %{x}: %{y:.3f}×<extra></extra>")
    fig.add_scatter(x=[top.gamma], y=[top.speedup], mode="markers+text", name=f"best γ priced as dense = {top.gamma}",
                    marker=dict(size=16, color=DARK_GREY, symbol="star"), textposition="top center",
                    text=[f"γ = {top.gamma}: {top.speedup:.2f}×"], hovertemplate="γ = %{x}: %{y:.3f}×<extra></extra>")
    fig.update_yaxes(range=[0, max(same + speedups) * 1.2])
    return fig


def batch_heatmap():
    """The Serving page's heatmap (lesson 23) for the MoE pair: speedup over batch x γ at context 1024."""
    s = serving_view.Settings(target=MOE[0], draft=MOE[1], hardware=MOE[2], context=CONTEXT, alpha=ALPHA)
    fig = serving.speedup_heatmap(serving_view.grid(s))
    fig.update_layout(title_text=f"qwen3-30b-a3b drafted by qwen3-0.6b: speedup over batch × γ<br>"
                                 f"at context {CONTEXT:,}, α = {ALPHA} (★ best γ of each batch)", margin_t=80)
    return fig


FIGURES = [
    LessonFigure("30-union", union),
    LessonFigure("30-verify-cost", verify_cost),
    LessonFigure("30-best-gamma", best_gamma_moves),
    LessonFigure("30-batch", batch_heatmap, height=480),
]
