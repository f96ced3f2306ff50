"""Sampled rounds in words and coloured tokens (HTML for ``st.markdown(..., unsafe_allow_html=True)``).

The colours are specsim's (``specsim.plots.colors``): accepted drafts green,
replacements red, bonus tokens purple, pending drafts outlined in q's orange.
Every token is user data (an uploaded model's vocabulary): it is escaped
with ``html_text`` before it enters HTML and with ``md`` before it enters
Markdown, so a token ``<b>`` shows as the three characters ``<b>`` and a token
``![i](http://host/t.png)`` as those characters, never as an image fetched by
every viewer's browser. These two are the app's only escapes: every string from
a model file, an upload or a visitor that reaches Markdown or HTML passes one.
"""
from __future__ import annotations

import html

from specsim.views import tree_view
from specsim.plots.colors import (BONUS_COLOR, DARK_GREY, GREY, OVERLAP_COLOR, PANEL, Q_COLOR, RESIDUAL_COLOR,
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


_MD_SPECIAL = set("\\`*_{}[]()#+-.!|<>~$&:\"'=")


def md(text: str) -> str:
    """``text`` for Markdown: every Markdown/HTML/LaTeX special character backslash-escaped.

    >>> print(md("<b>*x*</b>"))
    \\<b\\>\\*x\\*\\</b\\>
    """
    return "".join("\\" + ch if ch in _MD_SPECIAL else ch for ch in visible(text)).replace("\n", " ")


def html_text(text: str) -> str:
    """``text`` for HTML that Streamlit's Markdown also reads: ``html.escape`` plus every Markdown/LaTeX
    special character as a numeric entity (a ``<span>`` does not stop Markdown inside it).

    >>> html_text("<img src=x> ![i](u) $x$ 'q'")
    '&lt;img src&#61;x&gt; &#33;&#91;i&#93;&#40;u&#41; &#36;x&#36; &#x27;q&#x27;'
    """
    return "".join(f"&#{ord(ch)};" if ch in _MD_ENTITY else html.escape(ch) for ch in visible(text))


def visible(text) -> str:
    """Control characters (a checkpoint's token can hold ``ESC ] 0 ; ... BEL``) written as their escapes, so a
    page shows them as text; newlines stay.

    >>> visible("a" + chr(27) + "[31m" + chr(10))
    'a\\x1b[31m\n'
    """
    return "".join(ch if ch.isprintable() or ch == "\n" else ch.encode("unicode_escape").decode("ascii")
                   for ch in str(text))


_MD_ENTITY = set("\\`*_{}[]()#+-.!|~$:=")  # Markdown/LaTeX specials left by html.escape (it takes <>&"')


def md_tokens(tokens, sep: str = " ") -> str:
    """Several tokens for Markdown, each escaped by ``md``, joined by ``sep``.

    >>> print(md_tokens(["![i](http://x/t.png)", "a"]))
    \\!\\[i\\]\\(http\\://x/t\\.png\\) a
    """
    return sep.join(md(t) for t in tokens)


def token_html(token: str, status: str, size: str = "1.15rem") -> str:
    """One token as a coloured chip; the token is escaped (it may be any string from a model file)."""
    return _chip(html_text(token), status, size)


def _chip(body: str, status: str, size: str) -> str:
    css, label = TOKEN_STYLE[status]
    return (f'<span title="{html.escape(label)}" style="{css};font-family:monospace;font-size:{size};'
            f'padding:0.1rem 0.45rem;margin:0.1rem;border-radius:0.3rem;display:inline-block;white-space:pre">'
            f'{body}</span>')


def boundary_html(number: int) -> str:
    """The mark before round ``number`` in the token stream."""
    return (f'<span title="round {number} starts here" style="display:inline-block;margin:0 0.15rem 0 0.5rem;'
            f'padding-left:0.3rem;border-left:3px solid {DARK_GREY};color:{DARK_GREY};font-size:0.75rem;'
            f'vertical-align:top">{number}</span>')


def legend_html(statuses, boundary: bool = False) -> str:
    parts = [_chip(html.escape(TOKEN_STYLE[s][1]), s, "0.8rem") for s in statuses]  # our own labels
    if boundary:
        parts.append(boundary_html(2) + '<span style="font-size:0.8rem">round 2 starts here</span>')
    return " ".join(parts)


def round_html(trace, event_index: int = -1, number: int | None = None) -> str:
    """One round's chips as known after ``event_index`` (default: the whole round), any scheme.

    A chain or a block shows every draft; rejected and discarded drafts stay
    visible, struck through, before the closing token. A tree shows the nodes
    the walk tested, in order (the untested alternatives are in the tree
    figure). ``number`` puts a round boundary mark first.
    """
    n = len(trace.events())
    known = tree_view.node_statuses(trace, event_index % n)
    statuses = known["statuses"]
    shown = known["tested"] if tree_view.node_by_node(trace.scheme) else range(len(statuses))
    parts = [boundary_html(number)] if number is not None else []
    parts += [token_html(trace.drafts[j], "draft" if statuses[j] == "accepted" else statuses[j]) for j in shown]
    if known["closing"] is not None:
        parts.append(token_html(known["closing"][1], known["closing"][0]))
    return "".join(parts)


def stream_html(context, done: list, current=None, event_index: int = -1, first: int = 1, hidden: int = 0) -> str:
    """The context, finished rounds ``first``, ``first + 1``, ... and the current round so far.

    ``hidden`` earlier rounds are summarized in one grey chip (the page shows
    only the last few so that its work per step stays constant).
    """
    parts = [token_html(t, "context") for t in context]
    if hidden:
        parts.append(f'<span style="color:{GREY};font-size:0.85rem;margin:0 0.4rem">… {hidden} earlier '
                     f'round{"s" * (hidden != 1)} …</span>')
    numbered = current is not None and (done or first > 1)
    for j, trace in enumerate(done):
        parts.append(round_html(trace, number=first + j))
    if current is not None:
        parts.append(round_html(current, event_index, number=first + len(done) if numbered else None))
    return '<div style="line-height:2.2rem">' + "".join(parts) + "</div>"
