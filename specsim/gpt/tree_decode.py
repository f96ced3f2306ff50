"""Tree verification on the tiny GPT: a whole tree of drafts scored in one target pass.

A tree of shape (W1, ..., Wd) (``specsim.schemes.tree``): the root (the last token of
the text so far) gets W1 children, each of them W2, and so on. One round:

1. draft: q at a node is the drafter's row after that node's own path; its
   children are drawn from q, ``iid`` (with replacement) or ``distinct``
   (q without the siblings drawn before, renormalized). The drafter runs
   level by level: all the nodes of a level in one pass, each seeing the
   prefix, the root and its own ancestors (a tree mask in the drafter's cache
   too). Leaves are never fed to the drafter.
2. flatten: depth-first (default) or breadth-first (``masks.shape_parents``),
   parents before children;
3. verify: one target pass over [root, node 0, ..., node m-1] after the n
   cached keys, position ids ``masks.tree_positions`` (siblings share one),
   mask ``masks.tree_grid`` (built once, shared by every layer): row 0 of p
   is the root's, row i + 1 node i's;
4. walk: from the root, try its children in order against the current pair
   (p', q'), first (p, q): accept child x when u < min(1, p'(x) / q'(x)) and
   descend; after a rejection p' <- normalize(max(0, p' - q')) and, for
   distinct drafts, q' <- q without the tokens tried (the node functions of
   ``specsim.schemes.tree``, through their torch twins in ``specsim.gpt.rule``);
5. close: at a leaf one bonus token from its p; when every child of a node is
   rejected, one token from the current p' (a residual);
6. keep: the target's cache keeps prefix + root + the accepted path (slots
   gathered, then cropped: ``KVCache.keep``); the drafter's keeps the accepted
   nodes it was fed, and is fed the rest (an accepted leaf, the closing token)
   at the start of the next round.

With the chain shape (1, ..., 1) every random draw happens in the order of
``decode.speculative_generate`` and the rows are the same, so the two
decoders give the same tokens for the same seed (tested).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from ..schemes.tree import DRAFTS, check_shape, drafted
from ..schemes import masks
from .decode import Generation, Sampling, _Context, _row, _sample
from .drafters import ModelDrafter, as_drafter
from .rule import child_acceptance, residual_update, without

ORDERS = ("dfs", "bfs")


@dataclass
class DraftedTree:
    """Step 1's result: the flattened tree and where the drafter holds each fed node."""

    parents: list  # m parent indices, -1 for a child of the root
    tokens: list  # m drafted token ids
    q_rows: list  # m + 1 entries: the root's row q, then node i's (None for a leaf: never fed)
    base: int  # drafter cache length after the root was fed
    slots: dict  # node -> its slot after ``base`` in the drafter's cache (fed nodes only)


@dataclass
class TreeRound:
    """Everything one tree round did. Token ids index the vocabulary; node i is row i + 1 of p."""

    start: int  # n: cached positions before the pass (the root sits at position n)
    last_token: int  # the root
    parents: list  # m parent indices (-1: child of the root)
    tokens: list  # m drafted ids
    q_rows: list  # m + 1 rows q (root first); None for leaves
    p_rows: torch.Tensor  # (m + 1, V) rows p (root first)
    u: list  # m uniforms; u[i] decides node i if it is tried
    tried: list  # node indices in the order they were tried
    acceptance: list  # min(1, p'(x) / q'(x)) of each tried node
    accepted_flags: list  # of each tried node
    accepted_nodes: list  # the accepted path, root's child first
    correction: str  # "bonus" (after a leaf) or "residual" (every child of a node rejected)
    closing_token: int
    closing_row: torch.Tensor  # (V,) the row the closing token was drawn from
    mask_shape: tuple  # (m + 1, n + m + 1)
    cache: dict  # {"target"|"draft": {"start", "before_verify", "after_verify", "after_keep"}}
    slid: bool = False
    text: str | None = None  # the emitted characters, set by ``specsim.gpt.api``

    @property
    def n_cached(self) -> int:
        return self.start

    @property
    def accepted(self) -> int:
        """K: accepted drafts (the depth reached)."""
        return len(self.accepted_nodes)

    @property
    def emitted(self) -> list:
        return [self.tokens[i] for i in self.accepted_nodes] + [self.closing_token]

    def to_dict(self, vocab: str | None = None, top: int | None = 5) -> dict:
        name = (lambda t: vocab[t]) if vocab else (lambda t: t)
        return {"start": self.start, "n_cached": self.start, "last_token": name(self.last_token),
                "parents": self.parents, "depths": masks.tree_depths(self.parents),
                "tokens": [name(t) for t in self.tokens], "tried": self.tried, "u": self.u,
                "accept_prob": self.acceptance, "accepted": self.accepted_flags,
                "accepted_nodes": self.accepted_nodes, "k": self.accepted, "correction": self.correction,
                "correction_token": name(self.closing_token), "emitted": [name(t) for t in self.emitted],
                "mask_shape": list(self.mask_shape), "cache": self.cache, "slid": self.slid,
                "p_rows": [_row(r, name, top) for r in self.p_rows],
                "q_rows": [None if r is None else _row(r, name, top) for r in self.q_rows]}


