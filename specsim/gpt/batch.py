"""Batched speculative decoding: B sequences, one verify pass, ragged acceptance.

A server decodes many sequences at once. Each round here drafts γ tokens for
every sequence (the drafter run batched, one pass per draft position), scores
all of them in **one** target pass over B x (γ + 1) positions, and lets each
sequence keep its own number of accepted drafts. After a round the sequences
therefore hold different numbers of tokens: acceptance is *ragged*.

How the ragged state is held: a right-padded cache with per-sequence lengths
---------------------------------------------------------------------------
``BatchCache`` holds keys and values for B sequences in one tensor
(L, B, nh, W, hs) and one length per sequence. Slot j of sequence b is valid
while j < ``lengths[b]``; the slots after it are padding (zeros, or keys of
rejected drafts waiting to be overwritten). A pass over T new tokens per
sequence (``forward``) then

* writes sequence b's T new keys at its own slots n_b .. n_b + T - 1 (one
  scattered write: the offsets differ per row);
* gives token i of sequence b the position id n_b + i (each sequence its
  own positions, as if decoded alone);
* reads the first max_b(n_b) + T slots of every row and masks keys with a
  per-sequence causal mask: query i of sequence b sees slots 0 .. n_b + i
  (the lower-right causal mask of the batch-1 decoder, shifted per row), so
  padding and stale drafts are never seen.

Rolling back rejected drafts is then what it is for one sequence: a new
length per row, no copy (``crop``). Why not the alternatives: per-sequence
cache views (B separate caches) would cost B separate passes and lose the
batching; a cache written at one common slot for the whole batch would leave
holes at every rejection and need compaction (a gather of the whole cache).
The price of padding: the attention reads max_b(n_b) + T keys for every
row, a few slots more than each needs; the tiny GPT's sequences differ by
tens of tokens at most.

``forward`` runs the model's own modules (embeddings, each block's layer
norms, attention projections and MLP, ``model.attend``, the head): the only
thing it does differently from ``GPT.forward`` is the scattered cache write
and the per-row mask, which ``GPT.forward`` (batch 1 with a cache) has no
place for. ``tests/test_gpt_batch.py`` checks both against the batch-1
decoder: the same tokens, and the same keys and values as a fresh pass.

The round, per sequence, as in ``specsim.gpt.decode``
-----------------------------------------------------
1. draft: γ batched drafter passes; sequence b's draft i is the draw of
   ``Chain.draft`` (``draw(rule.draft_row(q), u_draft[i])``) from its row q;
2. verify: one batched target pass over [last token, drafts] per sequence;
3-5. decide: the scheme's own ``verify`` on each sequence's rows (the walk
   the toy sampler and the batch-1 decoder use; no second acceptance walk);
6. keep: each sequence's target length grows by its K + 1; its drafter
   length by at most γ (after a full acceptance the last draft was never fed
   to the drafter: the next round feeds it two tokens; the round then feeds
   two tokens to every row, re-feeding one cached token where a row needs one).

Uniforms: sequence b draws from its own stream,
``numpy.random.default_rng(seed + b)``, in the batch-1 decoder's layout
(``specsim.sampling.uniforms``), so one seed gives one trace, and sequence b
gets the tokens ``speculative_generate(..., seed=seed + b)`` gives it alone
(up to float rounding of batched matmuls). γ = 0 is plain batched decoding:
one target pass per token, each token drawn with one uniform.

A sequence that has its ``n_tokens`` stays in the batch (a static batch: its
row is still computed) but no longer advances; the batch ends when the last
sequence is done. The batch does not slide the context window: prompt,
tokens and one round of drafts must fit in it.

>>> import torch
>>> from specsim.gpt.config import PRESETS
>>> from specsim.gpt.model import GPT
>>> torch.manual_seed(0) and None
>>> target, draft = GPT(PRESETS["tiny-2"]).eval(), GPT(PRESETS["tiny"]).eval()
>>> g = batch_generate(target, draft, [[1, 2, 3], [4, 5]], 6, gamma=3, sampling=Sampling(greedy=True))
>>> [len(t) for t in g.tokens], g.batch, g.gamma
([6, 6], 2, 3)
>>> len(g.accepted) == g.rounds and all(0 <= k <= 3 for ks in g.accepted for k in ks)
True
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from .. import sampling as toy_sampling
from ..bounds import check_gpt
from ..rule import CORRECT
from ..schemes import as_scheme
from ..schemes.base import draw
from .decode import Sampling
from .model import GPT, attend

__all__ = ["BatchCache", "BatchGeneration", "Sampling", "batch_generate", "forward", "MAX_BATCH", "MAX_GAMMA"]

MAX_BATCH = 64  # sequences in one batch
MAX_GAMMA = 16  # drafts per round (0: plain decoding)


class BatchCache:
    """Keys and values of B sequences, right-padded: row b's slots 0 .. lengths[b] - 1 are valid."""

    def __init__(self, model: GPT, batch: int):
        c, p = model.config, model.wte.weight
        shape = (c.n_layer, batch, c.n_head, c.block_size, c.head_size)
        self.k = torch.zeros(shape, device=p.device, dtype=p.dtype)  # (L, B, nh, W, hs)
        self.v = torch.zeros(shape, device=p.device, dtype=p.dtype)  # (L, B, nh, W, hs)
        self.capacity = c.block_size
        self.lengths = [0] * batch

    def crop(self, lengths) -> None:
        """Row b keeps its first ``lengths[b]`` slots (no copy: new lengths)."""
        lengths = [int(n) for n in lengths]
        if len(lengths) != len(self.lengths) or any(not 0 <= n <= m for n, m in zip(lengths, self.lengths)):
            raise ValueError(f"cannot crop a batch cache of lengths {self.lengths} to {lengths}")
        self.lengths = lengths


