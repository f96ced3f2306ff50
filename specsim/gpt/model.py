"""A character-level GPT in the GPT-2 layout, with a KV cache that can be cropped.

Layout: token and learned position embeddings, ``n_layer`` pre-LayerNorm blocks
(causal self-attention, GELU MLP), a final LayerNorm and a head tied to the
token embedding. Batch size is 1 whenever a cache is used.

The cache is what makes speculative decoding fast and what makes it subtle:

* ``forward(idx, cache)`` appends the keys and values of the ``T`` new
  positions after the ``n = cache.length`` cached ones and returns logits for
  the new positions only;
* with ``T > 1`` new queries after a non-empty prefix, query ``i`` may attend
  to keys ``0 .. n + i``: the causal mask aligned to the *lower-right* corner
  (``causal_lower_right``); ``is_causal=True`` would align it upper-left and
  hide the prefix from the drafts;
* ``cache.crop(length)`` forgets everything after ``length`` (rejected drafts);
  ``cache.keep(indices)`` keeps the listed slots, in order (the accepted path
  of a draft tree), and forgets the rest;
* a tree of drafts is scored in one pass with explicit position ids ``pos``
  and an explicit boolean ``mask`` (``specsim.schemes.masks.tree_grid``).

>>> import torch
>>> from specsim.gpt.config import PRESETS
>>> torch.manual_seed(0) and None
>>> m = GPT(PRESETS["tiny"]).eval()
>>> cache = m.new_cache()
>>> m(torch.tensor([[1, 2, 3]]), cache).shape, cache.length
(torch.Size([1, 3, 96]), 3)
>>> cache.crop(2); cache.length
2
"""
from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from .config import GPTConfig


class KVCache:
    """Keys and values of every layer for one sequence, preallocated to the window."""

    def __init__(self, config: GPTConfig, device=None, dtype=torch.float32):
        shape = (config.n_layer, 1, config.n_head, config.block_size, config.head_size)
        self.k = torch.zeros(shape, device=device, dtype=dtype)  # (L, 1, nh, W, hs)
        self.v = torch.zeros(shape, device=device, dtype=dtype)  # (L, 1, nh, W, hs)
        self.capacity = config.block_size
        self.length = 0  # number of positions whose keys and values are valid

    def crop(self, length: int) -> None:
        """Keep the first ``length`` positions, forget the rest (no copy: a new length)."""
        if not 0 <= length <= self.length:
            raise ValueError(f"cannot crop a cache of length {self.length} to {length}")
        self.length = length

    def keep(self, indices) -> None:
        """Keep the slots ``indices`` (increasing), moved to the front in that order; forget the rest.

        Gather, then crop: after it, slot i holds what slot ``indices[i]`` held.
        Only the slots after the longest unmoved prefix are copied.
        """
        indices = [int(i) for i in indices]
        if any(not 0 <= i < self.length for i in indices) or any(a >= b for a, b in zip(indices, indices[1:])):
            raise ValueError(f"cannot keep slots {indices} of a cache of length {self.length}")
        same = next((j for j, i in enumerate(indices) if i != j), len(indices))  # slots 0 .. same-1 stay
        if same < len(indices):
            src = torch.tensor(indices[same:], device=self.k.device)  # (moved,)
            self.k[:, :, :, same:len(indices)] = self.k[:, :, :, src]  # advanced indexing copies first
            self.v[:, :, :, same:len(indices)] = self.v[:, :, :, src]
        self.length = len(indices)

    def reset(self) -> None:
        self.length = 0


def lower_right_mask(T: int, S: int, device=None) -> torch.Tensor:
    """``causal_lower_right(T, S)`` as a dense (T, S) boolean tensor: query i sees keys 0 .. S - T + i.

    The boolean form, for callers that build masks (a pass over a cache takes ``span_mask``'s additive
    form, made once per pass). Built with ``tril`` (``tests/test_gpt_model.py`` checks it equals the
    materialized ``causal_lower_right``): importing ``torch.nn.attention.bias`` pulls in torch's
    compiler, 1.5 s of the Tiny GPT page's first load.
    """
    return torch.ones(T, S, dtype=torch.bool, device=device).tril(S - T)


def attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask=None) -> torch.Tensor:
    """Causal attention of T new queries over S >= T keys, the last T of them new.

    q: (B, nh, T, hs); k, v: (B, nh, S, hs) -> (B, nh, T, hs). Query i sees
    keys 0 .. S - T + i (lower-right alignment): ``causal_lower_right(T, S)``,
    or ``mask``, that same mask precomputed by ``lower_right_mask`` (or any
    other (T, S) boolean mask, e.g. a draft tree's).
    """
    T, S = q.size(-2), k.size(-2)
    if mask is not None:  # precomputed: lower-right, or a tree mask
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    if T == 1:  # one new query sees every key: no mask at all
        return F.scaled_dot_product_attention(q, k, v)
    if T == S:  # no prefix: both alignments coincide
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    from torch.nn.attention.bias import causal_lower_right  # only here: its import is slow (see lower_right_mask)
    return F.scaled_dot_product_attention(q, k, v, attn_mask=causal_lower_right(T, S))


def cached_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask=None) -> torch.Tensor:
    """``attend`` for a pass over a KV cache (the token loop: plain steps, draft steps, verify passes).

    On a CPU, bfloat16 numbers are attended in float32 and the result is rounded back to bfloat16:
    torch's CPU attention kernel is slow for a single bfloat16 query, linear in the keys and several
    times the float32 kernel over the same keys even counting the casts (``python
    tests/bench_attention.py`` times both), and one query is what every plain decoding step runs. A
    verify pass attends in float32 too (a little dearer than its bfloat16 kernel), so that it and a
    plain step differ only by their matrix products' rounding. Passes without a cache (training, whose
    numbers must not change) keep ``attend`` as it is."""
    if attention_dtype(q) != q.dtype:
        return attend(q.float(), k.float(), v.float(), mask).to(q.dtype)
    return attend(q, k, v, mask)


def attention_dtype(x: torch.Tensor) -> torch.dtype:
    """The dtype ``cached_attention`` attends in for numbers like ``x``: float32 for bfloat16 on a CPU."""
    return torch.float32 if x.dtype == torch.bfloat16 and x.device.type == "cpu" else x.dtype


def span_mask(T: int, n: int, mask: torch.Tensor | None, like: torch.Tensor) -> torch.Tensor | None:
    """The mask ``block_span`` takes for T new positions after n cached ones, built once per pass.

    ``mask`` (T, n + T) booleans (True: may attend), or None for the lower-right causal one; the result
    is None where attention needs no mask (one new position; or none cached, where the kernel's own
    causal flag is the mask), else the additive mask the attention kernel would make of the booleans
    in every layer: 0 where True, -inf elsewhere, in the dtype it attends in (``attention_dtype``), so
    the same bits (``tests/test_gpt_model.py`` compares the module path's)."""
    if mask is None:
        if T == 1 or n == 0:
            return None  # query i sees keys 0 .. n + i: -inf from key n + i + 1 on
        return torch.full((T, n + T), float("-inf"), dtype=attention_dtype(like), device=like.device).triu_(n + 1)
    full = torch.zeros(mask.shape, dtype=attention_dtype(like), device=like.device)
    return full.masked_fill_(~mask, float("-inf"))  # (T, n + T)


def linear(m: nn.Linear, x: torch.Tensor) -> torch.Tensor:
    """``m(x)`` without ``nn.Module.__call__`` (the same kernel, the same bits): the token loop calls the
    layers directly, as one position's pass of a small model is mostly per-call overhead (measured on one
    CPU thread, with the ModuleList no longer sliced per pass: the distilled drafter's step took about a
    quarter less time)."""
    return F.linear(x, m.weight, m.bias)


def norm(m: nn.LayerNorm, x: torch.Tensor) -> torch.Tensor:
    """``m(x)`` without ``nn.Module.__call__`` (see ``linear``)."""
    return F.layer_norm(x, m.normalized_shape, m.weight, m.bias, m.eps)


