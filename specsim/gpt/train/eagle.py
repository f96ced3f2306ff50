"""Training the EAGLE drafter's layer on the frozen target, and measuring it (EAGLE-3's training-time test).

The layer itself, its cache and its drafter live in ``specsim.gpt.eagle``;
this module only trains and measures it:

* ``train_eagle``: smooth L1 on the target's final features plus a KL term
  on the read-out (and, optionally, its total variation 1 - alpha: the
  rejection rate itself, which KL only bounds through Pinsker's inequality),
  with every window also trained as the 2nd, 3rd, ... draft of a chain on the
  layer's own predicted features (``unrolled``, laid out by
  ``unroll_mask``), from a fresh layer or from a trained one (``init``);
* ``window_alphas``: teacher-forced alpha window by window, for its spread.
"""
from __future__ import annotations

import os
import time

import torch
import torch.nn.functional as F
from tqdm.auto import tqdm

from . import checkpoint as train_checkpoint
from ..eagle import EagleConfig, EagleLayer
from .loop import frozen, lr_at, native_bf16, teacher_forced_alpha, windows


def window_alphas(target, draft, data: torch.Tensor, block: int, windows: int = 32, device="cpu") -> list:
    """Teacher-forced alpha of ``draft`` on each of ``windows`` consecutive windows (``teacher_forced_alpha``
    on one window at a time), so the spread between windows gives a standard error."""
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


def eagle_losses(target, layer: EagleLayer, x: torch.Tensor, gen: torch.Generator, noise: float = 0.0,
                 unroll: int = 1) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One batch's three losses on windows ``x`` (B, T): smooth L1 of the predicted features against the
    target's, KL(p || q) of their read-out and its total variation 1 - alpha = 1 - sum_x min(p, q) (the
    rejection rate itself), each averaged over the ``unroll`` draft depths.
    ``noise`` perturbs the second half of the windows' input features (drawn from ``gen``)."""
    device, vocab = x.device, target.config.vocab_size
    with torch.no_grad(), torch.autocast(device.type, dtype=torch.bfloat16, enabled=native_bf16(device)):
        logits, h = target(x, hidden=True)  # (B, T, V), (B, T, C)
    h = h.float()
    log_p = F.log_softmax(logits.float().view(-1, vocab), dim=-1)  # (B*T, V)
    f = torch.cat([torch.zeros_like(h[:, :1]), h[:, :-1]], dim=1)  # slot j reads f_{j-1}
    half = x.size(0) // 2
    if noise:  # half the windows read noisy features, as drafts read predicted ones
        f[half:] += noise * torch.randn(f[half:].shape, generator=gen).to(device)
    pred = unrolled(layer, f, target.wte(x), unroll)  # (B, unroll * T, C): depth 1, then 2, ...
    reg = F.smooth_l1_loss(pred, h.repeat(1, unroll, 1))
    log_q = F.log_softmax(target.lm_head(target.ln_f(pred)).reshape(-1, vocab), dim=-1)
    log_p_rows = log_p.view(*x.shape, -1).repeat(1, unroll, 1).reshape(log_q.shape)  # p for every depth
    tv = 1 - torch.minimum(log_p_rows.exp(), log_q.exp()).sum(-1).mean()
    return reg, F.kl_div(log_q, log_p_rows, log_target=True, reduction="batchmean"), tv


