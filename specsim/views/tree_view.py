"""A sampled round of any scheme replayed an event at a time: its drafted tree, node statuses, layout, mask.

``specsim.sampling.trace_round`` drafts the whole layout before it verifies
anything (as real verifiers do: the target scores every drafted node in one
pass), so the drafted tree is read from the trace itself: ``drafted_tree``
lists its nodes (a chain or a block is a path). ``at_event`` says what a
viewer knows after each event of ``RoundTrace.events()``: the nodes drafted
so far, each node's status, the tree walk's decisions so far.

``walk_steps`` turns a tree trace into decisions (a child accepted, a child
rejected with the updated rows p', q', the closing token), ``statuses``
says what every node looks like after k of them, and ``layout`` places the
nodes for a drawing (leaves evenly spaced, a parent above the middle of its
children, the closing token in a slot of its own).

Example
-------
>>> from specsim.toy import load_model
>>> from specsim.sampling import trace_round
>>> from specsim.schemes import Tree
>>> trace = trace_round(load_model("seed"), ("a",), Tree((2, 1)), seed=0)
>>> [(n["path"], n["token"]) for n in drafted_tree(trace)]
[((0,), 'b'), ((1,), 'a'), ((0, 0), 'a'), ((1, 0), 'a')]
>>> [s["kind"] for s in walk_steps(trace)]
['reject', 'accept', 'accept', 'bonus']
>>> statuses(drafted_tree(trace), walk_steps(trace), 1)
['rejected', 'testing', 'not reached', 'not reached']
"""
from __future__ import annotations

from fractions import Fraction

STATUSES = ("not reached", "testing", "accepted", "rejected")
CLOSING = ("correct", "bonus")  # the kinds of a round's closing token


def node_by_node(scheme) -> bool:
    """Whether a round of ``scheme`` is drawn node by node from its drafted layout: a tree (fixed or
    dynamic: EAGLE-2's layout is read from the round's drafted parents) or a chain whose length
    varies (a confidence-stopped chain drafts 1..G, a path of its own length each round).

    >>> from specsim.schemes import parse
    >>> [node_by_node(parse(s)) for s in ("chain:3", "block:3", "tree:2,1", "chain:max=6,stop=0.45",
    ...                                    "tree:dynamic,budget=6,depth=3,topk=2")]
    [False, False, True, True, True]
    """
    return scheme.drawn_as != "row"


def drafted_tree(trace) -> list:
    """Every drafted node of the round, in the order they were drafted: dicts {node, path, parent, depth, token}.

    ``path`` is the tuple of child indices from the root (a chain's node j has
    path (0,) * (j + 1)); ``parent`` the index of the parent node (-1 for the
    root's children), as in ``trace.parents``. A distinct node whose q has no
    token left drafts no more children, so a distinct tree can have fewer
    nodes than its shape.
    """
    nodes, children = [], {}
    for j, (token, parent) in enumerate(zip(trace.drafts, trace.parents)):
        index = children.get(parent, 0)
        children[parent] = index + 1
        path = (nodes[parent]["path"] if parent >= 0 else ()) + (index,)
        nodes.append({"node": j, "path": path, "parent": parent, "depth": len(path), "token": token})
    return nodes


def node_statuses(trace, event_index: int) -> dict:
    """What is known about every node once the events up to ``event_index`` have been shown (any scheme).

    Returns {"statuses", "tested", "closing"}: one status per node drafted so
    far, "pending" (drafted, not decided), "accepted", "rejected" or
    "discarded" (never kept: after a chain's rejection, or once the round
    closes); ``tested`` the nodes in the order they were tested; ``closing``
    ("correct" | "bonus", token) once the closing token is drawn, else None.
    A block's stop coin at position i keeps every draft up to i.

    >>> from specsim.toy import load_model
    >>> from specsim.sampling import trace_round
    >>> t = trace_round(load_model("seed"), ("a",), 3, seed=0)
    >>> node_statuses(t, 2)["statuses"], node_statuses(t, 6)["statuses"], node_statuses(t, 6)["closing"]
    (['pending', 'pending', 'pending'], ['accepted', 'rejected', 'discarded'], ('correct', 'b'))
    """
    status, tested, closing = [], [], None
    for ev in trace.events()[:event_index + 1]:
        kind = ev["kind"]
        if kind == "draft":
            status.append("pending")
        elif kind in ("accept", "reject"):
            status[ev["node"]] = "accepted" if kind == "accept" else "rejected"
            tested.append(ev["node"])
            if kind == "reject":  # a chain's rejection discards every later draft, a tree's none
                for j in trace.scheme.dropped_by_rejection(ev["node"], len(status)):
                    status[j] = "discarded"
        elif kind == "stop":
            tested.append(ev["node"])
            if ev["stop"]:
                status[:ev["node"] + 1] = ["accepted"] * (ev["node"] + 1)
        elif kind in CLOSING:
            closing = (kind, ev["token"])
            status = ["discarded" if s == "pending" else s for s in status]
    return {"statuses": status, "tested": tested, "closing": closing}


