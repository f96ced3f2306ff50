"""Work bounds: what a computation will cost, estimated before it starts.

Exact enumeration grows exponentially in gamma and in the number of tokens,
so every entry point (CLI command, app page) asks this module first and
refuses, with one line naming the limit and what to lower, the work it could
not finish quickly. The limits live here, once.

Example
-------
>>> round_work(3, 3)
81
>>> check(round_work(2, 19), "a round with γ = 19 over 2 tokens", "γ")
Traceback (most recent call last):
...
specsim.bounds.WorkRefused: a round with γ = 19 over 2 tokens means ~1.0e+06 outcomes; the limit is 200,000: lower γ
"""
from __future__ import annotations

from dataclasses import dataclass


class WorkRefused(ValueError):
    """A computation refused before it started; the message is one line."""


@dataclass(frozen=True)
class Limits:
    gamma: int = 64  # the largest draft length any entry point accepts
    exact_work: int = 200_000  # estimated enumeration steps of one exact computation
    interactive_work: int = 200_000  # the same budget for an app page


LIMITS = Limits()


def round_work(vocab_size: int, gamma: int) -> int:
    """Upper bound on the outcomes one exact round enumerates: V^(gamma + 1)."""
    return vocab_size ** (gamma + 1)


def joint_work(vocab_size: int, gamma: int, n_tokens: int, contexts: int = 1) -> int:
    """Upper bound on the enumeration of the n-token joints (speculative and target) from ``contexts`` contexts."""
    depth = max(n_tokens, min(gamma, n_tokens) + 1)
    return vocab_size ** depth * contexts


def check(work: int, what: str, lower: str, limit: int | None = None) -> None:
    """Raise ``WorkRefused`` when ``work`` is over ``limit`` (default: ``LIMITS.exact_work``)."""
    limit = LIMITS.exact_work if limit is None else limit
    if work > limit:
        raise WorkRefused(f"{what} means ~{float(work):.1e} outcomes; the limit is {limit:,}: lower {lower}")


def check_round(model, gamma: int, limit: int | None = None) -> None:
    """Refuse an exact round of ``model`` with this gamma when it is too large."""
    v = len(model.vocab)
    check(round_work(v, gamma), f"a round with γ = {gamma} over {v} tokens", "γ", limit)


def check_joint(model, n_tokens: int, gammas, contexts: int = 1, limit: int | None = None) -> None:
    """Refuse exact n-token joints (a proof, a pitfalls lab) that are too large."""
    v, g = len(model.vocab), max(gammas)
    check(joint_work(v, g, n_tokens, contexts),
          f"{n_tokens} tokens with γ up to {g} over {v} tokens from {contexts} context(s)", "γ or N", limit)
