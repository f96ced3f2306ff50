"""An EAGLE-style drafter: one narrow decoder layer that reads the target's own features.

EAGLE (Li, Wei, Zhang, Zhang, "EAGLE: Speculative Sampling Requires Rethinking
Feature Uncertainty", ICML 2024, arXiv:2401.15077) drafts at the level of the
target's *features* -- the hidden state just before its final norm and LM
head -- instead of tokens. Here, for the tiny GPT:

* slot j of the drafter takes ``[f_{j-1} ; e(x_j)]``: the target's final
  hidden state at position j - 1 (the state that predicted x_j) and the
  target's own embedding of x_j (``target.wte``, shared, not copied; f_{-1}
  is zero), projects the pair to a narrow width ``width``, runs one pre-norm
  decoder layer (attention over the earlier slots, MLP) and projects back to
  the target's width: the predicted feature f^_j;
* the row q for x_{j+1} is read out through the target's frozen final norm
  and head: ``q = softmax(lm_head(ln_f(f^_j)))`` (``lm_head`` is tied to
  ``wte``: the drafter owns only ``EagleLayer``'s weights);
* while drafting, a draft's slot takes its parent's *predicted* feature
  (the target has not seen the draft yet); once the target has verified a
  round, its verify pass gives the real features of the kept positions
  (``GPT.forward(..., hidden=True)``) and the drafter re-reads the accepted
  tokens with them (``EagleDrafter.features``), as EAGLE does.

Why it accepts more than a one-layer GPT of the same width: f_{j-1} already
carries everything the five target layers extracted from the context, so the
one layer only has to fold in the one new token; a small drafter has to
rebuild the context from tokens alone. Where it is weaker: a draft deep in a
chain reads a feature predicted from a predicted feature, so acceptance
falls with depth faster than teacher forcing suggests.

Training (``train_eagle``, the recipe's stage ``eagle``): the target frozen,
on random windows of the corpus, the loss is the paper's pair, feature
regression (smooth L1 between f^_j and f_j) plus ``kl_weight`` times the
KL(p || q) of the read-out against the target's row. A draft after the
first reads a *predicted* feature, not a real one, and there are two ways
to train for that. EAGLE adds noise to the features it trains on (here
``noise``: Gaussian, on half the windows; the paper uses uniform noise).
EAGLE-3 (Li, Wei, Zhang, Zhang, "EAGLE-3: Scaling up Inference
Acceleration of Large Language Models via Training-Time Test",
arXiv:2503.01840, 2025) trains on the drafts themselves: here ``unroll`` = k
also scores every slot as the 2nd .. k-th draft of a chain, reading the
layer's own predicted features (``unrolled``). The shipped layer is trained
the second way (``train.recipe.Recipe``: ``eagle_unroll`` 3, no noise).

Without a cache the module is the teacher-forced drafter (its inputs are the
target's real features at every slot), which is what
``train.loop.teacher_forced_alpha`` measures.

>>> import torch
>>> from specsim.gpt.config import PRESETS
>>> from specsim.gpt.model import GPT
>>> torch.manual_seed(0) and None
>>> target = GPT(PRESETS["tiny"]).eval()
>>> eagle = Eagle(target, EagleLayer(EagleConfig.for_target(target.config, width=8, n_head=2))).eval()
>>> eagle(torch.tensor([[1, 2, 3]])).shape  # teacher forced: (B, T, V)
torch.Size([1, 3, 96])
>>> EagleConfig(n_embd=16, width=10, n_head=3)
Traceback (most recent call last):
...
ValueError: the eagle layer's width (10) must be divisible by its heads (3)
"""
from __future__ import annotations

import dataclasses
import os
import time
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
from tqdm.auto import tqdm

from .config import GPTConfig
from .drafters import ModelDrafter
from .model import Block, KVCache


