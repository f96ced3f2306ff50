"""Lesson 28's figures: verifying against the mixture v = w·p + (1 − w)·q, at one position and over a round.

All on the seed model, with the lesson's own calls (``specsim.labs.mixture``): the rows p, q and v after
"b" (``charts.pq_bars`` with v added, a slider over w); one draft after "b" as a point (TV of the emitted
token, chance the draft is kept) for each weight and each lab rule that drafts from q, under the bound
α + TV (``mixture.lab_one_position``, ``best_acceptance``); and the exact tokens per round against the
exact TV of the next two tokens from "a" (``mixture.curve``, the lab's rules from ``pitfalls.run_lab``).
No chart of ``specsim.plots`` draws a trade-off curve with its points named, so the small builder
``_tradeoff`` composes plotly from those numbers.

>>> [f.name for f in FIGURES]
['28-mixture', '28-one-position', '28-tradeoff']
"""
from __future__ import annotations

from fractions import Fraction

import plotly.graph_objects as go

from ...labs import mixture
from ...labs.pitfalls import run_lab
from ...rule import alpha
from ...schemes import Chain
from ...toy import load_model
from .. import charts
from ..colors import CYAN, GREY, OVERLAP_COLOR, RESIDUAL_COLOR
from .figure import Control, LessonFigure

ROW_CONTEXT, CONTEXT, N_TOKENS = ("b",), ("a",), 2
LABELLED = (Fraction(0), Fraction(1, 2), Fraction(1))  # the weights named on the curves


def _weight(w) -> Fraction:
    """A slider's float as the nearest twentieth (the sliders step by 0.05)."""
    return Fraction(round(float(w) * 20), 20)


def mixture_bars(w: float = 0.5):
    """p, q and v = w·p + (1 − w)·q after "b"; the title gives the acceptance and TV(v, p) at this w."""
    m, w = load_model("seed"), _weight(w)
    p, q = m.p(ROW_CONTEXT), m.q(ROW_CONTEXT)
    v = mixture.mixture(p, q, w)
    fig = charts.pq_bars(m.vocab, p, q, title=(
        f"After \"b\", w = {w}: a draft is kept with probability {charts.exact_dec(mixture.acceptance(p, q, w))}, "
        f"the token is TV {charts.exact_dec(mixture.distance(p, q, w))} from p"))
    fig.add_bar(x=list(m.vocab), y=charts.floats(v), name="v = w·p + (1 − w)·q", marker_color=CYAN,
                text=[charts.label(x) for x in v], customdata=[charts.exact_dec(x) for x in v],
                textposition="outside", cliponaxis=False, hovertemplate="%{x}: %{customdata}<extra>v</extra>")
    return fig


