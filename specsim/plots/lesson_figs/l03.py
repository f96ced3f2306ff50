"""Lesson 3's figures: p against q after "a", the residual with p and q on sliders, and a seeded rejection.

The numbers are the lesson's: the seed model's rows after "a" (the sliders
start there) and ``trace_round(m, ("a",), Chain(3), seed=7)``.

>>> [f.name for f in FIGURES]
['03-pq', '03-residual', '03-reject']
>>> rows(0.6, 0.3), rows(0.7, 0.5)      # a slider pair past 1 gives b what a leaves
((Fraction(3, 5), Fraction(3, 10), Fraction(1, 10)), (Fraction(7, 10), Fraction(3, 10), Fraction(0, 1)))
"""
from __future__ import annotations

from fractions import Fraction

from ...rule import alpha
from ...sampling import trace_round
from ...schemes import Chain
from ...toy import load_model
from ..charts import exact_dec, pq_bars, residual_panels
from .figure import Control, LessonFigure
from .l01 import decision


def draw_pq():
    m = load_model("seed")
    p, q = m.p(("a",)), m.q(("a",))
    return pq_bars(m.vocab, p, q, "after \"a\": the drafter over-proposes b (q > p) and under-proposes a (q < p)",
                   highlight=1)


def rows(a: float, b: float) -> tuple:
    """A row over (a, b, c) from two sliders, as the Fractions they name (0.6 -> 3/5); c takes the rest,
    and b is cut to what a leaves when the two add up to more than 1."""
    a = Fraction(str(round(float(a), 2)))
    b = min(Fraction(str(round(float(b), 2))), 1 - a)
    return a, b, 1 - a - b


def draw_residual(p_a=0.6, p_b=0.3, q_a=0.5, q_b=0.4):
    """p and q, min(p, q), max(0, p − q) and the residual r for the rows the sliders give."""
    vocab = load_model("seed").vocab
    p, q = rows(p_a, p_b), rows(q_a, q_b)
    fig = residual_panels(vocab, p, q)
    text = ", ".join(f"{x} {exact_dec(v)}" for x, v in zip(vocab, p))
    text_q = ", ".join(f"{x} {exact_dec(v)}" for x, v in zip(vocab, q))
    fig.update_layout(title=dict(text=f"p: {text}; q: {text_q}<br>α = Σ min(p, q) = {exact_dec(alpha(p, q))}",
                                 x=0, xanchor="left", pad=dict(l=12), font_size=14), margin_t=130)
    return fig


def draw_reject():
    t = trace_round(load_model("seed"), ("a",), Chain(3), seed=7)
    return decision(t, len(t.u) - 1)


FIGURES = [
    LessonFigure("03-pq", draw_pq, height=360),
    LessonFigure("03-residual", draw_residual,
                 (Control("p_a", "p(a)", 0.0, 1.0, 0.05, 0.6), Control("p_b", "p(b)", 0.0, 1.0, 0.05, 0.3),
                  Control("q_a", "q(a)", 0.0, 1.0, 0.05, 0.5), Control("q_b", "q(b)", 0.0, 1.0, 0.05, 0.4)),
                 height=500),
    LessonFigure("03-reject", draw_reject, height=380),
]
