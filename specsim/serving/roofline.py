"""The roofline cost of serving a model pair: when speculation pays, and when it stops.

One forward pass of ``batch`` sequences, each feeding ``positions`` new
tokens over ``context`` cached ones, takes (``step_cost``)::

    bytes   = weights (read once for the whole batch; of an MoE model, the
              shared weights and the union of the experts that the
              batch x positions tokens chose, ``ModelShape.weight_bytes``)
            + batch x cached x KV bytes per token     (every sequence reads its own cache)
            + batch x positions x KV bytes per token  (and writes the new entries)
    FLOPs   = batch x sum over the new positions i = 1..positions of
              2 x streamed params + 4 x layers x heads x head size x (cached + i)
              (streamed params: what one token multiplies, its own experts only)
    seconds = max(bytes / bandwidth, FLOPs / peak) + overhead
            (or their sum, on hardware whose memory and compute take turns:
            ``Hardware.overlap`` False, as for one CPU core)

``cached`` is ``context``, or ``min(context, kv_window)`` for a drafter that
keeps a bounded cache (a StreamingLLM-style window, as MagicDec assumes).
Every sequence of the batch sits at the same context length. Activations
and logits are not counted: they stay in on-chip memory or are small next
to the weights and the caches (the logits of 256 x 11 positions over
128,256 tokens are 0.7 GB in bf16 against llama-3-8b's 15 GB of weights).

A round of speculation with a chain of γ drafts runs γ drafter steps (one
position each) and one target pass over γ + 1 positions, all costed at the
round's starting context (the γ new cache entries are small next to it), so
with

    c = drafter step / target step,   v = verify pass / target step

the speedup over plain decoding is tokens per round / (γ c + v):
``specsim.formulas.refined_speedup``, whose ``verify_ratio`` is v. At
batch 1 the pass is memory-bound and v is about 1; as the batch grows the
pass turns compute-bound, v grows towards γ + 1 and the gain goes: the
**crossover batch** is where no γ pays any more. Unless the caches
dominate: every sequence reads its own KV, so at long context the pass
stays memory-bound at any batch (MagicDec's observation) and the crossover
moves out or never comes, while c creeps up with the drafter's own KV
unless its window is bounded. A mixture-of-experts target breaks the
"v is about 1" of batch 1: the γ + 1 positions route to more experts than
one token does, and the pass reads all of them (``specsim.serving.moe``);
once the batch alone reaches most experts, v is about 1 again. A tree runs one drafter
pass per level (feeding that level's nodes) and verifies every node.

Tokens per round: the i.i.d. formula ``formulas.expected_tokens(alpha, γ)``
for a chain; for a block the same formula, a lower bound (block
verification accepts at least as much as token-wise, Sun et al. 2025); a
tree's depends on more than α, so pass ``tokens`` (e.g. the exact value
from ``specsim.exact`` for a toy pair, or a measured one).

Example: the one-layer toy of ``specsim.serving.models`` on a machine of
1 MB/s and 1 MFLOP/s, one sequence with 4 cached tokens:

>>> from specsim.serving.models import ModelShape
>>> from specsim.serving.hardware import cpu_from
>>> toy = ModelShape("toy", layers=1, d_model=10, n_heads=1, n_kv_heads=1, head_dim=10, d_ff=20,
...                  vocab=100, tied_embeddings=False, gated_mlp=False, source="by hand")
>>> hw = cpu_from(1e6, 1e6, dtype="bf16", overlap=True)
>>> s = step_cost(toy, hw, batch=1, context=4)  # KV: 4 x 40 read, 40 written; FLOPs 2 x 1830 + 4 x 10 x 5
>>> s.weight_bytes, s.kv_read_bytes, s.kv_write_bytes, s.bytes, s.flops
(3660, 160, 40, 3860, 3860)

Two sequences of 3 positions: KV 2 x 4 x 40 read, 2 x 3 x 40 written; the 3
queries see 5, 6, 7 keys, so FLOPs = 2 x (3 x 2 x 1830 + 4 x 10 x 18):

>>> s = step_cost(toy, hw, batch=2, context=4, positions=3)
>>> s.bytes, s.flops, s.bound, round(s.seconds * 1e3, 3)
(4220, 23400, 'compute', 23.4)
"""
from __future__ import annotations

