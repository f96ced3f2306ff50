"""Names parsed without torch: drafters (specs) and rules, checked by the CLI and the app before a model loads.

``DRAFTERS`` is the one registry of drafters (``DrafterEntry``); ``register`` declares a new one.

>>> parse_spec("lookup:3"), parse_spec("early-exit:2+head"), parse_spec("trained"), parse_spec("eagle")
(('lookup', 3), ('early-exit+head', 2), ('trained', None), ('eagle', None))
>>> parse_spec("medusa")
Traceback (most recent call last):
...
ValueError: unknown drafter 'medusa'; choose distilled, trained, eagle, lookup:N, early-exit:K or early-exit:K+head
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Callable, NamedTuple


@dataclass(frozen=True)
class DrafterEntry:
    """One drafter, declared once: everything else (parsing, ``--draft`` help, the Tiny GPT page's options
    and help, the gallery's defaults, the tree refusal, the tests' list) is derived from these entries.

    ``name``: what ``parse_spec`` returns as the kind; ``form``: how a spec is written, ``param`` (a
    capital letter, or None) standing for a whole number >= 1 ("lookup:N", "early-exit:K+head");
    ``build``: how a drafter is built, ``build(spec, target, shelf) -> gpt.drafters.Drafter`` (``spec``:
    a ``Spec``; ``shelf``: the shipped weights, ``gpt.api.Shelf``), given as "module:function" (imported
    only when a drafter is built, so parsing stays torch-free) or as the function itself;
    ``help``: the words after the form in ``--draft``'s help (may be empty); ``about``: the page's one
    line on the offered spec (``{n}``: its parameter); ``tree``: it drafts a tree (fixed or dynamic) as
    well as a chain; ``page``: the spec the Tiny GPT page and the drafter gallery offer (None: not
    offered); ``batched``: its model is a small GPT of its own (token ids in, rows out, its own KV
    cache, the ``tiny-draft`` shape), which ``gpt serve-bench`` runs batched beside the target."""

    name: str
    form: str
    build: str | Callable
    help: str = ""
    about: str = ""
    tree: bool = True
    page: str | None = None
    param: str | None = None
    batched: bool = False

    def match(self, text: str) -> int | None | bool:
        """The parameter of ``text`` when it is written in this form (None for a form without one),
        False when it is not."""
        if self.param is None:
            return None if text == self.form else False
        cut = self.form.index(":" + self.param) + 1
        head, tail = self.form[:cut], self.form[cut + len(self.param):]
        digits = text[len(head):len(text) - len(tail)] if text.startswith(head) and text.endswith(tail) else ""
        if not (1 <= len(digits) <= 6 and digits.isascii() and digits.isdigit() and len(text) > len(head + tail)):
            return False
        return int(digits)

    def builder(self) -> Callable:
        if callable(self.build):
            return self.build
        module, function = self.build.split(":")
        return getattr(importlib.import_module(module), function)


class Spec(NamedTuple):
    """A parsed drafter spec: the entry's name, its parameter (or None) and the text as written."""
    name: str
    n: int | None
    text: str


DRAFTERS: dict[str, DrafterEntry] = {}  # name -> entry, in the order help and the page list them


def register(entry: DrafterEntry) -> DrafterEntry:
    """Declare a drafter (its name must be new); returns the entry. ``unregister`` takes it back."""
    if entry.name in DRAFTERS:
        raise ValueError(f"a drafter named {entry.name!r} is registered already")
    DRAFTERS[entry.name] = entry
    return entry


def unregister(name: str) -> None:
    DRAFTERS.pop(name, None)