def forward(model: GPT, cache: BatchCache, idx: torch.Tensor, last_only: bool = False) -> torch.Tensor:
    """Logits (B, T, V) of T new tokens per sequence, idx (B, T), each after its own ``cache.lengths[b]``.

    Writes the new keys at each row's own slots and grows every length by T.
    """
    B, T = idx.shape
    device = idx.device
    n = torch.tensor(cache.lengths, device=device)  # (B,)
    pos = n[:, None] + torch.arange(T, device=device)  # (B, T): each row's own position ids
    S = max(cache.lengths) + T
    if S > cache.capacity:
        raise ValueError(f"{S} positions exceed the context window of {cache.capacity}")
    mask = (torch.arange(S, device=device) <= pos[..., None])[:, None]  # (B, 1, T, S): row b sees 0 .. n_b + i
    rows = torch.arange(B, device=device)[:, None]  # (B, 1)
    x = model.wte(idx) + model.wpe(pos)  # (B, T, C)
    for layer, block in enumerate(model.blocks):
        x = x + _attention(block.attn, block.ln_1(x), cache, layer, rows, pos, S, mask)  # (B, T, C)
        x = x + block.mlp(block.ln_2(x))  # (B, T, C)
    cache.lengths = [m + T for m in cache.lengths]
    if last_only:
        x = x[:, -1:]  # (B, 1, C)
    return model.lm_head(model.ln_f(x))  # (B, T, V)


