"""One sentence (Markdown) for each event of a stepped round (``RoundTrace.events()``): a chain's, a
block's or a tree's. Every token passes ``tokens.md`` first."""
from __future__ import annotations

from parts.tokens import md
from specsim.schemes import as_scheme
from specsim.views import tree_view, words

EVENT_MARKS = ("Chart marks: a **black outline** is the token sampled at this step; bars are **p** (target) and "
               "**q** (drafter); in the test panel a **◆** is the uniform draw u and the bar is min(1, p/q), "
               "**green** when the draft is kept (u below the bar), **red** when it is rejected.")


def _draft(ev, s, node):
    where = f"**draft {node}** (depth {ev['position'] + 1})" if node else f"**draft {ev['position'] + 1} of {s.depth}**"
    how = "picks **{}**, one of its top-k tokens (chosen, not sampled)" if s.point_mass_drafts else "samples **{}** from q"
    return f"{where}: after “{' '.join(ev['context'])}” the drafter " + how.format(ev["token"])


def _verify(ev, s, node):
    if tree_view.node_by_node(s):
        return (f"**verify**: one target pass computes p at the root and after each of the "
                f"{words.count(len(ev['p']) - 1, 'drafted node')}; the walk starts at the root")
    return f"**verify**: one target pass computes p at all {s.depth} draft positions and the bonus position"


def _weights(ev, s, node):
    return ("**weights**: wᵢ = min(1, wᵢ₋₁ · p(Xᵢ)/q(Xᵢ)) along the block: w = "
            + ", ".join(str(w) for w in ev["w"]) + "; each position's stop probability hᵢ comes from them")


def _stop(ev, s, node):
    if ev["stop"]:
        return (f"**position {ev['position']}**: u = {ev['u']:.3f} < h = {ev['h']}: the coin comes up, "
                f"so every draft up to position {ev['position']} is kept")
    return f"**position {ev['position']}**: u = {ev['u']:.3f} ≥ h = {ev['h']}: no stop here"


def _test(ev, s, node):
    kind, u, a, x = ev["kind"], ev["u"], ev["acceptance"], ev["token"]
    if node:
        why = f"min(1, p'(x)/q'(x)) = min(1, {ev['p_x']} / {ev['q_x']}) = {a}" if not s.point_mass_drafts else \
            f"p'(x) = {a} (a chosen child is a point mass, kept with p'(x))"
        return f"**{node}** (**{x}**): u = {u:.3f} {'<' if kind == 'accept' else '≥'} {why}: " + \
            ("**accepted**, the walk goes down" if kind == "accept" else "**rejected**")
    why = f"min(1, p/q) = {a} (p({x}) = {ev['p_x']}, q({x}) = {ev['q_x']})"
    if kind == "accept":
        return f"**position {ev['position'] + 1}**: u = {u:.3f} < {why}: **keep {x}**"
    return f"**position {ev['position'] + 1}**: u = {u:.3f} ≥ {why}: **reject {x}**"


def _update(ev, s, node):
    if s.point_mass_drafts:
        return ("after the rejection the child's token is removed from p' and p' renormalized: the next "
                "sibling (or the closing token) is judged against it")
    return ("after the rejection p' ← normalize(max(0, p' − q')) and q' ← "
            + ("q without the tried tokens" if s.drafts == "distinct" else "q")
            + ": the next sibling (or the closing token) is judged against these rows")


def _correct(ev, s, node):
    if tree_view.node_by_node(s):
        return f"**correct**: every child rejected, so **{ev['token']}** is drawn from the current p'"
    source = "the block residual normalize(max(0, w·p − q))" if s.keeps_by_stop_coins else \
        "the residual r = max(0, p − q), normalized"
    dropped = f"; the later drafts {' '.join(ev['discarded'])} are discarded" if ev["discarded"] else ""
    return f"**correct**: draw **{ev['token']}** from {source}{dropped}"


def _bonus(ev, s, node):
    if tree_view.node_by_node(s):
        return f"**bonus**: a leaf is reached, so **{ev['token']}** is drawn from p"
    return f"**bonus**: all {s.depth} drafts kept, so **{ev['token']}** is drawn from p at position {s.depth + 1}"


def _emit(ev, s, node):
    k = ev["accepted"]
    last = "bonus" if k == s.depth else "replacement"
    return (f"**emit** {' '.join(ev['tokens'])}: {words.count(k, 'accepted draft')} + 1 {last} = "
            f"{words.count(len(ev['tokens']), 'token')} for one target pass")


SAY = {"draft": _draft, "verify": _verify, "weights": _weights, "stop": _stop, "accept": _test, "reject": _test,
       "update": _update, "correct": _correct, "bonus": _bonus, "emit": _emit}


def describe_event(ev: dict, scheme, names=None) -> str:
    """One sentence (Markdown) for one event of ``RoundTrace.events()``, for a chain, a block or a tree.

    ``scheme`` is the round's scheme (an int γ reads as ``chain:γ``); ``names``
    the tree nodes' names ("1", "1.2", ...; ``tree_view.sibling_paths``).
    """
    scheme = as_scheme(scheme)
    ev = {k: (md(v) if isinstance(v, str) and k == "token" else v) for k, v in ev.items()}
    for k in ("context", "discarded", "tokens"):
        if k in ev:
            ev[k] = [md(t) for t in ev[k]]
    node = f"node {names[ev['node']]}" if tree_view.node_by_node(scheme) and names and "node" in ev else None
    say = SAY.get(ev["kind"])
    return say(ev, scheme, node) if say else ev["kind"]
