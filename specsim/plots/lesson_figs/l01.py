"""Lesson 1's figures: a first tour of two rounds on the toy model, then the roofline of one decode step.

The tour draws the rounds of ``generate(load_model("seed"), ("a",), Chain(3),
n_tokens=4, seed=7)``, the call the lesson's doctests make: the first round
ends in a rejection and a replacement from the residual, the second keeps
every draft and earns the bonus token. Each picture is the Round stepper's
own figure of that event (``specsim.plots.rounds``). The roofline draws the
lesson's ``step_time`` from the lesson's inputs (an 8B model in bf16 on an
H200 SXM).

>>> [f.name for f in FIGURES]
['01-tour-verify', '01-tour-test', '01-tour-correct', '01-tour-bonus', '01-tour-exact', '01-roofline']
>>> first, second = tour()
>>> first.emitted, second.emitted
(('b', 'c', 'a'), ('b', 'c', 'c', 'b'))
>>> round(break_even())
206
"""
from __future__ import annotations

import math
from functools import lru_cache

import plotly.graph_objects as go

from ...sampling import generate
from ...schemes import Chain
from ...toy import load_model
from ... import rule
from ..charts import exact_dec, label, residual_stack, style, wrap
from ..colors import GREY, OVERLAP_COLOR, P_COLOR, Q_COLOR
from ..rounds import acceptance_figure, bonus_figure, correct_figure, verify_figure
from .figure import LessonFigure

# the lesson's inputs (its first doctest): an 8B model in bf16 on an H200 SXM
PARAMS = 8e9
BYTES_PER_PARAM = 2
BANDWIDTH = 4.8e12  # bytes per second
PEAK = 989e12  # dense bf16 FLOP per second


@lru_cache(maxsize=1)
def tour() -> tuple:
    """The two rounds of the tour: (rejection and replacement, full acceptance and bonus)."""
    g = generate(load_model("seed"), ("a",), Chain(3), n_tokens=4, seed=7)
    return tuple(g.rounds)


def draw_verify():
    return drafted_labels_only(verify_figure(tour()[0]))


def drafted_labels_only(fig):
    """Keep the number labels of the outlined (drafted) bars only, where a panel outlines one: at 760 px the
    labels of neighbouring narrow bars ran into each other ("3/103/10")."""
    for trace in fig.data:
        widths = trace.marker.line.width
        if isinstance(widths, (list, tuple)) and 3 in widths:
            trace.text = [t if w == 3 else "" for t, w in zip(trace.text, widths)]
    return fig.update_layout(bargap=0.1)


def draw_test():
    """u against min(1, p/q) at each tested position of the first round (its last test rejects)."""
    first = tour()[0]
    return decision(first, len(first.u) - 1)


def decision(trace, i: int):
    """``acceptance_figure`` at test ``i``, its title saying in words what u did against min(1, p/q)."""
    fig = acceptance_figure(trace, i)
    verdict = "accepted" if trace.accepted_flags[i] else "rejected"
    sign = "<" if trace.accepted_flags[i] else "≥"
    return fig.update_layout(title_text=wrap(f"position {i + 1}, draft \"{trace.drafts[i]}\": u = {trace.u[i]:.3f} "
                                             f"{sign} min(1, p/q) = {exact_dec(trace.acceptance[i])}, "
                                             f"so it is {verdict}"))


def draw_correct():
    return correct_figure(tour()[0])


def draw_bonus():
    return bonus_figure(tour()[1])


def draw_exact():
    """Where the first round's rejection happened (after "c"): both ways to emit each token add up to p."""
    m = load_model("seed")
    first = tour()[0]
    context = first.context + first.drafts[:first.accepted]
    fig = exact_stack(m.vocab, m.p(context), m.q(context))
    return fig.update_layout(title_text=f"after \"{context[-1]}\": kept drafts + replacements = p<br>"
                                        f"(α = {exact_dec(m.alpha(context))}: the chance a draft here is kept)",
                             margin_t=84)


