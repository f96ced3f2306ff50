"""Drafting a tree with the drafter's KV cache, and laying it out for the one verify pass.

The tree's draws are the scheme's own (``specsim.schemes.Tree.draft``: node j
is the j-th draw, level by level, children i.i.d. or distinct). What this
module adds is the drafter's side: the rows q at every node, computed level
by level with the drafter's cache, all the nodes of a level in one pass, each
seeing the prefix, the root and its own ancestors (a tree mask in the
drafter's cache too). Leaves are never fed.

The scheme's draw is deterministic given the rows and the uniforms, so a
tree of depth d is drafted by calling ``Tree(shape[:k]).draft`` for k = 1..d:
each call draws the same first levels again from the memoized rows and one
new level, whose nodes the drafter then scores in one pass. Nodes with the
same path (i.i.d. siblings that drew the same token) share one row and one
slot of the drafter's cache.

A dynamic tree (``specsim.schemes.DynamicTree``, EAGLE-2's) grows its own
layout from the rows: ``draft_dynamic`` lets the scheme grow it on the rows
scored so far, scores the paths it asked for (its next level's expanded
nodes) in one pass, and repeats: one drafter pass per level, as EAGLE-2's.

``flatten`` orders the nodes for the target's verify pass: ``bfs`` (the
scheme's own numbering) or ``dfs``; the order changes the layout of the pass
(positions, mask), never the tokens.

>>> flatten([-1, -1, 0, 0, 1, 1], "dfs")
[0, 2, 3, 1, 4, 5]
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from ..schemes import DynamicTree, Tree, masks
from . import specs
from .drafters import ModelDrafter, as_drafter

ORDERS = ("dfs", "bfs")


@dataclass
class DraftedTree:
    """The drafted tree: tokens and parents (the scheme's layout), the rows q, the drafter's slots."""

    tokens: list  # N drafted ids, node j the j-th draw
    parents: list  # N parent indices, -1 for a child of the root
    q_rows: list  # N + 1 rows (V,) on the device: the root's, then node j's at j + 1 (None: a leaf)
    q_host: list  # the same rows as float lists (what the scheme reads)
    base: int  # drafter cache length after the root was fed
    slots: dict  # path (tuple of ids) -> its slot after ``base`` in the drafter's cache (fed paths only)
    by_path: dict  # path -> q as a float list, every path the drafter scored (a dynamic tree's layout reads them)


def tree_drafter(draft) -> ModelDrafter:
    """The drafter with a cache of its own (``own_cache``: early exit's chain shares the target's), or a
    one-line ValueError for a drafter its registry entry declares chain-only (``specs.DrafterEntry.tree``)."""
    drafter = as_drafter(draft)
    specs.check_tree(drafter.name)
    drafter = drafter.own_cache()
    if not isinstance(drafter, ModelDrafter):  # a drafter outside the registry, or declared wrongly
        raise ValueError(f"the {drafter.name} drafter cannot draft a tree: it has no model and cache of its own")
    return drafter


def paths_of(tokens, parents) -> list:
    """Each node's path from the root: the tuple of drafted ids down to it."""
    out = []
    for x, a in zip(tokens, parents):
        out.append((out[a] if a >= 0 else ()) + (x,))
    return out


def draft_tree(drafter: ModelDrafter, ids: list, scheme: Tree, sampling, u_draft, rule) -> DraftedTree:
    """Step 1 for a tree: the scheme draws, the drafter's cache scores each new level in one pass."""
    model, cache, device = drafter.model, drafter.cache, drafter.device
    feed = torch.tensor([ids[drafter.fed:]], device=device)  # (1, 1), or (1, 2) after an accepted leaf
    dev = {(): sampling.row(model(feed, cache, last_only=True)[0, -1])}  # path -> q (V,)
    host = {(): dev[()].tolist()}
    drafter.passes += 1
    base = cache.length  # prefix + root
    slot_parents, slots = [], {}  # the drafter's own tree over the paths it was fed
    level = dict(drafter=drafter, sampling=sampling, dev=dev, host=host, base=base, slot_parents=slot_parents,
                 slots=slots)
    tokens, parents = GROW[scheme.gpt_round](scheme, u_draft, rule, **level)
    paths, has_kids = paths_of(tokens, parents), set(parents)
    kept = [p if j in has_kids else None for j, p in enumerate(paths)]  # a fed node left childless keeps no row
    return DraftedTree(tokens, parents, [dev[()]] + [dev.get(p) for p in kept],
                       [host[()]] + [host.get(p) for p in kept], base, slots, host)


def feed_level(drafter: ModelDrafter, new: list, sampling, dev: dict, host: dict, base: int,
               slot_parents: list, slots: dict) -> None:
    """Score the paths ``new`` (one level, their parents fed) in one drafter pass; rows into ``dev`` and ``host``."""
    model, cache, device = drafter.model, drafter.cache, drafter.device
    for p in new:
        slot_parents.append(slots[p[:-1]] if len(p) > 1 else -1)
        slots[p] = len(slot_parents) - 1
    grid = masks.tree_grid(slot_parents, base - 1)[-len(new):]  # (len(new), base + fed paths)
    pos = masks.tree_positions(slot_parents, base - 1)[-len(new):]
    # the tree mask even for one new node: an earlier level may hold slots that are not its ancestors
    # (a dynamic tree expands only its best nodes)
    mask = torch.from_numpy(grid).to(device)
    idx = torch.tensor([[p[-1] for p in new]], device=device)  # (1, len(new))
    rows = sampling.row(model(idx, cache, pos=torch.tensor(pos, device=device), mask=mask)[0])  # (len, V)
    for p, row, row_host in zip(new, rows, rows.tolist()):
        dev[p], host[p] = row, row_host
    drafter.passes += 1


def draft_levels(scheme: Tree, u_draft, rule, **level) -> tuple:
    """A fixed tree: ``Tree(shape[:k]).draft`` for k = 1..d, each new level scored in one pass (not the leaves)."""
    for k in range(1, scheme.depth + 1):
        tokens, parents = Tree(scheme.shape[:k], scheme.drafts).draft(level["host"].__getitem__, u_draft, rule)
        if k == scheme.depth:  # leaves: no row q needed
            return tokens, parents
        paths = paths_of(tokens, parents)
        feed_level(new=list(dict.fromkeys(p for p in paths if len(p) == k)), **level)  # this level's distinct paths


def draft_dynamic(scheme: DynamicTree, u_draft=None, rule=None, **level) -> tuple:
    """A dynamic tree's layout, one drafter pass per level: the scheme grows its layout on the rows known
    so far (an unscored path has no children yet); the paths it asked for are the next level to score.
    (Its drafting draws no uniforms and reads no rule: ``u_draft`` and ``rule`` are unused.)"""
    host = level["host"]
    zeros = [0.0] * len(host[()])
    while True:
        missing = []

        def q_at(path):
            if path not in host:
                missing.append(path)
            return host.get(path, zeros)

        tokens, parents = scheme.draft(q_at)
        if not missing:
            return tokens, parents
        feed_level(new=list(dict.fromkeys(missing)), **level)


GROW = {"tree": draft_levels, "dynamic_tree": draft_dynamic}  # scheme.gpt_round -> how its levels are drafted


def keep_path(drafter: ModelDrafter, tree: DraftedTree, path: list) -> None:
    """Step 6 on the drafter: keep the prefix, the root and the fed nodes of the accepted path."""
    paths = paths_of(tree.tokens, tree.parents)
    fed = [tree.base + tree.slots[paths[j]] for j in path if paths[j] in tree.slots]
    drafter.cache.keep(list(range(tree.base)) + fed)
    drafter.fed = drafter.cache.length


def children(parents) -> list:
    """kids[0]: the root's children; kids[j + 1]: node j's, in node order."""
    kids = [[] for _ in range(len(parents) + 1)]
    for j, a in enumerate(parents):
        kids[a + 1].append(j)
    return kids


def flatten(parents, order: str = "bfs") -> list:
    """The nodes in the order the verify pass takes them (parents before children)."""
    if order not in ORDERS:
        raise ValueError(f"order must be one of {', '.join(ORDERS)}, got {order!r}")
    if order == "bfs":
        return list(range(len(parents)))
    kids, out, stack = children(parents), [], []
    stack.extend(reversed(kids[0]))
    while stack:
        j = stack.pop()
        out.append(j)
        stack.extend(reversed(kids[j + 1]))
    return out


def tree_mask(parents, n: int, device=None) -> torch.Tensor:
    """``masks.tree_grid`` as a torch (m + 1, n + m + 1) boolean tensor: the verify pass's mask."""
    return torch.from_numpy(masks.tree_grid(parents, n)).to(device)
