"""Lesson 16's figure: how often a 5 % test calls noise a finding, by the number of prompts G.

The lesson's convention (``specsim.stats``): a clustered SE with the factor
G / (G - 1) (the bootstrap over prompts scaled to it), read against Student's
t with G - 1 degrees of freedom. The curves are ``stats.t_test_size``, the
closed form for normal cluster means, the same call the lesson's doctest
makes: the convention stays at 5 %; the plain bootstrap SD, smaller by
sqrt((G - 1) / G), rejects more often, and far more when it is also read
against the normal's 1.96.

>>> fig = size()
>>> [t.name for t in fig.data]
['scaled SE, t(G − 1): the convention', 'plain bootstrap SD, t(G − 1)', 'plain bootstrap SD, normal 1.96']
>>> [round(y, 3) for y in fig.data[1].y[:4]]       # G = 2, 3, 4, 5
[0.071, 0.072, 0.07, 0.068]
"""
from __future__ import annotations

import math

import plotly.graph_objects as go

from ...stats import t_test_size
from ..charts import style
from ..colors import GREY, OVERLAP_COLOR, Q_COLOR, RESIDUAL_COLOR
from .figure import LessonFigure

LEVEL = 0.05
PROMPTS = range(2, 13)  # G: the lesson's runs have 4 and 5 prompts


def size():
    """The real size of a nominal 5 % test against G, for three ways of reading a clustered estimate."""
    gs = list(PROMPTS)
    plain = [math.sqrt((g - 1) / g) for g in gs]  # plain bootstrap SD / the convention's SE
    lines = (("scaled SE, t(G − 1): the convention", [t_test_size(g) for g in gs], OVERLAP_COLOR, "solid"),
             ("plain bootstrap SD, t(G − 1)", [t_test_size(g, s) for g, s in zip(gs, plain)], Q_COLOR, "dash"),
             ("plain bootstrap SD, normal 1.96", [t_test_size(g, s, threshold=1.96) for g, s in zip(gs, plain)],
              RESIDUAL_COLOR, "dot"))
    fig = go.Figure()
    for name, ys, colour, dash in lines:
        fig.add_scatter(x=gs, y=ys, mode="lines+markers", name=name, line=dict(color=colour, dash=dash, width=3),
                        hovertemplate="G = %{x}: %{y:.3f}<extra>" + name + "</extra>")
    fig.add_hline(y=LEVEL, line=dict(color=GREY, dash="dot"))
    fig.add_vrect(x0=3.8, x1=5.2, fillcolor=GREY, opacity=0.15, line_width=0,
                  annotation_text="this lesson's runs", annotation_position="top")
    fig.update_xaxes(dtick=1)
    fig.update_yaxes(type="log", tickvals=[0.05, 0.07, 0.1, 0.15, 0.2, 0.3, 0.4], tickformat=".0%",
                     range=[math.log10(0.04), math.log10(0.5)])
    return style(fig, "How often a 5 % test flags pure noise, with G prompts as the clusters (normal cluster means)",
                 "G: prompts (clusters)", "real false-alarm rate", height=400)


FIGURES = [LessonFigure("16-size", size)]
