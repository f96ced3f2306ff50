"""The Trees page's two comparisons: block against token-wise verification on one drafted chain, and every
scheme within a drafting budget (exact E[tokens per round], the adaptive schemes beside the fixed ones,
then Sequoia's best static tree for the budget)."""
import html

import streamlit as st

from parts import cached, heavy, memory, plain, presenter, widgets
from parts.tokens import md_tokens
from specsim import bounds, toy
from specsim.labs import best_tree, compare
from specsim.plots import tree as plots_tree
from specsim import schemes
from specsim.schemes import Block, Chain
from specsim.views import scheme_view

KEY = "trees"
MAX_CHAIN = 4  # γ of the block vs chain comparison


@st.cache_data(max_entries=64, ttl=cached.TTL, show_spinner=False)
def compare_rows(model_json: str, ctx: tuple, budget: int, picked: str | None) -> list:
    """``scheme_view.budget_rows``: every fixed scheme within ``budget`` and the adaptive ones (``picked``,
    the page's scheme name, sets their threshold or depth and top-k)."""
    model, scheme = toy.loads_model(model_json), None if picked is None else schemes.parse(picked)
    todo = compare.schemes(budget) + scheme_view.adaptive_schemes(budget, scheme)
    with heavy.exact_slot(sum(bounds.exact_work(model, s, rounds=1) for s in todo)):
        return scheme_view.budget_rows(model, ctx, budget, scheme)


@st.cache_data(max_entries=64, ttl=cached.TTL, show_spinner=False)
def best_static(model_json: str, ctx: tuple, budget: int) -> list:
    """``best_tree.check`` for i.i.d. and distinct children (the vector averaged over every context)."""
    model = toy.loads_model(model_json)
    return [best_tree.check(model, ctx, budget, drafts, limit=bounds.LIMITS.interactive_work)
            for drafts in ("iid", "distinct")]


@st.cache_data(max_entries=64, ttl=cached.TTL, show_spinner=False)
def chain_vs_block(model_json: str, gamma: int) -> list:
    model = toy.loads_model(model_json)
    with heavy.exact_slot(bounds.exact_work(model, schemes=[Chain(gamma), Block(gamma)],
                                            rounds=len(model.contexts()))):
        return scheme_view.chain_vs_block(model, gamma)


def show_best_tree(checks: list, budget: int) -> None:
    """Sequoia's best static tree for the budget: the DP's shape, its prediction and the exact engine's figure."""
    st.subheader(f"The best static tree for {budget} drafted tokens")
    st.markdown("Sequoia's dynamic program scores a tree with one vector: p_k, the chance that the child of rank k "
                "is **the** accepted one, assumed the same at every node (here exact, averaged over every context). "
                "It returns the best shape of widths per level and the best layout of any kind; the exact engine "
                "then says what the shape really gets.")
    plain.table([{"children": c.drafts, "p_1, p_2, …": ", ".join(f"{float(v):.3f}" for v in c.best.acceptance),
                   "best shape": "tree:" + ",".join(map(str, c.best.shape)),
                   "predicted E[tokens]": f"{float(c.best.expected_tokens):.4f}",
                   "exact here": "refused" if c.exact_tokens is None else f"{float(c.exact_tokens):.4f}",
                   "exact, mean over contexts": "refused" if c.exact_mean is None else f"{float(c.exact_mean):.4f}",
                   "best layout (parents)": str(list(c.best.general.parents)),
                   "its prediction": f"{float(c.best.general.expected_tokens):.4f}"}
                  for c in checks])
    refused = [c.refused for c in checks if c.refused]
    if refused:
        st.caption("Exact check refused: " + refused[0])
    st.caption("The prediction estimates the mean over contexts; at one context it can be far off, because the "
               "vector cannot know that acceptance depends on the context and the depth. A layout's parents list "
               "each node's parent (−1: the root), depth first; a level shape is one such layout.")


