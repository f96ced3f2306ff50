"""Lesson 32's figures: a one-pass drafter against a chain, the LM head's share of a draft step, and what
a reduced draft vocabulary does to α.

The numbers are the lesson's own calls: ``drafter_cost.speedup_curve`` with ``chain`` and ``one_pass`` at
α = 4/5, c = c_pass = 1/20 (constant rates) and at the decaying rates 9/10 · (19/20)^(i-1) with w = 1/100;
``head_share`` and ``drafter_cost`` of lesson 23's EAGLE layer on Llama 3 8B's shapes with its head cut to
V' rows; the seed model drafting in its two most frequent tokens; a Zipf target over 1,024 ranked tokens.

>>> [f.name for f in FIGURES]
['32-one-pass', '32-decay', '32-head', '32-toy', '32-vocab']
"""
from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

import plotly.graph_objects as go

from ...serving import drafter_cost as dc
from ...toy import load_model
from ...transforms import temperature
from .. import charts
from ..colors import DARK_GREY, GREY, OVERLAP_COLOR, P_COLOR, Q_COLOR
from .figure import Control, LessonFigure

MAX_GAMMA = 32
ZIPF_N = 1024
KEPT = tuple(2 ** k for k in range(11))  # V' = 1, 2, 4, ..., 1024


def _exact(x, digits: int = 3) -> Fraction:
    """A slider's value as the Fraction it names (0.95 -> 19/20), so the curves are the lesson's exact ones."""
    return Fraction(str(round(float(x), digits)))


def speedups(alpha: float = 0.8, decay: float = 1.0, cost: float = 0.05, pass_cost: float = 0.05,
             w: float = 0.0):
    """The speedup against γ of a chain (γ steps of c) and of a one-pass drafter (one pass of c_pass), both
    with the conditional rates a_i = α · decay^(i-1), the best γ of each starred."""
    rates = dc.decaying_rates(_exact(alpha), _exact(decay), MAX_GAMMA)
    c, c_pass, w_ = _exact(cost), _exact(pass_cost), _exact(w, 4)
    ch = dc.speedup_curve(rates, dc.chain(c, per_position=w_))
    op = dc.speedup_curve(rates, dc.one_pass(c_pass, per_position=w_))
    rate_text = f"α = {_exact(alpha)}" if _exact(decay) == 1 else f"a_i = {_exact(alpha)} · ({_exact(decay)})^(i−1)"
    fig = charts.speedup_curve(ch["gammas"], ch["speedups"], (ch["best_gamma"], ch["best_speedup"]),
                               f"Speedup: a chain or one pass, {rate_text}, w = {w_}")
    fig.data[0].name = f"chain: γ c + v + γ w (c = {c})"
    fig.data[1].name = f"chain's best γ = {ch['best_gamma']}"
    g, s = op["best_gamma"], op["best_speedup"]
    fig.add_scatter(x=op["gammas"], y=[float(x) for x in op["speedups"]], mode="lines+markers",
                    name=f"one pass: c_pass + v + γ w (c_pass = {c_pass})", line_color=Q_COLOR,
                    hovertemplate="γ = %{x}: %{y:.3f}×<extra>one pass</extra>")
    fig.add_scatter(x=[g], y=[float(s)], mode="markers+text", name=f"one pass's best γ = {g}",
                    marker=dict(size=16, color=Q_COLOR, symbol="star", line=dict(width=1, color=DARK_GREY)),
                    text=[f"best γ = {g}: {float(s):.2f}×"], textposition=charts.text_side(g, 1, MAX_GAMMA),
                    hovertemplate="best γ = %{x}: %{y:.3f}×<extra>one pass</extra>")
    top = max(float(x) for x in ch["speedups"] + op["speedups"] + [1])
    fig.update_yaxes(range=[0, top * 1.18])
    fig.update_layout(height=460)
    return fig


def head(vocab: float = 32000):
    """What one step of the EAGLE layer on Llama 3 8B's shapes reads: its body and its d × V head, for the
    full vocabulary and for V' tokens, with the drafter's cost c (weights read over the target's)."""
    shapes = [dc.EAGLE_8B, dc.with_vocab(dc.EAGLE_8B, int(vocab))]
    labels = [f"V = {dc.EAGLE_8B.vocab:,}", f"V' = {int(vocab):,}"]
    body = [s.body_params / 1e6 for s in shapes]
    heads = [s.d_model * s.vocab / 1e6 for s in shapes]
    fig = go.Figure()
    fig.add_bar(y=labels, x=body, orientation="h", name="body: fc and one decoder layer", marker_color=P_COLOR,
                text=[f"{b:.0f} M" for b in body], textposition="inside",
                hovertemplate="%{y}: body %{x:.1f} M weights<extra></extra>")
    fig.add_bar(y=labels, x=heads, orientation="h", name="LM head: d × V", marker_color=Q_COLOR,
                text=[f"{h:.0f} M ({float(dc.head_share(s)):.0%})" for h, s in zip(heads, shapes)],
                textposition="inside", hovertemplate="%{y}: head %{x:.1f} M weights<extra></extra>")
    totals = [b + h for b, h in zip(body, heads)]
    fig.add_scatter(y=labels, x=totals, mode="text", showlegend=False, textposition="middle right",
                    text=[f"  c = {float(dc.drafter_cost(s)):.4f}" for s in shapes], hoverinfo="skip")
    fig.update_layout(barmode="stack", legend_traceorder="normal")
    fig.update_xaxes(range=[0, max(totals) * 1.3])
    fig.update_yaxes(autorange="reversed")
    fig = charts.style(fig, "One draft step on Llama 3 8B's shapes: weights read, and c",
                       "weights read per step (millions; the target step reads "
                       f"{dc.LLAMA_3_8B.streamed_params / 1e6:,.0f})", None, height=300)
    return fig