@dataclass(frozen=True)
class EagleConfig:
    """The target's width and vocabulary, and the drafter layer's own width and heads."""

    n_embd: int = 384  # the target's hidden size (features in and out)
    width: int = 128  # the drafter layer's width
    n_head: int = 4
    block_size: int = 256
    vocab_size: int = 96

    def __post_init__(self):
        for name in ("n_embd", "width", "n_head", "block_size", "vocab_size"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise ValueError(f"the eagle layer's {name} must be an integer >= 1, got {getattr(self, name)!r}")
        if self.width % self.n_head:
            raise ValueError(f"the eagle layer's width ({self.width}) must be divisible by its heads ({self.n_head})")

    @classmethod
    def for_target(cls, target: GPTConfig, width: int = 128, n_head: int = 4) -> "EagleConfig":
        return cls(target.n_embd, width, n_head, target.block_size, target.vocab_size)

    @property
    def layer(self) -> GPTConfig:
        """The decoder layer's own shape (one block of ``width``), for ``Block`` and its cache."""
        return GPTConfig(self.vocab_size, self.block_size, 1, self.n_head, self.width)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "EagleConfig":
        return cls(**{k: int(d[k]) for k in ("n_embd", "width", "n_head", "block_size", "vocab_size")})


class EagleLayer(nn.Module):
    """The drafter's own weights: [f ; e] -> width, one decoder layer, width -> the target's width."""

    def __init__(self, config: EagleConfig):
        super().__init__()
        self.config = config
        self.fc = nn.Linear(2 * config.n_embd, config.width)
        self.block = Block(config.layer)
        self.out = nn.Linear(config.width, config.n_embd)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, std=0.02)
                nn.init.zeros_(m.bias)

    def forward(self, f, e, cache=None, mask=None):
        """f, e: (B, T, C) features and embeddings -> (B, T, C) predicted next features."""
        x = self.fc(torch.cat([f, e], dim=-1))  # (B, T, width)
        return self.out(self.block(x, cache, 0, mask))  # (B, T, C)


class EagleCache(KVCache):
    """The layer's keys and values, plus what a slot's children read: its predicted feature (``out``)
    and the real features waiting to be read by the next feed (``queue``)."""

    def __init__(self, config: EagleConfig, device=None, dtype=torch.float32):
        super().__init__(config.layer, device, dtype)
        self.out = torch.zeros(config.block_size, config.n_embd, device=device, dtype=dtype)  # (W, C)
        self.queue = None  # (T, C): the real features of the next T slots, or None (drafts: parents' features)

    def keep(self, indices) -> None:
        indices = [int(i) for i in indices]
        super().keep(indices)  # checks them
        self.out[:len(indices)] = self.out[torch.tensor(indices, dtype=torch.long, device=self.out.device)]

    def reset(self) -> None:
        super().reset()
        self.queue = None


def parent_slots(n: int, T: int, mask=None) -> torch.Tensor:
    """The slot each of T new slots (after n cached) drafts from: its nearest visible earlier slot.

    Without a mask the chain's: n - 1, n, ..., n + T - 2. With a tree mask
    (row i: the slots new slot i may attend to, its ancestors and itself) the
    nearest ancestor, i.e. its parent.

    >>> parent_slots(5, 2).tolist()
    [4, 5]
    >>> m = torch.tensor([[1, 1, 0, 1, 0], [1, 0, 1, 0, 1]], dtype=torch.bool)  # slots 3, 4: children of 1, 2
    >>> parent_slots(3, 2, m).tolist()
    [1, 2]
    """
    if mask is None:
        return torch.arange(n - 1, n + T - 1)
    j = torch.arange(mask.size(1), device=mask.device)  # (S,)
    earlier = j[None, :] < (n + torch.arange(T, device=mask.device))[:, None]  # (T, S)
    return torch.where(mask & earlier, j, -1).max(dim=1).values.cpu()  # (T,)


