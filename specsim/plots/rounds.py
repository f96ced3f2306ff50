"""Plotly figures for sampled rounds and for the pitfalls lab.

``event_figure(trace, i)`` draws what happens at event ``i`` of a
``specsim.sampling.RoundTrace`` of a chain or a block (its ``events()``
list): the draft from q, the one target pass, each test (a chain's u against
min(1, p/q), a block's stop coin u against h), the residual draw or the
bonus token, and the round's summary. The rows come from the trace itself,
so they are exact Fractions for a toy model. A tree round is drawn by
``specsim.plots.tree.tree_figure``.

Example
-------
>>> from specsim.toy import load_model
>>> from specsim.sampling import trace_round
>>> from specsim.schemes import Block, Chain
>>> t = trace_round(load_model("seed"), ("a",), Chain(3), seed=0)
>>> [event_figure(t, i).layout.meta for i in range(len(t.events()))]
['draft', 'draft', 'draft', 'verify', 'accept', 'reject', 'correct', 'emit']
>>> b = trace_round(load_model("seed"), ("a",), Block(3), seed=0)
>>> [event_figure(b, i).layout.meta for i in range(len(b.events()))]
['draft', 'draft', 'draft', 'verify', 'verify', 'stop', 'stop', 'stop', 'correct', 'emit']
"""
from __future__ import annotations

from typing import Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .charts import (BONUS_COLOR, GREY, OVERLAP_COLOR, P_COLOR, PROBABILITY, Q_COLOR, RESIDUAL_COLOR,
                    categorical, exact_dec, floats, label, shorten, style)
from ..views.words import count

NO_BREAK_RATIO = "min(1,\u00a0p/q)"  # one word for ``charts.wrap``
KIND_COLORS = {"draft": OVERLAP_COLOR, "correct": RESIDUAL_COLOR, "bonus": BONUS_COLOR}
KIND_LABELS = {"draft": "accepted draft", "correct": "replacement (residual)", "bonus": "bonus (from p)"}


def _bars(fig, vocab, row, name, colour, highlight=None, col=None, showlegend=True):
    line = [3 if t == highlight else 0 for t in vocab]
    kw = dict(row=1, col=col) if col else {}
    fig.add_bar(x=list(vocab), y=floats(row), name=name, marker_color=colour, showlegend=showlegend,
                marker_line=dict(width=line, color="black"), legendgroup=name,
                text=[label(v) for v in row], customdata=[exact_dec(v) for v in row],
                textposition="outside", cliponaxis=False,
                hovertemplate="%{x}: %{customdata}<extra>" + name + "</extra>", **kw)


def _tokens(trace) -> tuple:
    return tuple(trace.vocab)


def draft_figure(trace, i: int) -> go.Figure:
    """Step 1: the drafter draws position i's token from q (or the rule's draft row)."""
    fig = go.Figure()
    _bars(fig, _tokens(trace), trace.q_rows[i], "q (drafter)", Q_COLOR, trace.drafts[i])
    if tuple(trace.draft_rows[i]) != tuple(trace.q_rows[i]):
        _bars(fig, _tokens(trace), trace.draft_rows[i], "row actually drafted from", GREY, trace.drafts[i])
    ctx = shorten(" ".join(trace.context + trace.drafts[:i]))
    fig.update_layout(barmode="group", yaxis_range=[0, 1.15], meta="draft")
    return categorical(style(fig, f"draft {i + 1} of {trace.gamma}: after \"{ctx}\" the drafter proposes "
                      f"\"{trace.drafts[i]}\"", "token", PROBABILITY, height=340))


def verify_figure(trace) -> go.Figure:
    """Step 2: one target pass gives p at every draft position and at the bonus position."""
    g = trace.gamma
    titles = [f"pos. {i + 1}:<br>draft \"{trace.drafts[i]}\"" for i in range(g)] + [f"pos. {g + 1}:<br>bonus"]
    fig = make_subplots(rows=1, cols=g + 1, subplot_titles=titles, shared_yaxes=True, horizontal_spacing=0.03)
    for i in range(g + 1):
        _bars(fig, _tokens(trace), trace.p_rows[i], "p (target)", P_COLOR,
              trace.drafts[i] if i < g else None, col=i + 1, showlegend=i == 0)
        if i < g:
            _bars(fig, _tokens(trace), trace.q_rows[i], "q (drafter)", Q_COLOR, trace.drafts[i],
                  col=i + 1, showlegend=i == 0)
    fig.update_traces(textfont_size=11)
    fig.update_layout(barmode="group", yaxis_range=[0, 1.18], meta="verify")
    fig.update_annotations(font_size=13)
    fig.update_yaxes(title_text=PROBABILITY, row=1, col=1)
    fig.update_xaxes(title_text="token")
    style(fig, f"verify: one target pass scores all {g} drafts (and the bonus position)", height=360)
    fig.update_layout(margin_t=fig.layout.margin.t + 30)
    return categorical(fig)