def at_event(trace, event_index: int) -> dict:
    """The drawing of a tree round after events ``0..event_index``: {"nodes", "steps", "k"}.

    While the tree is drafted only the nodes drafted so far are drawn and no
    decision is shown; from the verify pass on every node is drawn with the
    first ``k`` decisions of ``walk_steps`` (a rejection and the update after
    it are one decision). Feed the three to ``specsim.plots.tree.tree_figure``.
    """
    nodes, steps = drafted_tree(trace), walk_steps(trace)
    shown = trace.events()[:event_index + 1]
    drafted = sum(ev["kind"] == "draft" for ev in shown)
    if not any(ev["kind"] == "verify" for ev in shown):  # the verify pass follows the last draft
        return {"nodes": nodes[:drafted], "steps": [], "k": 0}
    k = sum(ev["kind"] in ("accept", "reject", *CLOSING) for ev in shown)
    return {"nodes": nodes, "steps": steps, "k": k}


def walk_steps(trace) -> list:
    """A tree round's decisions, in order: dicts {kind, node, path, token, ...} from the trace's events.

    kinds: "accept" / "reject" (the child tested: ``node``, ``path``,
    ``acceptance``, ``u``, ``p_x``, ``q_x``; a rejection also carries the
    updated rows ``p`` and ``q`` the next sibling is tried against), then one
    closing "correct" (every child of a node rejected: a token from the
    current p') or "bonus" (a leaf reached: a token from p), with ``path`` of
    the node it follows and its ``row``.
    """
    paths = [n["path"] for n in drafted_tree(trace)]
    steps, path = [], ()
    for ev in trace.events():
        kind = ev["kind"]
        if kind in ("accept", "reject"):
            steps.append({"kind": kind, "node": ev["node"], "path": paths[ev["node"]], "token": ev["token"],
                          **{k: ev[k] for k in ("p_x", "q_x", "acceptance", "u")}})
            if kind == "accept":
                path = paths[ev["node"]]
        elif kind == "update":
            steps[-1].update(p=ev["p"], q=ev["q"])
        elif kind in CLOSING:
            steps.append({"kind": kind, "path": path, "token": ev["token"], "row": ev.get("row", ev.get("p"))})
    return steps


def statuses(nodes, steps, k: int) -> list:
    """The status of every node after the first ``k`` steps (one of ``STATUSES``).

    The child the next step tests is "testing"; a node never tested is "not
    reached" (its subtree hangs off a rejected child, or its parent was
    never reached, or an earlier sibling was accepted).
    """
    if not 0 <= k <= len(steps):
        raise ValueError(f"step {k} is outside 0..{len(steps)}")
    index = {n["path"]: i for i, n in enumerate(nodes)}
    out = ["not reached"] * len(nodes)
    for s in steps[:k]:
        if s["kind"] in ("accept", "reject"):
            out[index[s["path"]]] = "accepted" if s["kind"] == "accept" else "rejected"
    if k < len(steps) and steps[k]["kind"] in ("accept", "reject"):
        out[index[steps[k]["path"]]] = "testing"
    return out


def layout(nodes, closing_path=None) -> dict:
    """Coordinates for drawing: {"root": (x, 0), "nodes": [(x, -depth)], "closing": (x, y) or None}.

    Leaves take slots 0, 1, 2, ... left to right; a node sits above the mean
    of its children. ``closing_path`` (the node after which the closing token
    is drawn, () for the root) gets one extra child slot, after its drafted
    children, for the closing token.
    """
    children = {(): []}
    for i, n in enumerate(nodes):
        children.setdefault(n["path"][:-1], []).append(i)
        children.setdefault(n["path"], [])
    xs, slot = {}, [0]

    def place(path):
        kids = [nodes[i]["path"] for i in children.get(path, [])]
        if path == closing_path:
            kids.append("closing")
        if not kids:
            xs[path] = float(slot[0])
            slot[0] += 1
            return xs[path]
        got = [place(c) if c != "closing" else _leaf(xs, slot) for c in kids]
        xs[path] = sum(got) / len(got)
        return xs[path]

    place(())
    closing = None
    if closing_path is not None:
        closing = (xs["closing"], -(len(closing_path) + 1))
    return {"root": (xs[()], 0), "nodes": [(xs[n["path"]], -n["depth"]) for n in nodes], "closing": closing}


