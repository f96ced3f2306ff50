"""Verification masks as boolean grids (numpy only: cheap to import for the app).

Verification feeds gamma + 1 new queries (the last token and the gamma drafts)
to a target whose cache already holds n keys. Row i of a grid is new query i,
column j is key j (0 .. n + gamma); True means "query i may attend to key j".

* lower-right alignment (correct): query i sees keys 0 .. n + i, the whole
  cached prefix plus the new positions up to itself;
* upper-left alignment (what ``is_causal=True`` does when L != S): query i
  sees keys 0 .. i only, so the drafts lose the prefix.

>>> lower_right_grid(5, 3).sum(axis=1).tolist()
[6, 7, 8, 9]
>>> upper_left_grid(5, 3).sum(axis=1).tolist()
[1, 2, 3, 4]
>>> lower_right_grid(0, 2).astype(int).tolist()
[[1, 0, 0], [1, 1, 0], [1, 1, 1]]
"""
from __future__ import annotations

import numpy as np


def _check(n: int, gamma: int) -> None:
    if n < 0:
        raise ValueError(f"n (cached keys) must be >= 0, got {n}")
    if gamma < 0:
        raise ValueError(f"gamma must be >= 0, got {gamma}")


def lower_right_grid(n: int, gamma: int) -> np.ndarray:
    """(gamma + 1, n + gamma + 1) booleans: query i sees keys 0 .. n + i."""
    _check(n, gamma)
    rows, cols = gamma + 1, n + gamma + 1
    return np.tril(np.ones((rows, cols), dtype=bool), k=n)


def upper_left_grid(n: int, gamma: int) -> np.ndarray:
    """(gamma + 1, n + gamma + 1) booleans: query i sees keys 0 .. i (wrong after a cache)."""
    _check(n, gamma)
    rows, cols = gamma + 1, n + gamma + 1
    return np.tril(np.ones((rows, cols), dtype=bool), k=0)


def visible_keys(grid: np.ndarray) -> list[int]:
    """How many keys each query sees."""
    return grid.sum(axis=1).tolist()