from dataclasses import dataclass

from .. import formulas
from ..schemes import Chain, as_scheme
from .hardware import hardware_named as hardware_preset
from .models import model_named as model_preset

MAX_BATCH = 1_000_000
MAX_BATCHES = 256  # batch sizes in one table
DEFAULT_GAMMAS = range(0, 11)  # γ = 0 is plain decoding
CROSSOVER_LIMIT = 65536


def searched(scheme) -> bool:
    """Whether ``scheme`` is a family whose γ is searched (a scheme class: ``Chain``, ``Block``)
    rather than one scheme value (``Chain(4)``, ``Tree((2, 2, 1))``)."""
    return isinstance(scheme, type)


@dataclass(frozen=True)
class StepCost:
    """One forward pass: its bytes (weights, KV read, KV written), FLOPs, time and what bounds it."""

    batch: int
    context: int
    positions: int
    weight_bytes: int
    kv_read_bytes: int
    kv_write_bytes: int
    bytes: int
    flops: int
    memory_s: float
    compute_s: float
    overhead_s: float
    seconds: float
    bound: str  # "memory" or "compute"
    experts_read: float = 0  # expected distinct experts per MoE layer (0: a dense model)


def _whole(value, name: str, lo: int, hi: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < lo or (hi is not None and value > hi):
        span = f"from {lo} to {hi:,}" if hi is not None else f">= {lo}"
        raise ValueError(f"{name} must be an integer {span}, got {value!r}")
    return value


def step_cost(model, hw, batch: int, context: int, positions: int = 1, dtype: str = "bf16",
              kv_window: int | None = None) -> StepCost:
    """The roofline time of one forward pass (formula in the module docstring).

    ``model`` and ``hw`` are presets or their names.
    """
    model, hw = model_preset(model), hardware_preset(hw)
    _whole(batch, "batch", 1, MAX_BATCH)
    _whole(context, "context", 0)
    _whole(positions, "positions", 1)
    if kv_window is not None:
        _whole(kv_window, "kv_window", 1)
    if model.max_context is not None and context + positions > model.max_context:
        raise ValueError(f"context {context:,} + {positions} new positions exceeds {model.name}'s window of "
                         f"{model.max_context:,} positions")
    cached = context if kv_window is None else min(context, kv_window)
    per_token = model.kv_bytes_per_token(dtype)
    weights = model.weight_bytes(dtype, batch * positions)  # an MoE model: the union of the tokens' experts
    kv_read, kv_write = batch * cached * per_token, batch * positions * per_token
    keys = positions * cached + positions * (positions + 1) // 2  # query i sees cached + i keys
    flops = batch * (positions * 2 * model.streamed_params + model.attention_flops(keys))
    total = weights + kv_read + kv_write
    memory_s, compute_s = total / hw.bandwidth_bytes_per_s, flops / hw.peak(dtype)
    return StepCost(batch, context, positions, weights, kv_read, kv_write, total, flops, memory_s, compute_s,
                    hw.step_overhead_s,
                    (max(memory_s, compute_s) if hw.overlap else memory_s + compute_s) + hw.step_overhead_s,
                    "memory" if memory_s >= compute_s else "compute", model.experts_read(batch * positions))


# -- a round's layout ---------------------------------------------------------------------------

def draft_passes(scheme) -> list:
    """Positions fed by each drafter pass of a round: one pass per level, feeding the level above.

    An EAGLE-2 dynamic tree expands the root, then its ``topk`` best nodes of each level.

    >>> from specsim.schemes import Chain, Tree, parse
    >>> eagle2 = parse("tree:dynamic,budget=8,depth=3,topk=2")
    >>> draft_passes(Chain(3)), draft_passes(Tree((2, 2, 1))), draft_passes(eagle2)
    ([1, 1, 1], [1, 2, 4], [1, 2, 2])
    """
    passes = scheme.drafter_passes()
    if passes is None:  # the kind below is named in the message, never branched on
        raise ValueError(f"{scheme.name}: the roofline models chain, block, tree and dynamic trees; a "
                         f"{scheme.kind} round drafts a number of tokens that depends on the drafter")
    return passes


def tokens_per_round(alpha, scheme, tokens=None) -> tuple:
    """(expected tokens per round, where the figure comes from) for ``scheme`` at acceptance ``alpha``.

    >>> from fractions import Fraction as F
    >>> tokens_per_round(F(4, 5), Chain(2))
    (Fraction(61, 25), 'i.i.d. formula')
    >>> tokens_per_round(0.8, as_scheme("tree:2,1"))
    Traceback (most recent call last):
    ...
    ValueError: tree:2,1: α alone does not fix a tree round's tokens per round; give tokens (e.g. from specsim.exact)
    """
    if tokens is not None:
        if not 1 <= tokens <= scheme.depth + 1:
            raise ValueError(f"tokens per round must be from 1 to {scheme.depth + 1} for {scheme.name}, "
                             f"got {tokens}")
        return tokens, "given"
    g = scheme.iid_gamma
    if g is not None:  # γ drafts every round: the i.i.d. formula (for a block's stop coins, a lower bound)
        return formulas.expected_tokens(alpha, g), ("i.i.d. chain formula (a lower bound for block)"
                                                    if scheme.keeps_by_stop_coins else "i.i.d. formula")
    # a scheme without a fixed γ: its kind is named in the message, never branched on
    raise ValueError(f"{scheme.name}: α alone does not fix a {scheme.kind} round's tokens per round; give tokens "
                     "(e.g. from specsim.exact)")


@dataclass(frozen=True)
class ServingPoint:
    """One scheme at one batch and context: the three step costs, c, v, tokens per round, speedup.

    ``scheme`` is None for plain decoding (γ = 0). ``draft_ratio`` is the
    round's drafting in target steps (γ c for a chain).
    """

    batch: int
    context: int
    scheme: object
    gamma: int
    target: StepCost
    draft: StepCost
    verify: StepCost
    draft_s: float
    c: float
    v: float
    draft_ratio: float
    tokens: object
    tokens_from: str
    speedup: float

    @property
    def name(self) -> str:
        return "plain" if self.scheme is None else self.scheme.name


def serving_point(target, draft, hw, batch: int, context: int, alpha, scheme, dtype: str = "bf16",
                  draft_kv_window: int | None = None, tokens=None) -> ServingPoint:
    """Speculation with ``scheme`` (a scheme, its grammar, or an int γ; 0 or None: plain) at one batch.

    ``draft_kv_window`` bounds the drafter's cache; the target always reads its whole cache.
    """
    target, draft, hw = model_preset(target), model_preset(draft), hardware_preset(hw)
    if draft.vocab != target.vocab:
        raise ValueError(f"{draft.name} ({draft.vocab:,} tokens) and {target.name} ({target.vocab:,}) do not "
                         "share a vocabulary")
    t = step_cost(target, hw, batch, context, 1, dtype)
    d = step_cost(draft, hw, batch, context, 1, dtype, draft_kv_window)
    c = d.seconds / t.seconds
    if scheme is None or scheme == 0:
        formulas.expected_tokens(alpha, 0)  # checks alpha
        return ServingPoint(batch, context, None, 0, t, d, t, 0.0, c, 1.0, 0.0, 1, "plain decoding", 1.0)
    scheme = as_scheme(scheme)
    passes = draft_passes(scheme)
    if all(n == 1 for n in passes):
        draft_s, pass_cost = len(passes) * d.seconds, c
    else:
        draft_s = sum(step_cost(draft, hw, batch, context, n, dtype, draft_kv_window).seconds for n in passes)
        pass_cost = draft_s / (len(passes) * t.seconds)
    verify = step_cost(target, hw, batch, context, scheme.drafted_tokens + 1, dtype)
    v = verify.seconds / t.seconds
    n, how = tokens_per_round(alpha, scheme, tokens)
    s = formulas.refined_speedup(n, scheme.depth, pass_cost, v)
    return ServingPoint(batch, context, scheme, scheme.depth, t, d, verify, draft_s, c, v, draft_s / t.seconds,
                        n, how, float(s))


def _candidates(scheme, gammas) -> list:
    """The schemes a search compares: plain (if 0 is in gammas), then γ of a family, or one fixed scheme."""
    gammas = list(gammas)
    if not gammas or any(isinstance(g, bool) or not isinstance(g, int) or g < 0 for g in gammas):
        raise ValueError(f"gammas must be integers >= 0 (0 is plain decoding), got {gammas[:12]}")
    out = [None] if 0 in gammas else []
    if searched(scheme):
        return out + [scheme(g) for g in sorted(set(gammas)) if g > 0]
    return out + [as_scheme(scheme)]


def best_gamma(target, draft, hw, batch: int, context: int, alpha, dtype: str = "bf16", gammas=DEFAULT_GAMMAS,
               scheme=Chain, draft_kv_window: int | None = None, tokens=None) -> ServingPoint:
    """The fastest of the candidates: every γ in ``gammas`` of a family (``Chain``, ``Block``), or one
    fixed scheme, beside plain decoding when 0 is in ``gammas``. Ties go to the smaller γ."""
    best = None
    for s in _candidates(scheme, gammas):
        p = serving_point(target, draft, hw, batch, context, alpha, s, dtype, draft_kv_window,
                          tokens if s is not None and not searched(scheme) else None)
        if best is None or p.speedup > best.speedup:
            best = p
    return best


def memory_needed(target, draft, batch: int, context: int, dtype: str = "bf16",
                  draft_kv_window: int | None = None) -> int:
    """Bytes both models' weights and every sequence's two caches occupy."""
    target, draft = model_preset(target), model_preset(draft)
    draft_cached = context if draft_kv_window is None else min(context, draft_kv_window)
    return (target.stored_bytes(dtype) + draft.stored_bytes(dtype)
            + batch * (context * target.kv_bytes_per_token(dtype) + draft_cached * draft.kv_bytes_per_token(dtype)))


def max_batch(target, draft, hw, context: int, dtype: str = "bf16", draft_kv_window: int | None = None):
    """The largest batch whose weights and caches fit the hardware's memory (0 if none; None if unknown)."""
    hw = hardware_preset(hw)
    if hw.memory_bytes is None:
        return None
    fixed = memory_needed(target, draft, 1, context, dtype, draft_kv_window)
    per_sequence = fixed - memory_needed(target, draft, 0, context, dtype, draft_kv_window)
    return max(0, int((hw.memory_bytes - fixed) // per_sequence) + 1) if per_sequence else None


@dataclass(frozen=True)
class ServingRow:
    """One batch size of a serving table (times in ms; c, v and the scheme at the best γ)."""

    batch: int
    target_step_ms: float
    draft_step_ms: float
    verify_ms: float
    c: float
    v: float
    best_gamma: int
    scheme: str
    speedup: float
    target_bound: str
    verify_bound: str
    memory_gb: float
    fits: bool | None  # None when the hardware's memory is not known
    target_experts: float  # expected distinct experts per MoE layer: the plain step (0: a dense target)
    verify_experts: float  # and the verify pass at the best γ


def serving_table(target, draft, hw, batches, context: int, alpha, dtype: str = "bf16",
                  gammas=DEFAULT_GAMMAS, scheme=Chain, draft_kv_window: int | None = None,
                  tokens=None) -> list:
    """One ``ServingRow`` per batch size, at the best γ of each."""
    hw = hardware_preset(hw)
    batches = list(batches)
    if not 1 <= len(batches) <= MAX_BATCHES:
        raise ValueError(f"give from 1 to {MAX_BATCHES} batch sizes, got {len(batches)}")
    rows = []
    for b in batches:
        p = best_gamma(target, draft, hw, b, context, alpha, dtype, gammas, scheme, draft_kv_window, tokens)
        mem = memory_needed(target, draft, b, context, dtype, draft_kv_window)
        rows.append(ServingRow(b, p.target.seconds * 1e3, p.draft.seconds * 1e3, p.verify.seconds * 1e3, p.c, p.v,
                               p.gamma, p.name, p.speedup, p.target.bound, p.verify.bound, mem / 1e9,
                               None if hw.memory_bytes is None else mem <= hw.memory_bytes,
                               p.target.experts_read, p.verify.experts_read))
    return rows


def speedup_grid(target, draft, hw, batches, gammas, context: int, alpha, dtype: str = "bf16",
                 scheme=Chain, draft_kv_window: int | None = None) -> dict:
    """The speedup at every (batch, γ) of a chain or block family, for a heatmap: one row per batch.

    Returns {"batches", "gammas", "speedup" (rows of floats), "best_gamma" (per batch, plain = 0)}.

    >>> g = speedup_grid("llama-3-8b", "llama-3.2-1b", "h100-sxm", [1, 4096], [0, 1, 4], 128, 0.8)
    >>> [[round(s, 2) for s in row] for row in g["speedup"]], g["best_gamma"]
    ([[1.0, 1.54, 2.01], [1.0, 0.83, 0.59]], [4, 0])
    """
    if not searched(scheme):
        raise ValueError(f"a grid needs a family whose γ varies (chain or block), got {scheme!r}")
    batches, gammas = list(batches), list(gammas)
    if not 1 <= len(batches) * len(gammas) <= MAX_BATCHES * 65:
        raise ValueError(f"a grid of {len(batches)} batches x {len(gammas)} γ is too large (at most "
                         f"{MAX_BATCHES * 65:,} cells)")
    cells = [[serving_point(target, draft, hw, b, context, alpha, s, dtype, draft_kv_window)
              for s in _candidates(scheme, gammas)] for b in batches]
    best = [max(row, key=lambda p: p.speedup) for row in cells]  # max keeps the first (smallest γ) of ties
    return {"batches": batches, "gammas": [p.gamma for p in cells[0]],
            "speedup": [[p.speedup for p in row] for row in cells], "best_gamma": [p.gamma for p in best]}


def crossover_batch(target, draft, hw, context: int, alpha, dtype: str = "bf16", gammas=DEFAULT_GAMMAS,
                    scheme=Chain, draft_kv_window: int | None = None, tokens=None,
                    limit: int = CROSSOVER_LIMIT) -> int | None:
    """The smallest batch at which no γ >= 1 of ``gammas`` gives a speedup > 1; None if none up to ``limit``.

    Doubling from batch 1 finds a batch that no longer pays, bisection the
    first one. This is the first such batch when the best speedup falls with
    the batch (it does for chains on a dense target: ``tests/test_serving.py``);
    otherwise it is batch 1 or a batch where nothing pays right after one where
    something does, and a larger batch may pay again: at a small batch a
    mixture-of-experts target's plain step reads few experts and its verify
    pass many, so γ = 4 loses at batch 1 and pays at batch 4 (lesson 30).

    >>> crossover_batch("qwen3-30b-a3b", "qwen3-0.6b", "h100-sxm", 1024, 0.8, gammas=[4])
    1
    """
    _whole(limit, "limit", 1, MAX_BATCH)
    speculative = [g for g in gammas if g != 0]
    if not speculative:
        raise ValueError("the crossover needs some γ >= 1 in gammas")

    def pays(b):
        return best_gamma(target, draft, hw, b, context, alpha, dtype, speculative, scheme, draft_kv_window,
                          tokens).speedup > 1

    if not pays(1):
        return 1
    lo, hi = 1, 2  # pays(lo) holds
    while pays(hi):
        if hi >= limit:
            return None
        lo, hi = hi, min(2 * hi, limit)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if pays(mid) else (lo, mid)
    return hi
