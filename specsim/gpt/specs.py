"""Names parsed without torch: drafters (specs) and rules, checked by the CLI and the app before a model loads.

>>> parse_spec("lookup:3"), parse_spec("early-exit:2+head"), parse_spec("trained"), parse_spec("eagle")
(('lookup', 3), ('early-exit+head', 2), ('trained', None), ('eagle', None))
>>> parse_spec("medusa")
Traceback (most recent call last):
...
ValueError: unknown drafter 'medusa'; choose distilled, trained, eagle, lookup:N, early-exit:K or early-exit:K+head
"""
from __future__ import annotations

import re

SPECS = "distilled, trained, eagle, lookup:N, early-exit:K or early-exit:K+head"
GALLERY = ("distilled", "trained", "eagle", "lookup:3", "early-exit:2", "early-exit:2+head")  # the gallery's defaults


def parse_spec(spec: str) -> tuple[str, int | None]:
    """'distilled' -> ('distilled', None); 'lookup:3' -> ('lookup', 3);
    'early-exit:2+head' -> ('early-exit+head', 2); bad -> ValueError (one line)."""
    if spec in ("distilled", "trained", "eagle"):
        return spec, None
    m = re.fullmatch(r"(lookup|early-exit):([0-9]{1,6})|early-exit:([0-9]{1,6})\+head", spec or "")  # ASCII digits
    if not m:
        raise ValueError(f"unknown drafter {str(spec)[:60]!r}; choose {SPECS}")
    if m.group(3):
        return "early-exit+head", int(m.group(3))
    return m.group(1), int(m.group(2))


def rule_named(name):
    """A rule by its name in ``specsim.labs.pitfalls`` (chain rules and tree rules) or in the
    implementations gallery (``specsim.labs.implementations``: the entry's rule), or a rule object as is.

    A pitfall that changes the models instead of the rule (p or q at another
    temperature) is refused in one line: on the real model the rows are the models'.

    >>> rule_named("vllm").name, rule_named("eagle2").name
    ('vllm', 'point-mass-tree')
    """
    if not isinstance(name, str):
        return name
    from ..labs import implementations, pitfalls
    from ..transforms import identity
    if name in implementations.IMPLEMENTATIONS:
        return implementations.IMPLEMENTATIONS[name].rule
    table = {**pitfalls.PITFALLS, **pitfalls.TREE_PITFALLS}
    if name not in table:
        raise ValueError(f"unknown rule {name[:60]!r}; known: {', '.join([*table, *implementations.IMPLEMENTATIONS])}")
    if table[name].speculative is not identity:
        raise ValueError(f"rule {name!r} changes the models (p or q at another temperature), not the round's "
                         "rule: it runs on the toy models only (specsim sample --rule)")
    return table[name].rule


def rule_and_scheme(name, scheme, given: bool = True) -> tuple:
    """(the rule called ``name``, the scheme it runs on), checked together (one-line ValueError).

    A gallery entry verifies its own kind of scheme (``implementations.scheme_for``): a
    chain entry any chain, llama.cpp's entry its confidence stop on at most G drafts, a tree
    entry a tree in its drafting mode; a scheme of another kind is refused. ``given=False``
    (the command's default scheme, not the user's): a tree entry runs on its own tree.

    >>> from specsim.schemes import Chain
    >>> [s.name for _, s in (rule_and_scheme(n, Chain(4), False) for n in ("vllm", "llama-cpp", "eagle2"))]
    ['chain:4', 'chain:max=4,stop=0.75', 'tree:2,1:distinct']
    >>> rule_and_scheme("eagle2", Chain(4))
    Traceback (most recent call last):
    ...
    ValueError: eagle2 verifies a tree, not chain:4: write tree:W1,W2
    """
    from ..labs import implementations
    entry = implementations.IMPLEMENTATIONS.get(name) if isinstance(name, str) else None
    if entry is not None:
        scheme = entry.scheme if entry.scheme.branches and not given else implementations.scheme_for(entry, scheme)
    rule = rule_named(name)
    scheme.check_rule(rule)
    return rule, scheme
