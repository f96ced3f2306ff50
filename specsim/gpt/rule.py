"""What stays on the device: the sampling transform of logits, and α / TV over whole rows for statistics.

The round's decisions (accept, residual, bonus, for every scheme and rule)
are made once, on the host, by ``specsim.schemes`` on the rows as Python
floats (``specsim.gpt.decode``). Here: ``adjust`` turns logits into the row
that both models are sampled from -- temperature, top-k, top-p and greedy
applied identically to p and q, which the exactness of the rule requires --
and ``alpha`` / ``total_variation`` measure whole batches of rows (training,
lesson 16), the torch twins of ``specsim.rule``'s, tested against them.

>>> import torch
>>> p = torch.tensor([0.6, 0.3, 0.1], dtype=torch.float64)
>>> q = torch.tensor([0.5, 0.4, 0.1], dtype=torch.float64)
>>> round(alpha(p, q).item(), 12), round(total_variation(p, q).item(), 12)
(0.9, 0.1)
"""
from __future__ import annotations

import torch


def alpha(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """sum_x min(p(x), q(x)) over the last dimension."""
    return torch.minimum(p, q).sum(-1)


def total_variation(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    return (p - q).abs().sum(-1) / 2


def adjust(logits: torch.Tensor, temperature: float = 1.0, top_k: int | None = None,
           top_p: float | None = None, greedy: bool = False) -> torch.Tensor:
    """Logits (..., V) -> the sampling row (..., V), the same transformation for p and q.

    greedy: one-hot on the argmax. Otherwise softmax(logits / temperature),
    restricted to the top_k largest logits, then to the smallest set of
    tokens whose probability reaches top_p (the most likely token always stays).
    """
    if logits.dtype in (torch.float16, torch.bfloat16):
        logits = logits.float()
    if greedy:
        return torch.zeros_like(logits).scatter_(-1, logits.argmax(-1, keepdim=True), 1.0)
    if temperature <= 0:
        raise ValueError("temperature must be > 0 (use greedy for the argmax)")
    if temperature != 1.0:  # x / 1.0 is x: skip the division, the same bits
        logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = torch.topk(logits, top_k, dim=-1).values[..., -1:]  # (..., 1)
        logits = logits.masked_fill(logits < kth, float("-inf"))
    probs = torch.softmax(logits, dim=-1)
    if top_p is not None and top_p < 1.0:
        sorted_p, order = torch.sort(probs, dim=-1, descending=True)
        before = sorted_p.cumsum(-1) - sorted_p  # mass strictly before each token
        drop_sorted = before >= top_p  # the token is not needed to reach top_p
        drop_sorted[..., 0] = False  # the most likely token stays, even when top_p rounds to 0 in float32
        drop = torch.zeros_like(drop_sorted).scatter_(-1, order, drop_sorted)
        probs = probs.masked_fill(drop, 0.0)
        probs = probs / probs.sum(-1, keepdim=True)
    return probs
