"""The --schemes grammar of the tiny GPT's bench, parsed without torch (the CLI checks it before loading).

A scheme is ``chain:G`` (token-wise verification of G drafts), ``block:G``
(block verification of the same chain) or ``tree:W1,W2,...[:iid|distinct]``
(a draft tree). G and the widths are ASCII digits (``specsim.bounds.parse_whole``).

>>> [s.name for s in parse_schemes("chain:4; block:4; tree:2,2,1; tree:3,1:distinct")]
['chain:4', 'block:4', 'tree:2,2,1', 'tree:3,1:distinct']
>>> [s.drafted_tokens for s in parse_schemes("chain:4;tree:2,2,1")]
[4, 10]
>>> parse_schemes("chain:\\uff14")
Traceback (most recent call last):
...
ValueError: scheme 'chain:４': G '４' is not a whole number (U+FF14 FULLWIDTH DIGIT FOUR is not an ASCII digit)
"""
from __future__ import annotations

from dataclasses import dataclass

from ..bounds import LIMITS, parse_whole
from ..schemes.tree import DRAFTS, drafted, parse_shape
from ..schemes import masks

KINDS = ("chain", "block", "tree")
SCHEMES_HELP = "schemes separated by ';': chain:G, block:G (G from 1 to 64), tree:W1,W2,...[:iid|distinct]"


@dataclass(frozen=True)
class Scheme:
    kind: str  # chain, block or tree
    widths: tuple  # (1,) * G for a chain
    drafts: str = "iid"  # trees only

    @property
    def name(self) -> str:
        if self.kind != "tree":
            return f"{self.kind}:{len(self.widths)}"
        return f"tree:{','.join(map(str, self.widths))}" + (":distinct" if self.drafts == "distinct" else "")

    @property
    def drafted_tokens(self) -> int:
        return drafted(self.widths)

    @property
    def parents(self) -> list:
        return masks.shape_parents(self.widths)


def _scheme(item: str, drafts: str) -> Scheme:
    kind, _, rest = item.partition(":")
    if kind not in KINDS or not rest:
        raise ValueError(f"write {SCHEMES_HELP}")
    if kind == "tree":
        shape, _, mode = rest.partition(":")
        mode = mode or drafts
        if mode not in DRAFTS:
            raise ValueError("drafts must be iid or distinct")
        return Scheme("tree", parse_shape(shape), mode)
    g = parse_whole(rest, "G", noun="a whole number")
    if not 1 <= g <= LIMITS.gamma:
        raise ValueError(f"write chain:G or block:G with G from 1 to {LIMITS.gamma}, got {g}")
    return Scheme(kind, (1,) * g)


def parse_schemes(text: str, drafts: str = "iid") -> list:
    """'chain:4;block:4;tree:2,2,1' -> [Scheme, ...]; a one-line ValueError naming a bad item."""
    out = []
    for item in str(text).split(";"):
        item = item.strip()
        try:
            out.append(_scheme(item, drafts))
        except ValueError as e:
            raise ValueError(f"scheme {item[:60]!r}: {e}") from None
    if len({s.name for s in out}) < len(out):
        raise ValueError(f"schemes {str(text)[:60]!r}: a scheme is listed twice")
    return out

