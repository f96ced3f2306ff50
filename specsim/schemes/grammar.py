"""The one grammar for verification schemes, parsed in one place.

    chain:G                      token-wise verification of G drafts
    block:G                      block verification of the same chain
    tree:W1,W2,...               a draft tree, i.i.d. children
    tree:W1,W2,...:distinct      a draft tree, children without replacement

G and the widths are ASCII digits (``specsim.bounds.parse_whole``). A later
scheme adds a keyword to ``KINDS``. ``scheme.name`` writes the grammar back,
so ``parse(s.name) == s``.

>>> parse("chain:4"), parse("block:4"), parse("tree:2,2,1"), parse("tree:3,1:distinct")
(Chain(4), Block(4), Tree((2, 2, 1), 'iid'), Tree((3, 1), 'distinct'))
>>> [s.name for s in parse_list("chain:4; tree:2,1:iid")]
['chain:4', 'tree:2,1']
>>> parse("chain:\\uff14")
Traceback (most recent call last):
...
ValueError: scheme 'chain:４': G '４' is not a whole number (U+FF14 FULLWIDTH DIGIT FOUR is not an ASCII digit)
"""
from __future__ import annotations

from ..bounds import LIMITS, parse_whole
from .block import Block
from .chain import Chain
from .tree import DRAFTS, Tree, parse_shape

KINDS = {"chain": Chain, "block": Block, "tree": Tree}
HELP = "chain:G, block:G (G from 1 to {g}), tree:W1,W2,...[:iid|distinct]"


def grammar_help() -> str:
    return HELP.format(g=LIMITS.gamma)


def _parse(text: str):
    kind, _, rest = text.partition(":")
    if not text:
        raise ValueError(f"no scheme given: write {grammar_help()}")
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind[:20]!r}: write {grammar_help()}")
    if not rest:
        raise ValueError(f"{kind} needs {'its widths' if kind == 'tree' else 'its G'}: write {grammar_help()}")
    if kind == "tree":
        shape, _, mode = rest.partition(":")
        mode = mode or "iid"
        if mode not in DRAFTS:
            raise ValueError(f"drafts must be {' or '.join(DRAFTS)}, got {mode[:20]!r}")
        return Tree(parse_shape(shape), mode)
    g = parse_whole(rest, "G", noun="a whole number")
    if not 1 <= g <= LIMITS.gamma:
        raise ValueError(f"write {kind}:G with G from 1 to {LIMITS.gamma}, got {g}")
    return KINDS[kind](g)


def parse(text):
    """'tree:2,2,1' -> Tree((2, 2, 1), 'iid'); a one-line ValueError naming the bad scheme."""
    text = str(text).strip()
    try:
        return _parse(text)
    except ValueError as e:
        raise ValueError(f"scheme {text[:60]!r}: {e}") from None


def parse_list(text) -> list:
    """'chain:4;block:4;tree:2,2,1' -> [Chain(4), Block(4), Tree(...)]; no scheme twice."""
    out = [parse(item) for item in str(text).split(";")]
    if len({s.name for s in out}) < len(out):
        raise ValueError(f"schemes {str(text)[:60]!r}: a scheme is listed twice")
    return out


def as_scheme(value):
    """A scheme from a scheme, a grammar string, or an int G (shorthand for ``chain:G``)."""
    if isinstance(value, (Chain, Tree)):
        return value
    if isinstance(value, str):
        return parse(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return Chain(value)
    raise ValueError(f"not a verification scheme: {value!r} (write {grammar_help()})")


def from_flags(gamma=None, verify: str = "token", tree=None, drafts: str = "iid"):
    """The scheme the historical flags describe: ``--gamma G [--verify block]`` or ``--tree W [--drafts D]``."""
    if tree is not None:
        if verify == "block":
            raise ValueError("--tree and --verify block do not combine (a tree is verified node by node)")
        shape = tree if isinstance(tree, tuple) else parse_shape(tree)
        return Tree(shape, drafts)
    return Block(gamma) if verify == "block" else Chain(gamma)
