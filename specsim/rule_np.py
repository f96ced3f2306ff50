"""The acceptance rule on numpy arrays: the vectorized twin of ``specsim.rule``.

``specsim.rule`` works on one probability or one row at a time (Fractions or
floats); this file does the same arithmetic on float arrays whose last axis
is the vocabulary: a row (V,), a table of rows (S, V), or any (..., V). The
Monte-Carlo sampler (``specsim.montecarlo``) uses it for its tables of model
states. It is tested element by element against ``specsim.rule`` (the torch
twin, ``specsim.gpt.rule``, is tested the same way).

Two cases the scalar rule refuses are given a value here, because a table
covers every token and every state, not only what a round can reach:

* ``acceptance_probabilities`` is 0 where q(x) = 0. The drafter never
  proposes such a token, so the value is never used to decide anything
  (``rule.acceptance_probability`` raises instead).
* ``residual`` of a row where p <= q everywhere (p == q for two
  distributions) is undefined: no rejection can happen there.
  ``rule.residual`` returns None; here the row is filled with the matching
  row of ``fallback`` (for example p, which is what a sampler may safely
  draw from, since it never will), or with NaN when no fallback is given.

>>> import numpy as np
>>> p = np.array([[0.6, 0.3, 0.1], [0.5, 0.5, 0.0]])
>>> q = np.array([[0.5, 0.4, 0.1], [0.5, 0.5, 0.0]])
>>> acceptance_probabilities(p, q).round(12).tolist()
[[1.0, 0.75, 1.0], [1.0, 1.0, 0.0]]
>>> alpha(p, q).round(12).tolist()
[0.9, 1.0]
>>> residual(p, q).round(12).tolist()
[[1.0, 0.0, 0.0], [nan, nan, nan]]
>>> residual(p, q, fallback=p).round(12).tolist()
[[1.0, 0.0, 0.0], [0.5, 0.5, 0.0]]
"""
from __future__ import annotations

import numpy as np


def acceptance_probabilities(p, q) -> np.ndarray:
    """min(1, p(x) / q(x)) elementwise, and 0 where q(x) = 0 (never proposed)."""
    p, q = _pair(p, q)
    safe_q = np.where(q > 0, q, 1.0)
    return np.where(q > 0, np.minimum(1.0, p / safe_q), 0.0)


def alpha(p, q) -> np.ndarray:
    """sum_x min(p(x), q(x)) over the last axis: one acceptance rate per row."""
    p, q = _pair(p, q)
    return np.minimum(p, q).sum(axis=-1)


def residual(p, q, fallback=None) -> np.ndarray:
    """max(0, p - q) normalized over the last axis, row by row.

    Rows where p <= q everywhere have no residual (their excess mass is 0,
    never divided by): they are taken from ``fallback`` (an array of the
    same shape) or set to NaN when ``fallback`` is None.
    """
    p, q = _pair(p, q)
    excess = np.maximum(0.0, p - q)  # (..., V)
    mass = excess.sum(axis=-1, keepdims=True)  # (..., 1)
    defined = mass > 0  # (..., 1)
    out = excess / np.where(defined, mass, 1.0)
    other = np.full_like(out, np.nan) if fallback is None else np.asarray(fallback, dtype=float)
    if other.shape != out.shape:
        raise ValueError(f"fallback has shape {other.shape}, the rows have {out.shape}")
    return np.where(defined, out, other)


def _pair(p, q):
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    if p.shape != q.shape:
        raise ValueError(f"p has shape {p.shape} but q has {q.shape}")
    return p, q
