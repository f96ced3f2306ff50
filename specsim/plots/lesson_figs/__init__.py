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

A figure is drawn by the charts of ``specsim.plots`` from the lesson's own
numbers (the same calls its doctests make): never a second copy of a chart.
"""
from __future__ import annotations

import base64
import hashlib
import importlib
import json
import pkgutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

FIGURES_DIR = Path(__file__).resolve().parents[3] / "lessons" / "figures"
WIDTH, HEIGHT = 760, 420            # the static figure's size in pixels: a lesson's reading width
HASH_MARK = "specsim-figure"        # the SVG's comment: <!-- specsim-figure NAME sha256=HEX -->
REGENERATE = "python -m specsim.plots.lesson_figs"


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
    width: int = WIDTH              # the static SVG's size (the live figure fills the page's width)
    height: int = HEIGHT

    @property
    def lesson(self) -> int:
        """The lesson the figure belongs to: the number its name starts with."""
        return int(self.name.split("-", 1)[0])

    def figure(self, **values):
        args = {c.name: c.default for c in self.controls}
        args.update(values)
        return self.draw(**args)


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


def _plain(value):
    """``value`` as JSON-ready Python with floats cut to 12 significant digits: numpy arrays as lists,
    plotly's typed arrays ({"dtype", "bdata"}) decoded, so the same figure gives the same JSON whatever
    numpy or plotly version encodes it (and a last-bit difference in a float does not change it)."""
    if isinstance(value, dict):
        if set(value) >= {"dtype", "bdata"}:
            flat = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
            shape = value.get("shape")
            if isinstance(shape, str):
                shape = [int(n) for n in shape.split(",")]
            return _plain(flat.reshape(shape) if shape else flat)
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return _plain(value.tolist())
    if isinstance(value, np.generic):
        return _plain(value.item())
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return value
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return None  # as plotly's JSON writes them
        return float(f"{value:.12g}")
    return str(value)


def canonical_json(fig) -> str:
    """The figure's data and layout as one JSON text (keys sorted), WITHOUT the template: what the
    code draws, not the defaults the installed plotly fills in."""
    spec = fig.to_plotly_json() if hasattr(fig, "to_plotly_json") else dict(fig)
    layout = {k: v for k, v in (spec.get("layout") or {}).items() if k != "template"}
    return json.dumps(_plain({"data": spec.get("data") or [], "layout": layout}), sort_keys=True,
                      separators=(",", ":"), ensure_ascii=True)


def figure_hash(fig) -> str:
    """sha256 (hex) of ``canonical_json(fig)``: the hash a figure's SVG carries."""
    return hashlib.sha256(canonical_json(fig).encode("ascii")).hexdigest()


def svg_path(name: str) -> Path:
    """Where the static figure ``name`` lives: lessons/figures/NAME.svg."""
    return FIGURES_DIR / f"{name}.svg"


def stamp(name: str, digest: str) -> str:
    """The XML comment written at the top of an SVG: the figure's name and its hash."""
    return f"<!-- {HASH_MARK} {name} sha256={digest} (regenerate: {REGENERATE} {name}) -->"


def svg_hash(text: str) -> str | None:
    """The hash an SVG's stamp carries, or None when it has none."""
    import re

    m = re.search(rf"<!-- {HASH_MARK} \S+ sha256=([0-9a-f]{{64}})", text[:2000])
    return m.group(1) if m else None


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
