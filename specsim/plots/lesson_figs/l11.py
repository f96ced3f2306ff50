"""Lesson 11's figures: both caches across one round and its rollback (``plots.gpt.cache_slots``).

The lesson's invariant example: a round starts with n = 5 cached entries, drafts γ = 3 tokens and accepts
k of them (k = 1 in its first doctest; a slider moves k). The lengths are the invariant the lesson states
and checks on the tiny GPT's rounds: the target appends γ + 1 entries in its verify pass and keeps n + k + 1;
the drafter's own pass leaves it at n + γ (the last draft is never fed to it) and, after a rejection, it
keeps n + k + 1 too, so after a full acceptance it ends one entry behind the target.

>>> cache = round_cache(5, 3, 1)
>>> cache["target"]["after_verify"], cache["target"]["after_crop"], cache["draft"]["after_crop"]
(9, 7, 7)
>>> full = round_cache(5, 3, 3)
>>> full["target"]["after_crop"] - full["draft"]["after_crop"]
1
"""
from __future__ import annotations

from .. import gpt
from .figure import Control, LessonFigure

N, GAMMA = 5, 3


def round_cache(n: int, gamma: int, k: int) -> dict:
    """The two caches' lengths at the moments of one round, as ``Round.cache`` of the tiny GPT's decoder."""
    if not 0 <= k <= gamma:
        raise ValueError(f"k (accepted drafts) must be in 0..{gamma}, got {k}")
    return {"target": {"start": n, "before_verify": n, "after_verify": n + gamma + 1, "after_crop": n + k + 1},
            "draft": {"start": n, "before_verify": n + gamma, "after_verify": n + gamma,
                      "after_crop": n + gamma if k == gamma else n + k + 1}}


def rollback(k: int = 1):
    """One round with n = 5, γ = 3 and k accepted drafts: the slots after verification and after the crop."""
    k = int(k)
    return gpt.cache_slots(round_cache(N, GAMMA, k), GAMMA, k)


def full_acceptance():
    """A round that accepts all γ drafts: the target keeps n + γ + 1, the drafter only n + γ."""
    return gpt.cache_slots(round_cache(N, GAMMA, GAMMA), GAMMA, GAMMA)


FIGURES = [
    LessonFigure("11-rollback", rollback, (Control("k", "k (accepted drafts)", 0, GAMMA, 1, 1),)),
    LessonFigure("11-full-acceptance", full_acceptance),
]
