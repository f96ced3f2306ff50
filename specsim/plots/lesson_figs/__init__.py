"""The lessons' figures: one module per lesson (``l03.py`` for lesson 3), each a list ``FIGURES``.

A lesson shows a figure with a Markdown image on a line of its own, where
the text explains it::

    ![The residual is what p has left over where q falls short](figures/03-residual.svg)

The file stem (``03-residual``) names a ``LessonFigure`` registered here. The
Lessons page draws the live plotly figure in its place (with sliders for the
figure's ``controls``); a reader of the Markdown (GitHub, an editor, offline)
sees the static SVG under ``lessons/figures/``, which ``python -m
specsim.plots.lesson_figs`` regenerates from the same ``draw``. Each SVG
carries the hash of the figure it was drawn from, so a test fails when a
figure no longer matches what the code draws.

A figure is drawn by the charts of ``specsim.plots`` from the lesson's own
numbers (the same calls its doctests make): never a second copy of a chart.
"""
from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from typing import Callable


@dataclass(frozen=True)
class Control:
    """One slider of an interactive figure: ``draw``'s keyword ``name`` from ``low`` to ``high``."""
    name: str
    label: str
    low: float
    high: float
    step: float
    default: float


@dataclass(frozen=True)
class LessonFigure:
    """A lesson's figure: ``draw(**{c.name: c.default})`` is the static one; ``controls`` make it live."""
    name: str                       # the file stem, "03-residual": lesson number first
    draw: Callable                  # (**controls) -> plotly Figure
    controls: tuple = field(default_factory=tuple)

    def figure(self, **values):
        args = {c.name: c.default for c in self.controls}
        args.update(values)
        return self.draw(**args)


def registry() -> dict:
    """name -> LessonFigure, from every ``lNN`` module of this package."""
    out = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if not info.name.startswith("l"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for fig in getattr(module, "FIGURES", ()):
            if fig.name in out:
                raise ValueError(f"two lesson figures are named {fig.name!r}")
            out[fig.name] = fig
    return out