def _attention(attn, x, cache, layer, rows, pos, S, mask):
    """The model's attention with a scattered cache write: row b's keys go to slots pos[b]."""
    B, T, C = x.shape
    nh = attn.n_head
    q, k, v = attn.c_attn(x).view(B, T, 3, nh, C // nh).unbind(2)  # 3 x (B, T, nh, hs)
    cache.k[layer][rows, :, pos] = k  # (B, T, nh, hs) into slots (b, :, pos[b, t])
    cache.v[layer][rows, :, pos] = v
    y = attend(q.transpose(1, 2), cache.k[layer, :, :, :S], cache.v[layer, :, :, :S], mask)  # (B, nh, T, hs)
    return attn.c_proj(y.transpose(1, 2).reshape(B, T, C))  # (B, T, C)


@dataclass
class BatchGeneration:
    """B generations decoded together: tokens per sequence, K per round and sequence."""

    prompt_ids: list  # B lists
    tokens: list  # B lists of n_tokens generated ids each
    gamma: int  # 0: plain decoding
    accepted: list  # one list of B values of K per round (None for a row already done); [] for plain
    rounds: int  # target passes (one per round)
    draft_passes: int
    scheme: str  # "plain" or the scheme's name
    sequences: list  # per row: prompt and every token it emitted (a finished row's last round may pass n_tokens)
    caches: list  # the final ``BatchCache`` of the target (and of the drafter): row b holds sequences[b][:-1]

    @property
    def batch(self) -> int:
        return len(self.tokens)

    def tokens_per_round(self) -> list:
        """Per sequence: tokens emitted per round while it was running (K + 1 averaged; 1 for plain)."""
        if not self.gamma:
            return [1.0] * self.batch
        ks = [[r[b] for r in self.accepted if r[b] is not None] for b in range(self.batch)]
        return [sum(k + 1 for k in kb) / len(kb) for kb in ks]


def check_batch(batch: int, gamma: int, n_tokens: int, prompt_lengths, window: int) -> None:
    """One-line refusals: batch size, γ, tokens, empty or long prompts, total work (``bounds.check_gpt``)."""
    if not 1 <= batch <= MAX_BATCH:
        raise ValueError(f"batch size must be in 1 .. {MAX_BATCH}, got {batch}")
    if isinstance(gamma, bool) or not isinstance(gamma, int) or not 0 <= gamma <= MAX_GAMMA:
        raise ValueError(f"gamma must be an integer in 0 .. {MAX_GAMMA} (0: plain decoding), got {gamma!r}")
    if n_tokens < 1:
        raise ValueError(f"the number of tokens must be >= 1, got {n_tokens}")
    if any(n == 0 for n in prompt_lengths):
        raise ValueError("a prompt is empty")
    need = max(prompt_lengths) + n_tokens + gamma + 1
    if need > window:
        raise ValueError(f"prompt ({max(prompt_lengths)}) + tokens ({n_tokens}) + one round of drafts needs "
                         f"{need} positions; the context window is {window} (the batch does not slide)")
    check_gpt(n_tokens, gamma, runs=batch, lower="the batch size, --tokens or γ")


@torch.inference_mode()
def batch_generate(target: GPT, draft: GPT | None, prompts, n_tokens: int, gamma: int = 4,
                   sampling: Sampling = Sampling(), seed: int = 0, scheme=None) -> BatchGeneration:
    """Decode ``n_tokens`` after each prompt (lists of ids), all together; γ = 0 is plain decoding.

    ``draft``: a small GPT with the target's vocabulary (unused when γ = 0).
    ``scheme``: a chain or block scheme of γ drafts (default ``chain:γ``).
    """
    prompts = [list(p) for p in prompts]
    models = [target] + ([draft] if gamma else [])
    check_batch(len(prompts), gamma, n_tokens, [len(p) for p in prompts],
                min(m.config.block_size for m in models))
    scheme = as_scheme(scheme if scheme is not None else gamma) if gamma else None
    if scheme is not None and scheme.iid_gamma != gamma:  # a chain or a block of γ drafts every round
        raise ValueError(f"batched decoding runs a chain or block of γ = {gamma} drafts, not {scheme.name}")
    B, device = len(prompts), target.wte.weight.device
    rngs = [toy_sampling.make_rng(seed + b) for b in range(B)]
    ids = [list(p) for p in prompts]
    caches = [BatchCache(m, B) for m in models]
    _prefill(models, caches, prompts)
    out, accepted, rounds, draft_passes = [[] for _ in range(B)], [], 0, 0
    while any(len(o) < n_tokens for o in out):
        running = [len(o) < n_tokens for o in out]
        if scheme is None:
            emitted = _plain_step(target, caches[0], ids, sampling, rngs)
        else:
            emitted, ks = _round(target, draft, caches, ids, scheme, sampling, rngs, running)
            accepted.append(ks)
            draft_passes += gamma
        rounds += 1
        for b in range(B):
            if running[b]:
                out[b].extend(emitted[b])
                ids[b].extend(emitted[b])
    return BatchGeneration(prompts, [o[:n_tokens] for o in out], gamma, accepted, rounds, draft_passes,
                           scheme.name if scheme else "plain", ids, caches)


def _prefill(models, caches, prompts) -> None:
    """Every prompt minus its last token into every cache (right-padded; the padding is cropped away)."""
    width = max(len(p) for p in prompts) - 1
    if width < 1:
        return
    idx = torch.tensor([p[:-1] + [0] * (width - len(p) + 1) for p in prompts],
                       device=models[0].wte.weight.device)  # (B, width)
    for m, c in zip(models, caches):
        forward(m, c, idx, last_only=True)
        c.crop([len(p) - 1 for p in prompts])


def _plain_step(target, cache, ids, sampling, rngs) -> list:
    """One target pass for every row; each row's token drawn with its own next uniform."""
    last = torch.tensor([[s[-1]] for s in ids], device=target.wte.weight.device)  # (B, 1)
    rows = sampling.row(forward(target, cache, last)[:, -1]).tolist()  # B rows of V
    return [[draw(r, float(rng.random()))] for r, rng in zip(rows, rngs)]


def _round(target, draft, caches, ids, scheme, sampling, rngs, running) -> tuple:
    """One round for every sequence: (emitted tokens per row, K per row or None for a row already done)."""
    t_cache, d_cache = caches
    device, gamma, B = target.wte.weight.device, scheme.gamma, len(ids)
    n = list(t_cache.lengths)  # row b: positions 0 .. n_b - 1 cached, ids[b][-1] at n_b is next
    d_start = list(d_cache.lengths)
    us = [toy_sampling.uniforms(rng, scheme) for rng in rngs]  # (u_draft, u_test, u_final) per row
    # step 1: draft; a row one behind (full acceptance last round) feeds two tokens, so all rows do
    feed = 2 if any(d < m for d, m in zip(d_start, n)) else 1
    d_cache.crop([m + 1 - feed for m in n])
    x = torch.tensor([s[len(s) - feed:] for s in ids], device=device)  # (B, feed)
    drafts, q_host = [[] for _ in range(B)], [[] for _ in range(B)]
    for i in range(gamma):
        q = sampling.row(forward(draft, d_cache, x, last_only=True)[:, -1]).tolist()  # B rows of V
        for b in range(B):  # Chain.draft's step i, per sequence
            q_host[b].append(q[b])
            drafts[b].append(draw(CORRECT.draft_row(q[b]), us[b][0][i]))
        x = torch.tensor([[d[-1]] for d in drafts], device=device)  # (B, 1)
    # step 2: one target pass over [last, drafts] for every row
    idx = torch.tensor([[s[-1]] + d for s, d in zip(ids, drafts)], device=device)  # (B, gamma + 1)
    p = sampling.row(forward(target, t_cache, idx)).tolist()  # B x (gamma + 1) rows of V
    # steps 3-5: each row's own decision, by the scheme's verify
    emitted, ks = [], []
    for b in range(B):
        _, u_test, u_final = us[b]
        verdict = scheme.verify(drafts[b], p[b], q_host[b], u_test, u_final)  # the correct rule: always closes
        ks.append(len(verdict.path))
        emitted.append(drafts[b][:ks[-1]] + [verdict.closing])
    # step 6: keep each row's prefix, last token and accepted drafts; a finished row stays where it was
    kept = [m + 1 + k if r else m for m, k, r in zip(n, ks, running)]
    t_cache.crop(kept)
    d_cache.crop([min(k, d) if r else s for k, d, r, s in zip(kept, d_cache.lengths, running, d_start)])
    return emitted, [k if r else None for k, r in zip(ks, running)]
