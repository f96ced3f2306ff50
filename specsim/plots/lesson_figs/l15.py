"""Lesson 15's figures: the pitfalls lab as a picture, and one broken rule at one position.

The lesson's own calls on the seed model after "a": ``run_lab(m, ("a",),
Chain(3), n_tokens=2)`` (every rule's exact TV against its tokens per round)
and, for one rule picked by its row in that table, ``pitfalls.joints`` of the
first emitted token with γ = 1: what the rule produces beside what the user
asked for (``specsim.plots.rounds.distribution_vs_target``).

>>> [f.name for f in FIGURES]
['15-lab', '15-one-position']
>>> RULES[int(FIGURES[1].controls[0].default)]
'resample-from-target'
"""
from __future__ import annotations

from functools import lru_cache

import plotly.graph_objects as go

from ...labs.pitfalls import PITFALLS, evaluate, joints, run_lab
from ...schemes import Chain
from ...toy import load_model
from ..charts import exact_dec, style
from ..colors import GREY, OVERLAP_COLOR, RESIDUAL_COLOR
from ..rounds import distribution_vs_target
from .figure import Control, LessonFigure

CONTEXT = ("a",)
RULES = list(PITFALLS)  # the table's rows, in its order (0: the correct rule)


@lru_cache(maxsize=1)
def lab() -> tuple:
    """The lesson's table: every rule from "a", γ = 3, judged on the next two tokens."""
    return tuple(run_lab(load_model("seed"), CONTEXT, Chain(3), n_tokens=2))


def landscape():
    """Each rule as a point: exact TV from the target (up) against expected tokens per round (right)."""
    rows = lab()
    fig = go.Figure()
    for exact, name, colour in ((True, "exact (TV 0)", OVERLAP_COLOR), (False, "biased (TV > 0)", RESIDUAL_COLOR)):
        pick = [r for r in rows if r.exact == exact]
        fig.add_scatter(x=[float(r.expected_tokens) for r in pick], y=[float(r.total_variation) for r in pick],
                        mode="markers", name=name, marker=dict(size=12, color=colour, line=dict(width=1, color="black")),
                        text=[r.name for r in pick], customdata=[exact_dec(r.total_variation) for r in pick],
                        hovertemplate="%{text}<br>tokens/round %{x:.3f}<br>TV %{customdata}<extra></extra>")
    correct = next(r for r in rows if r.name == "correct")
    fig.add_vline(x=float(correct.expected_tokens), line=dict(color=GREY, dash="dot"),
                  annotation_text="the correct rule", annotation_position="top")
    faster = {}  # name the rules that are faster than the correct one (rules on one point together)
    for r in rows:
        if r.expected_tokens > correct.expected_tokens:
            faster.setdefault((r.expected_tokens, r.total_variation), []).append(r.name)
    right = max(x for x, _ in faster)
    for (x, y), names in faster.items():
        between = x - correct.expected_tokens > 0.1 and x < right  # clear of both crowds: label it above
        fig.add_annotation(x=float(x), y=float(y), text="<br>".join(names), showarrow=False, align="right",
                           xanchor="center" if between else "right", xshift=0 if between else -10,
                           yanchor="bottom" if between else "middle", yshift=10 if between else 0,
                           font=dict(size=11))
    fig.update_yaxes(rangemode="tozero")
    return style(fig, "Fast and wrong is easy: each rule's distance from the target against its speed "
                      "(seed model, \"a\", γ = 3, next two tokens)",
                 "E[tokens per round]", "TV from the target (exact)", height=420)


def one_position(rule: int = RULES.index("resample-from-target")):
    """The first token after "a" with γ = 1 under the rule in row ``rule`` of the table, beside the intended one."""
    name = RULES[max(0, min(int(rule), len(RULES) - 1))]
    m = load_model("seed")
    produced, wanted = joints(PITFALLS[name], m, CONTEXT, Chain(1), 1)
    tv = evaluate(PITFALLS[name], m, CONTEXT, Chain(1), 1).total_variation
    outcomes = sorted(set(produced) | set(wanted))
    fig = distribution_vs_target(outcomes, produced, wanted,
                                 f"{name}: the first token after \"a\" (γ = 1), TV {exact_dec(tv)}",
                                 names=(f"produced by {name}", "intended"))
    fig.update_traces(textposition="outside", texttemplate="%{text}")
    fig.update_xaxes(title_text="first emitted token")
    return fig


FIGURES = [
    LessonFigure("15-lab", landscape),
    LessonFigure("15-one-position", one_position,
                 (Control("rule", "rule (row of the table)", 0, len(RULES) - 1, 1, RULES.index("resample-from-target")),)),
]
