"""Lesson 5's figures: the joint of the draft X and the emitted token Y (a maximal coupling), and other
one-draft rules placed by how often they keep the draft and how far their output is from p.

The numbers are the lesson's: the seed model's rows after "a", one draft,
one emitted token. ``coupling(p, q, rule)`` is the lesson's ``joint`` for any
``RoundRule`` (the rule's own ``accept`` and ``replacement``):
P(X = x, Y = y) = q(x) (a(x) [x = y] + (1 − a(x)) m(y)).

>>> from specsim.rule import overlap
>>> from specsim.toy import load_model
>>> m = load_model("seed")
>>> p, q = m.p(("a",)), m.q(("a",))
>>> M = coupling(p, q)
>>> [sum(row) for row in M] == list(q), [sum(col) for col in zip(*M)] == list(p)
(True, True)
>>> [M[x][x] for x in range(3)] == overlap(p, q)
True
>>> [(r.name, kept, tv) for r, kept, tv in rule_points(p, q)][:2]
[('correct', Fraction(9, 10), Fraction(0, 1)), ('always-accept', Fraction(1, 1), Fraction(1, 10))]

The distance agrees with the pitfalls lab's exact engine (one draft, the first token):

>>> from specsim.labs.pitfalls import PITFALLS, evaluate
>>> from specsim.schemes import Chain
>>> all(evaluate(PITFALLS[r.name], m, ("a",), Chain(1), 1).total_variation == tv
...     for r, _, tv in rule_points(p, q))
True
"""
from __future__ import annotations

import plotly.graph_objects as go

from ...labs.pitfalls import PITFALLS
from ...rule import CORRECT, alpha, total_variation
from ...toy import load_model
from ..charts import exact_dec, label, style
from ..colors import DARK_GREY, OVERLAP_COLOR, P_COLOR, PANEL, Q_COLOR, RESIDUAL_COLOR, WHITE
from .figure import LessonFigure

# one-draft rules that act on the same p and q (no temperature, drafts from q), with the words the lesson uses
RULES = {"correct": "the rule of lesson 3",
         "always-accept": "keep every draft",
         "resample-from-target": "replace from p, not r",
         "p-over-cq-envelope": "textbook rejection sampling",
         "accept-if-p-at-least-q": "keep when p ≥ q"}


def coupling(p, q, rule=CORRECT) -> list:
    """M[x][y] = P(draft X = x, emitted Y = y) at one position with one draft, under ``rule``."""
    m = rule.replacement(p, q) if alpha(p, q) < 1 else p
    n = len(p)
    out = []
    for x in range(n):
        a = rule.accept(p, q, x) if q[x] > 0 else 0 * q[x]
        out.append([q[x] * (a * (x == y) + (1 - a) * m[y]) for y in range(n)])
    return out


def rule_points(p, q) -> list:
    """(rule, P(Y = X), TV(law of Y, p)) for each rule of ``RULES``."""
    out = []
    for name in RULES:
        rule = PITFALLS[name].rule
        M = coupling(p, q, rule)
        kept = sum(M[x][x] for x in range(len(p)))
        out.append((rule, kept, total_variation([sum(col) for col in zip(*M)], p)))
    return out


