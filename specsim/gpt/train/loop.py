"""Training: the target on the corpus, the drafter on the corpus or distilled.

``train_lm`` runs AdamW with warm-up and cosine decay on random windows of
the training text. With a ``teacher`` the loss is the distillation loss
KL(p || q): the drafter learns to match the target's next-token
distribution p at every position, which is exactly what raises
alpha = 1 - TV(p, q). Without one it is the usual cross-entropy on the
next character. Every random choice (init, windows) comes from ``seed``.
bfloat16 autocast is used where the hardware runs it natively: CUDA, and CPUs
with AVX-512 BF16 or AMX (elsewhere PyTorch emulates it, about 20 times slower
than float32 on an AVX2 machine). Weights stay float32.

``init`` starts from given weights instead of a fresh model (a second phase on
more data). With ``checkpoint`` a path, the run saves its whole state there
every ``checkpoint_every`` steps (weights, optimizer, window generator, losses)
and, if the file exists when it starts, resumes from it after checking it
(``train_checkpoint``): an interrupted run resumed ends with the same weights
as one never interrupted.

>>> import torch
>>> from specsim.gpt.config import PRESETS
>>> data = torch.tensor([i % 7 for i in range(500)])
>>> r = train_lm(PRESETS["tiny"], data, data, steps=3, batch_size=2, seed=0, progress=False)
>>> len(r.losses), r.model.config.n_layer
(3, 1)
"""
from __future__ import annotations

import contextlib
import math
import os
import time
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from tqdm.auto import tqdm

from . import checkpoint as train_checkpoint
from ..config import GPTConfig
from ..model import GPT
from ..rule import adjust, alpha


@dataclass
class TrainResult:
    model: GPT
    losses: list  # training loss at every step
    val_loss: float  # cross-entropy (nats per character) on the validation text
    seconds: float
    curve: list = field(default_factory=list)  # [(step, mean loss since the previous point)]

    def notes(self) -> dict:
        return {"steps": len(self.losses), "final_train_loss": round(self.curve[-1][1], 4),
                "val_loss": round(self.val_loss, 4), "seconds": round(self.seconds, 1),
                "curve": [[s, round(v, 4)] for s, v in self.curve]}


@contextlib.contextmanager
def frozen(model):
    """``model``'s parameters take no gradient inside the block, and get their own setting back after it."""
    before = [p.requires_grad for p in model.parameters()]
    for p in model.parameters():
        p.requires_grad_(False)
    try:
        yield model
    finally:
        for p, r in zip(model.parameters(), before):
            p.requires_grad_(r)


def windows(data: torch.Tensor, batch_size: int, block: int, generator: torch.Generator):
    """Random (x, y) windows of ``block`` characters: y is x shifted by one."""
    starts = torch.randint(len(data) - block - 1, (batch_size,), generator=generator)
    x = torch.stack([data[s:s + block] for s in starts.tolist()])  # (B, T)
    y = torch.stack([data[s + 1:s + 1 + block] for s in starts.tolist()])  # (B, T)
    return x, y


def lr_at(step: int, steps: int, lr: float, warmup: int) -> float:
    if step < warmup:
        return lr * (step + 1) / warmup
    progress = (step - warmup) / max(1, steps - warmup)
    return lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))


def native_bf16(device: torch.device) -> bool:
    """Whether bfloat16 matmuls run natively here (else autocast would emulate them)."""
    if device.type == "cuda":
        return True
    cpu = getattr(torch, "cpu", None)
    return device.type == "cpu" and any(getattr(cpu, f, lambda: False)() for f in
                                        ("_is_avx512_bf16_supported", "_is_amx_tile_supported"))


def _autocast(device: torch.device):
    return torch.autocast(device.type, dtype=torch.bfloat16, enabled=native_bf16(device))


