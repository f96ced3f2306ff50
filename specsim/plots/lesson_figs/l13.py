"""Lesson 13's figures: moving a drafter towards the target, and a lower KL that buys a lower α.

The lesson's own numbers: the seed model after "b", its drafter mixed with the
target, q_λ = (1 − λ) q + λ p, for which α(q_λ) = 1 − (1 − λ) TV(p, q) (a
slider over λ); and the lesson's two drafters for the target row
(98/100, 1/100, 1/100), ``q_spread`` and ``q_sharp``, on a log scale, where
the one KL(p || q) prefers accepts less.

>>> [f.name for f in FIGURES]
['13-mix', '13-kl']
>>> [str(alpha(*mixed(F(k, 4)))) for k in range(5)]
['4/5', '17/20', '9/10', '19/20', '1']
"""
from __future__ import annotations

from fractions import Fraction as F

import plotly.graph_objects as go

from ...rule import alpha, total_variation
from ...toy import load_model
from ..charts import exact_dec, pq_bars, style
from ..colors import BONUS_COLOR, P_COLOR, Q_COLOR
from .figure import Control, LessonFigure

CONTEXT = ("b",)
ROW = (F(98, 100), F(1, 100), F(1, 100))  # the lesson's target row
DRAFTERS = {"q_spread": (F(96, 100), F(2, 100), F(2, 100)), "q_sharp": (F(98, 100), F(199, 10000), F(1, 10000))}


def mixed(lam) -> tuple:
    """(p, q_λ) after "b" on the seed model: the drafter moved a share λ of the way to the target."""
    m = load_model("seed")
    p, q = m.p(CONTEXT), m.q(CONTEXT)
    return p, [(1 - lam) * qx + lam * px for px, qx in zip(p, q)]


def mix(lam: float = 0.5):
    """p and q_λ after "b", with α(q_λ) = 1 − (1 − λ) TV(p, q) in the title."""
    lam = F(lam).limit_denominator(100)
    p, q = mixed(lam)
    m = load_model("seed")
    fig = pq_bars(m.vocab, p, q, f"λ = {exact_dec(lam)}: α(q_λ) = 1 − (1 − λ)·TV(p, q) = "
                                 f"1 − {exact_dec(1 - lam)} · {exact_dec(total_variation(*mixed(F(0))))} = "
                                 f"{exact_dec(alpha(p, q))}")
    fig.data[1].name = "q_λ (drafter moved towards p)"
    return fig


def kl_vs_alpha():
    """The target row and the lesson's two drafters, on a log scale: q_sharp nearly rules out "c"."""
    vocab = ["a", "b", "c"]
    fig = go.Figure()
    for name, row, colour in (("p (target)", ROW, P_COLOR), ("q_spread", DRAFTERS["q_spread"], Q_COLOR),
                              ("q_sharp", DRAFTERS["q_sharp"], BONUS_COLOR)):
        label = name if name.startswith("p") else f"{name}: α = {exact_dec(alpha(ROW, row))}"
        fig.add_bar(x=vocab, y=[float(v) for v in row], name=label, marker_color=colour,
                    text=[exact_dec(v) for v in row], textposition="outside", cliponaxis=False,
                    hovertemplate="%{x}: %{text}<extra>" + name + "</extra>")
    fig.update_layout(barmode="group")
    fig.update_yaxes(type="log", range=[-4.6, 0.4], tickvals=[1e-4, 1e-3, 1e-2, 1e-1, 1])
    fig.update_xaxes(type="category")
    return style(fig, "One target row, two drafters: KL prefers q_spread, α prefers q_sharp", "token",
                 "probability (log scale)", height=400)


FIGURES = [
    LessonFigure("13-mix", mix, (Control("lam", "λ (share of the way to p)", 0.0, 1.0, 0.05, 0.5),)),
    LessonFigure("13-kl", kl_vs_alpha),
]
