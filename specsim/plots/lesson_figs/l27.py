"""Lesson 27's figure: after "a", the target's row over its own tokens (a, b, ab) beside the drafter's
law of the first target token its text is cut into (``retokenize.drafter_token_row``): the q a drafter
speaking the target's tokens would hand the rule, which the point mass does without.

``charts.pq_bars`` over the lesson's own pair, ``retokenize.example()``.
"""
from __future__ import annotations

from ...labs import retokenize
from .. import charts
from .figure import LessonFigure

CONTEXT = "a"


def first_token():
    pair = retokenize.example()
    fig = charts.pq_bars(pair.target.vocab, pair.target.row(CONTEXT), retokenize.drafter_token_row(pair, CONTEXT),
                         title="After \"a\": the target's p and the drafter's law of the first re-cut token")
    fig.data[1].name = "q: the drafter's first re-cut token"
    return fig


FIGURES = [
    LessonFigure("27-first-token", first_token),
]
