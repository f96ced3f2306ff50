"""Sequoia's positional acceptance vector of the tiny GPT pair, and the best static tree it implies.

``specsim.labs.best_tree.acceptance_vector`` computes p_k (the chance that
child k of the root is the accepted one) exactly from a pair's rows at each
context. Here the pair is the shipped target and drafter in float64
(``GPTPair``, after the given sampling settings) and the contexts are
prefixes of the held-out prompts of the bench (``bench.heldout_prompts``):
every ``stride`` characters from ``start`` on. Nothing is sampled: at each
context the vector is the exact one of the models' rows (float64), and the
result is their plain mean; only the choice of contexts is a sample of text.
The vector then feeds ``best_tree`` for each budget.

The exact engine cannot check the chosen shapes' tokens per round here (a
deep tree over 96 tokens is far too many outcomes); the GPT bench measures
them (``gpt bench --scheme``).

>>> m = measure(n_prompts=1, k_max=3, start=32, stride=32)
>>> m.contexts, len(m.vector), 0 < sum(m.vector) <= 1
(2, 3, True)
>>> m.best[3].drafted_tokens <= 3
True
"""
from __future__ import annotations

from dataclasses import dataclass

from ... import bounds
from ...labs.best_tree import acceptance_vector, best_tree
from ..decode import Sampling
from ..exact_adapter import GPTPair
from .bench import PROMPT_CHARS, heldout_prompts

# One context costs two float64 forward passes and k_max one-level rounds over 96 tokens (~0.1 s for
# k_max 8 on this 2-core machine: 36 contexts in 2.9 s); the rounds' work estimate is far above what
# they do, so they are checked against this many estimated steps per context instead of the default.
WORK_PER_CONTEXT = 10**6
MAX_CONTEXTS = 200


@dataclass(frozen=True)
class MeasuredVector:
    """The GPT's acceptance vector (mean over ``contexts`` held-out contexts) and the DP's best trees.

    best: budget -> ``BestTree`` for budgets 1..k_max.
    """

    draft: str
    contexts: int
    vector: tuple
    best: dict


def measure(draft: str = "distilled", sampling: Sampling = Sampling(), n_prompts: int = 3, k_max: int = 8,
            start: int = 16, stride: int = 4, pair: GPTPair | None = None) -> MeasuredVector:
    """p_1..p_{k_max} of the shipped pair over prefixes of the held-out prompts, and the best trees."""
    if not 1 <= start <= PROMPT_CHARS or stride < 1:
        raise ValueError(f"start must be in 1..{PROMPT_CHARS} and stride >= 1, got {start} and {stride}")
    prompts = heldout_prompts(n_prompts)
    contexts = [tuple(p[:i]) for p in prompts for i in range(start, len(p) + 1, stride)]
    if not contexts:
        raise ValueError("no context: lower start")
    if len(contexts) > MAX_CONTEXTS:
        raise ValueError(f"{len(contexts)} contexts is over {MAX_CONTEXTS}: fewer prompts or a larger stride")
    pair = pair or GPTPair.from_shipped(draft, sampling)
    vector = acceptance_vector(pair, contexts, k_max, "iid", limit=bounds.Budget(WORK_PER_CONTEXT * len(contexts)))
    return MeasuredVector(draft, len(contexts), vector, {b: best_tree(vector, b) for b in range(1, k_max + 1)})