class CausalSelfAttention(nn.Module):
    def __init__(self, config: GPTConfig):
        super().__init__()
        self.n_head, self.n_embd = config.n_head, config.n_embd
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd)

    def forward(self, x, mask=None):
        """Attention without a cache (training, teacher forcing); a pass over a cache is ``block_span``."""
        B, T, C = x.shape
        hs = C // self.n_head
        q, k, v = linear(self.c_attn, x).split(C, dim=2)  # 3 x (B, T, C)
        q, k, v = (t.view(B, T, self.n_head, hs).transpose(1, 2) for t in (q, k, v))  # (B, nh, T, hs)
        y = attend(q, k, v, mask).transpose(1, 2).reshape(B, T, C)  # (B, T, C)
        return linear(self.c_proj, y)


class MLP(nn.Module):
    def __init__(self, config: GPTConfig):
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd)
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd)

    def forward(self, x):
        return linear(self.c_proj, F.gelu(linear(self.c_fc, x), approximate="tanh"))  # (B, T, C)


class Block(nn.Module):
    def __init__(self, config: GPTConfig):
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.n_embd)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = nn.LayerNorm(config.n_embd)
        self.mlp = MLP(config)

    def forward(self, x, mask=None):
        x = x + self.attn.forward(norm(self.ln_1, x), mask)  # (B, T, C)
        return x + self.mlp.forward(norm(self.ln_2, x))  # (B, T, C)


class GPT(nn.Module):
    def __init__(self, config: GPTConfig):
        super().__init__()
        self.config = config
        self.wte = nn.Embedding(config.vocab_size, config.n_embd)
        self.wpe = nn.Embedding(config.block_size, config.n_embd)
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.n_layer))
        self.ln_f = nn.LayerNorm(config.n_embd)
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.lm_head.weight = self.wte.weight  # tied embeddings
        self.apply(self._init_weights)
        for name, p in self.named_parameters():  # GPT-2's scaled init of residual projections
            if name.endswith("c_proj.weight"):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))

    @staticmethod
    def _init_weights(module):
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def new_cache(self) -> KVCache:
        p = self.wte.weight
        return KVCache(self.config, device=p.device, dtype=p.dtype)

    def forward(self, idx: torch.Tensor, cache: KVCache | None = None, last_only: bool = False,
                n_layers: int | None = None, pos: torch.Tensor | None = None, mask: torch.Tensor | None = None,
                head: nn.Module | None = None, hidden: bool = False):
        """Logits for the new positions: idx (B, T) -> (B, T, V), or (B, 1, V) with ``last_only``.

        With a cache (B = 1) the T positions follow the ``cache.length`` cached
        ones, their keys and values are appended and the length grows by T.
        ``n_layers`` runs only the first blocks, then the final norm and head
        (the early-exit drafter); its cache then needs only that many layers,
        and ``head`` (a module from hidden states to logits) replaces the final
        norm and head (a trained exit head).
        ``pos`` (T,) replaces the position ids n .. n + T - 1 and ``mask``
        (T, n + T) booleans the lower-right causal mask (True: may attend):
        a draft tree's siblings share a position and see only their ancestors.
        ``hidden``: return (logits, final hidden states before the final norm
        (B, T, C)), the features the EAGLE drafter reads (``specsim.gpt.eagle``).
        """
        B, T = idx.shape
        n = 0 if cache is None else cache.length
        if n + T > self.config.block_size:
            raise ValueError(f"{n + T} positions exceed the context window of {self.config.block_size}")
        if pos is None:
            pos = torch.arange(n, n + T, device=idx.device)  # (T,)
        elif pos.shape != (T,) or int(pos.max()) >= self.config.block_size or int(pos.min()) < 0:
            raise ValueError(f"position ids must be {T} values in 0 .. {self.config.block_size - 1}")
        x = F.embedding(idx, self.wte.weight) + F.embedding(pos, self.wpe.weight)  # (B, T, C)
        if mask is not None and (mask.shape != (T, n + T) or mask.dtype != torch.bool):
            raise ValueError(f"the attention mask must be (T, n + T) = ({T}, {n + T}) booleans")
        blocks = self.blocks if n_layers is None else list(self.blocks)[:n_layers]
        if cache is None:  # training and teacher forcing: the modules
            for block in blocks:
                x = block.forward(x, mask)  # (B, T, C)
        else:  # the token loop's passes: the same kernels without the module calls
            mask = span_mask(T, n, mask, x)  # (T, n + T) additive, or None
            for i, block in enumerate(blocks):
                x = block_span(block_weights(block), x, cache, i, n, mask)  # (1, T, C)
            cache.length = n + T
        if last_only:
            x = x[:, -1:]  # (B, 1, C)
        if head is not None:
            return head(x)  # (B, T, V)
        logits = F.linear(norm(self.ln_f, x), self.lm_head.weight)  # (B, T, V)
        return (logits, x) if hidden else logits

    def stepper(self, n_layers: int | None = None, head: nn.Module | None = None) -> "Step":
        """The token loop's one-position pass (``Step``), over the first ``n_layers`` blocks and ``head``."""
        return Step(self, n_layers, head)

    def hidden_states(self, idx: torch.Tensor) -> list:
        """The residual stream after each block, no cache: [(B, T, C)] * n_layer."""
        x = self.wte(idx) + self.wpe(torch.arange(idx.size(1), device=idx.device))  # (B, T, C)
        out = []
        for block in self.blocks:
            x = block(x)  # (B, T, C)
            out.append(x)
        return out


