"""Lesson 23's figures: the Serving page's speedup heatmap over batch x γ for the lesson's pair (a
Llama-3-8B-shaped target, a Llama-3.2-1B-shaped drafter, an H100 SXM, bf16, α = 0.8), at a short context
(a crossover inside memory) and at a long one (none).

``serving.speedup_heatmap`` over ``serving_view.grid``: the same roofline numbers the lesson's doctests
print with ``crossover_batch``, ``max_batch`` and ``serving_table``.
"""
from __future__ import annotations

from ...views import serving_view
from .. import serving
from .figure import LessonFigure


def _heatmap(context: int):
    fig = serving.speedup_heatmap(serving_view.grid(serving_view.Settings(context=context, alpha=0.8)))
    fig.update_layout(title_text=f"Speedup over batch × γ at context {context:,}, α = 0.8 (★ best γ of each batch)")
    return fig


def short_context():
    return _heatmap(128)


def long_context():
    return _heatmap(1024)


FIGURES = [
    LessonFigure("23-crossover", short_context, height=480),
    LessonFigure("23-long-context", long_context, height=480),
]
