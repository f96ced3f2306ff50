"""The colours of specsim, defined once: figures (``specsim.plots.charts*``) and app pages import them.

p (target) blue, q (drafter) orange, min(p, q) and accepted drafts green,
the residual and rejections red, the bonus purple, neutral grey. Light and
dark variants (token backgrounds, text on them) are mixed from these, never
typed in again.

Example
-------
>>> tint("#000000", 0.5)
'#808080'
>>> shade(RESIDUAL_COLOR, 0)
'#c8443f'
"""
from __future__ import annotations

P_COLOR = "#2f6db5"
Q_COLOR = "#e8892b"
OVERLAP_COLOR = "#3f9b58"
RESIDUAL_COLOR = "#c8443f"
BONUS_COLOR = "#8455b8"
GREY = "#9aa0a6"
DARK_GREY = "#6b6b6b"
CYAN = "#17becf"
PANEL = "#eef0f3"  # empty cells, hidden attention, context tokens
MUTED = "#d9d9d9"  # "slower than plain decoding" cells
PREFIX = "#c9ced6"  # the cached prompt in the KV-cache figure
WHITE = "#ffffff"
BLACK = "#000000"


def mix(colour: str, other: str, t: float) -> str:
    """``colour`` moved a fraction ``t`` (0..1) of the way towards ``other``, as "#rrggbb"."""
    if not 0 <= t <= 1:
        raise ValueError(f"t must be in [0, 1], got {t}")
    a = [int(colour[i:i + 2], 16) for i in (1, 3, 5)]
    b = [int(other[i:i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(x + (y - x) * t):02x}" for x, y in zip(a, b))


def tint(colour: str, t: float = 0.78) -> str:
    """A light version of ``colour`` (mixed with white): backgrounds behind text."""
    return mix(colour, WHITE, t)


def shade(colour: str, t: float = 0.4) -> str:
    """A dark version of ``colour`` (mixed with black): text on a light tint."""
    return mix(colour, BLACK, t)