def acceptance_figure(trace, i: int) -> go.Figure:
    """Step 3 at position i: p and q of the drafted token, and u against min(1, p/q) (a block: against h)."""
    x = trace.drafts[i]
    block = trace.scheme.keeps_by_stop_coins
    bar = "h (stop here)" if block else "min(1, p/q)"
    passed = trace.accepted_flags
    fig = make_subplots(rows=1, cols=2, column_widths=[0.55, 0.45], horizontal_spacing=0.12,
                        subplot_titles=(f"p and q at position {i + 1}",
                                        f"u against {bar},<br>positions so far"))
    _bars(fig, _tokens(trace), trace.p_rows[i], "p (target)", P_COLOR, x, col=1)
    _bars(fig, _tokens(trace), trace.q_rows[i], "q (drafter)", Q_COLOR, x, col=1)
    pos = [f"{k + 1}: {trace.drafts[k]}" for k in range(i + 1)]
    fig.add_bar(x=pos, y=floats(trace.acceptance[:i + 1]), name=bar,
                marker_color=[OVERLAP_COLOR if passed[k] else RESIDUAL_COLOR for k in range(i + 1)],
                opacity=0.55, text=[label(a) for a in trace.acceptance[:i + 1]], textposition="inside",
                customdata=[exact_dec(a) for a in trace.acceptance[:i + 1]],
                hovertemplate="%{x}: " + ("stop with probability" if block else "keep with probability")
                + " %{customdata}<extra></extra>", row=1, col=2)
    fig.add_scatter(x=pos, y=trace.u[:i + 1], mode="markers", name="u",
                    marker=dict(symbol="diamond", size=16, color="black"),
                    hovertemplate="%{x}: u = %{y:.3f}<extra></extra>", row=1, col=2)
    fig.update_yaxes(range=[0, 1.15], row=1, col=1, title_text=PROBABILITY)
    fig.update_yaxes(range=[0, 1.05], row=1, col=2)  # named by its panel's title: an axis title here sat on the
    # left panel's outside labels (its "7/10")
    fig.update_xaxes(title_text="token", row=1, col=1)
    fig.update_xaxes(title_text="position: draft", row=1, col=2)
    if block:  # a stop coin: the block keeps drafts 1..τ, τ the last position whose coin comes up
        verdict = "< h: the stop coin comes up" if passed[i] else "≥ h: no stop here"
        meta = "stop"
    else:
        verdict = "< min(1, p/q): accept" if passed[i] else "≥ min(1, p/q): reject"
        meta = "accept" if passed[i] else "reject"
    fig.update_layout(barmode="group", meta=meta)
    fig.update_annotations(font_size=13)
    title = (f"position {i + 1}, draft \"{x}\": u = {trace.u[i]:.3f} {verdict} "
             f"({'h' if block else 'min(1, p/q)'} = {exact_dec(trace.acceptance[i])})")
    style(fig, title.replace("min(1, p/q)", NO_BREAK_RATIO), height=360)  # the title wraps, never inside the ratio
    fig.update_layout(margin_t=fig.layout.margin.t + 24)
    return categorical(fig)


def correct_figure(trace) -> go.Figure:
    """Step 4: at the first rejection the replacement is drawn from the residual (a block: its block residual)."""
    k = trace.accepted
    fig = go.Figure()
    _bars(fig, _tokens(trace), trace.p_rows[k], "p (target)", P_COLOR)
    _bars(fig, _tokens(trace), trace.q_rows[k], "q (drafter)", Q_COLOR)
    _bars(fig, _tokens(trace), trace.replacement_row, "residual r", RESIDUAL_COLOR, trace.replacement)
    fig.update_layout(barmode="group", yaxis_range=[0, 1.15], meta="correct")
    if trace.scheme.keeps_by_stop_coins:
        w = trace.verdict.extra["w"][k]
        what = (f"the block keeps {k} draft(s) (τ = {k}); \"{trace.replacement}\" is drawn from the block "
                f"residual max(0, w·p − q) normalized, w = {exact_dec(w)}")
    else:
        what = (f"draft {k + 1} was rejected; \"{trace.replacement}\" is drawn "
                "from r = max(0, p − q) / Σ max(0, p − q)")
    return categorical(style(fig, f"correct: {what}", "token", PROBABILITY, height=340))


def bonus_figure(trace) -> go.Figure:
    """Step 5: every draft survived, so one more token comes free from p."""
    fig = go.Figure()
    _bars(fig, _tokens(trace), trace.p_rows[trace.gamma], "p (target) at the bonus position",
          BONUS_COLOR, trace.bonus)
    fig.update_layout(yaxis_range=[0, 1.15], meta="bonus")
    return categorical(style(fig, f"bonus: all {trace.gamma} drafts accepted; \"{trace.bonus}\" is drawn "
                                  "from p (already computed by the same pass)", "token", PROBABILITY, height=340))


