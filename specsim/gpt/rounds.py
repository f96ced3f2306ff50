"""A scheme's part of a GPT round: how its drafts are drafted, laid out for the verify pass and kept.

The decoder (``specsim.gpt.decode.one_round``) drives every round the same
way -- draft, one verify pass, the scheme's own ``verify`` walk on the host,
keep -- and asks the scheme's part for the three steps that depend on the
layout. A scheme names its part by ``scheme.gpt_round`` (``"chain"``,
``"tree"`` or ``"dynamic_tree"``), so the decoder never asks a scheme what it is:

* ``ChainRound`` (chains, blocks, confidence-stopped chains): the drafter is
  fed one draft at a time and may propose fewer (prompt lookup, a confidence
  stop), the verify pass takes the lower-right causal mask, and step 6 crops
  both caches;
* ``TreeRound`` (fixed and dynamic trees): the drafter scores a level per
  pass (``specsim.gpt.tree_decode``; a fixed tree draws its levels, a
  dynamic tree grows them), the verify pass takes the tree's mask
  and position ids in ``order``, and step 6 gathers the accepted path's slots.

A new layout is a new part here and one entry of ``ROUNDS``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch

from .. import sampling as toy_sampling
from ..schemes import masks
from . import tree_decode
from .drafters import as_drafter


@dataclass
class Drafted:
    """Step 1's result: what the round verifies and the rows it was drawn from."""

    scheme: object  # the scheme verified: a chain capped to the drafts proposed, or None without drafts
    tokens: list  # drafted ids, node j the j-th draw
    parents: list  # node j's parent, -1 for a child of the root
    q_dev: list  # rows q on the device (None: a leaf's, never computed)
    q_host: list  # the same rows as float lists (what the scheme reads)
    u_test: list
    u_final: float
    tree: tree_decode.DraftedTree | None = None
    where: dict = field(default_factory=dict)  # node -> its place among the verify pass's drafts (a tree)


class ChainRound:
    """Drafts one after another, verified under the lower-right causal mask; step 6 crops."""

    def __init__(self, scheme, crop: bool = True, order: str = "dfs"):
        self.scheme, self.crop = scheme, crop

    @staticmethod
    def drafter(draft):
        return as_drafter(draft)

    def draft(self, drafter, ctx, sampling, rng, rule) -> Drafted:
        g = drafter.budget(ctx.view, self.scheme.gamma)  # prompt lookup may propose fewer, even none
        used = None if not g else self.scheme if g == self.scheme.gamma else self.scheme.capped(g)
        u_draft, u_test, u_final = toy_sampling.uniforms(rng, used) if used else ([], [], float(rng.random()))
        q_dev, q_host = [], []

        def q_at(path):  # Chain.draft asks after (), then after each draft in turn
            q_dev.append(drafter.row(ctx.view, path, sampling))
            q_host.append(q_dev[-1].tolist())
            return q_host[-1]

        tokens, parents = used.draft(q_at, u_draft, rule) if used else ([], [])
        drafter.done()
        return Drafted(used, tokens, parents, q_dev, q_host, u_test, u_final)

    def pass_inputs(self, d: Drafted, last: int, n: int, device) -> tuple:
        """[last, drafts] (1, g + 1), no layout arguments (the lower-right mask), rows already in node order."""
        return torch.tensor([[last] + d.tokens], device=device), {}, None

    def keep(self, target_cache, drafter, ctx, d: Drafted, path: list, closed: bool, n: int) -> list:
        """Step 6; returns the verify pass's rows of the kept positions (the features the EAGLE drafter reads)."""
        if self.crop:
            target_cache.crop(n + len(path) + closed)  # no closing token: the last draft is fed next round
        drafter.keep(ctx.view, len(ctx.view) - 1, self.crop)
        return list(range(target_cache.length - n))


class TreeRound:
    """A tree drafted level by level, verified in one pass under its tree mask; step 6 gathers the path."""

    def __init__(self, scheme, crop: bool = True, order: str = "dfs"):
        tree_decode.flatten([], order)  # a bad order is refused before anything runs
        if not crop:
            raise ValueError("crop=False is the chain's pitfall; a tree always keeps its accepted path")
        self.scheme, self.order = scheme, order

    @staticmethod
    def drafter(draft):
        return tree_decode.tree_drafter(draft)

    def draft(self, drafter, ctx, sampling, rng, rule) -> Drafted:
        u_draft, u_test, u_final = toy_sampling.uniforms(rng, self.scheme)
        t = tree_decode.draft_tree(drafter, ctx.view, self.scheme, sampling, u_draft, rule)
        return Drafted(self.scheme, t.tokens, t.parents, t.q_rows, t.q_host, u_test, u_final, tree=t)

    def pass_inputs(self, d: Drafted, last: int, n: int, device) -> tuple:
        """The nodes flattened in ``order`` after the last token, their positions and tree mask, and which
        row of the pass belongs to the root and to each node (node order)."""
        seq = tree_decode.flatten(d.parents, self.order)  # the nodes in the pass's order
        d.where = {j: i for i, j in enumerate(seq)}
        flat = [-1 if d.parents[j] < 0 else d.where[d.parents[j]] for j in seq]
        idx = torch.tensor([[last] + [d.tokens[j] for j in seq]], device=device)  # (1, N + 1)
        pos = torch.tensor(masks.tree_positions(flat, n), device=device)  # (N + 1,)
        layout = {"pos": pos, "mask": tree_decode.tree_mask(flat, n, device)}
        return idx, layout, [0] + [d.where[j] + 1 for j in range(len(d.tokens))]

    def keep(self, target_cache, drafter, ctx, d: Drafted, path: list, closed: bool, n: int) -> list:
        rows = [0] + [d.where[j] + 1 for j in path]
        target_cache.keep(list(range(n)) + [n + r for r in rows])
        tree_decode.keep_path(drafter, d.tree, path)
        return rows


ROUNDS = {"chain": ChainRound, "tree": TreeRound, "dynamic_tree": TreeRound}


def gpt_round(scheme, crop: bool = True, order: str = "dfs"):
    """The part of a GPT round that ``scheme`` names (``scheme.gpt_round``)."""
    return ROUNDS[scheme.gpt_round](scheme, crop, order)