def _leaf(xs, slot):
    xs["closing"] = float(slot[0])
    slot[0] += 1
    return xs["closing"]


def closing_path(steps):
    """The path of the node the closing token follows (the last step's), or None if the walk has no end."""
    return steps[-1]["path"] if steps and steps[-1]["kind"] in CLOSING else None


def parents(nodes) -> list:
    """The ``parent`` list of the drafted nodes (the input of ``specsim.schemes.masks``)."""
    return [n["parent"] for n in nodes]


def rows_after(steps, k: int):
    """(p', q') in force after the first ``k`` steps: the rows the last rejection at the current node
    left (Fractions), or None when the current node has had no rejection yet. A distinct node with no
    token left to draft has q' = None in the trace: zeros here."""
    for s in reversed(steps[:k]):
        if s["kind"] == "reject":
            if "p" not in s:  # a chain's rejection closes the round: no rows are updated
                return None
            p = [Fraction(v) for v in s["p"]]
            return p, [Fraction(v) for v in s["q"]] if s["q"] is not None else [Fraction(0)] * len(p)
        if s["kind"] == "accept":
            return None
    return None


def due_step(start: float, now: float, speed: float, first: int, current: int, n: int, most: int = 10) -> int:
    """The step Play should show: ``first`` plus one per ``speed`` seconds since ``start``, at most
    ``most`` ahead of ``current`` and never past ``n``.

    >>> due_step(0.0, 1.3, 0.6, 0, 0, 5), due_step(0.0, 100.0, 0.6, 0, 2, 5)
    (2, 5)
    """
    return min(first + int((now - start) / speed), current + most, n)



def node_label(node) -> str:
    """A node's name on the mask's axes: its path from the root and its token ("1.2 b")."""
    return ".".join(str(j + 1) for j in node["path"]) + " " + node["token"]


def verify_mask(context, nodes) -> dict:
    """The one-pass tree verification of the drafted nodes: its attention grid and position ids.

    The queries are the root (the context's last token) and every node; the
    keys are the cached context (all tokens but the last) and the same m + 1
    positions. Returns {"grid", "positions", "rows", "columns"} (the labels).
    """
    from ..schemes import masks
    context = list(context)
    n = max(len(context) - 1, 0)
    par = parents(nodes)
    root = "root " + (context[-1] if context else "·")
    rows = [root] + [node_label(v) for v in nodes]
    columns = [f"cached {i + 1} {t}" for i, t in enumerate(context[:n])] + rows
    return {"grid": masks.tree_grid(par, n), "positions": masks.tree_positions(par, n),
            "rows": rows, "columns": columns}


def sibling_paths(parents) -> list:
    """Each node's path from the root as child numbers ("1", "1.2", ...), from a parent list.

    >>> sibling_paths([-1, 0, 0, -1, 3])
    ['1', '1.1', '1.2', '2', '2.1']
    """
    names, children = [], {}
    for a in parents:
        children[a] = children.get(a, 0) + 1
        names.append((names[a] + "." if a >= 0 else "") + str(children[a]))
    return names


def round_mask(parents, drafted, root: str, cached, window: int = 8) -> dict:
    """The attention grid of one tree round of a real model, labelled with its characters.

    ``drafted`` are the nodes' characters, ``root`` the token fed first, ``cached``
    the characters already in the cache (only the last ``window`` columns of them
    are drawn). Returns {"grid", "positions", "rows", "columns"} like ``verify_mask``.

    >>> m = round_mask([-1, 0, -1], ["a", "b", "c"], "x", "hello", window=2)
    >>> m["rows"], m["columns"][:2], m["positions"]
    (['root x', '1 a', '1.1 b', '2 c'], ['cached 4 l', 'cached 5 o'], [5, 6, 7, 6])
    >>> m["grid"].astype(int).tolist()[2]
    [1, 1, 1, 1, 1, 0]
    """
    from ..schemes import masks
    cached = list(cached)
    n = len(cached)
    grid = masks.tree_grid(parents, n)
    first = max(0, n - window)
    rows = [f"root {root}"] + [f"{p} {c}" for p, c in zip(sibling_paths(parents), drafted)]
    columns = [f"cached {i + 1} {cached[i]}" for i in range(first, n)] + rows
    return {"grid": grid[:, first:], "positions": masks.tree_positions(parents, n), "rows": rows, "columns": columns}
