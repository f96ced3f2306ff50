"""Plotly figures for the tiny GPT: verification masks, KV cache slots, p and q rows.

No torch here: masks come as numpy boolean grids (``specsim.schemes.masks``),
rows as lists of floats, cache lengths as the ``Round.cache`` dict of
``specsim.gpt.decode``.

Example
-------
>>> from specsim.schemes.masks import lower_right_grid, upper_left_grid
>>> fig = mask_pair(lower_right_grid(5, 3), upper_left_grid(5, 3), n=5)
>>> [t.type for t in fig.data]
['heatmap', 'heatmap', 'scatter', 'scatter', 'scatter']
>>> cache = {"target": {"start": 5, "before_verify": 5, "after_verify": 9, "after_crop": 7},
...          "draft": {"start": 5, "before_verify": 8, "after_verify": 8, "after_crop": 7}}
>>> cache_slots(cache, gamma=3, k=1).layout.meta
'cache'
"""
from __future__ import annotations

from typing import Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .colors import PANEL, PREFIX, WHITE
from .charts import (BONUS_COLOR, GREY, OVERLAP_COLOR, P_COLOR, PROBABILITY, Q_COLOR, RESIDUAL_COLOR,
                    categorical, style)

HIDDEN, VISIBLE = PANEL, P_COLOR


def show_char(ch: str) -> str:
    """A character as a readable label (space, newline and tab made visible)."""
    return {" ": "␣", "\n": "↵", "\t": "⇥"}.get(ch, ch)


def mask_pair(lower, upper, n: int, query_labels: Sequence[str] | None = None,
              max_keys: int = 64) -> go.Figure:
    """The correct lower-right mask beside the wrong upper-left one for n cached keys.

    Row i is verification query i (the last token, then the drafts); column j
    is key j. Only the last ``max_keys`` keys are drawn when there are more
    (every omitted key is visible to every query under the lower-right mask).
    """
    rows, cols = lower.shape
    first = max(0, cols - max_keys)
    keys = list(range(first, cols))
    labels = list(query_labels) if query_labels is not None else [f"query {i}" for i in range(rows)]
    seen_lr = lower.sum(axis=1).tolist()
    seen_ul = upper.sum(axis=1).tolist()
    fig = make_subplots(rows=2, cols=1, vertical_spacing=0.2, subplot_titles=(  # stacked: fits 420 px
        f"correct (lower-right): query i sees keys 0..n+i<br>keys seen: {seen_lr}",
        f"wrong (upper-left, is_causal with L ≠ S)<br>keys seen: {seen_ul}"))
    for col, grid in ((1, lower), (2, upper)):
        z = grid[:, first:].astype(int).tolist()
        fig.add_heatmap(x=keys, y=labels, z=z, zmin=0, zmax=1, showscale=False, xgap=1, ygap=1,
                        colorscale=[[0, HIDDEN], [1, VISIBLE]], row=col, col=1,
                        hovertemplate="%{y} → key %{x}: %{z}<extra>1 = may attend</extra>")
        fig.add_vline(x=n - 0.5, line=dict(color=RESIDUAL_COLOR, width=2, dash="dash"), row=col, col=1)
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(title_text=f"key position (dashed: {n} cached keys | {rows} new)"
                     + (f"; keys 0..{first - 1} not drawn" if first else ""), row=2, col=1)
    fig.update_annotations(font_size=13)
    for name, colour in (("may attend", VISIBLE), ("hidden", HIDDEN)):  # a legend for the two colours
        fig.add_scatter(x=[None], y=[None], mode="markers", name=name, showlegend=True,
                        marker=dict(symbol="square", size=14, color=colour, line=dict(width=1, color=GREY)))
    fig.add_scatter(x=[None], y=[None], mode="lines", name="end of the cached keys",
                    line=dict(color=RESIDUAL_COLOR, width=2, dash="dash"))
    style(fig, "Which keys each verification query may attend to (keys seen per query)", height=560)
    # room for the first subplot's two-line title between the figure's title and its panel (420 px)
    fig.update_layout(margin_t=fig.layout.margin.t + 44, height=fig.layout.height + 44)
    return fig


def _label(j: int, labels: dict, slots, path, n: int, phase: str, spread: bool) -> str:
    """The character in slot j. ``labels`` names the prefix, the last token at n and, in a tree, each node
    by -(node + 1); a tree's node sits at its pass slot in the target after the verify pass, on the path after
    the rollback (the drafter's cache before the rollback is drawn unlabelled: its layout is the drafter's)."""
    if slots is None or j <= n:
        return labels.get(j, "")
    i = j - n - 1
    node = slots[i] if spread else (path[i] if phase == "after_crop" and i < len(path) else None)
    return "" if node is None else labels.get(-(node + 1), "")


