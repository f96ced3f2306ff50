"""A lesson's figure as a value (``LessonFigure``, its sliders ``Control``) and the hash its SVG carries.

The lesson modules ``lNN.py`` import these from here (``from .figure import Control, LessonFigure``), not
from the package: the package imports every lesson module to build its registry, so a lesson module that
imported the package back would close an import cycle.
"""
from __future__ import annotations

import base64
import hashlib
import json
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
