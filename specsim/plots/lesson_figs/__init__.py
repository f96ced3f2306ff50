"""The lessons' figures: one module per lesson (``l03.py`` for lesson 3), each a list ``FIGURES``.

A lesson shows a figure with a Markdown image on a line of its own, where
the text explains it::

    ![The residual is what p has left over where q falls short](figures/03-residual.svg)

The file stem (``03-residual``) names a ``LessonFigure`` registered here. The
Lessons page draws the live plotly figure in its place (with sliders for the
figure's ``controls``); a reader of the Markdown (GitHub, an editor, offline)
sees the static SVG under ``lessons/figures/``, which ``python -m
specsim.plots.lesson_figs`` regenerates from the same ``draw``. Each SVG
carries the hash of the figure it was drawn from (``figure_hash``: the
sha256 of the figure's data and layout, without plotly's template), so a test
fails when a figure no longer matches what the code draws.

Regenerate a lesson's figures (names or prefixes; all when none is given)::

    python -m specsim.plots.lesson_figs 02- 03-residual
    python -m specsim.plots.lesson_figs 03- --png     # also a PNG under /tmp to look at

A lesson module imports its building blocks from ``figure``::

    from .figure import Control, LessonFigure

    FIGURES = [LessonFigure("03-residual", draw, (Control("p_a", "p(a)", 0.0, 1.0, 0.05, 0.6),))]

A figure is drawn by the charts of ``specsim.plots`` from the lesson's own
numbers (the same calls its doctests make): never a second copy of a chart.
"""
from __future__ import annotations

import importlib
import pkgutil

from .figure import (FIGURES_DIR, HASH_MARK, HEIGHT, REGENERATE, WIDTH, Control, LessonFigure,  # noqa: F401
                     canonical_json, figure_hash, stamp, svg_hash, svg_path)


def registry(lessons=None) -> dict:
    """name -> LessonFigure, from every ``lNN`` module of this package (only lessons ``lessons``, a set of
    numbers, when given: the generator then imports no other lesson's module)."""
    out = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if not (info.name.startswith("l") and info.name[1:].isdigit()):
            continue
        if lessons is not None and int(info.name[1:]) not in lessons:
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for fig in getattr(module, "FIGURES", ()):
            if fig.name in out:
                raise ValueError(f"two lesson figures are named {fig.name!r}")
            out[fig.name] = fig
    return out


def lessons_named(names) -> set | None:
    """The lesson numbers that names or prefixes ("03-", "03-residual", "03") point to, or None (all) when
    one of them does not start with two digits (or none is given)."""
    numbers = set()
    for name in names or ():
        if len(name) < 2 or not name[:2].isdigit():
            return None
        numbers.add(int(name[:2]))
    return numbers or None


def select(names, figures: dict) -> list:
    """The registered figures that ``names`` (exact names or prefixes such as "03-") pick, in order;
    all when ``names`` is empty. An unknown name raises ValueError with one line."""
    if not names:
        return list(figures)
    picked = []
    for wanted in names:
        hits = [n for n in figures if n == wanted] or [n for n in figures if n.startswith(wanted)]
        if not hits:
            known = ", ".join(sorted(figures)) or "none yet"
            raise ValueError(f"no lesson figure named or starting with {wanted!r} (registered: {known})")
        picked += [n for n in hits if n not in picked]
    return picked