@dataclass
class TreeGeneration(Generation):
    widths: tuple = ()
    drafts: str = "iid"
    order: str = "dfs"

    def to_dict(self, vocab: str | None = None, top: int | None = 5) -> dict:
        return {**super().to_dict(vocab, top), "tree": list(self.widths), "drafts": self.drafts,
                "order": self.order}


def children(parents) -> list:
    """kids[0]: the root's children; kids[i + 1]: node i's, in list order."""
    kids = [[] for _ in range(len(parents) + 1)]
    for i, a in enumerate(parents):
        kids[a + 1].append(i)
    return kids


def tree_drafter(draft) -> ModelDrafter:
    drafter = as_drafter(draft)
    if hasattr(drafter, "own_cache"):  # early exit: a tree is laid out unlike the chain
        drafter = drafter.own_cache()
    if not isinstance(drafter, ModelDrafter):
        raise ValueError(f"the {drafter.name} drafter cannot draft a tree; use distilled, trained or early-exit:K")
    return drafter


def draft_tree(drafter: ModelDrafter, ids: list, widths, drafts: str, order: str, sampling: Sampling,
               gen: torch.Generator) -> DraftedTree:
    """Step 1: draft a tree of shape ``widths`` after ``ids`` (its last id is the root), flattened in ``order``."""
    model, cache, device = drafter.model, drafter.cache, drafter.device
    full = masks.shape_parents(widths, order)
    kids = children(full)
    tokens, q_rows = [None] * len(full), [None] * (len(full) + 1)
    feed = torch.tensor([ids[drafter.fed:]], device=device)  # (1, 1), or (1, 2) after an accepted leaf
    q_rows[0] = sampling.row(model(feed, cache, last_only=True)[0, -1])  # (V,)
    drafter.passes += 1
    base = cache.length  # prefix + root
    slot_parents, slots, level = [], {}, [-1]  # the drafter's own tree over the nodes it is fed
    for depth in range(len(widths)):
        nxt = []
        for a in level:  # draw each node's children from its q (iid) or q without earlier siblings
            q, tried = q_rows[a + 1], []
            for c in kids[a + 1]:
                row = q if drafts == "iid" else without(q, tried)
                if row is None:  # distinct drafts ran out of tokens: this node has fewer children
                    break
                tokens[c] = int(torch.multinomial(row, 1, generator=gen))
                tried.append(tokens[c])
                nxt.append(c)
        if depth == len(widths) - 1:  # leaves: no row q needed
            break
        for c in nxt:  # feed the whole level at once: each node sees the prefix, the root, its ancestors
            slot_parents.append(-1 if full[c] < 0 else slots[full[c]])
            slots[c] = len(slot_parents) - 1
        grid = masks.tree_grid(slot_parents, base - 1)[-len(nxt):]  # (len(nxt), base + fed nodes)
        pos = masks.tree_positions(slot_parents, base - 1)[-len(nxt):]
        mask = None if len(nxt) == 1 else torch.from_numpy(grid).to(device)  # one node sees every key
        idx = torch.tensor([[tokens[c] for c in nxt]], device=device)  # (1, len(nxt))
        rows = sampling.row(model(idx, cache, pos=torch.tensor(pos, device=device), mask=mask)[0])  # (len, V)
        for c, row in zip(nxt, rows):
            q_rows[c + 1] = row
        drafter.passes += 1
        level = nxt
    keep = [i for i, t in enumerate(tokens) if t is not None]  # prune children distinct drafts could not draw
    new = {old: i for i, old in enumerate(keep)}
    return DraftedTree([-1 if full[i] < 0 else new[full[i]] for i in keep], [tokens[i] for i in keep],
                       [q_rows[0]] + [q_rows[i + 1] for i in keep], base,
                       {new[c]: s for c, s in slots.items()})


@dataclass
class Walk:
    accepted_nodes: list
    tried: list
    acceptance: list
    accepted_flags: list
    closing_row: torch.Tensor  # (V,)
    correction: str  # "bonus" or "residual"


def walk_tree(parents, tokens, p_rows, q_rows, u, drafts: str = "iid") -> Walk:
    """Steps 4-5 on one scored tree: the accepted path and the row the closing token comes from.

    ``p_rows`` / ``q_rows``: the root's row first, then node i's at i + 1; ``u[i]`` decides node i.
    """
    kids = children(parents)
    node, walk = -1, Walk([], [], [], [], None, "bonus")
    while True:
        p = p_rows[node + 1]
        if not kids[node + 1]:  # a leaf: bonus from its p
            walk.closing_row = p
            return walk
        q = q_rows[node + 1]
        p_cur, q_cur, tried = p, q, []
        for c in kids[node + 1]:
            a = child_acceptance(p_cur, q_cur, tokens[c])
            ok = bool(u[c] < a)
            walk.tried.append(c)
            walk.acceptance.append(float(a))
            walk.accepted_flags.append(ok)
            if ok:  # descend into the accepted child
                walk.accepted_nodes.append(c)
                node = c
                break
            tried.append(tokens[c])
            p_next = residual_update(p_cur, q_cur)
            p_cur = p_cur if p_next is None else p_next  # None: float rounding rejected a sure child
            q_cur = q if drafts == "iid" else without(q, tried)
        else:  # every child rejected: draw from the current p'
            walk.closing_row, walk.correction = p_cur, "residual"
            return walk


