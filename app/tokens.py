"""Sampled rounds in words and coloured tokens (HTML for ``st.markdown(..., unsafe_allow_html=True)``).

The colours are specsim's (``specsim.colors``): accepted drafts green,
replacements red, bonus tokens purple, pending drafts outlined in q's orange.
"""
from __future__ import annotations

import html

from specsim import replay
from specsim.colors import (BONUS_COLOR, DARK_GREY, GREY, MUTED, OVERLAP_COLOR, PANEL, Q_COLOR, RESIDUAL_COLOR,
                            WHITE, shade, tint)

TOKEN_STYLE = {  # status -> (css, legend label)
    "context": (f"background:{PANEL};color:{shade(GREY, 0.65)}", "context"),
    "draft": (f"background:{OVERLAP_COLOR};color:{WHITE}", "accepted draft"),
    "correct": (f"background:{RESIDUAL_COLOR};color:{WHITE}", "replacement (from the residual)"),
    "bonus": (f"background:{BONUS_COLOR};color:{WHITE}", "bonus (from p)"),
    "pending": (f"background:{WHITE};color:{shade(Q_COLOR, 0.25)};border:2px dashed {Q_COLOR}",
                "drafted, not yet verified"),
    "rejected": (f"background:{tint(RESIDUAL_COLOR)};color:{shade(RESIDUAL_COLOR)};text-decoration:line-through",
                 "rejected draft"),
    "discarded": (f"background:{tint(GREY, 0.85)};color:{GREY};text-decoration:line-through", "discarded draft"),
}
TEXT_TINT = {"draft": tint(OVERLAP_COLOR), "correct": tint(RESIDUAL_COLOR), "bonus": tint(BONUS_COLOR)}


def token_html(token: str, status: str, size: str = "1.15rem") -> str:
    css, label = TOKEN_STYLE[status]
    return (f'<span title="{label}" style="{css};font-family:monospace;font-size:{size};'
            f'padding:0.1rem 0.45rem;margin:0.1rem;border-radius:0.3rem;display:inline-block">{token}</span>')


def legend_html(statuses) -> str:
    return " ".join(token_html(TOKEN_STYLE[s][1], s, size="0.8rem") for s in statuses)


def stream_html(context, done: list, current=None, event_index: int = -1) -> str:
    """The context, every finished round's tokens by kind, and the current round so far."""
    parts = [token_html(t, "context") for t in context]
    for trace in done:
        parts += [token_html(t, k) for t, k in zip(trace.emitted, trace.kinds)]
    if current is not None:
        statuses, last = replay.draft_statuses(current, event_index)
        for t, s in zip(current.drafts, statuses):
            parts.append(token_html(t, "draft" if s == "accepted" else s))
        if last is not None:
            parts.append(token_html(last[1], last[0]))
    return '<div style="line-height:2.2rem">' + "".join(parts) + "</div>"


def describe_event(ev: dict, gamma: int) -> str:
    """One sentence (Markdown) for one event of ``RoundTrace.events()``."""
    kind = ev["kind"]
    if kind == "draft":
        return (f"**draft {ev['position'] + 1} of {gamma}**: after “{' '.join(ev['context'])}” the drafter "
                f"samples **{ev['token']}** from q")
    if kind == "verify":
        return f"**verify**: one target pass computes p at all {gamma} draft positions and the bonus position"
    if kind in ("accept", "reject"):
        u, a = ev["u"], ev["acceptance"]
        x = ev["token"]
        why = f"min(1, p/q) = {a} (p({x}) = {ev['p_x']}, q({x}) = {ev['q_x']})"
        if kind == "accept":
            return f"**position {ev['position'] + 1}**: u = {u:.3f} < {why}: **keep {x}**"
        return f"**position {ev['position'] + 1}**: u = {u:.3f} ≥ {why}: **reject {x}**"
    if kind == "correct":
        dropped = f"; the later drafts {' '.join(ev['discarded'])} are discarded" if ev["discarded"] else ""
        return f"**correct**: draw **{ev['token']}** from the residual r = max(0, p − q), normalized{dropped}"
    if kind == "bonus":
        return f"**bonus**: all {gamma} drafts kept, so **{ev['token']}** is drawn from p at position {gamma + 1}"
    if kind == "emit":
        k = ev["accepted"]
        return (f"**emit** {' '.join(ev['tokens'])}: {k} accepted draft(s) + 1 "
                f"{'bonus' if k == gamma else 'replacement'} = {len(ev['tokens'])} token(s) for one target pass")
    return kind


def text_html(prompt: str, pieces) -> str:
    """Generated text with each character tinted by how it was made.

    ``pieces`` is a sequence of (characters, status) with status "draft" (accepted
    draft), "correct" (replacement) or "bonus"; the prompt is shown plain.
    """
    def show(text):
        return html.escape(text).replace("\n", "↵<br>")

    out = [f'<span style="color:{DARK_GREY}">{show(prompt)}</span>']
    for chars, status in pieces:
        out.append(f'<span title="{TOKEN_STYLE[status][1]}" style="background:{TEXT_TINT[status]}">{show(chars)}</span>')
    return ('<div style="font-family:monospace;font-size:1.05rem;white-space:pre-wrap;line-height:1.6;'
            f'border:1px solid {MUTED};border-radius:0.4rem;padding:0.6rem">' + "".join(out) + "</div>")
