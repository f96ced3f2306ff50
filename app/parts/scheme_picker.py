"""The scheme picker in the sidebar: a scheme's family (by its grammar keyword), then its settings (γ, a tree's
shape and drafts, a confidence chain's stop, a dynamic tree's budget), started from ``?scheme=`` or the page's
default and kept across pages (``parts.memory``). Returns a ``specsim.schemes`` value, or None after one
``st.error`` line."""
from __future__ import annotations

import streamlit as st

from parts import memory
from parts.widgets import capped_text, largest_within, one_line, query_int, shown_param
from specsim import bounds, schemes
from specsim.schemes.adaptive import stop_text
from specsim.views.glossary import label_help


SCHEME_CHARS = 60  # a ?scheme= value longer than this is refused before it is parsed


def scheme_query(kinds=("chain", "block", "tree"), params=None):
    """The scheme a page was opened with: ``?scheme=tree:2,1`` (the grammar of ``specsim.schemes``),
    or the older shorthand ``?gamma=3`` (a chain, ``&verify=block`` a block) or ``?tree=2,1&drafts=distinct``.

    Returns None when no parameter names a scheme; a bad ``?scheme=`` (or a kind this page does not
    show) is one ``st.error`` line and None. A bad shorthand is ignored, as every Try-it parameter is.
    """
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
    gamma, tree = query_int(params.get("gamma"), 1, bounds.LIMITS.gamma), params.get("tree")
    try:
        if "tree" in kinds and isinstance(tree, str) and len(tree) <= SCHEME_CHARS and tree.isascii():
            drafts = params.get("drafts") if params.get("drafts") in ("iid", "distinct") else "iid"
            return schemes.parse(f"tree:{tree}:{drafts}")
        if gamma is not None:
            kind = "block" if params.get("verify") == "block" and "block" in kinds else "chain"
            return schemes.parse(f"{kind}:{gamma}") if kind in kinds else None
    except ValueError:
        return None
    return None


KIND_LABELS = {"confidence": "confidence chain", "dynamic": "dynamic tree"}  # the radio's words for a kind


def every_family(*first) -> tuple:
    """The grammar keywords of every registered scheme family, ``first`` first (a page that plays any
    scheme offers a family registered with ``specsim.schemes.register`` without a line of its own)."""
    return tuple(first) + tuple(k for k in schemes.grammar.KINDS if k not in first)


def scheme_picker(key: str, model, default: str, kinds=("chain", "block", "tree"), max_gamma: int = 8):
    """Pick a scheme in the sidebar: its kind, then γ (a family that drafts a fixed γ: a chain, a block, any
    registered one that does), the tree's shape and drafts, a confidence chain's most drafts, threshold and
    confidence, or a dynamic tree's budget, depth and top-k.

    Starts from ``?scheme=`` (``scheme_query``) or ``default``. γ goes up to the largest value whose
    exact round is within the work limit. Returns the scheme, or None after one ``st.error`` line.
    """
    link, base = scheme_query(kinds), schemes.parse(default)
    kind = memory.remember(f"{key}-kind", base.kind, link.kind if link else None, valid=lambda k: k in kinds)
    if len(kinds) > 1:
        kind = st.radio("verification", kinds, key=f"{key}-kind", horizontal=True,
                        format_func=lambda k: KIND_LABELS.get(k, k),
                        help="chain: token by token; block: the drafted chain as a whole; tree: several children "
                             "per position, one target pass; confidence chain: stop drafting when the drafter is "
                             "unsure; dynamic tree: EAGLE-2's tree grown from the drafter's rows")
    if kind in ("confidence", "dynamic"):
        return _adaptive_picker(key, kind, link if link is not None and link.kind == kind else None,  # its keyword
                                max_gamma)
    if schemes.grammar.KINDS[kind].fixed_gamma:  # γ alone sizes it: kind:G
        top = largest_within(lambda m, g, limit: bounds.check_round(m, schemes.parse(f"{kind}:{g}"), limit),
                             model, max_gamma)
        g0 = base.gamma if base.fixed_gamma else 3
        wanted = min(link.gamma, top) if link is not None and link.fixed_gamma else None
        memory.remember(f"{key}-gamma", min(g0, top), wanted, valid=lambda g: isinstance(g, int) and 1 <= g <= top)
        gamma = int(st.number_input("γ: draft length", 1, top, key=f"{key}-gamma",
                                    help=f"{label_help('γ: draft length')} Here up to {top}: the largest γ whose exact expectation is in the work limit."))
        return schemes.parse(f"{kind}:{gamma}")
    tree_link = link is not None and link.ordered  # a fixed tree
    memory.remember(f"{key}-shape", ",".join(map(str, base.shape)) if base.ordered else "2,2,1",
                    ",".join(map(str, link.shape)) if tree_link else None, valid=lambda t: isinstance(t, str))
    shape = st.text_input("tree shape: widths per depth", key=f"{key}-shape",
                          help="W1,W2,...: the root gets W1 children, each of them W2, ...; 1,1,1 is a chain of 3 drafts")
    memory.remember(f"{key}-drafts", base.drafts if base.ordered else "iid", link.drafts if tree_link else None,
                    valid=lambda d: d in ("iid", "distinct"))
    drafts = st.radio("children drafted", ("iid", "distinct"), key=f"{key}-drafts", horizontal=True,
                      help="iid: each child from q (repeats possible); distinct: without replacement")
    if capped_text(shape, "the tree shape", 40) is None:
        return None
    try:
        return schemes.parse(f"tree:{shape}:{drafts}")
    except ValueError as e:
        st.error(one_line(e))
        return None