TREE_WORK = "node the drafter fed"  # a tree's drafter cache after the verify pass (its own order, not drawn node by node)
CACHE_COLORS = {"prefix": PREFIX, "last token": P_COLOR, "accepted draft": OVERLAP_COLOR,
                "rejected draft": RESIDUAL_COLOR, "empty": WHITE, TREE_WORK: Q_COLOR}


def cache_slots(cache: dict, gamma: int, k: int, window: int = 12, labels: dict | None = None,
                slots: list | None = None, path: list | None = None) -> go.Figure:
    """Cache slots of both models at the start, after verification and after the rollback.

    Position n (the target's cache length at the start) holds the last token,
    n + 1 .. n + gamma the drafts, of which the first k were accepted; the
    rollback keeps n + k + 1 entries. ``labels`` maps a position to the
    character it holds. Only the last ``window`` prefix slots are drawn.

    A tree (any layout that is not a chain): ``slots`` lists the node each verify slot after the last
    token holds (the pass's order) and ``path`` the accepted nodes; after the verify pass the target's
    slot of a node on the path is an accepted draft, every other node's a rejected one, and the rollback
    keeps the path's entries, moved together to n + 1 .. n + k. (The drafter's own cache after the verify
    pass holds the nodes it fed while growing the tree, in its own order: drawn as ``TREE_WORK``, marked "·";
    after the rollback it too holds the path.)
    """
    n = cache["target"]["start"]
    first = max(0, n - window)
    last = n + gamma + 1
    names = ["prefix", "last token", "accepted draft", "rejected draft", "empty"]
    if slots is not None:  # the drafter's cache of a tree holds the nodes it fed, in its own order
        names.append(TREE_WORK)
    code = {c: i for i, c in enumerate(names)}
    on_path = set(range(k)) if path is None else set(path)

    def slot_state(j, spread=False):  # what slot j holds: a name of ``names``
        if j < n:
            return "prefix"
        if j == n:
            return "last token"
        if spread and slots is not None:  # a tree's verify slots, in the pass's order
            return "accepted draft" if slots[j - n - 1] in on_path else "rejected draft"
        if spread is None:  # the drafter's cache of a tree after the verify pass: which node sits where is its own
            return TREE_WORK
        return "accepted draft" if j - n <= k else "rejected draft"

    ys, z, text = [], [], []
    for model in ("target", "draft"):
        if cache.get(model, {}).get("start") is None:  # a drafter without a cache (prompt lookup)
            continue
        for phase, title in (("start", "start"), ("after_verify", "after verify"), ("after_crop", "after rollback")):
            length = cache[model][phase]
            ys.append(f"{model}: {title} ({length})")
            spread = model == "target" and phase == "after_verify"
            if slots is not None and model == "draft" and phase == "after_verify":
                spread = None
            z.append([code[slot_state(j, spread)] if j < length else code["empty"] for j in range(first, last)])
            text.append(["·" if spread is None and j > n and j < length else
                         show_char(_label(j, labels, slots, path, n, phase, bool(spread))) if labels and j < length
                         else "" for j in range(first, last)])
    fig = _slots_heatmap(list(range(first, last)), ys, z, text, names)
    fig.add_vline(x=n + k + 0.5, line=dict(color="black", width=2, dash="dot"))
    fig.update_layout(meta="cache")
    return style(fig, f"KV cache slots: keep n + k + 1 = {n} + {k} + 1 = {n + k + 1} after the rollback",
                 "cache position" + (f" (slots 0..{first - 1} not drawn)" if first else ""), None, height=340)


def _slots_heatmap(x: list, ys: list, z: list, text: list, names: list) -> go.Figure:
    """One row of cache slots per entry of ``ys``: ``z`` holds each slot's index into ``names`` (coloured by
    ``CACHE_COLORS``), ``text`` what it shows; the first row on top."""
    scale = []
    for i, c in enumerate(names):
        scale += [[i / len(names), CACHE_COLORS[c]], [(i + 1) / len(names), CACHE_COLORS[c]]]
    fig = go.Figure(go.Heatmap(x=x, y=ys, z=z, zmin=-0.5, zmax=len(names) - 0.5,
                               colorscale=scale, xgap=2, ygap=4, text=text, texttemplate="%{text}",
                               customdata=[[names[v] for v in row] for row in z],
                               hovertemplate="%{y}, slot %{x}: %{customdata}<extra></extra>",
                               colorbar=dict(tickvals=list(range(len(names))), ticktext=names, thickness=12)))
    fig.update_yaxes(autorange="reversed")
    return fig