def block_vs_chain(model, context, seed: int) -> None:
    st.header("Block vs token-wise on one drafted chain")
    st.markdown("**Block** verification reads a drafted chain as a whole: one coin per position, with a probability "
                "computed from the whole block, and it keeps the prefix up to the last coin that comes up heads, a "
                "random stopping point (not the longest prefix that could pass).")
    memory.remember(f"{KEY}-gamma", 3, valid=memory.within(1, MAX_CHAIN))
    gamma = int(st.number_input("γ: drafted chain", 1, MAX_CHAIN, key=f"{KEY}-gamma"))
    both = scheme_view.chain_keep(model, context, gamma, seed)
    st.markdown(f"Seed {seed} drafts **{md_tokens(both['drafts'])}** after *{md_tokens(context)}*; both rules read "
                "the same uniforms. Token-wise (`chain`) keeps drafts left to right while u < min(1, p/q); `block` "
                "keeps the drafts up to the **last** position whose coin u < hᵢ comes up.")
    plain.table([{"position": i + 1, "draft": x,
                   "token-wise: u vs min(1, p/q)": f"{c[0]:.3f} vs {c[1]}" if c else "not tested",
                   "block: u vs h": f"{b[0]:.3f} vs {b[1]}"}
                  for i, (x, c, b) in enumerate(zip(both["drafts"], both["chain"]["tests"] + [None] * gamma,
                                                    both["block"]["tests"]))])
    c1, c2 = st.columns(2)
    for col, name, label in ((c1, "chain", "token-wise keeps"), (c2, "block", "block keeps")):
        kept = both[name]
        col.metric(label, f"{kept['accepted']} of {gamma}", help="accepted drafts; one closing token follows")
        col.markdown(f"emits **{md_tokens(kept['emitted'])}**")
    if widgets.within_bounds(scheme_view.check_contexts, model, gamma):
        st.markdown(f"Exact E[tokens per round] with γ = {gamma}, from every context:")
        plain.table([{"context": r["context"], "token-wise": widgets.fmt(r["chain"]), "block": widgets.fmt(r["block"]),
                       "block − token-wise": widgets.fmt(r["gain"]), "≈ gain": f"{float(r['gain']):+.4f}"}
                      for r in chain_vs_block(model.to_json(), gamma)])


def budget(model, context, scheme, params) -> None:
    st.header("Which scheme for a drafting budget?")
    top = scheme_view.largest_budget(model, limit=bounds.LIMITS.interactive_work)
    budget = widgets.int_slider("budget: drafted tokens per round", 1, top, min(4, top), key=f"{KEY}-budget",
                                link=widgets.query_int(params.get("budget"), 1, top),
                                help=f"up to {top}: the largest budget whose every scheme is within the work limit")
    picked = scheme.name if scheme is not None and scheme.layout_from_drafter else None
    if widgets.within_bounds(scheme_view.check_budget, model, budget, scheme=scheme):
        rows = compare_rows(model.to_json(), context, budget, picked)
        curve = scheme_view.best_by_budget(rows, budget)
        presenter.chart(plots_tree.budget_figure(curve, f"Best exact E[tokens per round] after "
                                                        f"\"{html.escape(' '.join(context))}\""), key=f"{KEY}-budget-chart")
        st.caption("Each line is the best scheme of its kind that drafts at most that many tokens (hover for its "
                   "name). Lines that coincide mean the best tree is the chain itself. An adaptive scheme counts at its "
                   "most drafts: a confidence chain of at most b drafts and a dynamic tree of b nodes (with the "
                   "sidebar's settings when it shows one); the table gives what each drafts on average and the drafter "
                   "passes it takes.")
        plain.table([{"scheme": r["scheme"], "drafted": r["drafted_tokens"],
                       "E[tokens per round]": widgets.fmt(r["expected_tokens"]), "≈": f"{float(r['expected_tokens']):.4f}",
                       "E[drafts]": f"{float(r['expected_drafts']):.4f}", "drafter passes": f"{float(r['drafter_passes']):.4f}",
                       "fixed chain at equal E[drafts]": f"{float(r['fixed_at_equal_drafts']):.4f}"
                       if "fixed_at_equal_drafts" in r else ""}
                      for r in rows])
        st.caption("E[drafts] and drafter passes are exact expectations at this context. For a confidence chain the last "
                   "column is fixed chains that draft as many tokens on average (γ and γ + 1 mixed by a coin before the "
                   "round), the fair baseline at equal drafting cost.")
        try:
            show_best_tree(best_static(model.to_json(), context, budget), budget)
        except bounds.WorkRefused as e:  # the exact acceptance vector itself is over the limit (a large model)
            st.info(f"The best static tree for {budget} drafted tokens is not computed here: {widgets.one_line(e)}")