def _adaptive_picker(key: str, kind: str, link, most: int):
    """The settings of a confidence-stopped chain or of a dynamic tree (``specsim.schemes.adaptive``,
    ``specsim.schemes.dynamic_tree``), from ``link`` (a scheme of this kind) or the defaults."""
    whole = lambda hi: lambda v: isinstance(v, int) and 1 <= v <= hi  # noqa: E731
    if kind == "confidence":
        memory.remember(f"{key}-max", 6, min(link.gamma, most) if link else None, valid=whole(most))
        gamma = int(st.number_input("most drafts (max)", 1, most, key=f"{key}-max",
                                    help="the chain never drafts more than this many tokens a round"))
        memory.remember(f"{key}-stop", "0.45", stop_text(link.stop) if link else None, valid=lambda t: isinstance(t, str))
        stop = st.text_input("stop below (threshold)", key=f"{key}-stop",
                             help="stop after a draft whose confidence is below this, strictly between 0 and 1 "
                                  "(0.45 or 9/20); that draft is still verified")
        memory.remember(f"{key}-on", "top", link.on if link else None, valid=lambda o: o in ("top", "draft"))
        on = st.radio("confidence", ("top", "draft"), key=f"{key}-on", horizontal=True,
                      help="top: the drafter's top probability at the position; draft: q of the token drafted "
                           "(Hugging Face's assistant_confidence_threshold)")
        if capped_text(stop, "the threshold", 20) is None:
            return None
        text = f"chain:max={gamma},stop={stop.strip()}" + (",on=draft" if on == "draft" else "")
    else:
        memory.remember(f"{key}-nodes", 6, min(link.budget, most) if link else None, valid=whole(most))
        nodes = int(st.number_input("budget: nodes kept", 1, most, key=f"{key}-nodes",
                                    help="the best-scored candidates kept for verification"))
        memory.remember(f"{key}-depth", 3, min(link.depth, most) if link else None, valid=whole(most))
        depth = int(st.number_input("depth", 1, most, key=f"{key}-depth", help="levels grown (at most the budget)"))
        memory.remember(f"{key}-topk", 2, min(link.topk, most) if link else None, valid=whole(most))
        topk = int(st.number_input("top-k", 1, most, key=f"{key}-topk",
                                   help="each expanded node's most probable tokens; the top-k nodes of a level "
                                        "are expanded"))
        text = f"tree:dynamic,budget={nodes},depth={depth},topk={topk}"
    try:
        return schemes.parse(text)
    except ValueError as e:
        st.error(one_line(e))
        return None
