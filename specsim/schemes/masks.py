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

# numpy is imported inside the functions that build grids: a scheme (and `specsim --help`,
# which shows the scheme grammar) loads this module without paying for numpy.


def _check(n: int, gamma: int) -> None:
    if n < 0:
        raise ValueError(f"n (cached keys) must be >= 0, got {n}")
    if gamma < 0:
        raise ValueError(f"gamma must be >= 0, got {gamma}")


def lower_right_grid(n: int, gamma: int) -> np.ndarray:
    """(gamma + 1, n + gamma + 1) booleans: query i sees keys 0 .. n + i."""
    _check(n, gamma)
    import numpy as np
    rows, cols = gamma + 1, n + gamma + 1
    return np.tril(np.ones((rows, cols), dtype=bool), k=n)


def upper_left_grid(n: int, gamma: int) -> np.ndarray:
    """(gamma + 1, n + gamma + 1) booleans: query i sees keys 0 .. i (wrong after a cache)."""
    _check(n, gamma)
    import numpy as np
    rows, cols = gamma + 1, n + gamma + 1
    return np.tril(np.ones((rows, cols), dtype=bool), k=0)


def visible_keys(grid: np.ndarray) -> list[int]:
    """How many keys each query sees."""
    return grid.sum(axis=1).tolist()


# -- trees: one verification pass over a whole draft tree ---------------------------
#
# A draft tree is flattened into a list of nodes; ``parents[i]`` is the index of
# node i's parent, or -1 when node i is a child of the root (the root is the last
# token of the sequence so far, fed as query 0). Parents come before children in
# the list, in depth-first or breadth-first order. The verify pass feeds
# [last token, node 0, ..., node m-1]: m + 1 queries after n cached keys.

def shape_parents(widths, order: str = "dfs") -> list[int]:
    """The parent list of a full tree of shape (W1, ..., Wd), flattened depth- or breadth-first.

    >>> shape_parents((2, 1))          # root -> a, b; a -> a1; b -> b1 (depth first: a, a1, b, b1)
    [-1, 0, -1, 2]
    >>> shape_parents((2, 1), "bfs")   # breadth first: a, b, a1, b1
    [-1, -1, 0, 1]
    >>> shape_parents((1, 1, 1))       # a chain of 3 drafts
    [-1, 0, 1]
    """
    widths = tuple(int(w) for w in widths)
    if any(w < 1 for w in widths):
        raise ValueError(f"tree widths must be >= 1, got {','.join(map(str, widths))}")
    if order not in ("dfs", "bfs"):
        raise ValueError(f"order must be 'dfs' or 'bfs', got {order!r}")
    parents: list[int] = []
    if order == "bfs":
        level = [-1]
        for w in widths:
            nxt = []
            for parent in level:
                for _ in range(w):
                    parents.append(parent)
                    nxt.append(len(parents) - 1)
            level = nxt
        return parents

    def grow(parent: int, depth: int) -> None:
        if depth == len(widths):
            return
        for _ in range(widths[depth]):
            parents.append(parent)
            grow(len(parents) - 1, depth + 1)

    grow(-1, 0)
    return parents


def _check_parents(parents) -> list[int]:
    parents = [int(a) for a in parents]
    for i, a in enumerate(parents):
        if not -1 <= a < i:
            raise ValueError(f"node {i}: parent {a} must be -1 (the root) or an earlier node")
    return parents


def tree_depths(parents) -> list[int]:
    """Depth of every node (a child of the root has depth 1).

    >>> tree_depths([-1, 0, -1, 2])
    [1, 2, 1, 2]
    """
    parents = _check_parents(parents)
    depths: list[int] = []
    for a in parents:
        depths.append(1 if a < 0 else depths[a] + 1)
    return depths


def tree_positions(parents, n: int) -> list[int]:
    """Position ids of the m + 1 queries: the root (last token) at n, node i at n + depth(i).

    Siblings share a position: they are alternatives for the same place in the text.

    >>> tree_positions([-1, 0, -1, 2], 5)
    [5, 6, 7, 6, 7]
    """
    _check(n, 0)
    return [n] + [n + d for d in tree_depths(parents)]


def tree_grid(parents, n: int) -> np.ndarray:
    """(m + 1, n + m + 1) booleans: each query sees the n cached keys, the root and its own ancestors.

    Row 0 is the root (the last token); row i + 1 is node i. On a chain
    (parents -1, 0, 1, ...) this is exactly ``lower_right_grid(n, m)``.

    >>> tree_grid([-1, 0, -1, 2], 1).astype(int).tolist()
    [[1, 1, 0, 0, 0, 0], [1, 1, 1, 0, 0, 0], [1, 1, 1, 1, 0, 0], [1, 1, 0, 0, 1, 0], [1, 1, 0, 0, 1, 1]]
    >>> bool((tree_grid([-1, 0, 1], 4) == lower_right_grid(4, 3)).all())
    True
    """
    parents = _check_parents(parents)
    _check(n, 0)
    m = len(parents)
    import numpy as np
    grid = np.zeros((m + 1, n + m + 1), dtype=bool)
    grid[:, : n + 1] = True  # the cached prefix and the root
    for i, a in enumerate(parents):
        row = grid[i + 1]
        row[n + 1 + i] = True  # itself
        while a >= 0:  # its ancestors
            row[n + 1 + a] = True
            a = parents[a]
    return grid