def one_position():
    """One draft after "b": the chance it is kept against the emitted token's TV from p. The mixture's
    weights lie on the bound min(1, α + TV); the lab's rules that draft from q lie on or below it."""
    m = load_model("seed")
    p, q = m.p(ROW_CONTEXT), m.q(ROW_CONTEXT)
    a = alpha(p, q)
    points = mixture.lab_one_position(m, ROW_CONTEXT)
    right = float(max(t for _, t in points.values())) + 0.12
    fig = go.Figure()
    xs = [Fraction(0), 1 - a, Fraction(right).limit_denominator(100)]
    ys = [mixture.best_acceptance(p, q, x) for x in xs]
    fig.add_scatter(x=charts.floats(xs) + [right, 0], y=charts.floats(ys) + [1.08, 1.08], fill="toself",
                    mode="lines", fillcolor="rgba(200,68,63,0.10)", line=dict(width=0), hoverinfo="skip",
                    name="out of reach of every rule")
    fig.add_scatter(x=charts.floats(xs), y=charts.floats(ys), mode="lines", line=dict(color=GREY, dash="dash"),
                    name="the bound min(1, α + TV)", hoverinfo="skip")
    weights = [Fraction(k, 10) for k in range(11)]
    fig.add_scatter(x=[float(mixture.distance(p, q, w)) for w in weights],
                    y=[float(mixture.acceptance(p, q, w)) for w in weights], mode="markers",
                    marker=dict(size=10, color=CYAN, line=dict(width=1, color="black")),
                    name="mixture, w = 0, 1/10, …, 1", customdata=[str(w) for w in weights],
                    hovertemplate="w = %{customdata}<br>TV %{x:.3f}<br>kept %{y:.3f}<extra></extra>")
    fig.add_scatter(x=[float(t) for _, t in points.values()], y=[float(k) for k, _ in points.values()],
                    mode="markers", name="the pitfalls lab's rules (hover for names)", text=list(points),
                    marker=dict(size=9, color=RESIDUAL_COLOR, symbol="diamond", line=dict(width=1, color="black")),
                    hovertemplate="%{text}<br>TV %{x:.3f}<br>kept %{y:.3f}<extra></extra>")
    for w, ay in ((Fraction(1), 30), (Fraction(0), -30)):
        fig.add_annotation(x=float(mixture.distance(p, q, w)), y=float(mixture.acceptance(p, q, w)),
                           text=f"w = {w}" + (" (exact)" if w == 1 else " (keep every draft)"), ax=40, ay=ay,
                           arrowhead=2, arrowcolor=GREY, font=dict(size=12))
    fig.update_xaxes(range=[-0.03, right])
    fig.update_yaxes(range=[0.2, 1.08])
    return charts.style(fig, f"One draft after \"b\" (α = {a}): no rule keeps it more often than α + TV",
                        "TV of the emitted token from p", "P(the draft is kept)",
                        height=460)


def _tradeoff(points, lab, title):
    """Tokens per round (up) against the TV from the target (right): the mixture's curve with a few weights
    named, the lab's rules as points."""
    fig = go.Figure()
    fig.add_scatter(x=[float(c.total_variation) for c in points], y=[float(c.tokens_per_round) for c in points],
                    mode="lines+markers+text", line=dict(color=CYAN, width=3), marker=dict(size=7),
                    name="mixture, w = 0, 1/20, …, 1", text=[f"w = {c.weight}" if c.weight in LABELLED else ""
                                                             for c in points],
                    textposition="bottom right", customdata=[charts.exact_dec(c.total_variation) for c in points],
                    hovertemplate="TV %{customdata}<br>tokens/round %{y:.3f}<extra>mixture</extra>")
    for exact, name, colour in ((True, "a lab rule, exact", OVERLAP_COLOR), (False, "a lab rule, biased",
                                                                              RESIDUAL_COLOR)):
        pick = [r for r in lab if r.exact == exact]
        fig.add_scatter(x=[float(r.total_variation) for r in pick], y=[float(r.expected_tokens) for r in pick],
                        mode="markers", name=name, text=[r.name for r in pick],
                        marker=dict(size=10, color=colour, symbol="diamond", line=dict(width=1, color="black")),
                        hovertemplate="%{text}<br>TV %{x:.3f}<br>tokens/round %{y:.3f}<extra></extra>")
    fig.update_xaxes(rangemode="tozero")
    return charts.style(fig, title, f"TV of the next {N_TOKENS} tokens from the target's", "E[tokens per round]",
                        height=440)


def tradeoff(gamma: int = 3):
    """From "a", γ drafts: each weight's exact tokens per round against its exact TV over the next two
    tokens, with the pitfalls lab's rules that are judged against the same p."""
    m, gamma = load_model("seed"), int(gamma)
    points = mixture.curve(m, CONTEXT, Chain(gamma), N_TOKENS)
    names = list(mixture.lab_rules(m))
    lab = run_lab(m, CONTEXT, Chain(gamma), N_TOKENS, names)
    return _tradeoff(points, lab, f"From \"a\", γ = {gamma}: speed against distance, w from 1 (exact) to 0 "
                                  "(every draft kept)")


FIGURES = [
    LessonFigure("28-mixture", mixture_bars, (Control("w", "w (weight on p)", 0.0, 1.0, 0.05, 0.5),)),
    LessonFigure("28-one-position", one_position),
    LessonFigure("28-tradeoff", tradeoff, (Control("gamma", "γ (draft length)", 1, 4, 1, 3),)),
]