def draft_rows(vocab: str, p_rows, q_rows, drafts: Sequence[int], acceptance: Sequence[float],
               u: Sequence[float], accepted_flags: Sequence[bool], top: int = 6) -> go.Figure:
    """p and q at each drafted position: the ``top`` tokens by max(p, q), the draft outlined."""
    g = len(drafts)
    if g == 0:  # a drafter may propose nothing (prompt lookup with no match): the target alone emits
        fig = go.Figure()
        fig.add_annotation(text="no drafts this round: the drafter proposed nothing, so the target's pass "
                                "emitted one token alone", showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper")
        fig.update_xaxes(visible=False)
        fig.update_yaxes(visible=False)
        style(fig, "p and q at each drafted position (none this round)", height=160)
        return fig
    titles = []
    for i, d in enumerate(drafts):
        verdict = ("kept" if accepted_flags[i] else "rejected") if i < len(accepted_flags) else "not checked"
        ratio = f"{acceptance[i]:.2f}" if i < len(acceptance) else "–"  # a trace lists only the tested drafts
        coin = f"{u[i]:.2f}" if i < len(accepted_flags) and i < len(u) else "–"  # an untested draft has no coin
        titles.append(f"'{show_char(vocab[d])}': {verdict}<br>min(1,p/q) {ratio}<br>u {coin}")
    fig = make_subplots(rows=1, cols=g, subplot_titles=titles, shared_yaxes=True, horizontal_spacing=0.03)
    for i, d in enumerate(drafts):
        p, q = list(p_rows[i]), list(q_rows[i])
        order = sorted(range(len(p)), key=lambda t: -max(p[t], q[t]))[:top]
        if d not in order:
            order[-1] = d
        x = [show_char(vocab[t]) for t in order]
        for name, row, colour in (("p (target)", p, P_COLOR), ("q (drafter)", q, Q_COLOR)):
            fig.add_bar(x=x, y=[row[t] for t in order], name=name, marker_color=colour, showlegend=i == 0,
                        legendgroup=name, marker_line=dict(width=[3 if t == d else 0 for t in order], color="black"),
                        hovertemplate="%{x}: %{y:.3f}<extra>" + name + "</extra>", row=1, col=i + 1)
    peak = max(max(max(p_rows[i]), max(q_rows[i])) for i in range(g))
    fig.update_layout(barmode="group")
    fig.update_annotations(font_size=11)
    fig.update_yaxes(range=[0, min(1.0, peak * 1.15)])
    fig.update_yaxes(title_text=PROBABILITY, row=1, col=1)
    fig.update_xaxes(title_text="token")
    style(fig, f"p and q at each drafted position (top {top} tokens by max(p, q); the draft outlined)", height=380)
    fig.update_layout(margin_t=fig.layout.margin.t + 50)
    return categorical(fig)


def tokens_per_round(emitted: Sequence[int], accepted: Sequence[int], gamma: int) -> go.Figure:
    """Tokens emitted by each round, split into accepted drafts and the replacement / bonus."""
    rounds = list(range(1, len(emitted) + 1))
    fig = go.Figure()
    fig.add_bar(x=rounds, y=list(accepted), name="accepted drafts", marker_color=OVERLAP_COLOR)
    for name, colour, keep in (("replacement (residual)", RESIDUAL_COLOR, lambda a: a < gamma),
                               ("bonus (all accepted)", BONUS_COLOR, lambda a: a == gamma)):
        fig.add_bar(x=rounds, y=[e - a if keep(a) else 0 for e, a in zip(emitted, accepted)], name=name,
                    marker_color=colour)
    fig.add_hline(y=gamma + 1, line_dash="dot", line_color=GREY)
    fig.update_layout(barmode="stack")
    return style(fig, "tokens per round", "round", "tokens emitted", height=280)


def placeholder(text: str, height: int = 60) -> go.Figure:
    """A low, empty figure that only says ``text``: it stands where a chart will be while its data is
    computed (and makes a browser fetch its chart library meanwhile)."""
    fig = go.Figure()
    fig.add_annotation(text=text, x=0.5, y=0.5, xref="paper", yref="paper", showarrow=False, font=dict(color=GREY))
    fig.update_layout(height=height, margin=dict(l=0, r=0, t=0, b=0), meta="placeholder",
                      xaxis=dict(visible=False), yaxis=dict(visible=False))
    return fig
