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

from specsim.schemes import as_scheme
from specsim.views import tree_view, words
from specsim.plots.colors import (BONUS_COLOR, DARK_GREY, GREY, MUTED, OVERLAP_COLOR, PANEL, Q_COLOR, RESIDUAL_COLOR,
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
    shown = known["tested"] if tree_view.drawn_as_tree(trace.scheme) else range(len(statuses))
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


EVENT_MARKS = ("Chart marks: a **black outline** is the token sampled at this step; bars are **p** (target) and "
               "**q** (drafter); in the test panel a **◆** is the uniform draw u and the bar is min(1, p/q), "
               "**green** when the draft is kept (u below the bar), **red** when it is rejected.")


def describe_event(ev: dict, scheme, names=None) -> str:
    """One sentence (Markdown) for one event of ``RoundTrace.events()``, for a chain, a block or a tree.

    ``scheme`` is the round's scheme (an int γ reads as ``chain:γ``); ``names``
    the tree nodes' names ("1", "1.2", ...; ``tree_view.sibling_paths``).
    """
    scheme = as_scheme(scheme)
    kind, gamma, tree = ev["kind"], scheme.depth, tree_view.drawn_as_tree(scheme)
    ev = {k: (md(v) if isinstance(v, str) and k in ("token",) else v) for k, v in ev.items()}
    for k in ("context", "discarded", "tokens"):
        if k in ev:
            ev[k] = [md(t) for t in ev[k]]
    node = f"node {names[ev['node']]}" if tree and names and "node" in ev else None
    if kind == "draft":
        where = f"**draft {node}** (depth {ev['position'] + 1})" if node else \
            f"**draft {ev['position'] + 1} of {gamma}**"
        how = "picks **{}**, one of its top-k tokens (chosen, not sampled)" if scheme.chosen else \
            "samples **{}** from q"
        return f"{where}: after “{' '.join(ev['context'])}” the drafter " + how.format(ev['token'])
    if kind == "verify":
        if tree:
            return (f"**verify**: one target pass computes p at the root and after each of the "
                    f"{words.count(len(ev['p']) - 1, 'drafted node')}; the walk starts at the root")
        return f"**verify**: one target pass computes p at all {gamma} draft positions and the bonus position"
    if kind == "weights":
        return ("**weights**: wᵢ = min(1, wᵢ₋₁ · p(Xᵢ)/q(Xᵢ)) along the block: w = "
                + ", ".join(str(w) for w in ev["w"]) + "; each position's stop probability hᵢ comes from them")
    if kind == "stop":
        if ev["stop"]:
            return (f"**position {ev['position']}**: u = {ev['u']:.3f} < h = {ev['h']}: the coin comes up, "
                    f"so every draft up to position {ev['position']} is kept")
        return f"**position {ev['position']}**: u = {ev['u']:.3f} ≥ h = {ev['h']}: no stop here"
    if kind in ("accept", "reject"):
        u, a, x = ev["u"], ev["acceptance"], ev["token"]
        if node:
            why = f"min(1, p'(x)/q'(x)) = min(1, {ev['p_x']} / {ev['q_x']}) = {a}" if not scheme.chosen else \
                f"p'(x) = {a} (a chosen child is a point mass, kept with p'(x))"
            return f"**{node}** (**{x}**): u = {u:.3f} {'<' if kind == 'accept' else '≥'} {why}: " + \
                ("**accepted**, the walk goes down" if kind == "accept" else "**rejected**")
        why = f"min(1, p/q) = {a} (p({x}) = {ev['p_x']}, q({x}) = {ev['q_x']})"
        if kind == "accept":
            return f"**position {ev['position'] + 1}**: u = {u:.3f} < {why}: **keep {x}**"
        return f"**position {ev['position'] + 1}**: u = {u:.3f} ≥ {why}: **reject {x}**"
    if kind == "update":
        if scheme.chosen:
            return ("after the rejection the child's token is removed from p' and p' renormalized: the next "
                    "sibling (or the closing token) is judged against it")
        return ("after the rejection p' ← normalize(max(0, p' − q')) and q' ← "
                + ("q without the tried tokens" if scheme.drafts == "distinct" else "q")
                + ": the next sibling (or the closing token) is judged against these rows")
    if kind == "correct":
        if tree:
            return f"**correct**: every child rejected, so **{ev['token']}** is drawn from the current p'"
        if scheme.stop_coins:
            source = "the block residual normalize(max(0, w·p − q))"
        else:
            source = "the residual r = max(0, p − q), normalized"
        dropped = f"; the later drafts {' '.join(ev['discarded'])} are discarded" if ev["discarded"] else ""
        return f"**correct**: draw **{ev['token']}** from {source}{dropped}"
    if kind == "bonus":
        if tree:
            return f"**bonus**: a leaf is reached, so **{ev['token']}** is drawn from p"
        return f"**bonus**: all {gamma} drafts kept, so **{ev['token']}** is drawn from p at position {gamma + 1}"
    if kind == "emit":
        k = ev["accepted"]
        last = "bonus" if k == gamma else "replacement"
        return (f"**emit** {' '.join(ev['tokens'])}: {words.count(k, 'accepted draft')} + 1 {last} = "
                f"{words.count(len(ev['tokens']), 'token')} for one target pass")
    return kind


def text_html(prompt: str, pieces) -> str:
    """Generated text with each character tinted by how it was made.

    ``pieces`` is a sequence of (characters, status) with status "draft" (accepted
    draft), "correct" (replacement) or "bonus"; the prompt is shown plain.
    """
    def show(text):
        return html_text(text).replace("\n", "↵<br>")

    out = [f'<span style="color:{DARK_GREY}">{show(prompt)}</span>']
    for chars, status in pieces:
        out.append(f'<span title="{TOKEN_STYLE[status][1]}" style="background:{TEXT_TINT[status]}">{show(chars)}</span>')
    return ('<div style="font-family:monospace;font-size:1.05rem;white-space:pre-wrap;line-height:1.6;'
            f'border:1px solid {MUTED};border-radius:0.4rem;padding:0.6rem">' + "".join(out) + "</div>")