def block_weights(block: Block) -> tuple:
    """A block's parameters in ``block_step``'s and ``block_span``'s order.

    Read from the modules' own dictionaries: ``nn.Module.__getattr__`` took 85 us for the target's five
    blocks, 1 to 2 % of a verify pass, which looks them up on every call; this takes 6 us."""
    mods = block._modules
    attn, mlp = mods["attn"]._modules, mods["mlp"]._modules
    out = ()
    for m in (mods["ln_1"], attn["c_attn"], attn["c_proj"], mods["ln_2"], mlp["c_fc"], mlp["c_proj"]):
        out += (m._parameters["weight"], m._parameters["bias"])
    return out + (mods["ln_1"].eps, mods["attn"].n_head)


def row_product(like: torch.Tensor):
    """The product of one position's vector the token loop's steps use, for numbers like ``like``:
    ``f(b, w, x)`` is ``F.linear(x, w, b)`` for x (C_in,) -> (C_out,), b a bias or None.

    In float32 on a CPU, the matrix-vector kernel (``addmv``): the same bits as the one-row matrix
    product a forward pass runs (``tests/test_gpt_model.py`` and ``tests/test_gpt_eagle_step.py`` check
    the steps against it) and about 1.5 us less per call, an eighth of a drafter's step on one thread.
    Elsewhere the one-row product itself: for bfloat16 that is oneDNN's kernel, which took 70 us where
    the matrix-vector one took 112 (a 1536 x 384 layer, one thread)."""
    if like.dtype == torch.float32 and like.device.type == "cpu":
        return _addmv
    return _one_row


def _addmv(b, w, x):
    return torch.mv(w, x) if b is None else torch.addmv(b, w, x)


def _one_row(b, w, x):
    return F.linear(x[None], w, b)[0]


