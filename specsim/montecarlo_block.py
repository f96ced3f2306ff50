"""Monte-Carlo of block-verified rounds, vectorized with numpy.

The same experiment as ``specsim.block.sample_block_rounds`` (one Python
round at a time), on the same uniforms in the same layout (chunks of rounds;
per chunk, γ draft uniforms, γ stop-coin uniforms and one final uniform per
round) and the same float64 arithmetic, so with the same seed both return
the same counts; this one plays a whole chunk of rounds per numpy call.

Per round (``specsim.block`` has the rule and its proof):

1. draft X_1..X_γ from q, walking the states of ``montecarlo.StateTables``;
2. weights w_i = min(1, w_{i-1} · p_i(X_i) / q_i(X_i));
3. stop coins η_i = [u_i < h_i], h_i = r_i / (r_i + 1 − w_i) for i < γ,
   h_γ = w_γ; τ = the last i with η_i = 1 (0 if none);
4. the closing token from p after the chain (τ = γ) or from the block
   residual normalize(max(w_τ · p − q, 0)) at position τ + 1.

Example
-------
>>> from specsim.toy import load_model
>>> from specsim.block import sample_block_rounds
>>> m = load_model("seed")
>>> fast = sample_block_rounds_vectorized(m, ("a",), 3, 2000, seed=1)
>>> fast.outcomes == sample_block_rounds(m, ("a",), 3, 2000, seed=1).outcomes
True
"""
from __future__ import annotations

import numpy as np

from .montecarlo import SampleResult, StateTables, _check, _decode, _pick, _uniform_chunks
from .sampling import make_rng


def _draw_rows(rows, u):
    """Inverse-CDF draw of one index per row of ``rows`` (N, V), rows normalized here.

    As ``sampling.draw``: the first positive entry whose running total exceeds
    u; entries from the last positive one on count as 2 so rounding never
    lands past it.
    """
    total = rows.sum(axis=1, keepdims=True)
    cum = np.cumsum(rows / total, axis=1)  # (N, V)
    last = rows.shape[1] - 1 - np.argmax((rows > 0)[:, ::-1], axis=1)  # (N,) last positive entry
    cum[np.arange(rows.shape[1])[None, :] >= last[:, None]] = 2.0
    return (cum <= u[:, None]).sum(axis=1)


def sample_block_rounds_vectorized(models, context, gamma: int, rounds: int, seed=None,
                                   progress=None) -> SampleResult:
    """Play ``rounds`` block-verified rounds, a chunk at a time, and count them (``progress(n)`` per chunk)."""
    _check(gamma, rounds)
    t = StateTables(models, context, gamma)
    v = len(t.vocab)
    base = v + 1  # an outcome is a number in base V+1, digit j = token j + 1
    if base ** (gamma + 1) >= 1 << 62:
        raise ValueError(f"γ = {gamma} over {v} tokens: outcomes do not fit a 64-bit code; lower γ")
    powers = base ** np.arange(gamma + 1, dtype=np.int64)
    totals, k_counts = {}, np.zeros(gamma + 1, dtype=np.int64)
    for n, u_draft, u_stop, u_final in _uniform_chunks(make_rng(seed), rounds, gamma, progress):
        states = np.zeros((n, gamma + 1), dtype=np.intp)  # (N, γ+1) state after i drafts
        drafts = np.zeros((n, gamma), dtype=np.intp)  # (N, γ)
        w = np.ones((n, gamma + 1))  # (N, γ+1) w_0 .. w_γ
        for i in range(gamma):  # steps 1-2: draft X_{i+1} ~ q, then its weight
            s = states[:, i]
            x = drafts[:, i] = _pick(t.cum_q, s, u_draft[:, i])
            states[:, i + 1] = t.next[s, x]
            w[:, i + 1] = np.minimum(1.0, w[:, i] * t.P[s, x] / t.Q[s, x])
        tau = np.where(u_stop[:, gamma - 1] < w[:, gamma], gamma, 0)  # step 3: h_γ = w_γ
        for i in range(gamma - 1, 0, -1):  # the last i with η_i = 1 wins
            s = states[:, i]
            r = np.maximum(w[:, i, None] * t.P[s] - t.Q[s], 0.0).sum(axis=1)  # (N,)
            den = r + 1.0 - w[:, i]
            h = np.divide(r, den, out=np.zeros(n), where=den != 0)
            tau = np.where((tau == 0) & (u_stop[:, i - 1] < h), i, tau)
        at = states[np.arange(n), tau]  # (N,) state at position τ + 1
        wt = w[np.arange(n), tau, None]  # (N, 1)
        full = (tau == gamma)[:, None]
        rows = np.where(full, t.P[at], np.maximum(wt * t.P[at] - t.Q[at], 0.0))  # step 4 (or 5: bonus)
        closing = _draw_rows(rows, u_final)
        kept = np.arange(gamma)[None, :] < tau[:, None]  # (N, γ) drafts kept
        code = ((drafts + 1) * kept * powers[None, :gamma]).sum(axis=1) + (closing + 1) * powers[tau]
        values, counts = np.unique(code, return_counts=True)
        for key, c in zip(values.tolist(), counts.tolist()):
            totals[key] = totals.get(key, 0) + c
        k_counts += np.bincount(tau, minlength=gamma + 1)
    outcomes = {_decode(c, base, t.vocab): n for c, n in totals.items()}
    return SampleResult(tuple(context), gamma, rounds, outcomes, [int(c) for c in k_counts])
