"""The acceptance rule on torch rows: the twin of ``specsim.rule``, tested against it.

Same names, same meaning: p is the target's row, q the drafter's. Rows are
1-D tensors over the vocabulary, or 2-D (positions, V) where noted.
``adjust`` turns logits into the row that both models are sampled from:
temperature, top-k, top-p and greedy are applied identically to p and q,
which the exactness of the rule requires.

>>> import torch
>>> p = torch.tensor([0.6, 0.3, 0.1], dtype=torch.float64)
>>> q = torch.tensor([0.5, 0.4, 0.1], dtype=torch.float64)
>>> round(alpha(p, q).item(), 12), residual(p, q).tolist()
(0.9, [1.0, 0.0, 0.0])
>>> round(acceptance_probability(p[1], q[1]).item(), 12)
0.75
"""
from __future__ import annotations

import torch


def acceptance_probability(p_x: torch.Tensor, q_x: torch.Tensor) -> torch.Tensor:
    """min(1, p(x) / q(x)), elementwise; q(x) > 0 because x was drawn from q."""
    if bool((q_x <= 0).any()):
        raise ValueError("the drafter proposed a token it gives probability 0 (q(x) = 0)")
    return torch.clamp(p_x / q_x, max=1.0)


def alpha(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """sum_x min(p(x), q(x)) over the last dimension."""
    return torch.minimum(p, q).sum(-1)


def total_variation(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    return (p - q).abs().sum(-1) / 2


def residual(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor | None:
    """max(0, p - q) normalized, or None when p <= q everywhere (1-D rows)."""
    excess = torch.clamp(p - q, min=0)
    mass = excess.sum()
    if not bool(mass > 0):
        return None
    return excess / mass


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


def accept_drafts(p_rows: torch.Tensor, q_rows: torch.Tensor, drafts: torch.Tensor,
                  u: torch.Tensor):
    """Step 3 for a whole round at once.

    p_rows (gamma + 1, V), q_rows (gamma, V), drafts (gamma,), u (gamma,).
    Returns (acceptance (gamma,), accepted_flags (gamma,), accepted):
    acceptance = min(1, p/q) of each draft, accepted_flags = u < acceptance,
    accepted = K, the number of drafts accepted before the first rejection.
    """
    idx = torch.arange(drafts.numel(), device=drafts.device)
    acceptance = acceptance_probability(p_rows[idx, drafts], q_rows[idx, drafts])  # (gamma,)
    accepted_flags = u < acceptance  # (gamma,)
    rejected = (~accepted_flags).nonzero()
    accepted = int(rejected[0, 0]) if rejected.numel() else drafts.numel()
    return acceptance, accepted_flags, accepted


# -- trees: the per-node step, twin of ``specsim.schemes.tree`` ------------------------------

def child_acceptance(p_cur: torch.Tensor, q_cur: torch.Tensor, x: int) -> torch.Tensor:
    """min(1, p'(x) / q'(x)) for the child x tried against the current rows (V,)."""
    return acceptance_probability(p_cur[x], q_cur[x])


def residual_update(p_cur: torch.Tensor, q_cur: torch.Tensor) -> torch.Tensor | None:
    """p' after a rejected child: normalize(max(0, p' - q')); None when p' <= q'."""
    return residual(p_cur, q_cur)


def without(q: torch.Tensor, tried) -> torch.Tensor | None:
    """q (V,) with the ``tried`` token ids set to 0 and renormalized; None when nothing is left."""
    kept = q.clone()
    if tried:
        kept[torch.tensor(sorted(set(tried)), device=q.device)] = 0
    mass = kept.sum()
    if not bool(mass > 0):
        return None
    return kept / mass


# -- block verification, twin of ``specsim.schemes.block`` -----------------------------------

def block_weights(p_rows: torch.Tensor, q_rows: torch.Tensor, drafts: torch.Tensor) -> torch.Tensor:
    """[w_0, ..., w_gamma]: w_0 = 1, w_i = min(1, w_{i-1} p_i(X_i) / q_i(X_i)).

    p_rows (>= gamma, V), q_rows (gamma, V), drafts (gamma,) -> (gamma + 1,).
    """
    idx = torch.arange(drafts.numel(), device=drafts.device)
    ratio = p_rows[idx, drafts] / q_rows[idx, drafts]  # (gamma,)
    w = [torch.ones((), dtype=p_rows.dtype, device=p_rows.device)]
    for r in ratio:  # a running minimum: sequential by definition
        w.append(torch.clamp(w[-1] * r, max=1.0))
    return torch.stack(w)  # (gamma + 1,)


def stop_probabilities(w: torch.Tensor, p_rows: torch.Tensor, q_rows: torch.Tensor) -> torch.Tensor:
    """[h_1, ..., h_gamma]: h_i = r_i / (r_i + 1 - w_i) with r_i = sum max(w_i p_{i+1} - q_{i+1}, 0)
    (0 when the denominator is 0, as ``specsim.schemes.block.ZERO_OVER_ZERO``), and h_gamma = w_gamma."""
    gamma = w.numel() - 1
    inner = w[1:gamma, None]  # (gamma - 1, 1)
    r = torch.clamp(inner * p_rows[1:gamma] - q_rows[1:gamma], min=0).sum(-1)  # (gamma - 1,)
    den = r + 1 - inner[:, 0]
    h = torch.where(den > 0, r / torch.where(den > 0, den, torch.ones_like(den)), torch.zeros_like(r))
    last = w[gamma:] if gamma else w[:0]  # h_gamma = w_gamma; nothing for an empty chain
    return torch.cat([h, last])  # (gamma,)


def block_residual(w: torch.Tensor, p: torch.Tensor, q: torch.Tensor) -> torch.Tensor | None:
    """normalize(max(w p - q, 0)) (V,): the closing row after stopping at tau < gamma; None when empty."""
    excess = torch.clamp(w * p - q, min=0)
    mass = excess.sum()
    if not bool(mass > 0):
        return None
    return excess / mass


def accept_block(p_rows: torch.Tensor, q_rows: torch.Tensor, drafts: torch.Tensor, u: torch.Tensor):
    """Block verification of a whole chain: (w (gamma + 1,), h (gamma,), stops (gamma,), tau).

    One coin per position, eta_i = u_i < h_i; tau is the largest i with eta_i (0 if none):
    X_1 .. X_tau are kept.
    """
    w = block_weights(p_rows, q_rows, drafts)
    h = stop_probabilities(w, p_rows, q_rows)
    stops = u < h  # (gamma,)
    hits = stops.nonzero()
    tau = int(hits[-1, 0]) + 1 if hits.numel() else 0
    return w, h, stops, tau