def emit_figure(trace) -> go.Figure:
    """The round's output: each emitted token and how it was made."""
    kinds = trace.kinds
    fig = go.Figure()
    fig.add_bar(x=[f"{j + 1}: {t}" for j, t in enumerate(trace.emitted)], y=[1] * len(kinds),
                marker_color=[KIND_COLORS[k] for k in kinds], text=[KIND_LABELS[k] for k in kinds],
                textposition="inside", hovertemplate="%{x}: %{text}<extra></extra>", showlegend=False)
    fig.update_yaxes(visible=False, range=[0, 1])
    fig.update_layout(meta="emit")
    return style(fig, f"emitted {count(len(kinds), 'token')} for 1 target pass: "
                      f"{count(trace.accepted, 'accepted draft')} + "
                      f"{'a bonus' if trace.accepted == trace.gamma else 'a replacement'}",
                 "emitted token", None, height=260).update_xaxes(type="category")


def event_figure(trace, i: int) -> go.Figure:
    """The figure for event ``i`` of ``trace.events()`` of a chain or a block; ``layout.meta`` names it.

    A block's "weights" event is shown with the verify pass (its weights come from those rows).
    """
    if trace.scheme.drawn_as == "tree":
        raise ValueError("a tree round is drawn by specsim.plots.tree.tree_figure, not event by event here")
    ev = trace.events()[i]
    kind = ev["kind"]
    if kind == "draft":
        return draft_figure(trace, ev["node"])
    if kind in ("verify", "weights"):
        return verify_figure(trace)
    if kind in ("accept", "reject", "stop"):
        return acceptance_figure(trace, ev["node"])
    if kind == "correct":
        return correct_figure(trace)
    if kind == "bonus":
        return bonus_figure(trace)
    return emit_figure(trace)


def tokens_per_pass(actual: Sequence, expected: Sequence, gamma: int) -> go.Figure:
    """Running tokens per target pass after each round, against the exact expectation. ``expected`` may
    run one round ahead of ``actual`` (before any round ends: the first round's expectation alone), so the
    chart never opens empty.

    >>> fig = tokens_per_pass([], [3.318], 3)
    >>> [len(t.x) for t in fig.data], fig.layout.annotations[-1].text
    ([0, 1], 'rounds appear here as they finish')
    """
    rounds = list(range(1, len(actual) + 1))
    fig = go.Figure()
    fig.add_scatter(x=rounds, y=floats(actual), mode="lines+markers", name="sampled so far",
                    line_color=P_COLOR, hovertemplate="after %{x} passes: %{y:.3f}<extra></extra>")
    fig.add_scatter(x=list(range(1, len(expected) + 1)), y=floats(expected), mode="lines+markers",
                    name="exact expectation",
                    marker_symbol="line-ew-open", marker_size=14,
                    line=dict(color=OVERLAP_COLOR, dash="dash"),
                    hovertemplate="after %{x} passes: %{y:.3f}<extra>exact</extra>")
    fig.add_hline(y=gamma + 1, line_dash="dot", line_color=GREY,  # a tree's or a dynamic tree's longest path too
                  annotation_text=f"{gamma + 1}: the most a round emits", annotation_position="bottom right")
    if not rounds:
        fig.add_annotation(text="rounds appear here as they finish", x=1, y=(gamma + 1) / 2, showarrow=False,
                           font=dict(color=GREY))
    fig.update_yaxes(range=[0, gamma + 1.5])
    fig.update_xaxes(range=[0.5, max(len(rounds), 1) + 0.5], dtick=max(1, len(rounds) // 10))
    return style(fig, "tokens per target pass", "target passes (rounds)", "tokens per target pass", height=300)


def distribution_vs_target(outcomes: Sequence[tuple], produced: dict, wanted: dict, title: str,
                           names: tuple = ("produced by the rule", "target")) -> go.Figure:
    """Grouped bars over the next-N-token sequences: what a rule produces vs what it should (``names``)."""
    labels = [" ".join(s) for s in outcomes]
    fig = go.Figure()
    for name, dist, colour in ((names[0], produced, RESIDUAL_COLOR), (names[1], wanted, P_COLOR)):
        row = [dist.get(s, 0) for s in outcomes]
        fig.add_bar(x=labels, y=floats(row), name=name, marker_color=colour, text=[exact_dec(v) for v in row],
                    hovertemplate="%{x}: %{text}<extra>" + name + "</extra>")
    fig.update_traces(textposition="none")
    fig.update_layout(barmode="group")
    return categorical(style(fig, title, "next tokens", PROBABILITY, height=380))
