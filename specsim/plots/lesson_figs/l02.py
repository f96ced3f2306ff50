"""Lesson 2's figures: a round as a strip of tokens, event by event; the one verify pass; tokens per pass.

The numbers are the lesson's: the two rounds of lesson 1's tour
(``generate(m, ("a",), Chain(3), n_tokens=4, seed=7)``), the seeded round
``trace_round(m, ("a",), Chain(3), seed=4)`` whose verify pass the lesson
opens, and the 30-token run ``generate(m, ("a",), Chain(3), n_tokens=30,
seed=0)`` with the exact engine's expectation (``replay.running_tokens_per_pass``,
the Round stepper's own chart).

>>> [f.name for f in FIGURES]
['02-round', '02-verify', '02-passes']
>>> [row for row, _ in strip_rows(tour()[0])]
['draft 1', 'draft 2', 'draft 3', 'verify', 'test 1: accept', 'test 2: accept', 'test 3: reject', 'correct']
"""
from __future__ import annotations

from functools import lru_cache

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ...sampling import generate, trace_round
from ...schemes import Chain
from ...toy import load_model
from ...views.frames import trace_frames
from ...views.replay import running_tokens_per_pass
from ..anim import STATUS_COLORS, STATUS_WORDS
from ..charts import shorten, style
from ..colors import BLACK, DARK_GREY, GREY, WHITE
from ..rounds import tokens_per_pass, verify_figure
from .figure import LessonFigure
from .l01 import drafted_labels_only, tour

DARK = {"accepted", "correct", "bonus"}  # statuses drawn dark enough for white letters


def strip_rows(trace) -> list:
    """(row label, strip) for each event of a round but the final "emit" (the last row already shows it)."""
    rows = []
    for f in trace_frames(trace):
        kind, i = f["kind"], f["position"]
        if kind == "emit":
            continue
        name = {"draft": f"draft {i + 1}", "accept": f"test {i + 1}: accept",
                "reject": f"test {i + 1}: reject"}.get(kind, kind)
        rows.append((name, f["strip"]))
    return rows


def round_strips(traces) -> go.Figure:
    """One panel per round: a row per event, a square per slot (γ drafts, then the closing token)."""
    titles = [f"round {j + 1} from \"{shorten(' '.join(t.context), 12)}\": emits {' '.join(t.emitted)}"
              for j, t in enumerate(traces)]
    fig = make_subplots(rows=1, cols=len(traces), subplot_titles=titles, horizontal_spacing=0.2)
    for j, trace in enumerate(traces, start=1):
        rows = strip_rows(trace)
        g = trace.gamma
        xs, ys, colours, texts, inks = [], [], [], [], []
        for name, strip in rows:
            for k, slot in enumerate(strip):
                xs.append(k)
                ys.append(name)
                colours.append(STATUS_COLORS[slot["status"]])
                texts.append(slot["token"] or "")
                inks.append(WHITE if slot["status"] in DARK else BLACK)
        fig.add_scatter(x=xs, y=ys, mode="markers+text", text=texts, showlegend=False, row=1, col=j,
                        marker=dict(symbol="square", size=26, color=colours, line=dict(width=1, color=DARK_GREY)),
                        textfont=dict(size=15, color=inks), hoverinfo="skip")
        fig.update_xaxes(row=1, col=j, range=[-0.6, g + 0.6], tickvals=list(range(g + 1)),
                         ticktext=[f"draft {k + 1}" for k in range(g)] + ["closing"], showgrid=False, zeroline=False,
                         tickfont_size=12)
        fig.update_yaxes(row=1, col=j, autorange="reversed", showgrid=False, type="category",
                         categoryorder="array", categoryarray=[name for name, _ in rows])
    for status in ("pending", "accepted", "rejected", "correct", "bonus"):  # the legend: what each colour means
        fig.add_scatter(x=[None], y=[None], mode="markers", name=STATUS_WORDS[status],
                        marker=dict(symbol="square", size=14, color=STATUS_COLORS[status],
                                    line=dict(width=1, color=DARK_GREY)))
    fig.update_annotations(font_size=13)
    fig = style(fig, None, height=400)
    fig.update_layout(plot_bgcolor=WHITE, margin=dict(l=120, t=40, b=80))
    return fig


def draw_round():
    return round_strips(tour())


@lru_cache(maxsize=1)
def seeded_round():
    return trace_round(load_model("seed"), ("a",), Chain(3), seed=4)


def draw_verify():
    return drafted_labels_only(verify_figure(seeded_round()))


def draw_passes():
    m = load_model("seed")
    g = generate(m, ("a",), Chain(3), n_tokens=30, seed=0)
    totals = running_tokens_per_pass(m, g.rounds)
    fig = tokens_per_pass([t["sampled"] for t in totals], [t["expected"] for t in totals], g.gamma)
    fig.add_hline(y=1, line_dash="dot", line_color=GREY, annotation_text="1: plain decoding",
                  annotation_position="bottom right")
    return fig


FIGURES = [
    LessonFigure("02-round", draw_round, height=400),
    LessonFigure("02-verify", draw_verify, height=380),
    LessonFigure("02-passes", draw_passes, height=300),
]