def toy(context: float = 2):
    """The seed model after one context: p, and the drafter restricted to its two most frequent tokens."""
    m = load_model("seed")
    kept = dc.frequent_tokens(m, 2)
    ctx = (m.vocab[int(context)],)
    p, q = m.p(ctx), m.q(ctx)
    q_kept = dc.restricted(q, kept)
    names = "{" + ", ".join(m.vocab[i] for i in kept) + "}"
    fig = charts.pq_bars(m.vocab, p, q_kept,
                         title=f"After \"{ctx[0]}\": p, and q restricted to V' = {names}: α = "
                               f"{charts.exact_dec(m.alpha(ctx))} becomes α' = "
                               f"{charts.exact_dec(dc.reduced_alpha(p, q, kept))}")
    fig.data[1].name = "q' (drafter in V')"
    return fig


@lru_cache(maxsize=1)
def _zipf_curves() -> dict:
    p = dc.zipf_row(ZIPF_N)
    sharp = temperature(p, Fraction(1, 2))
    out = {"bound": [float(dc.mass(p, range(k))) for k in KEPT],
           "perfect": [float(dc.reduced_alpha(p, p, range(k))) for k in KEPT],
           "sharp": [float(dc.reduced_alpha(p, sharp, range(k))) for k in KEPT]}
    return out


def vocab():
    """α' against V' for a Zipf target over 1,024 ranked tokens: a perfect drafter (q = p) sits on the bound
    p(V'); an over-confident one (q ∝ p²) loses at most what it earned outside V'."""
    z = _zipf_curves()
    fig = go.Figure()
    fig.add_scatter(x=list(KEPT), y=z["bound"], mode="lines", name="p(V'): the bound", line=dict(color=GREY,
                    dash="dash", width=4), hovertemplate="V' = %{x}: p(V') = %{y:.4f}<extra></extra>")
    fig.add_scatter(x=list(KEPT), y=z["perfect"], mode="markers", name="α', q = p (α = 1)",
                    marker=dict(color=P_COLOR, size=9), hovertemplate="V' = %{x}: α' = %{y:.4f}<extra>q = p</extra>")
    sharp_name = f"α', q ∝ p² (α = {z['sharp'][-1]:.3f})"
    fig.add_scatter(x=list(KEPT), y=z["sharp"], mode="lines+markers", name=sharp_name, line_color=OVERLAP_COLOR,
                    hovertemplate="V' = %{x}: α' = %{y:.4f}<extra>q ∝ p²</extra>")
    fig.update_xaxes(type="log", tickvals=list(KEPT), ticktext=[str(k) for k in KEPT])
    fig.update_yaxes(range=[0, 1.05])
    return charts.style(fig, f"α' when the drafter keeps the V' most frequent of {ZIPF_N:,} tokens "
                             "(target p ∝ 1/rank)", "V' (tokens the drafter may propose)", "acceptance rate")


FIGURES = [
    LessonFigure("32-one-pass", speedups,
                 (Control("alpha", "α (acceptance rate)", 0.3, 0.99, 0.01, 0.8),
                  Control("cost", "c (one chain step)", 0.0, 0.3, 0.01, 0.05),
                  Control("pass_cost", "c_pass (one pass)", 0.0, 0.6, 0.01, 0.05),
                  Control("w", "w (one more position)", 0.0, 0.05, 0.005, 0.0)), height=460),
    LessonFigure("32-decay", speedups,
                 (Control("alpha", "a_1 (first position's rate)", 0.3, 0.99, 0.01, 0.9),
                  Control("decay", "decay (a_i = a_1 · decay^(i−1))", 0.8, 1.0, 0.01, 0.95),
                  Control("cost", "c (one chain step)", 0.0, 0.3, 0.01, 0.05),
                  Control("pass_cost", "c_pass (one pass)", 0.0, 0.6, 0.01, 0.05),
                  Control("w", "w (one more position)", 0.0, 0.05, 0.005, 0.01)), height=460),
    LessonFigure("32-head", head, (Control("vocab", "V' (draft vocabulary)", 4000, 128000, 4000, 32000),),
                 height=300),
    LessonFigure("32-toy", toy, (Control("context", "context (0 = a, 1 = b, 2 = c)", 0, 2, 1, 2),)),
    LessonFigure("32-vocab", vocab),
]
