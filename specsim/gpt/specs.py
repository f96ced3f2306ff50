"""Names parsed without torch: drafters (specs) and rules, checked by the CLI and the app before a model loads.

>>> parse_spec("lookup:3"), parse_spec("early-exit:2+head"), parse_spec("trained")
(('lookup', 3), ('early-exit+head', 2), ('trained', None))
>>> parse_spec("medusa")
Traceback (most recent call last):
...
ValueError: unknown drafter 'medusa'; choose distilled, trained, lookup:N, early-exit:K or early-exit:K+head
"""
from __future__ import annotations

import re

SPECS = "distilled, trained, lookup:N, early-exit:K or early-exit:K+head"
GALLERY = ("distilled", "trained", "lookup:3", "early-exit:2", "early-exit:2+head")  # the gallery's defaults


def parse_spec(spec: str) -> tuple[str, int | None]:
    """'distilled' -> ('distilled', None); 'lookup:3' -> ('lookup', 3);
    'early-exit:2+head' -> ('early-exit+head', 2); bad -> ValueError (one line)."""
    if spec in ("distilled", "trained"):
        return spec, None
    m = re.fullmatch(r"(lookup|early-exit):([0-9]{1,6})|early-exit:([0-9]{1,6})\+head", spec or "")  # ASCII digits
    if not m:
        raise ValueError(f"unknown drafter {str(spec)[:60]!r}; choose {SPECS}")
    if m.group(3):
        return "early-exit+head", int(m.group(3))
    return m.group(1), int(m.group(2))


def rule_named(name):
    """A rule by its name in ``specsim.labs.pitfalls`` (chain rules and tree rules), or a rule object as is.

    A pitfall that changes the models instead of the rule (p or q at another
    temperature) is refused in one line: on the real model the rows are the models'.
    """
    if not isinstance(name, str):
        return name
    from ..labs import pitfalls
    from ..transforms import identity
    table = {**pitfalls.PITFALLS, **pitfalls.TREE_PITFALLS}
    if name not in table:
        raise ValueError(f"unknown rule {name[:60]!r}; known: {', '.join(table)}")
    if table[name].speculative is not identity:
        raise ValueError(f"rule {name!r} changes the models (p or q at another temperature), not the round's "
                         "rule: it runs on the toy models only (specsim sample --rule)")
    return table[name].rule


def check_rule(scheme, rule) -> None:
    """A one-line refusal of a rule the scheme cannot run (a tree takes tree rules, a chain chain rules)."""
    from ..rule import CORRECT, RoundRule
    from ..schemes import Tree, TreeRule
    tree = isinstance(scheme, Tree)
    if rule is CORRECT or rule is None:
        return
    if tree and not isinstance(rule, TreeRule):
        raise ValueError(f"rule {rule.name!r} is a chain rule; a tree takes the correct rule or a tree rule")
    if not tree and not isinstance(rule, RoundRule):
        raise ValueError(f"rule {getattr(rule, 'name', rule)!r} is a tree rule; a {scheme.kind} takes a chain rule")
    if scheme.kind == "block":
        raise ValueError(f"block verification has its own rule; got rule {rule.name!r} (only the correct rule)")