def exact_stack(vocab, p, q):
    """``residual_stack`` with the sum written under each token ("1/10 + 1/5 = 3/10": min(p, q), then
    (1 − α)·r, then p) instead of labels on the bars, where the q diamonds would cover them."""
    fig = residual_stack(vocab, p, q)
    kept, rest = rule.overlap(p, q), rule.excess(p, q)  # (1 − α)·r = max(0, p − q)
    fig.update_traces(text=None, selector=dict(type="bar"))
    fig.update_traces(mode="markers", selector=dict(name="p"))
    fig.update_traces(name="min(p, q): drafted and kept", selector=dict(name="min(p, q)"))
    fig.update_traces(name="(1 − α)·r: rejected, then drawn from r", selector=dict(name="(1 − α)·r"))
    fig.update_xaxes(tickvals=list(vocab), ticktext=[f"<b>{x}</b><br>{label(a)} + {label(b)} = {label(c)}"
                                                     for x, a, b, c in zip(vocab, kept, rest, p)])
    return fig


def read_ms() -> float:
    return PARAMS * BYTES_PER_PARAM / BANDWIDTH * 1e3


def compute_ms(positions: float) -> float:
    return 2 * PARAMS * positions / PEAK * 1e3


def break_even() -> float:
    """Positions per pass at which the arithmetic takes as long as reading the weights."""
    return BYTES_PER_PARAM * PEAK / (2 * BANDWIDTH)


def draw_roofline():
    """Step time against positions per pass: the larger of reading the weights and computing."""
    ks = [2 ** (j / 4) for j in range(0, 41)]  # 1 .. 1024, log-spaced
    fig = go.Figure()
    fig.add_scatter(x=ks, y=[read_ms()] * len(ks), mode="lines", name="reading the weights",
                    line=dict(color=Q_COLOR, dash="dash", width=2),
                    hovertemplate="%{y:.2f} ms<extra>reading the weights</extra>")
    fig.add_scatter(x=ks, y=[compute_ms(k) for k in ks], mode="lines", name="computing",
                    line=dict(color=GREY, dash="dot", width=2),
                    hovertemplate="%{x:.0f} positions: %{y:.2f} ms<extra>computing</extra>")
    fig.add_scatter(x=ks, y=[max(read_ms(), compute_ms(k)) for k in ks], mode="lines",
                    name="step time (the larger)", line=dict(color=P_COLOR, width=4),
                    hovertemplate="%{x:.0f} positions: %{y:.2f} ms<extra>step time</extra>")
    verify = 4  # the last token and γ = 3 drafts
    fig.add_scatter(x=[verify], y=[max(read_ms(), compute_ms(verify))], mode="markers+text",
                    name="a pass with γ = 3 drafts", marker=dict(size=12, color=OVERLAP_COLOR),
                    text=["γ + 1 = 4"], textposition="top center", showlegend=False,
                    hovertemplate="4 positions: %{y:.2f} ms<extra></extra>")
    k = break_even()
    fig.add_vline(x=k, line_dash="dot", line_color="black")
    fig.add_annotation(x=math.log10(k), y=math.log10(read_ms()), yshift=12, xanchor="right", showarrow=False,
                       text=f"compute-bound from ≈ {k:.0f} positions ", font_size=13)
    fig.update_xaxes(type="log", range=[0, 3.05], tickvals=[1, 4, 16, 64, 256, 1024])
    fig.update_yaxes(type="log", range=[-0.5, 1.5], tickvals=[0.5, 1, 2, 5, 10, 20],
                     ticktext=["0.5", "1", "2", "5", "10", "20"])
    return style(fig, "One decode step: 8B model, bf16, H200 SXM", "positions per pass", "step time (ms)",
                 height=380)


FIGURES = [
    LessonFigure("01-tour-verify", draw_verify, height=380),
    LessonFigure("01-tour-test", draw_test, height=380),
    LessonFigure("01-tour-correct", draw_correct, height=360),
    LessonFigure("01-tour-bonus", draw_bonus, height=360),
    LessonFigure("01-tour-exact", draw_exact, height=380),
    LessonFigure("01-roofline", draw_roofline, height=380),
]