def train_lm(config: GPTConfig, train_data: torch.Tensor, val_data: torch.Tensor, steps: int,
             batch_size: int = 8, block: int | None = None, lr: float = 1e-3, warmup: int = 100,
             seed: int = 0, device="cpu", teacher: GPT | None = None, progress: bool = True,
             desc: str = "train", init: GPT | None = None, checkpoint: str | None = None,
             checkpoint_every: int = 100, tv_weight: float = 0.0) -> TrainResult:
    """Train ``GPT(config)`` (fresh, or from ``init``'s weights) for ``steps`` steps.

    ``tv_weight`` (with a ``teacher``): add that many times the mean total variation 1 - alpha between
    p and q to the loss, the rejection rate itself, which KL only bounds (the stage ``distill_more``)."""
    device = torch.device(device)
    block = min(block or config.block_size, config.block_size, len(train_data) - 2)
    torch.manual_seed(seed)
    model = GPT(config).to(device)
    if init is not None:
        if init.config != config:
            raise ValueError(f"init model has config {init.config}, not {config}")
        model.load_state_dict(init.state_dict())
    model.train()
    gen = torch.Generator().manual_seed(seed)
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                             {"params": no_decay, "weight_decay": 0.0}], lr=lr, betas=(0.9, 0.95))
    losses, curve, start, before = [], [], 0, 0.0
    if tv_weight and teacher is None:
        raise ValueError("tv_weight is a distillation term: it needs a teacher")
    key = train_checkpoint.run_key(config, steps, batch_size, block, lr, warmup, seed, teacher, tv_weight)
    if checkpoint and os.path.exists(checkpoint):
        losses, curve, start, before = train_checkpoint.resume(checkpoint, key, model, opt, gen)
    t0 = time.time()
    every = max(1, min(50, steps // 10))  # a point of the loss curve every ``every`` steps
    bar = tqdm(range(start, steps), desc=desc, disable=not progress, mininterval=2,
               initial=start, total=steps)
    for step in bar:
        for g in opt.param_groups:
            g["lr"] = lr_at(step, steps, lr, min(warmup, steps))
        x, y = windows(train_data, batch_size, block, gen)
        loss = lm_loss(model, teacher, x.to(device), y.to(device), tv_weight)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())
        if (step + 1) % every == 0 or step + 1 == steps:
            recent = losses[-every:]
            curve.append((step + 1, sum(recent) / len(recent)))
            bar.set_postfix(loss=f"{curve[-1][1]:.3f}")
        if checkpoint and ((step + 1) % checkpoint_every == 0 or step + 1 == steps):
            train_checkpoint.save(checkpoint, key, step + 1, model, opt, gen, losses, curve,
                                  before + time.time() - t0)
    model.eval()
    val = evaluate(model, val_data, block, device=device)
    return TrainResult(model, losses, val, before + time.time() - t0, curve)


def lm_loss(model: GPT, teacher: GPT | None, x: torch.Tensor, y: torch.Tensor, tv_weight: float = 0.0):
    """The training loss on the windows ``x`` (B, T) with next tokens ``y``: cross-entropy, or with a
    ``teacher`` the distillation loss KL(p || q) (p the teacher's, q the model's), plus ``tv_weight`` x
    (1 - alpha)."""
    vocab = model.config.vocab_size
    with _autocast(x.device):
        logits = model(x)  # (B, T, V)
        if teacher is not None:
            with torch.no_grad():
                p_logits = teacher(x)  # (B, T, V)
    logits = logits.float().view(-1, vocab)  # (B*T, V)
    if teacher is None:
        return F.cross_entropy(logits, y.view(-1))
    log_p = F.log_softmax(p_logits.float().view(-1, vocab), dim=-1)
    log_q = F.log_softmax(logits, dim=-1)
    loss = F.kl_div(log_q, log_p, log_target=True, reduction="batchmean")
    if tv_weight:  # + w (1 - alpha), alpha = sum_x min(p(x), q(x)), averaged over positions
        loss = loss + tv_weight * (1 - torch.minimum(log_p.exp(), log_q.exp()).sum(-1).mean())
    return loss


@torch.inference_mode()
def evaluate(model: GPT, data: torch.Tensor, block: int, max_windows: int = 64, device="cpu") -> float:
    """Mean next-character cross-entropy over consecutive windows of the data."""
    n = min(max_windows, (len(data) - 1) // block)
    if n < 1:
        return float("nan")
    x = data[: n * block].view(n, block).to(device)  # (n, T)
    y = data[1: n * block + 1].view(n, block).to(device)  # (n, T)
    total = 0.0
    for i in range(0, n, 8):
        logits = model(x[i:i + 8]).float()  # (b, T, V)
        total += F.cross_entropy(logits.view(-1, logits.size(-1)), y[i:i + 8].reshape(-1), reduction="sum").item()
    return total / (n * block)


@torch.inference_mode()
def teacher_forced_alpha(target: GPT, draft: GPT, data: torch.Tensor, block: int,
                         max_windows: int = 32, temperature: float = 1.0, device="cpu") -> float:
    """Mean over positions of alpha = sum_x min(p(x), q(x)) on real text (no sampling).

    p and q are the rows the decoder samples from at ``temperature``
    (``specsim.gpt.rule.adjust``) and alpha is the torch twin of the rule.
    """
    n = min(max_windows, (len(data) - 1) // block)
    x = data[: n * block].view(n, block).to(device)  # (n, T)
    total = 0.0
    for i in range(0, n, 8):
        p = adjust(target(x[i:i + 8]).float(), temperature)  # (b, T, V)
        q = adjust(draft(x[i:i + 8]).float(), temperature)  # (b, T, V)
        total += alpha(p, q).sum().item()  # alpha: (b, T)
    return total / (n * block)


def train_exit_heads(target: GPT, train_data: torch.Tensor, val_data: torch.Tensor, steps: int,
                     batch_size: int = 8, lr: float = 2e-3, warmup: int = 50, seed: int = 0, rank: int = 64,
                     device="cpu", progress: bool = True) -> tuple[dict, dict]:
    """Train one ``ExitHead`` per K = 1 .. n_layer - 1 on a frozen target, by KL(p || q_K).

    One target pass per step gives both p (the full model's row) and the
    hidden state after every block. Returns ({K: head}, notes with the
    teacher-forced alpha of early exit with and without the head, per K).
    """
    from ..drafters import EarlyExit, ExitHead
    device = torch.device(device)
    torch.manual_seed(seed)
    layers = list(range(1, target.config.n_layer))
    heads = {k: ExitHead(target.config.n_embd, rank).to(device) for k in layers}
    for h in heads.values():  # start as the plain early exit (zero up-projection, the target's norm)
        h.ln.load_state_dict(target.ln_f.state_dict())
    params = [p for h in heads.values() for p in h.parameters()]
    opt = torch.optim.AdamW(params, lr=lr, betas=(0.9, 0.95), weight_decay=0.0)
    gen = torch.Generator().manual_seed(seed)
    block, V = target.config.block_size, target.config.vocab_size
    losses, t0 = [], time.time()
    bar = tqdm(range(steps), desc="exit_heads", disable=not progress, mininterval=2)
    with frozen(target):
        for step in bar:
            for g in opt.param_groups:
                g["lr"] = lr_at(step, steps, lr, min(warmup, steps))
            x, _ = windows(train_data, batch_size, block, gen)
            x = x.to(device)
            with torch.no_grad(), _autocast(device):
                hidden = target.hidden_states(x)  # n_layer x (B, T, C)
                log_p = F.log_softmax(target.lm_head(target.ln_f(hidden[-1])).float().view(-1, V), dim=-1)
            loss = 0.0
            for k in layers:
                logits = target.lm_head(heads[k](hidden[k - 1].float())).view(-1, V)  # (B*T, V)
                loss = loss + F.kl_div(F.log_softmax(logits, dim=-1), log_p, log_target=True,
                                       reduction="batchmean")
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            losses.append(loss.item() / len(layers))
            bar.set_postfix(kl=f"{losses[-1]:.3f}")
    notes = {"steps": steps, "batch": batch_size, "lr": lr, "rank": rank, "seed": seed,
             "loss": "KL(p || q_K) against the full target, target frozen", "seconds": round(time.time() - t0, 1),
             "final_mean_kl": round(sum(losses[-20:]) / len(losses[-20:]), 4), "teacher_forced_alpha": {}}
    for k in layers:
        heads[k].eval()
        plain = teacher_forced_alpha(target, EarlyExit(target, k), val_data, block, device=device)
        trained = teacher_forced_alpha(target, EarlyExit(target, k, heads[k]), val_data, block, device=device)
        notes["teacher_forced_alpha"][str(k)] = {"without_head": round(plain, 4), "with_head": round(trained, 4)}
    return heads, notes