for _entry in (
        DrafterEntry("distilled", "distilled", "specsim.gpt.drafters:build_small", page="distilled", batched=True,
                     about="a small GPT trained to match the target's p"),
        DrafterEntry("trained", "trained", "specsim.gpt.drafters:build_small", page="trained", batched=True,
                     about="the same small GPT trained on the corpus alone"),
        DrafterEntry("eagle", "eagle", "specsim.gpt.eagle:build_eagle", page="eagle",
                     help="one narrow layer on the target's features",
                     about="one narrow layer reading the target's own last hidden state and the next character's "
                           "embedding, read out through the target's final norm and head (EAGLE)"),
        DrafterEntry("lookup", "lookup:N", "specsim.gpt.drafters:build_lookup", param="N", tree=False,
                     page="lookup:3", help="prompt lookup",
                     about="prompt lookup (copies what followed the last {n} characters earlier in the text; "
                           "no model)"),
        DrafterEntry("early-exit", "early-exit:K", "specsim.gpt.drafters:build_early_exit", param="K",
                     page="early-exit:2", help="target's first K layers",
                     about="the target's first {n} layers with its final norm and head"),
        DrafterEntry("early-exit+head", "early-exit:K+head", "specsim.gpt.drafters:build_early_exit", param="K",
                     page="early-exit:2+head", help="the same with a trained exit head",
                     about="the same layers with a small trained exit head")):
    register(_entry)


def _listed(words: list) -> str:
    return ", ".join(words[:-1]) + " or " + words[-1] if len(words) > 1 else "".join(words)


def listed(words: list) -> str:
    """Words as a sentence lists them: ``listed(["a", "b", "c"])`` is "a, b or c"."""
    return _listed(list(words))


def forms(tree: bool = False) -> str:
    """Every drafter's form (only those that draft a tree, ``tree=True``), as a sentence lists them."""
    return _listed([e.form for e in DRAFTERS.values() if e.tree or not tree])


def draft_help() -> str:
    """The drafters as ``--draft``'s help lists them: each form and its words."""
    return _listed([e.form + (f" ({e.help})" if e.help else "") for e in DRAFTERS.values()])


def gallery() -> tuple:
    """The specs the Tiny GPT page and the drafter gallery offer, in the registry's order."""
    return tuple(e.page for e in DRAFTERS.values() if e.page)


def batched() -> list:
    """The names of the drafters ``gpt serve-bench`` batches (``batched=True``), in the registry's order."""
    return [e.name for e in DRAFTERS.values() if e.batched]


def page_help() -> str:
    """The page's help on its drafter choice: each offered spec and its line."""
    return "; ".join(f"{e.page}: {e.about.format(n=parse(e.page).n)}" for e in DRAFTERS.values() if e.page)


def __getattr__(name):  # SPECS and GALLERY read the registry as it is now (a drafter registered later included)
    if name == "SPECS":
        return forms()
    if name == "GALLERY":
        return gallery()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def parse(spec: str) -> Spec:
    """The ``Spec`` of a drafter spec; bad -> ValueError (one line)."""
    for entry in DRAFTERS.values():
        n = entry.match(spec) if isinstance(spec, str) else False
        if n is not False:
            return Spec(entry.name, n, spec)
    raise ValueError(f"unknown drafter {str(spec)[:60]!r}; choose {forms()}")


def parse_spec(spec: str) -> tuple[str, int | None]:
    """'distilled' -> ('distilled', None); 'lookup:3' -> ('lookup', 3);
    'early-exit:2+head' -> ('early-exit+head', 2); bad -> ValueError (one line)."""
    name, n, _ = parse(spec)
    return name, n


def entry_named(name: str) -> DrafterEntry | None:
    """The entry of a drafter called ``name`` (a spec, as drafters name themselves), or None for a
    drafter outside the registry (a bare model, a pair of your own)."""
    try:
        return DRAFTERS[parse(name).name]
    except ValueError:
        return None


def check_tree(name: str) -> None:
    """One-line ValueError when the drafter called ``name`` is registered as a chain drafter only."""
    entry = entry_named(name)
    if entry is not None and not entry.tree:
        raise ValueError(f"the {name} drafter cannot draft a tree; use {forms(tree=True)}")


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
        own_tree = entry.scheme.drawn_as == "tree" and not given  # a tree entry with no scheme given: its own tree
        scheme = entry.scheme if own_tree else implementations.scheme_for(entry, scheme)
    rule = rule_named(name)
    scheme.check_rule(rule)
    return rule, scheme
