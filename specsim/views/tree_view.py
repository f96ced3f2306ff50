"""One seeded tree round, replayed a decision at a time: the drafted tree, its layout, the node statuses.

``Tree.trace`` draws a child only when the walk tries it. A real tree
verifier drafts the whole tree first and checks it in one target pass, so
``drafted_tree`` completes the trace: the tried children keep the trace's
tokens, every other node is drafted from its own q (i.i.d., or without the
siblings drafted before it), with a second seeded generator. Drafting the
untried nodes afterwards is the same distribution as drafting them first:
nothing the walk decides depends on them.

``walk_steps`` turns the trace into decisions (a child accepted, a child
rejected with the updated rows p', q', the closing token), ``statuses``
says what every node looks like after k of them, and ``layout`` places the
nodes for a drawing (leaves evenly spaced, a parent above the middle of its
children, the closing token in a slot of its own).

Example
-------
>>> from specsim.toy import load_model
>>> from specsim.schemes.tree import Tree
>>> m = load_model("seed")
>>> tr = Tree((2, 1), "iid")
>>> trace = tr.trace(m, ("a",), seed=0)
>>> nodes = drafted_tree(m, ("a",), tr, trace, seed=0)
>>> [(n["path"], n["token"]) for n in nodes]
[((0,), 'b'), ((0, 0), 'a'), ((1,), 'b'), ((1, 0), 'b')]
>>> [s["kind"] for s in walk_steps(trace)]
['accept', 'accept', 'bonus']
>>> statuses(nodes, walk_steps(trace), 1)
['accepted', 'testing', 'not reached', 'not reached']
"""
from __future__ import annotations

import re
from fractions import Fraction

from ..sampling import draw, make_rng
from ..schemes.tree import check_shape, without

FILL_STREAM = 1  # the untried nodes are drafted from numpy.random.default_rng([seed, FILL_STREAM])
STATUSES = ("not reached", "testing", "accepted", "rejected")
SHAPE_PARAM = re.compile(r"[0-9]{1,2}(,[0-9]{1,2}){0,7}")


def shape_param(text):
    """A ``?tree=2,2,1`` query parameter as a shape tuple, or None for anything not strictly valid.

    >>> shape_param("2,2,1"), shape_param("2, 2"), shape_param("9" * 40), shape_param("0,1"), shape_param("8,8")
    ((2, 2, 1), None, None, None, None)
    """
    if not isinstance(text, str) or not SHAPE_PARAM.fullmatch(text):
        return None
    try:
        return check_shape(int(w) for w in text.split(","))
    except ValueError:
        return None


def drafted_tree(models, context, tree, trace, seed=None) -> list:
    """Every drafted node of the round, depth first: dicts {path, parent, depth, token}.

    ``path`` is the tuple of child indices from the root; ``parent`` the index
    of the parent node in the list (-1 for the root's children), as in
    ``specsim.schemes.masks.shape_parents(shape, "dfs")``. A distinct node whose
    q has no token left is not drafted (nor its subtree), so a distinct tree
    can have fewer nodes than its shape.
    """
    vocab = models.vocab
    tried = {}  # path -> token index, from the trace
    path = ()
    for ev in trace["events"]:
        if ev["kind"] == "draft":
            tried[path + (ev["child"],)] = vocab.index(ev["token"])
        elif ev["kind"] == "accept":
            path = path + (ev["child"],)
    rng = make_rng([0 if seed is None else seed, FILL_STREAM])
    nodes = []

    def grow(prefix, tokens, parent):
        depth = len(prefix)
        if depth == tree.depth:
            return
        q = models.q(tuple(context) + tokens)
        taken = set()
        for j in range(tree.shape[depth]):
            row = q if tree.drafts == "iid" else without(q, taken)
            if row is None:
                return
            here = prefix + (j,)
            x = tried[here] if here in tried else draw(row, rng.random())
            taken.add(x)
            nodes.append({"path": here, "parent": parent, "depth": depth + 1, "token": vocab[x]})
            grow(here, tokens + (vocab[x],), len(nodes) - 1)

    grow((), (), -1)
    return nodes


def walk_steps(trace) -> list:
    """The walk's decisions, in order: dicts {kind, path, token, ...} from the trace events.

    kinds: "accept" / "reject" (``path`` of the child tested; ``acceptance``,
    ``u``, ``p_x``, ``q_x``; a rejection also carries the updated rows ``p``
    and ``q``), then one closing "bonus" or "fallback" (``path`` of the node
    it follows, its ``row`` and token).
    """
    steps, path = [], ()
    for ev in trace["events"]:
        kind = ev["kind"]
        if kind in ("accept", "reject"):
            steps.append({"kind": kind, "path": path + (ev["child"],), "token": ev["token"],
                          **{k: ev[k] for k in ("p_x", "q_x", "acceptance", "u")}})
            if kind == "accept":
                path = path + (ev["child"],)
        elif kind == "update":
            steps[-1].update(p=ev["p"], q=ev["q"])
        elif kind in ("bonus", "fallback"):
            steps.append({"kind": kind, "path": path, "token": ev["token"], "row": ev["row"]})
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
    return steps[-1]["path"] if steps and steps[-1]["kind"] in ("bonus", "fallback") else None


def parents(nodes) -> list:
    """The ``parent`` list of the drafted nodes (the input of ``specsim.schemes.masks``)."""
    return [n["parent"] for n in nodes]


def describe(step) -> str:
    """One line for a step, as the page prints it."""
    kind = step["kind"]
    where = "root" if not step["path"] else "node " + ".".join(str(j + 1) for j in step["path"])
    if kind in ("accept", "reject"):
        verdict = "accepted" if kind == "accept" else "rejected"
        text = (f"{where} (**{step['token']}**): u = {step['u']:.3f} against min(1, p'(x)/q'(x)) = "
                f"min(1, {step['p_x']} / {step['q_x']}) = {step['acceptance']}: **{verdict}**")
        if kind == "reject":
            text += "; p' ← normalize(max(0, p' − q'))"
        return text
    if kind == "bonus":
        return f"a leaf is reached: **bonus** token **{step['token']}** drawn from p"
    return f"every child of {'the root' if not step['path'] else where} rejected: **{step['token']}** drawn from the current p'"


def rows_after(steps, k: int):
    """(p', q') in force after the first ``k`` steps: the rows the last rejection at the current node
    left (Fractions), or None when the current node has had no rejection yet. A distinct node with no
    token left to draft has q' = None in the trace: zeros here."""
    for s in reversed(steps[:k]):
        if s["kind"] == "reject":
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
