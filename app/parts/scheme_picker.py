"""The scheme picker in the sidebar: a scheme's family (by its grammar keyword), then its settings (γ, a tree's
shape and drafts, a confidence chain's stop, a dynamic tree's budget), started from ``?scheme=`` or the page's
default and kept across pages (``parts.memory``). Returns a ``specsim.schemes`` value, or None after one
``st.error`` line."""
from __future__ import annotations

import streamlit as st

from parts import memory
from parts.widgets import capped_text, largest_within, one_line, query_int, shown_param
from specsim import bounds, schemes
from specsim.views.glossary import label_help


SCHEME_CHARS = 60  # a ?scheme= value longer than this is refused before it is parsed


def offered() -> tuple:
    """The families a page offers unless it names its own: every registered family the budget comparison ranks
    without settings of its own (a chain, a block, a fixed tree, and any such family registered later)."""
    return tuple(k for k, cls in schemes.families().items() if cls.budget_schemes(1))


def scheme_query(kinds=None, params=None):
    """The scheme a page was opened with: ``?scheme=tree:2,1`` (the grammar of ``specsim.schemes``),
    or the older shorthand ``?gamma=3`` (a chain, ``&verify=block`` a block) or ``?tree=2,1&drafts=distinct``.

    Returns None when no parameter names a scheme; a bad ``?scheme=`` (or a kind this page does not
    show) is one ``st.error`` line and None. A bad shorthand is ignored, as every Try-it parameter is.
    """
    kinds = offered() if kinds is None else kinds
    params = st.query_params if params is None else params
    raw = params.get("scheme")
    if raw is None:
        return _shorthand(params, kinds)
    if len(raw) > SCHEME_CHARS:
        st.error(f"?scheme= has {len(raw):,} characters; the limit is {SCHEME_CHARS} (write {schemes.grammar_help()})")
        return None
    try:
        scheme = schemes.parse(raw)
    except ValueError as e:
        st.error(f"?scheme=: {one_line(e)}")
        return None
    if scheme.kind not in kinds:  # kind: the family keyword this page offers (a picker lists families by it)
        st.error(f"?scheme={shown_param(raw)}: this page shows {' or '.join(kinds)} schemes")
        return None
    return scheme


def _shorthand(params, kinds):
    """?tree=W&drafts=D or ?gamma=G[&verify=block], read as the CLI's historical flags (``schemes.from_flags``)."""
    gamma, tree = query_int(params.get("gamma"), 1, bounds.LIMITS.gamma), params.get("tree")
    try:
        if isinstance(tree, str) and len(tree) <= SCHEME_CHARS and tree.isascii():
            drafts = params.get("drafts") if params.get("drafts") in ("iid", "distinct") else "iid"
            scheme = schemes.from_flags(tree=tree, drafts=drafts)
            if scheme.kind in kinds:
                return scheme
        if gamma is not None:
            scheme = schemes.from_flags(gamma, "block" if params.get("verify") == "block" else "token")
            scheme = scheme if scheme.kind in kinds else schemes.from_flags(gamma)
            return scheme if scheme.kind in kinds else None
    except ValueError:
        return None
    return None


def kind_label(kind: str) -> str:
    """The radio's words for a family: its title (``Scheme.words``)."""
    cls = schemes.families().get(kind)
    return cls.words()[0] if cls is not None else kind


def every_family(*first) -> tuple:
    """The kinds of every registered scheme family, ``first`` first (a page that plays any scheme offers a
    family registered with ``specsim.schemes.register`` without a line of its own)."""
    return tuple(first) + tuple(k for k in schemes.families() if k not in first)


def scheme_picker(key: str, model, default: str, kinds=None, max_gamma: int = 8, top=None, keys=None):
    """Pick a scheme in the sidebar: its kind, then one widget per parameter of its grammar (``Scheme.params``:
    γ, a tree's shape and drafts, a confidence chain's most drafts, threshold and confidence, a dynamic tree's
    budget, depth and top-k, or a later family's own).

    Starts from ``?scheme=`` (``scheme_query``) or ``default``. A family's γ-like size (a whole number written
    kind:G) goes up to the largest value whose exact round on the toy ``model`` is within the work limit, any
    other whole number up to ``max_gamma``; ``top(cls, param)``, when given, is every whole number's maximum
    instead (a page without a toy model: the tiny GPT's). ``keys`` renames a parameter's widget key suffix
    (``{param.key: suffix}``), where a page's links named it otherwise. Returns the scheme, or None after one
    ``st.error`` line.
    """
    kinds = offered() if kinds is None else kinds
    link, base = scheme_query(kinds), schemes.parse(default)
    kind = memory.remember(f"{key}-kind", base.kind, link.kind if link else None, valid=lambda k: k in kinds)
    if len(kinds) > 1:
        described = [f"{title}: {summary}" for title, summary in (c.words() for c in schemes.families().values())
                     if summary]
        kind = st.radio("verification", kinds, key=f"{key}-kind", horizontal=True, format_func=kind_label,
                        help="; ".join(described))
    cls = schemes.families()[kind]
    most = top or (lambda c, p: _most(c, p, model, max_gamma))
    values = {p.name: _widget(f"{key}-{(keys or {}).get(p.key, p.key or p.name)}", cls, p, _start(p, cls, base),
                              _start(p, cls, link), most(cls, p) if p.type == "whole" else None, top is None)
              for p in cls.params}
    for p in cls.params:  # a text box's length, checked once every widget is drawn
        if p.type in ("widths", "fraction") and capped_text(values[p.name], p.noun, p.chars) is None:
            return None
    try:
        return schemes.parse(schemes.write(cls, values))
    except ValueError as e:
        st.error(one_line(e))
        return None


def _start(p, cls, scheme):
    """``scheme``'s value of parameter ``p`` when it is written with the same parameters as ``cls``, else None."""
    if scheme is None or type(scheme).params != cls.params:
        return None
    return getattr(scheme, p.attr)


def _most(cls, p, model, most: int) -> int:
    """A whole number's maximum: a γ-like size (kind:G) as far as its exact round on ``model`` is within the
    work limit, any other ``most``."""
    if cls.form != "positional":
        return most
    return largest_within(lambda m, g, limit: bounds.check_round(m, cls.from_params({p.name: g}), limit), model, most)


def _widget(wkey: str, cls, p, base, link, top: int, sized_by_work: bool):
    """One parameter's widget (key ``wkey``), started from the page's default (``base``) or the link's value;
    its value. ``top``: a whole number's maximum (``sized_by_work``: the work limit set it)."""
    if p.type == "whole":
        sized = sized_by_work and cls.form == "positional"
        start = p.start if base is None else base
        memory.remember(wkey, min(start, top), None if link is None else min(link, top),
                        valid=lambda v: isinstance(v, int) and 1 <= v <= top)
        help_ = (f"{label_help(p.label)} Here up to {top}: the largest γ whose exact expectation is in the work limit."
                 if sized else p.help)
        return int(st.number_input(p.label, 1, top, key=wkey, help=help_))
    if p.type == "choice":
        memory.remember(wkey, p.start if base is None else base, link, valid=lambda v: v in p.choices)
        return st.radio(p.label, p.choices, key=wkey, horizontal=True, help=p.help)
    memory.remember(wkey, p.text(p.start if base is None else base), None if link is None else p.text(link),
                    valid=lambda t: isinstance(t, str))
    return st.text_input(p.label, key=wkey, help=p.help)
