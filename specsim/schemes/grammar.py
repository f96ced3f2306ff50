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

G and the widths are ASCII digits (``specsim.parsing.parse_whole``). Each
family declares its grammar as data (``Scheme.keyword``, ``form``, ``tag`` and
``params``, a schema of ``base.Param``), and this module reads every family of
the one registry (``KINDS``) from it: ``parse``, ``grammar_help`` (the help
above, which the CLI's ``--scheme`` shows) and the error messages. A new family
is a class and ``register(MyScheme)`` at the end of its module: ``kind:G`` then
reads as ``MyScheme(G)``. ``scheme.name`` writes the grammar back, so
``parse(s.name) == s``.

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

from ..parsing import parse_whole
from .base import KINDS, Scheme, register
from .chain import Chain
from .dynamic_tree import check_whole
from .tree import Tree, parse_shape

__all__ = ["KINDS", "as_scheme", "example", "families", "family", "from_flags", "grammar_help", "parse", "parse_list",
           "register"]


def families() -> dict:
    """Every registered family: its kind -> its class, in registration order (the one registry, ``KINDS``)."""
    return dict(KINDS)


def grammar_help() -> str:
    """Every family's syntax line, in registration order; a run of lines with the same ranges states them once:
    ``chain:G, block:G (G from 1 to 64), tree:W1,W2,...[:iid|distinct], ...``."""
    classes = list(KINDS.values())
    out = []
    for i, cls in enumerate(classes):
        note, after = cls.syntax_note(), classes[i + 1].syntax_note() if i + 1 < len(classes) else None
        out.append(cls.syntax() + (f" ({note})" if note and note != after else ""))
    return ", ".join(out)


def _forms(keyword: str) -> dict:
    """The families written with ``keyword``: {"positional": cls, "options": cls} (either may be missing)."""
    return {cls.form: cls for cls in KINDS.values() if cls.keyword_of() == keyword}


def _parse(text: str):
    kind, _, rest = text.partition(":")
    if not text:
        raise ValueError(f"no scheme given: write {grammar_help()}")
    forms = _forms(kind)
    if not forms:
        raise ValueError(f"unknown kind {kind[:20]!r}: write {grammar_help()}")
    if not rest:
        first = (forms.get("positional") or forms["options"]).params[0].name
        raise ValueError(f"{kind} needs its {first}: write {grammar_help()}")
    tags = [cls.tag for cls in KINDS.values() if cls.tag]
    if "=" in rest or any(rest.startswith(tag) for tag in tags):
        return _options(kind, forms.get("options"), rest)
    return _positional(kind, forms.get("positional"), rest)


def _positional(kind: str, cls, rest: str):
    """kind:V1[:V2...]: the class's params in order, a choice checked before any value is read."""
    if cls is None:
        raise ValueError(f"{kind} takes options only: write {grammar_help()}")
    texts = rest.split(":", len(cls.params) - 1)
    given = dict(zip((p.name for p in cls.params), texts))
    values = {}
    for p in cls.params:
        if p.type == "choice":
            values[p.name] = _choice(p, given.get(p.name) or p.default)
    for p in cls.params:
        if p.type == "whole":
            v = values[p.name] = parse_whole(given[p.name], p.name, noun="a whole number")
            hi = p.upper(values)
            if not p.low <= v <= hi:
                raise ValueError(f"write {kind}:{p.name} with {p.name} from {p.low} to {hi}, got {v}")
        elif p.type == "widths":
            values[p.name] = parse_shape(given[p.name])
        elif p.type == "fraction":
            values[p.name] = given[p.name]
    return cls.from_params(values)


def _choice(p, value):
    if value not in p.choices:
        raise ValueError(f"{p.name} must be {' or '.join(p.choices)}, got {str(value)[:20]!r}")
    return value


def _options(kind: str, cls, rest: str):
    """kind:[tag,]key=value,...: the class's params by name (required ones first), each read by its type."""
    items = rest.split(",")
    if cls is not None and cls.tag:
        if items[0] != cls.tag:
            raise ValueError(f"a {kind} with options starts with {cls.tag!r}: write {grammar_help()}")
        kind, items = f"{kind}:{cls.tag}", items[1:]
    if cls is None:
        raise ValueError(f"{kind} takes no options: write {grammar_help()}")
    params = {p.name: p for p in cls.params}
    allowed = tuple(params)
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
    missing = [k for k, p in params.items() if p.default is None and k not in given]
    if missing:
        raise ValueError(f"{kind} needs {', '.join(missing)}: write {grammar_help()}")
    values = {k: parse_whole(v, k, noun="a whole number") if params[k].type == "whole" else v for k, v in given.items()}
    for p in cls.params:  # ranges and choices in the schema's order; a fraction is checked by the scheme
        value = values.get(p.name, p.default)
        if p.type == "whole":
            value = check_whole(value, p.name, p.low, p.upper(values))
        elif p.type == "choice":
            value = _choice(p, value)
        elif p.type == "widths":
            value = parse_shape(value)
        values[p.name] = value
    return cls.from_params(values)


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


def write(cls, values: dict) -> str:
    """The grammar string of family ``cls`` with these parameter values (by name; text or numbers): what a
    picker assembles from its widgets, read back with ``parse``. An optional value equal to its default is left out.

    >>> write(KINDS["tree"], {"widths": "2,1", "drafts": "distinct"}), write(KINDS["confidence"], {"max": 4, "stop": "0.4", "on": "top"})
    ('tree:2,1:distinct', 'chain:max=4,stop=0.4')
    """
    key = cls.keyword_of()
    if cls.form == "options":
        items = [f"{p.name}={str(values[p.name]).strip()}" for p in cls.params
                 if p.default is None or values.get(p.name, p.default) != p.default]
        return f"{key}:" + ",".join(([cls.tag] if cls.tag else []) + items)
    texts = [str(values.get(p.name, p.default)).strip() for p in cls.params]
    while len(texts) > 1 and cls.params[len(texts) - 1].default is not None \
            and texts[-1] == str(cls.params[len(texts) - 1].default):
        texts.pop()  # a trailing optional value at its default (tree:2,1, not tree:2,1:iid)
    return f"{key}:" + ":".join(texts)


def example(cls):
    """Family ``cls``'s scheme with every parameter at a picker's starting value (its default where it has
    none): the scheme a page shows first, and what a caller asks when it asks a family rather than a value.

    >>> example(KINDS["chain"]).name, example(KINDS["dynamic"]).name
    ('chain:3', 'tree:dynamic,budget=6,depth=3,topk=2')
    """
    return parse(write(cls, {p.name: p.default if p.start is None else p.start for p in cls.params}))


def family(text):
    """The scheme class a bare keyword names when its γ can be searched ("chain" -> ``Chain``,
    "block" -> ``Block``: every value drafts a fixed γ, the reference of the i.i.d. formula), else None."""
    cls = KINDS.get(str(text).strip())
    return cls if cls is not None and cls._iid and cls.form == "positional" else None


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
    from .block import Block
    return Block(gamma) if verify == "block" else Chain(gamma)