class Eagle(nn.Module):
    """The drafter model: an ``EagleLayer`` bound to the target whose features, embedding,
    final norm and head it reads (the target's weights are not copied and stay frozen)."""

    def __init__(self, target, layer: EagleLayer):
        super().__init__()
        c, t = layer.config, target.config
        if (c.n_embd, c.vocab_size) != (t.n_embd, t.vocab_size):
            raise ValueError(f"the eagle layer reads features of width {c.n_embd} and {c.vocab_size} tokens; "
                             f"the target has {t.n_embd} and {t.vocab_size}")
        self.target, self.layer = target, layer
        self.config = dataclasses.replace(c.layer, block_size=min(c.block_size, t.block_size))
        self.wte = target.wte

    def new_cache(self) -> EagleCache:
        p = self.wte.weight
        return EagleCache(self.layer.config, device=p.device, dtype=p.dtype)

    def features(self, ids: list) -> torch.Tensor:
        """The target's final hidden states on ``ids`` (one pass without a cache): (len(ids), C)."""
        if not ids:
            return torch.zeros(0, self.layer.config.n_embd, device=self.wte.weight.device)
        return self.target(torch.tensor([ids], device=self.wte.weight.device), hidden=True)[1][0]

    def readout(self, f: torch.Tensor) -> torch.Tensor:
        return self.target.lm_head(self.target.ln_f(f))  # (B, T, V)

    def forward(self, idx, cache: EagleCache | None = None, last_only: bool = False, pos=None, mask=None):
        """Logits (B, T, V) for the new slots (``pos`` is not used: the features carry the positions).

        Without a cache: teacher forced, the target's own features on ``idx``.
        With one (B = 1): the T new slots read the cache's queued real features
        if it has any (exactly T), else each its parent slot's predicted feature."""
        e = self.wte(idx)  # (B, T, C)
        if cache is None:
            h = self.target(idx, hidden=True)[1]  # (B, T, C)
            f = torch.cat([torch.zeros_like(h[:, :1]), h[:, :-1]], dim=1)  # slot j reads f_{j-1}
            x = self.layer(f, e)  # (B, T, C)
        else:
            n, T = cache.length, idx.size(1)
            if n + T > cache.capacity:
                raise ValueError(f"{n + T} positions exceed the context window of {cache.capacity}")
            if cache.queue is not None:
                if len(cache.queue) != T:
                    raise ValueError(f"the eagle drafter holds real features for {len(cache.queue)} slots, "
                                     f"fed {T}")
                f, cache.queue = cache.queue[None], None  # (1, T, C)
            elif mask is None and n > 0:  # a chain: each slot drafts from the one before it
                f = cache.out[n - 1:n + T - 1][None]  # (1, T, C)
            else:
                parents = parent_slots(n, T, mask)
                if int(parents.min()) < 0 or int(parents.max()) >= n:
                    raise ValueError("the eagle drafter drafts from slots already scored: feed each draft "
                                     "after its parent")
                f = cache.out[parents.to(cache.out.device)][None]  # (1, T, C)
            x = self.layer(f, e, cache, mask)  # (1, T, C)
            cache.out[n:n + T] = x[0]
            cache.length = n + T
        if last_only:
            x = x[:, -1:]  # (B, 1, C)
        return self.readout(x)  # (B, T, V)


class EagleDrafter(ModelDrafter):
    """``ModelDrafter`` on an ``Eagle`` model, told the target's features of the kept positions.

    ``start`` runs the target once over the prompt for its features (the
    decoder's own prefill does not return them); after every round the
    decoder calls ``features(ids, h)`` with the verify pass's features of the
    positions the target kept, and the drafter drops its drafted slots and
    reads the accepted tokens again with those real features.
    """

    def __init__(self, model: Eagle, name: str = "eagle"):
        super().__init__(model, name)

    def start(self, ids):
        self.cache.reset()
        f = self.model.features(ids[:-1])  # (L - 1, C): positions 0 .. L - 2
        self.cache.queue = torch.cat([f.new_zeros(1, f.size(1)), f])  # slot j reads f_{j-1}; f_{-1} = 0
        if len(ids) > 1:
            self.cache.queue, rest = self.cache.queue[:-1], self.cache.queue[-1:]
            self.model(torch.tensor([ids[:-1]], device=self.device), self.cache, last_only=True)
            self.cache.queue = rest  # the last token's slot reads f_{L-2}
        self.fed = len(ids) - 1

    def keep(self, ids, kept, crop=True):
        if not crop:
            raise ValueError("crop=False is the small GPT drafters' pitfall; the eagle drafter always re-reads "
                             "the kept tokens with the target's features")
        super().keep(ids, kept, crop)

    def features(self, ids: list, h: torch.Tensor) -> None:
        """The target kept the last len(h) positions of ``ids[:-1]`` with final hidden states ``h`` (k, C):
        drop every slot after the round's real ones and queue those features for the next feed."""
        real = len(ids) - len(h)  # the slots fed with real features: up to the round's last token
        self.cache.crop(real)
        self.fed = real
        self.cache.queue = h  # the next feed, ids[real:], reads them