def tree_mask(parents, n: int, device=None) -> torch.Tensor:
    """``masks.tree_grid`` as a torch (m + 1, n + m + 1) boolean tensor: the verify pass's mask."""
    return torch.from_numpy(masks.tree_grid(parents, n)).to(device)


def tree_round(target, drafter: ModelDrafter, ctx: _Context, widths, drafts: str, order: str,
               sampling: Sampling, gen: torch.Generator, slid: bool = False) -> TreeRound:
    """One tree round on the decoding state ``ctx`` (its ids and the target's cache) and the drafter."""
    device, t_cache, d_cache = ctx.device, ctx.caches[0], drafter.cache
    n, last = t_cache.length, int(ctx.pending)
    start = {"target": n, "draft": d_cache.length}
    # step 1-2: draft the tree, flattened
    tree = draft_tree(drafter, ctx.view, widths, drafts, order, sampling, gen)
    m = len(tree.parents)
    before = {"target": n, "draft": d_cache.length}
    # step 3: one target pass over [root, nodes] with tree positions and the tree mask
    mask = tree_mask(tree.parents, n, device)  # (m + 1, n + m + 1)
    pos = torch.tensor(masks.tree_positions(tree.parents, n), device=device)  # (m + 1,)
    idx = torch.tensor([[last] + tree.tokens], device=device)  # (1, m + 1)
    p_rows = sampling.row(target(idx, t_cache, pos=pos, mask=mask)[0])  # (m + 1, V)
    after = {"target": t_cache.length, "draft": d_cache.length}
    # step 4-5: walk down, then the closing token
    u = torch.rand(m, generator=gen, device=device)  # (m,)
    walk = walk_tree(tree.parents, tree.tokens, p_rows, tree.q_rows, u, drafts)
    tok = int(_sample(walk.closing_row, gen))
    # step 6: keep only the accepted path in both caches
    path = walk.accepted_nodes
    t_cache.keep(list(range(n + 1)) + [n + 1 + i for i in path])
    d_cache.keep(list(range(tree.base)) + [tree.base + tree.slots[i] for i in path if i in tree.slots])
    drafter.fed = d_cache.length
    emitted = [tree.tokens[i] for i in path] + [tok]
    ctx.pending = torch.tensor([[tok]], device=device)
    ctx.ids.extend(emitted)
    ends = {"target": t_cache.length, "draft": d_cache.length}
    cache = {k: {"start": start[k], "before_verify": before[k], "after_verify": after[k],
                 "after_keep": ends[k]} for k in start}
    return TreeRound(n, last, tree.parents, tree.tokens, tree.q_rows, p_rows, u.tolist(), walk.tried,
                     walk.acceptance, walk.accepted_flags, path, walk.correction, tok, walk.closing_row,
                     tuple(mask.shape), cache, slid)


def check_tree_args(widths, drafts: str, order: str) -> tuple:
    widths = check_shape(widths)
    if drafts not in DRAFTS:
        raise ValueError(f"drafts must be one of {', '.join(DRAFTS)}, got {drafts!r}")
    if order not in ORDERS:
        raise ValueError(f"order must be one of {', '.join(ORDERS)}, got {order!r}")
    return widths


@torch.inference_mode()
def tree_generate(target, draft, prompt_ids, n_tokens: int, widths=(2, 2, 1), drafts: str = "iid",
                  order: str = "dfs", sampling: Sampling = Sampling(), seed: int = 0) -> TreeGeneration:
    """Speculative decoding with a draft tree of shape ``widths`` verified in one target pass per round."""
    widths = check_tree_args(widths, drafts, order)
    drafter = tree_drafter(draft)
    device = target.wte.weight.device
    gen = torch.Generator(device).manual_seed(seed)
    ctx = _Context([target], prompt_ids, device, window=drafter.window)
    need = drafted(widths) + 2  # root, nodes, and the closing token
    if need > ctx.window // 2:
        raise ValueError(f"a tree of {drafted(widths)} drafts does not fit the context window of {ctx.window}")
    drafter.start(ctx.view)
    passes_before = drafter.passes
    out, rounds = [], []
    while len(out) < n_tokens:
        slid = ctx.make_room(need)
        if slid:
            drafter.start(ctx.view)
        r = tree_round(target, drafter, ctx, widths, drafts, order, sampling, gen, slid)
        rounds.append(r)
        out.extend(r.emitted)
    return TreeGeneration(list(prompt_ids), out[:n_tokens], "tree", len(rounds), drafter.passes - passes_before,
                          None, rounds, widths=widths, drafts=drafts, order=order)
