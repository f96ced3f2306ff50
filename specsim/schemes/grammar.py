"""The one grammar for verification schemes, parsed in one place.

    chain:G                      token-wise verification of G drafts
    block:G                      block verification of the same chain
    tree:W1,W2,...               a draft tree, i.i.d. children
    tree:W1,W2,...:distinct      a draft tree, children without replacement
    chain:max=G,stop=T[,on=top|draft]
                                 a confidence-stopped chain: at most G drafts, stopping after
                                 the first whose confidence is below T (0 < T < 1, "0.4" or
                                 "2/5"); on=top (default) reads the drafter's top probability
                                 at that position, on=draft the drafted token's own
                                 (``specsim.schemes.adaptive``)
    tree:dynamic,budget=B,depth=D,topk=K
                                 EAGLE-2's dynamic tree: the B best of the candidates grown
                                 D levels deep from the K most probable tokens of the K best
                                 nodes per level, verified as point masses
                                 (``specsim.schemes.dynamic_tree``); 1 <= D, K <= B <= 64

G and the widths are ASCII digits (``specsim.parsing.parse_whole``). A later
scheme registers its keyword in one line (``register(MyScheme)``: ``kind:G`` then
reads as ``MyScheme(G)``), or adds key=value options to one. ``scheme.name``
writes the grammar back, so ``parse(s.name) == s``.

>>> parse("chain:4"), parse("block:4"), parse("tree:2,2,1"), parse("tree:3,1:distinct")
(Chain(4), Block(4), Tree((2, 2, 1), 'iid'), Tree((3, 1), 'distinct'))
>>> [s.name for s in parse_list("chain:4; tree:2,1:iid")]
['chain:4', 'tree:2,1']
>>> parse("chain:max=6,stop=2/5"), parse("tree:dynamic,budget=6,depth=3,topk=2")
(ConfidenceChain(6, '0.4', 'top'), DynamicTree(6, 3, 2))
>>> parse("chain:max=6,stop=1")
Traceback (most recent call last):
...
ValueError: scheme 'chain:max=6,stop=1': stop must be strictly between 0 and 1, got 1
>>> parse("chain:\\uff14")
Traceback (most recent call last):
...
ValueError: scheme 'chain:４': G '４' is not a whole number (U+FF14 FULLWIDTH DIGIT FOUR is not an ASCII digit)
"""
from __future__ import annotations

from ..limits import LIMITS
from ..parsing import parse_whole
from .base import Scheme
from .block import Block
from .adaptive import ConfidenceChain
from .chain import Chain
from .dynamic_tree import DynamicTree, check_whole
from .tree import DRAFTS, Tree, parse_shape

KINDS = {}  # grammar keyword -> scheme class: kind:G reads as KINDS[kind](G) (a tree reads its widths)


def register(cls):
    """Add a scheme class to the grammar under its ``kind``; ``kind:G`` then reads as ``cls(G)``."""
    KINDS[cls.kind] = cls
    return cls


register(Chain)
register(Block)
register(Tree)
HELP = ("chain:G, block:G (G from 1 to {g}), tree:W1,W2,...[:iid|distinct], chain:max=G,stop=T[,on=top|draft], "
        "tree:dynamic,budget=B,depth=D,topk=K")


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
    if "=" in rest or rest.startswith("dynamic"):
        return _options(kind, rest)
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


# key=value schemes: the keyword, the options it takes (required ones first) and how each is read
OPTIONS = {"chain": ("max", "stop"), "tree:dynamic": ("budget", "depth", "topk")}




def _options(kind, rest):
    """chain:max=G,stop=T[,on=...] and tree:dynamic,budget=B,depth=D,topk=K."""
    items = rest.split(",")
    if kind == "tree":
        if items[0] != "dynamic":
            raise ValueError(f"a tree with options starts with 'dynamic': write {grammar_help()}")
        kind, items = "tree:dynamic", items[1:]
    if kind not in OPTIONS:
        raise ValueError(f"{kind} takes no options: write {grammar_help()}")
    allowed = OPTIONS[kind] + (("on",) if kind == "chain" else ())
    given = {}
    for item in items:
        key, eq, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not eq or not value:
            raise ValueError(f"option {item[:20]!r} is not key=value: write {grammar_help()}")
        if key not in allowed:
            raise ValueError(f"unknown option {key[:20]!r} for {kind}: use {', '.join(allowed)}")
        if key in given:
            raise ValueError(f"option {key!r} is given twice")
        given[key] = value
    missing = [k for k in OPTIONS[kind] if k not in given]
    if missing:
        raise ValueError(f"{kind} needs {', '.join(missing)}: write {grammar_help()}")
    whole = {k: parse_whole(v, k, noun="a whole number") for k, v in given.items() if k not in ("stop", "on")}
    if kind == "chain":
        return ConfidenceChain(check_whole(whole["max"], "max", 1, LIMITS.gamma), given["stop"], given.get("on", "top"))
    return DynamicTree(whole["budget"], whole["depth"], whole["topk"])


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


def family(text):
    """The scheme class a bare keyword names when its γ can be searched ("chain" -> ``Chain``,
    "block" -> ``Block``: every value drafts a fixed γ), else None."""
    cls = KINDS.get(str(text).strip())
    return cls if cls is not None and cls.fixed_gamma else None


def as_scheme(value):
    """A scheme from a scheme, a grammar string, or an int G (shorthand for ``chain:G``)."""
    if isinstance(value, Scheme):
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