def block_step(w: tuple, x: torch.Tensor, cache: KVCache, layer: int, n: int, product=_one_row) -> torch.Tensor:
    """``Block.forward`` for one new position x (C,) after n cached ones (``block_weights`` w, ``product``
    from ``row_product``): the same kernels on the same numbers, so the same bits, without the module
    calls, and without the transposes that T positions need (``block_span``): one query's (1, nh, 1, hs)
    is (C,) in memory."""
    g1, b1, wa, ba, wo, bo, g2, b2, wf, bf, wm, bm, eps, nh = w
    C = x.size(0)
    qkv = product(ba, wa, torch.layer_norm(x, (C,), g1, b1, eps)).view(3, 1, nh, 1, C // nh)  # q, k, v
    cache.k[layer, :, :, n:n + 1] = qkv[1]
    cache.v[layer, :, :, n:n + 1] = qkv[2]
    y = cached_attention(qkv[0], cache.k[layer, :, :, :n + 1], cache.v[layer, :, :, :n + 1])
    x = x + product(bo, wo, y.view(C))  # (C,)
    h = F.gelu(product(bf, wf, torch.layer_norm(x, (C,), g2, b2, eps)), approximate="tanh")  # (4C,)
    return x + product(bm, wm, h)  # (C,)


def block_span(w: tuple, x: torch.Tensor, cache: KVCache, layer: int, n: int, mask=None) -> torch.Tensor:
    """``Block.forward`` for T new positions x (1, T, C) after n cached ones (``block_weights`` w, ``mask``
    from ``span_mask``): the same kernels on the same numbers, so the same bits, without the module
    calls and per-layer mask conversions of the module path. Verify passes and the EAGLE drafter's feeds
    run here: against the module path, a bfloat16 verify pass of 6 positions took about 5 % less time
    and an EAGLE feed of 5 about 15 % less (one thread, 30 interleaved blocks)."""
    nh, C = w[-1], x.size(-1)
    T = x.size(1)
    qkv = F.linear(torch.layer_norm(x, (C,), w[0], w[1], w[-2]), w[2], w[3])  # (1, T, 3C)
    qkv = qkv.view(T, 3, nh, C // nh).transpose(0, 2)  # (nh, 3, T, hs)
    k, v = cache.k[layer, 0], cache.v[layer, 0]  # (nh, W, hs)
    k[:, n:n + T] = qkv[:, 1]
    v[:, n:n + T] = qkv[:, 2]
    y = cached_attention(qkv[None, :, 0], k[None, :, :n + T], v[None, :, :n + T], mask)  # (1, nh, T, hs)
    return _mlp(w, x + F.linear(y.transpose(1, 2).reshape(1, T, C), w[4], w[5]))  # (1, T, C)


def _mlp(w: tuple, x: torch.Tensor) -> torch.Tensor:
    """The block's second half, x + MLP(ln_2(x)), with ``block_weights`` w."""
    h = F.gelu(F.linear(torch.layer_norm(x, x.shape[-1:], w[6], w[7], w[-2]), w[8], w[9]), approximate="tanh")
    return x + F.linear(h, w[10], w[11])  # (1, T, C)


class Step:
    """One new position after the cached ones: ``step(token, cache)`` is
    ``model(torch.tensor([[token]]), cache, last_only=True)[0, -1]`` (V,), the same
    kernels on the same numbers, so the same bits (``tests/test_gpt_model.py``
    checks it), for the token loop.

    A small model's one-position pass is mostly per-call cost on the host:
    building the index tensors, module attribute lookups, splitting and
    transposing q, k, v. Here the token and its position index the embedding
    tables directly, the layers' parameters are looked up once, when the step
    is made, and a single query needs no transpose. Made once per generation:
    a step keeps the parameter objects it was made with (moving or casting the
    model changes those in place; assigning a new parameter does not).
    """

    def __init__(self, model: GPT, n_layers: int | None = None, head: nn.Module | None = None):
        self.layers = [block_weights(b) for b in list(model.blocks)[:n_layers]]
        self.window, self.head = model.config.block_size, head
        self.wte, self.wpe = model.wte.weight, model.wpe.weight
        ln_f = model.ln_f
        self.ln_f, self.lm_head = (ln_f.normalized_shape, ln_f.weight, ln_f.bias, ln_f.eps), model.lm_head.weight
        self.product = row_product(self.wte)

    def __call__(self, token: int, cache: KVCache) -> torch.Tensor:
        n = cache.length
        if n + 1 > self.window:
            raise ValueError(f"{n + 1} positions exceed the context window of {self.window}")
        x = self.wte[token] + self.wpe[n]  # (C,)
        for i, w in enumerate(self.layers):
            x = block_step(w, x, cache, i, n, self.product)  # (C,)
        cache.length = n + 1
        if self.head is not None:
            return self.head(x.view(1, 1, -1))[0, -1]  # (V,)
        return self.product(None, self.lm_head, torch.layer_norm(x, *self.ln_f))  # (V,)


def one_position(model):
    """``step(token, cache) -> logits (V,)``: the model's own lean step (``model.Step``) where it has one,
    else its forward pass over that one token (a Hugging Face model, ``specsim.gpt.hf``)."""
    if hasattr(model, "stepper"):
        return model.stepper()
    device = model.wte.weight.device
    return lambda token, cache: model(torch.tensor([[token]], device=device), cache, last_only=True)[0, -1]
