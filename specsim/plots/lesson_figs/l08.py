"""Lesson 8's figures: P(K) of one round from "a" (exact against i.i.d.) and E[K + 1] against γ.

Both use the lesson's own calls: ``formulas.exact_vs_iid(load_model("seed"), ("a",), gamma)``.
"""
from __future__ import annotations

from ... import formulas
from ...toy import load_model
from .. import charts
from .figure import Control, LessonFigure

CONTEXT = ("a",)


def accepted(gamma: int = 3):
    """P(K = k), k = 0..γ, for one round from "a": the exact engine's beside the i.i.d. formula's."""
    r = formulas.exact_vs_iid(load_model("seed"), CONTEXT, int(gamma))
    return charts.accepted_distribution(
        r["accepted"], r["iid_accepted"],
        f"One round from \"a\", γ = {int(gamma)}: the exact P(K) beside the i.i.d. formula's (α = {r['alpha']})")


def tokens(max_gamma: int = 6):
    """E[K + 1] for γ = 1..max_gamma from "a": exact against the formula at the first position's α."""
    rows = [formulas.exact_vs_iid(load_model("seed"), CONTEXT, g) for g in range(1, int(max_gamma) + 1)]
    return charts.expected_tokens_curve(
        [r["gamma"] for r in rows], [r["expected_tokens"] for r in rows], [r["iid_expected_tokens"] for r in rows],
        f"Tokens per round from \"a\": the exact value against the i.i.d. formula at α = {rows[0]['alpha']}")


FIGURES = [
    LessonFigure("08-accepted", accepted, (Control("gamma", "γ (draft length)", 1, 6, 1, 3),)),
    LessonFigure("08-tokens", tokens),
]
