"""Trees and blocks: a tree round played one event at a time, block vs chain on one drafted chain,
every scheme within a drafting budget, and the tree attention mask.

The tree round is the Round stepper's own part (``parts.stepper``) over
``specsim.sampling.trace_round`` with the chosen tree: the tree is drafted whole,
then one target pass scores every node, then the walk decides. Query parameters:
``?scheme=tree:2,2:distinct&seed=3&budget=4&from_lesson=19`` (``?tree=2,2&drafts=distinct``
is shorthand for the scheme). The adaptive schemes open the same way
(``?scheme=chain:max=6,stop=0.45``, ``?scheme=tree:dynamic,budget=6,depth=3,topk=2``): a round
is drawn with the layout the drafter chose, and the budget table lists them beside every fixed
scheme with their exact drafting cost, then Sequoia's best static tree for the budget.
"""
import html

import streamlit as st

from parts import cached, heavy, memory, presenter, stepper, widgets
from parts.tokens import md_tokens
from sections import tree_gpt_section, tryit
from specsim import bounds, toy
from specsim.labs import best_tree, compare
from specsim.plots import tree as plots_tree
from specsim import schemes
from specsim.schemes import Block, Chain
from specsim.views import scheme_view, tree_view

KEY = "trees"
MAX_CHAIN = 4  # γ of the block vs chain comparison
SEED_MAX = 10**6 - 1
ADAPTIVE_NOTES = {  # what the stepper shows for a scheme whose layout the drafter decides each round
    "dynamic": " The layout is EAGLE-2's, grown this round from the drafter's rows (the top-k tokens of the best "
               "nodes, the best-scored nodes kept), so it can differ from round to round; each chosen child is a "
               "point mass, kept with probability p'(x), and a rejected one is removed from p'.",
    "confidence": " The chain stops after the first draft whose confidence is below the threshold (that draft is "
                  "still verified), so its length differs from round to round; it is drawn as the path it drafted.",
}

st.title("Trees and blocks")
tryit.back_to_lesson()
st.caption("A tree round played event by event, block against token-wise verification, every scheme within a "
           "drafting budget, and the tree attention mask; the settings are in the sidebar.")

params = st.query_params
with st.sidebar:
    model = widgets.model_picker(KEY)
    if model is not None:
        context = widgets.context_picker(model, f"{KEY}-ctx")
        scheme = widgets.scheme_picker(KEY, model, "tree:2,2,1", kinds=("tree", "dynamic", "confidence"))
        memory.remember(f"{KEY}-seed", 0, widgets.query_int(params.get("seed"), 0, SEED_MAX))
        seed = int(st.number_input("seed", 0, SEED_MAX, key=f"{KEY}-seed"))
        memory.remember(f"{KEY}-speed", 1.0)
        speed = st.select_slider("play speed (seconds per event)", [0.5, 1.0, 2.0], key=f"{KEY}-speed")
if model is None:
    stepper.stop(KEY)
    st.stop()


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
    st.dataframe([{"children": c.drafts, "p_1, p_2, …": ", ".join(f"{float(v):.3f}" for v in c.best.acceptance),
                   "best shape": "tree:" + ",".join(map(str, c.best.shape)),
                   "predicted E[tokens]": f"{float(c.best.expected_tokens):.4f}",
                   "exact here": "refused" if c.exact_tokens is None else f"{float(c.exact_tokens):.4f}",
                   "exact, mean over contexts": "refused" if c.exact_mean is None else f"{float(c.exact_mean):.4f}",
                   "best layout (parents)": str(list(c.best.general.parents)),
                   "its prediction": f"{float(c.best.general.expected_tokens):.4f}"}
                  for c in checks], hide_index=True, key=f"{KEY}-best-tree",
                 column_config={"children": st.column_config.TextColumn(pinned=True)})
    refused = [c.refused for c in checks if c.refused]
    if refused:
        st.caption("Exact check refused: " + refused[0])
    st.caption("The prediction estimates the mean over contexts; at one context it can be far off, because the "
               "vector cannot know that acceptance depends on the context and the depth. A layout's parents list "
               "each node's parent (−1: the root), depth first; a level shape is one such layout.")


# -- 1. a tree round, one event at a time --------------------------------------------------------
st.header("A tree round, one event at a time")
if scheme is not None:
    st.markdown(f"The drafter drafts the whole **{scheme.name}** first, level by level; one target pass then "
                "gives p at the root and after every node, and the walk decides, node by node."
                + ADAPTIVE_NOTES.get(scheme.kind, ""))
    walked = stepper.show(KEY, model, context, scheme, seed, speed)
else:
    stepper.stop(KEY)
st.markdown("A **tree** drafts several children per position and the target checks them all in one pass; "
            "the walk tries the children of a node in order, keeps the first one that passes "
            "u < min(1, p'(x)/q'(x)), and after each rejection replaces p' by the residual "
            "normalize(max(0, p' − q')).")