def window_alphas(target, draft, data: torch.Tensor, block: int, windows: int = 32, device="cpu") -> list:
    """Teacher-forced alpha of ``draft`` on each of ``windows`` consecutive windows (``teacher_forced_alpha``
    on one window at a time), so the spread between windows gives a standard error."""
    from .train.loop import teacher_forced_alpha
    n = min(windows, (len(data) - 1) // block)
    return [teacher_forced_alpha(target, draft, data[i * block:(i + 1) * block + 1], block, max_windows=1,
                                 device=device) for i in range(n)]


def unroll_mask(T: int, depths: int) -> torch.Tensor:
    """What each slot sees when ``depths`` copies of a T-slot window are laid end to end, copy d - 1
    holding every slot as a depth-d draft: (depths * T, depths * T) boolean.

    A depth-d draft at slot j sees the slots up to j - d + 1 as they were fed
    with real features (copy 0) and its own chain's drafts, depth u at slot
    j - d + u (copy u - 1), as in decoding.

    >>> unroll_mask(3, 2).int().tolist()
    [[1, 0, 0, 0, 0, 0], [1, 1, 0, 0, 0, 0], [1, 1, 1, 0, 0, 0], [0, 0, 0, 1, 0, 0], [1, 0, 0, 0, 1, 0], [1, 1, 0, 0, 0, 1]]
    """
    j = torch.arange(T)
    rows = []
    for d in range(depths):
        row = torch.zeros(T, depths, T, dtype=torch.bool)
        row[:, 0] = j[None, :] <= (j - d)[:, None]  # real slots up to j - d
        for u in range(1, d + 1):  # the chain's own drafts
            slot = j - d + u
            ok = slot >= 0
            row[j[ok], u, slot[ok]] = True
        rows.append(row.view(T, depths * T))
    return torch.cat(rows)


def unrolled(layer: EagleLayer, f: torch.Tensor, e: torch.Tensor, depths: int) -> torch.Tensor:
    """The layer's predicted features for every slot at draft depths 1 .. ``depths`` (teacher forcing
    at depth 1): (B, depths * T, C), depth-major. Depth d + 1 reads depth d's prediction of the slot
    before (the first slot reads zeros), through one pass over all the depths so far."""
    T = e.size(1)
    pred = layer(f, e)  # (B, T, C)
    for d in range(2, depths + 1):
        before = pred[:, -T:]  # (B, T, C): depth d - 1
        f = torch.cat([f, torch.zeros_like(before[:, :1]), before[:, :-1]], dim=1)  # (B, d * T, C)
        pred = layer(f, e.repeat(1, d, 1), mask=unroll_mask(T, d).to(e.device))
    return pred


def train_eagle(target, train_data: torch.Tensor, val_data: torch.Tensor, steps: int, batch_size: int = 8,
                block: int = 256, lr: float = 2e-3, warmup: int = 50, seed: int = 0, width: int = 128,
                n_head: int = 4, kl_weight: float = 1.0, noise: float = 0.0, unroll: int = 1, device="cpu",
                progress: bool = True, checkpoint: str | None = None,
                checkpoint_every: int = 50) -> tuple[EagleLayer, dict]:
    """Train an ``EagleLayer`` on the frozen target: smooth L1 on the features plus ``kl_weight`` x KL(p || q).

    ``noise``: the standard deviation of Gaussian noise added to the input
    features of the second half of each batch's windows (drawn from the
    run's seeded generator, so a resumed run draws the same).

    ``unroll``: how many draft depths each window is trained at (EAGLE-3's
    "training-time test"): depth 1 is the teacher-forced pass; at depth d
    every slot reads the feature the layer predicted for the slot before it
    at depth d - 1 and attends to what a depth-d draft sees in decoding
    (``unroll_mask``); the loss is the mean over depths.

    Resumable like ``train.loop.train_lm`` (``checkpoint``: the run's whole
    state every ``checkpoint_every`` steps, resumed after its checks). Returns
    the layer (eval mode) and its notes: steps, seconds, loss curve (mean
    total loss every 50 steps) and the final smooth L1 and KL."""
    from .train import checkpoint as train_checkpoint
    from .train.loop import lr_at, native_bf16, windows
    device = torch.device(device)
    block = min(block, target.config.block_size, len(train_data) - 2)
    torch.manual_seed(seed)
    config = EagleConfig.for_target(target.config, width, n_head)
    layer = EagleLayer(config).to(device).train()
    opt = torch.optim.AdamW(layer.parameters(), lr=lr, betas=(0.9, 0.95), weight_decay=0.0)
    gen = torch.Generator().manual_seed(seed)
    key = train_checkpoint.run_key(config, steps, batch_size, block, lr, warmup, seed, target) | {
        "kl_weight": kl_weight, "noise": noise, "unroll": unroll}
    losses, curve, start, before, parts = [], [], 0, 0.0, []
    if checkpoint and os.path.exists(checkpoint):
        losses, curve, start, before = train_checkpoint.resume(checkpoint, key, layer, opt, gen)
    frozen = [p.requires_grad for p in target.parameters()]
    for p in target.parameters():
        p.requires_grad_(False)
    t0, every = time.time(), max(1, min(50, steps // 10))
    bar = tqdm(range(start, steps), desc="eagle", disable=not progress, mininterval=2, initial=start, total=steps)
    try:
        for step in bar:
            for g in opt.param_groups:
                g["lr"] = lr_at(step, steps, lr, min(warmup, steps))
            x, _ = windows(train_data, batch_size, block, gen)
            x = x.to(device)
            with torch.no_grad(), torch.autocast(device.type, dtype=torch.bfloat16, enabled=native_bf16(device)):
                logits, h = target(x, hidden=True)  # (B, T, V), (B, T, C)
            h = h.float()
            log_p = F.log_softmax(logits.float().view(-1, config.vocab_size), dim=-1)  # (B*T, V)
            f = torch.cat([torch.zeros_like(h[:, :1]), h[:, :-1]], dim=1)  # slot j reads f_{j-1}
            if noise:  # half the windows read noisy features, as drafts read predicted ones
                f[batch_size // 2:] += noise * torch.randn(f[batch_size // 2:].shape, generator=gen).to(device)
            pred = unrolled(layer, f, target.wte(x), unroll)  # (B, unroll * T, C): depth 1, then 2, ...
            reg = F.smooth_l1_loss(pred, h.repeat(1, unroll, 1))
            log_q = F.log_softmax(target.lm_head(target.ln_f(pred)).reshape(-1, config.vocab_size), dim=-1)
            log_p_rows = log_p.view(*x.shape, -1).repeat(1, unroll, 1).reshape(log_q.shape)  # p for every depth
            kl = F.kl_div(log_q, log_p_rows, log_target=True, reduction="batchmean")
            loss = reg + kl_weight * kl
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(layer.parameters(), 1.0)
            opt.step()
            losses.append(loss.item())
            parts.append((reg.item(), kl.item()))
            if (step + 1) % every == 0 or step + 1 == steps:
                recent = losses[-every:]
                curve.append((step + 1, sum(recent) / len(recent)))
                bar.set_postfix(loss=f"{curve[-1][1]:.3f}", kl=f"{kl.item():.3f}")
            if checkpoint and ((step + 1) % checkpoint_every == 0 or step + 1 == steps):
                train_checkpoint.save(checkpoint, key, step + 1, layer, opt, gen, losses, curve,
                                      before + time.time() - t0)
    finally:
        for p, r in zip(target.parameters(), frozen):
            p.requires_grad_(r)
    layer.eval()
    tail = parts[-20:] or [(float("nan"), float("nan"))]
    notes = {"steps": steps, "batch": batch_size, "block": block, "lr": lr, "seed": seed, "width": width,
             "n_head": n_head, "kl_weight": kl_weight, "noise": noise, "unroll": unroll,
             "seconds": round(before + time.time() - t0, 1),
             "loss": f"smooth L1 on the target's final features + {kl_weight} x KL(p || q) of the read-out, "
                     "target frozen" + (f", Gaussian noise (sd {noise}) on half the windows' features"
                                        if noise else "")
                     + (f", drafts unrolled to depth {unroll} on the layer's own features" if unroll > 1 else ""),
             "final_smooth_l1": round(sum(r for r, _ in tail) / len(tail), 4),
             "final_kl": round(sum(k for _, k in tail) / len(tail), 4),
             "curve": [[s, round(v, 4)] for s, v in curve]}
    return layer, notes
