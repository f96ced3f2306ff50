"""Lesson 10's figure: the verification mask, lower-right (correct) above upper-left (``is_causal=True``).

The lesson's numbers: ``masks.lower_right_grid(5, 3)`` and ``masks.upper_left_grid(5, 3)``, 5 cached keys and
γ = 3 drafts; the sliders change both (at 0 cached keys the two masks are the same).
"""
from __future__ import annotations

from ...schemes.masks import lower_right_grid, upper_left_grid
from .. import gpt
from .figure import Control, LessonFigure


def masks(n: int = 5, gamma: int = 3):
    """Both alignments for n cached keys and γ + 1 verification queries (the last token, then the drafts)."""
    n, gamma = int(n), int(gamma)
    labels = ["last token"] + [f"draft {i}" for i in range(1, gamma + 1)]
    return gpt.mask_pair(lower_right_grid(n, gamma), upper_left_grid(n, gamma), n, query_labels=labels)


FIGURES = [
    LessonFigure("10-masks", masks, (Control("n", "n (cached keys)", 0, 12, 1, 5),
                                     Control("gamma", "γ (drafts)", 1, 6, 1, 3)), height=624),
]