# -- 2. block vs chain on one drafted chain -----------------------------------------------------
st.header("Block vs token-wise on one drafted chain")
st.markdown("**Block** verification reads a drafted chain as a whole: one coin per position, with a probability "
            "computed from the whole block, and it keeps the prefix up to the last coin that comes up heads, a "
            "random stopping point (not the longest prefix that could pass).")
memory.remember(f"{KEY}-gamma", 3)
gamma = int(st.number_input("γ: drafted chain", 1, MAX_CHAIN, key=f"{KEY}-gamma"))
both = scheme_view.chain_keep(model, context, gamma, seed)
st.markdown(f"Seed {seed} drafts **{md_tokens(both['drafts'])}** after *{md_tokens(context)}*; both rules read "
            "the same uniforms. Token-wise (`chain`) keeps drafts left to right while u < min(1, p/q); `block` "
            "keeps the drafts up to the **last** position whose coin u < hᵢ comes up.")
st.dataframe([{"position": i + 1, "draft": x,
               "token-wise: u vs min(1, p/q)": f"{c[0]:.3f} vs {c[1]}" if c else "not tested",
               "block: u vs h": f"{b[0]:.3f} vs {b[1]}"}
              for i, (x, c, b) in enumerate(zip(both["drafts"], both["chain"]["tests"] + [None] * gamma,
                                                both["block"]["tests"]))], hide_index=True)
c1, c2 = st.columns(2)
for col, name, label in ((c1, "chain", "token-wise keeps"), (c2, "block", "block keeps")):
    kept = both[name]
    col.metric(label, f"{kept['accepted']} of {gamma}", help="accepted drafts; one closing token follows")
    col.markdown(f"emits **{md_tokens(kept['emitted'])}**")
if widgets.within_bounds(scheme_view.check_contexts, model, gamma):
    st.markdown(f"Exact E[tokens per round] with γ = {gamma}, from every context:")
    st.dataframe([{"context": r["context"], "token-wise": widgets.fmt(r["chain"]), "block": widgets.fmt(r["block"]),
                   "block − token-wise": widgets.fmt(r["gain"]), "≈ gain": f"{float(r['gain']):+.4f}"}
                  for r in chain_vs_block(model.to_json(), gamma)], hide_index=True)

# -- 3. every scheme within a budget -------------------------------------------------------------
st.header("Which scheme for a drafting budget?")
top = scheme_view.largest_budget(model, limit=bounds.LIMITS.interactive_work)
budget = widgets.int_slider("budget: drafted tokens per round", 1, top, min(4, top), key=f"{KEY}-budget",
                            link=widgets.query_int(params.get("budget"), 1, top),
                            help=f"up to {top}: the largest budget whose every scheme is within the work limit")
picked = scheme.name if scheme is not None and scheme.kind in ("confidence", "dynamic") else None
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
    st.dataframe([{"scheme": r["scheme"], "drafted": r["drafted_tokens"],
                   "E[tokens per round]": widgets.fmt(r["expected_tokens"]), "≈": f"{float(r['expected_tokens']):.4f}",
                   "E[drafts]": f"{float(r['expected_drafts']):.4f}", "drafter passes": f"{float(r['drafter_passes']):.4f}",
                   "fixed chain at equal E[drafts]": f"{float(r['fixed_at_equal_drafts']):.4f}"
                   if "fixed_at_equal_drafts" in r else ""}
                  for r in rows], hide_index=True, key=f"{KEY}-compare",
                 column_config={"scheme": st.column_config.TextColumn(pinned=True)})
    st.caption("E[drafts] and drafter passes are exact expectations at this context. For a confidence chain the last "
               "column is fixed chains that draft as many tokens on average (γ and γ + 1 mixed by a coin before the "
               "round), the fair baseline at equal drafting cost.")
    try:
        show_best_tree(best_static(model.to_json(), context, budget), budget)
    except bounds.WorkRefused as e:  # the exact acceptance vector itself is over the limit (a large model)
        st.info(f"The best static tree for {budget} drafted tokens is not computed here: {widgets.one_line(e)}")

# -- 4. the tree attention mask ------------------------------------------------------------------
st.header("The tree attention mask")
if scheme is not None:
    round_no = walked["player"].round + 1
    mask = tree_view.verify_mask(walked["player"].trace.context, tree_view.drafted_tree(walked["player"].trace))
    st.markdown(f"One target pass verifies the whole drafted tree of round {round_no} above: each query sees the "
                "cached context, the root and its own ancestors, never a sibling. Siblings share a **position "
                "id**: they are alternatives for the same place in the text.")
    presenter.chart(plots_tree.mask_figure(mask["grid"], mask["rows"], mask["columns"],
                                           f"Attention in one pass over the {scheme.name} (blue: the query sees the key)"),
                    key=f"{KEY}-mask")
    st.markdown("Position ids of the queries (the root is the last context token):")
    st.dataframe([dict(zip(mask["rows"], mask["positions"]))], hide_index=True)
    tree_gpt_section.show(scheme)