def train_eagle(target, train_data: torch.Tensor, val_data: torch.Tensor, steps: int, batch_size: int = 8,
                block: int = 256, lr: float = 2e-3, warmup: int = 50, seed: int = 0, width: int = 128,
                n_head: int = 4, kl_weight: float = 1.0, noise: float = 0.0, unroll: int = 1,
                tv_weight: float = 0.0, init: EagleLayer | None = None, device="cpu", progress: bool = True,
                checkpoint: str | None = None, checkpoint_every: int = 50) -> tuple[EagleLayer, dict]:
    """Train an ``EagleLayer`` on the frozen target: smooth L1 on the features plus ``kl_weight`` x KL(p || q)
    plus ``tv_weight`` x (1 - alpha) of the read-out.

    ``init``: a trained layer to start from (its width and heads replace
    ``width`` and ``n_head``; it is copied, not changed) instead of a fresh one.

    ``noise``: the standard deviation of Gaussian noise added to the input
    features of the second half of each batch's windows (drawn from the
    run's seeded generator, so a resumed run draws the same).

    ``unroll``: how many draft depths each window is trained at (EAGLE-3's
    "training-time test"): depth 1 is the teacher-forced pass; at depth d
    every slot reads the feature the layer predicted for the slot before it
    at depth d - 1 and attends to what a depth-d draft sees in decoding
    (``unroll_mask``); the loss is the mean over depths.

    Resumable like ``loop.train_lm`` (``checkpoint``: the run's whole
    state every ``checkpoint_every`` steps, resumed after its checks). Returns
    the layer (eval mode) and its notes: steps, seconds, loss curve (mean
    total loss every 50 steps) and the final smooth L1 and KL."""
    device = torch.device(device)
    block = min(block, target.config.block_size, len(train_data) - 2)
    torch.manual_seed(seed)
    layer = _new_layer(target, width, n_head, init, device)
    config, width, n_head = layer.config, layer.config.width, layer.config.n_head
    opt = torch.optim.AdamW(layer.parameters(), lr=lr, betas=(0.9, 0.95), weight_decay=0.0)
    gen = torch.Generator().manual_seed(seed)
    key = train_checkpoint.run_key(config, steps, batch_size, block, lr, warmup, seed, target) | {
        "kl_weight": kl_weight, "noise": noise, "unroll": unroll} | (
        {"tv_weight": tv_weight, "init": init is not None} if tv_weight or init is not None else {})
    losses, curve, start, before, parts = [], [], 0, 0.0, []
    if checkpoint and os.path.exists(checkpoint):
        losses, curve, start, before = train_checkpoint.resume(checkpoint, key, layer, opt, gen)
    t0, every = time.time(), max(1, min(50, steps // 10))
    bar = tqdm(range(start, steps), desc="eagle", disable=not progress, mininterval=2, initial=start, total=steps)
    with frozen(target):
        for step in bar:
            for g in opt.param_groups:
                g["lr"] = lr_at(step, steps, lr, min(warmup, steps))
            x, _ = windows(train_data, batch_size, block, gen)
            loss, part = _eagle_step(target, layer, opt, x.to(device), gen, noise, unroll, kl_weight, tv_weight)
            losses.append(loss)
            parts.append(part)
            if (step + 1) % every == 0 or step + 1 == steps:
                recent = losses[-every:]
                curve.append((step + 1, sum(recent) / len(recent)))
                bar.set_postfix(loss=f"{curve[-1][1]:.3f}", kl=f"{part[1]:.3f}")
            if checkpoint and ((step + 1) % checkpoint_every == 0 or step + 1 == steps):
                train_checkpoint.save(checkpoint, key, step + 1, layer, opt, gen, losses, curve,
                                      before + time.time() - t0)
    layer.eval()
    notes = eagle_notes(steps=steps, batch=batch_size, block=block, lr=lr, seed=seed, width=width, n_head=n_head,
                        kl_weight=kl_weight, noise=noise, unroll=unroll, seconds=round(before + time.time() - t0, 1),
                        parts=parts, curve=curve, **({"tv_weight": tv_weight} if tv_weight else {}))
    return layer, notes


def _new_layer(target, width: int, n_head: int, init: EagleLayer | None, device) -> EagleLayer:
    """A fresh layer for ``target`` in train mode, or (``init``) a copy of a trained one's shape and weights."""
    if init is not None:
        width, n_head = init.config.width, init.config.n_head
    layer = EagleLayer(EagleConfig.for_target(target.config, width, n_head)).to(device).train()
    if init is not None:
        layer.load_state_dict(init.state_dict())
    return layer


def _eagle_step(target, layer, opt, x, gen, noise, unroll, kl_weight, tv_weight) -> tuple[float, tuple]:
    """One optimiser step on the windows ``x``: the total loss and its (smooth L1, KL, 1 - alpha) parts."""
    reg, kl, tv = eagle_losses(target, layer, x, gen, noise, unroll)
    loss = reg + kl_weight * kl + tv_weight * tv
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(layer.parameters(), 1.0)
    opt.step()
    return loss.item(), (reg.item(), kl.item(), tv.item())


def eagle_notes(parts: list, curve: list, **run) -> dict:
    """A run's notes for the manifest: its settings (``run``), what its loss was, the mean of the last 20
    steps' (smooth L1, KL, 1 - alpha) ``parts`` and the ``curve`` of (step, mean loss)."""
    tail = parts[-20:]  # none when the run was resumed from a checkpoint at its last step
    noise, unroll, tv = run["noise"], run["unroll"], run.get("tv_weight", 0)
    loss = (f"smooth L1 on the target's final features + {run['kl_weight']} x KL(p || q) of the read-out"
            + (f" + {tv} x (1 - alpha) of the read-out" if tv else "") + ", target frozen"
            + (f", Gaussian noise (sd {noise}) on half the windows' features" if noise else "")
            + (f", drafts unrolled to depth {unroll} on the layer's own features" if unroll > 1 else ""))
    final = {name: round(sum(r[i] for r in tail) / len(tail), 4)
             for i, name in enumerate(("final_smooth_l1", "final_kl", "final_tv")[:3 if tv else 2]) if tail}
    return {**run, "loss": loss, **final,
            "curve": [[s, round(v, 4)] for s, v in curve]}
