"""Predicted vs actual cost of exact work, on five sizes (the estimator's calibration).

``measure()`` runs each case once and returns rows of the estimator's
prediction (steps, ``specsim.bounds.exact_work``), the outcomes actually
enumerated (distinct sequences summed over the result) and the seconds it
took, so the limit in steps can be read as time on this machine.

Example
-------
>>> rows = measure(cases()[:1])
>>> rows[0]["case"], rows[0]["actual_outcomes"]
('seed: round γ = 3', 94)
"""
from __future__ import annotations

import time
from fractions import Fraction

from .. import bounds, exact
from ..schemes import Chain
from ..toy import ToyModel, load_model, random_model


def _two(digits: int) -> ToyModel:
    """Two tokens, rows with denominators of about ``digits`` digits."""
    a, b = Fraction(10**digits + 1, 3 * 10**digits), Fraction(10**digits + 7, 7 * 10**digits)
    rows = {("x",): (a, 1 - a), ("y",): (b, 1 - b)}
    return ToyModel(("x", "y"), 1, rows, {("x",): rows[("y",)], ("y",): rows[("x",)]}, f"two-d{digits}")


def _round(model, gamma):
    ctx, chain = model.contexts()[0], Chain(gamma)
    return (lambda: len(exact.round_distribution(model, ctx, chain).outcomes),
            bounds.exact_work(model, chain, rounds=1))


def _prove(model, n, gammas):
    ctx, chains = model.contexts(), [Chain(g) for g in gammas]
    return (lambda: sum(c.sequences for c in exact.check_exactness(model, n, chains, ctx)),
            bounds.exact_work(model, n_tokens=n, schemes=chains, contexts=len(ctx)))


def cases() -> list:
    """(label, run returning the outcomes enumerated, predicted steps), smallest first."""
    seed = load_model("seed")
    return [
        ("seed: round γ = 3", *_round(seed, 3)),
        ("seed: prove N = 4, γ = 1-4, 3 contexts", *_prove(seed, 4, range(1, 5))),
        ("4 tokens: round γ = 6", *_round(random_model(4, seed=7), 6)),
        ("2 tokens, 200-digit rows: round γ = 8", *_round(_two(200), 8)),
        ("2 tokens: prove N = 10, γ = 1-6, 2 contexts", *_prove(_two(1), 10, range(1, 7))),
    ]


def measure(which=None) -> list:
    """[{"case", "predicted_steps", "actual_outcomes", "seconds", "seconds_per_step"}]."""
    rows = []
    for label, run, predicted in which or cases():
        start = time.perf_counter()
        outcomes = run()
        seconds = time.perf_counter() - start
        rows.append({"case": label, "predicted_steps": round(predicted), "actual_outcomes": outcomes,
                     "seconds": round(seconds, 4), "seconds_per_step": seconds / predicted,
                     "within_limit": predicted <= bounds.LIMITS.exact_work})
    return rows
