"""Known bugs of real engines, reproduced as engines to audit (``--engine specsim/gpt/audit_bugs.py:NAME``).

Each one is the textbook round of ``audit_engines.Textbook`` with one step
written as the buggy release wrote it, so the audit is shown catching the bug
itself, not a caricature. Each is lossy; ``tests/test_audit_engines.py`` catches
each at ``--tokens 2`` with a few hundred runs, and ``tests/bench_audit.py``
measures the runs and seconds each takes to reach the verdict.

* ``GreedyAssistant``: transformers 4.44.2's assisted generation with
  sampling (transformers issue 32867, fixed in 4.45.0 by PR 33534): the
  assistant drafted its argmax (greedy) while the ratio p/q and the residual
  read its softmax q, as if the draft had been sampled from q. A reproduction:
  that release is not installed here.
* ``SharedNoise``: one uniform per position draws the draft (inverse CDF of
  q), tests it and draws the recovery from the residual (the shape of vLLM
  issue 54282, the same random number used for drafting and for the
  acceptance and recovery): the test then knows where in q's CDF the draft
  fell. (Sharing an exponential race's noise between the draft and the
  recovery alone moves the shipped pair's first token far less: an audit needs
  many thousands of runs to see it.)
* ``StaleCacheAfterRejection``: exact until the first rejection; then the
  target's cache is not rolled back (the rejected drafts stay in it), so every
  later p is computed after tokens that were never emitted. The first round is
  exact, which is why an audit of the first token alone (``--tokens 1``) can
  never see it.
* ``RawQUnderTopK`` (in ``audit_engines``): q drafted under top-k, the ratio read
  from the raw q; run it with ``--top-k 5``.
"""
from __future__ import annotations

import torch

from specsim.gpt.audit_engines import GAMMA, RawQUnderTopK, Textbook  # noqa: F401  (absolute: loaded by path)


def inverse_cdf(row: torch.Tensor, u: float) -> int:
    """The token whose CDF interval holds u: a draw from ``row`` given the uniform u."""
    cdf = torch.cumsum(row, 0)
    return min(int(torch.searchsorted(cdf, torch.tensor([u * float(cdf[-1])], dtype=cdf.dtype), right=True)),
               row.numel() - 1)


class GreedyAssistant(Textbook):
    """transformers 4.44.2: the draft is q's argmax, the ratio and the residual use q itself."""

    def propose(self, q, generator) -> tuple:
        return int(q.argmax()), None


class SharedNoise(Textbook):
    """One uniform u per position draws the draft (inverse CDF of q), tests it (u < p/q) and draws the recovery
    (inverse CDF of the residual): vLLM issue 54282's shape, the same random number used twice."""

    def propose(self, q, generator) -> tuple:
        u = float(torch.rand(1, generator=generator, dtype=torch.float64))
        return inverse_cdf(q, u), u

    def test_uniform(self, drawn_with, generator) -> float:
        return drawn_with

    def correct(self, residual, drawn_with, generator) -> int:
        return inverse_cdf(residual, drawn_with)


class StaleCacheAfterRejection(Textbook):
    """Exact until a draft is rejected; from then on the target reads a cache that still holds the rejected drafts."""

    def generate(self, ids: list, n: int, generator: torch.Generator) -> list:
        self.cache_ids = list(ids)  # what the target's cache holds (the emitted tokens, plus any stale drafts)
        out = []
        with torch.inference_mode():
            while len(out) < n:
                emitted = self.round(list(ids) + out, generator)
                out += emitted
        return out[:n]

    def p_rows(self, ids, drafts) -> torch.Tensor:
        self.drafted = list(drafts)
        return super().p_rows(self.cache_ids, drafts)  # the target sees its cache, not the emitted text

    def round(self, ids, generator) -> list:
        emitted = super().round(ids, generator)
        kept = len(emitted) - 1  # the accepted drafts; the last token is a correction or the bonus
        if kept < GAMMA:  # a rejection: the bug keeps every draft in the cache (no crop), then the correction
            self.cache_ids += self.drafted + emitted[-1:]
        else:
            self.cache_ids += emitted
        return emitted
