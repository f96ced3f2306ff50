"""Lesson 7's figures: temperature reshaping both rows after "b" (a slider for τ), and top-2 truncation
keeping a different pair of tokens for each model.

Both rows come from the lesson's calls: ``transforms.transform_pair(load_model("seed"), temperature=τ)`` and
``transform_pair(..., top_k=2)``, drawn by ``charts.pq_bars``; α is ``rule.alpha`` of the two rows.

>>> tempered(0.5).layout.title.text.startswith('After "b" at τ = 1/2: α = 0.607')
True
"""
from __future__ import annotations

from fractions import Fraction

from ...rule import alpha
from ...toy import load_model
from ...transforms import transform_pair
from ..charts import pq_bars
from .figure import Control, LessonFigure

CONTEXT = ("b",)


def tempered(tau: float = 0.5):
    """p and q after "b", both at temperature τ (τ = 1 is the raw pair), with their α."""
    t = Fraction(str(round(float(tau), 2)))
    m = load_model("seed")
    pair = transform_pair(m, temperature=t)
    p, q = pair.p(CONTEXT), pair.q(CONTEXT)
    return pq_bars(m.vocab, p, q, f"After \"b\" at τ = {t}: α = {float(alpha(p, q)):.3f}")


def top_two():
    """p and q after "b" with top-k 2 applied to each: the two models keep different pairs."""
    m = load_model("seed")
    pair = transform_pair(m, top_k=2)
    p, q = pair.p(CONTEXT), pair.q(CONTEXT)
    return pq_bars(m.vocab, p, q, f"After \"b\", top-k 2 on both rows: α = {alpha(p, q)}")


FIGURES = [
    LessonFigure("07-temperature", tempered, (Control("tau", "τ (temperature)", 0.1, 3.0, 0.05, 0.5),)),
    LessonFigure("07-top-k", top_two),
]