def draw_coupling():
    """The 3 × 3 joint of X (the draft, rows: sums q) and Y (the emitted token, columns: sums p)."""
    m = load_model("seed")
    p, q = m.p(("a",)), m.q(("a",))
    M = coupling(p, q)
    v, n = list(m.vocab), len(m.vocab)
    cells = list(range(n))
    fig = go.Figure(go.Heatmap(z=[[float(c) for c in row] for row in M], x=cells, y=cells, zmin=0,
                               zmax=float(max(p)), text=[[label(c) for c in row] for row in M],
                               texttemplate="%{text}", textfont_size=16, showscale=False,
                               colorscale=[[0, WHITE], [1, OVERLAP_COLOR]],
                               customdata=[[[v[x], v[y]] for y in cells] for x in cells],
                               hovertemplate="draft %{customdata[0]}, emitted %{customdata[1]}: %{text}"
                                             "<extra></extra>"))
    for x in cells:  # the diagonal: kept drafts, min(p, q)
        fig.add_shape(type="rect", x0=x - 0.5, x1=x + 0.5, y0=x - 0.5, y1=x + 0.5, line=dict(color="black", width=3))
    fig.add_scatter(x=[n - 0.5 + 0.05] * n, y=cells, mode="text", text=[f"q = {label(c)}" for c in q],
                    textfont=dict(color=Q_COLOR, size=15), textposition="middle right", showlegend=False,
                    hoverinfo="skip", cliponaxis=False)
    fig.add_scatter(x=cells, y=[n - 0.5 + 0.3] * n, mode="text", text=[f"p = {label(c)}" for c in p],
                    textfont=dict(color=P_COLOR, size=15), showlegend=False, hoverinfo="skip", cliponaxis=False)
    kept = sum(M[x][x] for x in cells)
    fig.update_xaxes(title_text="Y, the emitted token (columns add up to p)", side="top", range=[-0.5, n + 0.25],
                     tickvals=cells, ticktext=v, showgrid=False, zeroline=False)
    fig.update_yaxes(title_text="X, the draft (rows add up to q)", range=[n + 0.1, -0.5], tickvals=cells,
                     ticktext=v, showgrid=False, zeroline=False)
    fig = style(fig, None, height=420)
    fig.update_layout(plot_bgcolor=WHITE, margin=dict(l=70, r=20, t=70, b=50), font_size=15)
    fig.add_annotation(text=f"outlined diagonal: the draft is kept, P(Y = X) = {exact_dec(kept)} = α",
                       xref="paper", yref="paper", x=0, y=-0.04, yanchor="top", xanchor="left", showarrow=False,
                       font_size=14)
    return fig


def draw_rules():
    """Each rule at (P(Y = X), TV(law of Y, p)): valid rules sit on TV = 0, and none of them right of α."""
    m = load_model("seed")
    p, q = m.p(("a",)), m.q(("a",))
    a = alpha(p, q)
    points = rule_points(p, q)
    fig = go.Figure()
    fig.add_vrect(x0=float(a), x1=1.04, fillcolor=PANEL, line_width=0, layer="below")
    fig.add_vline(x=float(a), line_dash="dash", line_color=DARK_GREY,
                  annotation_text=f"α = {exact_dec(a)}: the most a valid rule keeps", annotation_position="top left")
    offsets = {"correct": (20, 40), "always-accept": (-30, -55), "resample-from-target": (-110, -70),
               "p-over-cq-envelope": (-110, -25), "accept-if-p-at-least-q": (90, 10)}  # label offsets (px)
    for rule, kept, tv in points:
        valid = tv == 0
        fig.add_scatter(x=[float(kept)], y=[float(tv)], mode="markers", showlegend=False,
                        marker=dict(size=14, color=OVERLAP_COLOR if valid else RESIDUAL_COLOR,
                                    symbol="circle" if valid else "x", line=dict(width=1, color="black")),
                        hovertemplate=f"{RULES[rule.name]}: keeps {exact_dec(kept)}, TV {exact_dec(tv)}"
                                      "<extra></extra>")
        ax, ay = offsets[rule.name]
        fig.add_annotation(x=float(kept), y=float(tv), ax=ax, ay=ay, arrowcolor=DARK_GREY, arrowwidth=1,
                           text=f"{RULES[rule.name]}<br>keeps {exact_dec(kept)}, TV {exact_dec(tv)}",
                           font_size=12, bgcolor="rgba(255,255,255,0.85)", align="left")
    fig.update_xaxes(range=[0.5, 1.04], title_text="P(Y = X): how often the draft is kept")
    fig.update_yaxes(range=[-0.09, 0.36], title_text="TV(output, p)")
    return style(fig, "one draft after \"a\": every rule that keeps more than α is off p (grey zone)",
                 None, None, height=440)


FIGURES = [
    LessonFigure("05-coupling", draw_coupling, width=620, height=420),
    LessonFigure("05-rules", draw_rules, height=440),
]
