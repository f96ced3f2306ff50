"""The shipped models as a float64 "model pair" for the exact engine.

``specsim.exact`` enumerates every outcome of speculative rounds for any
model pair (``specsim.pair.ModelPair``: ``vocab``, ``p(context)``,
``q(context)``, optionally ``state(context)``). ``GPTPair`` is one; its
state is the last ``window`` characters. Here a context is a
tuple of characters, the prompt included; p and q are the target's and the
drafter's next-character rows in float64 (full forward passes of float64
copies of the models, memoized per context), after the same ``Sampling``.

>>> from specsim.exact import check_exactness
>>> pair = GPTPair.from_shipped()
>>> [c.exact for c in check_exactness(pair, 1, [1, 2], contexts=[tuple("def")], tolerance=1e-9)]
[True, True]
"""
from __future__ import annotations

import copy

import torch

from .decode import Sampling


class GPTPair:
    """The target and drafter as float64 p(context) and q(context) rows (a ``ModelPair``)."""

    def __init__(self, target, draft, vocab: str, sampling: Sampling = Sampling()):
        self.target = copy.deepcopy(target).double().cpu().eval()
        self.draft = copy.deepcopy(draft).double().cpu().eval()
        self.vocab = tuple(vocab)
        self.index = {ch: i for i, ch in enumerate(vocab)}
        self.sampling = sampling
        self._memo = {}
        self.window = min(target.config.block_size, draft.config.block_size)

    @classmethod
    def from_shipped(cls, draft: str = "distilled", sampling: Sampling = Sampling()) -> "GPTPair":
        from .api import load_pair
        pair = load_pair(draft, device="cpu")
        return cls(pair.target, pair.draft, pair.vocab, sampling)

    def state(self, context) -> tuple:
        return tuple(context)[-self.window:]

    @torch.inference_mode()
    def _rows(self, context) -> tuple[list, list]:
        key = self.state(context)
        if key not in self._memo:
            if not key:
                raise ValueError("the context is empty: the models need at least one character")
            idx = torch.tensor([[self.index[ch] for ch in key]])  # (1, T)
            p = self.sampling.row(self.target(idx, last_only=True)[0, -1])  # (V,) float64
            q = self.sampling.row(self.draft(idx, last_only=True)[0, -1])  # (V,) float64
            self._memo[key] = (p.tolist(), q.tolist())
        return self._memo[key]

    def p(self, context) -> list:
        return self._rows(context)[0]

    def q(self, context) -> list:
        return self._rows(context)[1]
