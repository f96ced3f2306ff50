"""Trees and blocks: a tree round walked one decision at a time, block vs token-wise on one chain,
every scheme within a drafting budget, and the tree attention mask.

The tree round is ``specsim.schemes.tree.Tree.trace`` for the chosen seed (so the
walk is the library's), completed into the whole drafted tree by
``specsim.views.tree_view.drafted_tree``; Play advances by the clock, like the
Round stepper. Query parameters: ``?tree=2,2&drafts=distinct&seed=3&budget=4&from_lesson=16``.
"""
import html

import streamlit as st

from parts import cached
from parts import heavy
from sections import tree_gpt_section
from sections import tree_walk
from sections import tryit
from parts.tokens import md_tokens
from parts import widgets
from specsim import bounds, toy
from specsim.labs import compare
from specsim.plots import tree as plots_tree
from specsim.views import scheme_view
from specsim.schemes import tree
from specsim.views import tree_view

KEY = "trees"
DEFAULT_SHAPE = "2,2,1"
MAX_CHAIN = 4  # γ of the block vs token-wise chain
SEED_MAX = 10**6 - 1

st.title("Trees and blocks")
tryit.back_to_lesson()
st.markdown("A **tree** drafts several children per position and the target checks them all in one pass; "
            "the walk tries the children of a node in order, keeps the first one that passes "
            "u < min(1, p'(x)/q'(x)), and after each rejection replaces p' by the residual "
            "normalize(max(0, p' − q')). **Block** verification reads a drafted chain as a whole: one coin "
            "per position, with a probability computed from the whole block, and it keeps the prefix up to "
            "the last coin that comes up heads, a random stopping point (not the longest prefix that could "
            "pass).")

params = st.query_params
shape_default = params.get("tree") if tree_view.shape_param(params.get("tree")) else DEFAULT_SHAPE
with st.sidebar:
    model = widgets.model_picker(KEY)
    if model is not None:
        context = widgets.context_picker(model, f"{KEY}-ctx")
        shape_text = st.text_input("tree shape: widths per depth", shape_default, key=f"{KEY}-shape",
                                   help="W1,W2,...: the root gets W1 children, each of them W2, ...; "
                                        "1,1,1 is a chain of 3 drafts")
        drafts = st.radio("children drafted", tree.DRAFTS, key=f"{KEY}-drafts", horizontal=True,
                          index=tree.DRAFTS.index(params.get("drafts")) if params.get("drafts") in tree.DRAFTS else 0,
                          help="iid: each child from q (repeats possible); distinct: without replacement")
        seed = int(st.number_input("seed", 0, SEED_MAX, widgets.query_int(params.get("seed"), 0, SEED_MAX) or 0,
                                   key=f"{KEY}-seed"))
        speed = st.select_slider("play speed (seconds per decision)", [0.5, 1.0, 2.0], 1.0, key=f"{KEY}-speed")
if model is None:
    if KEY in st.session_state:
        st.session_state[KEY]["playing"] = False
    st.stop()


@st.cache_data(max_entries=64, ttl=cached.TTL, show_spinner=False)
def compare_rows(model_json: str, ctx: tuple, budget: int) -> list:
    model = toy.loads_model(model_json)
    with heavy.exact_slot(bounds.exact_work(model, budget, rounds=3)):  # chain, block, trees: ~3 rounds' work
        return compare.compare(model, ctx, budget)


@st.cache_data(max_entries=64, ttl=cached.TTL, show_spinner=False)
def token_vs_block(model_json: str, gamma: int) -> list:
    model = toy.loads_model(model_json)
    with heavy.exact_slot(bounds.exact_work(model, gamma, rounds=2 * len(model.contexts()))):
        return scheme_view.token_vs_block(model, gamma)


def parsed_tree():
    """The Tree of the sidebar's shape and drafts, or None after one st.error line."""
    if widgets.capped_text(shape_text, "the tree shape", 40) is None:
        return None
    try:
        return tree.Tree(tree.parse_shape(shape_text), drafts)
    except ValueError as e:
        st.error(str(e))
        return None


# -- 1. a tree round, one decision at a time -----------------------------------------------------
st.header("A tree round, one decision at a time")
scheme = parsed_tree()


walked = tree_walk.show(model, context, scheme, seed, speed) if scheme is not None else None


# -- 2. block vs token-wise on one chain ---------------------------------------------------------
st.header("Block vs token-wise on one drafted chain")
gamma = int(st.number_input("γ: drafted chain", 1, MAX_CHAIN, 3, key=f"{KEY}-gamma"))
chain = scheme_view.chain_keep(model, context, gamma, seed)
st.markdown(f"Seed {seed} drafts **{md_tokens(chain['drafts'])}** after *{md_tokens(context)}*; both rules read "
            "the same uniforms. Token-wise keeps drafts left to right while u < min(1, p/q); block keeps the "
            "drafts up to the **last** position whose coin u < hᵢ comes up.")
st.dataframe([{"position": i + 1, "draft": x,
               "token-wise: u vs min(1, p/q)": f"{t[0]:.3f} vs {t[1]}" if t else "not tested",
               "block: u vs h": f"{b[0]:.3f} vs {b[1]}"}
              for i, (x, t, b) in enumerate(zip(chain["drafts"], chain["token"]["tests"] + [None] * gamma,
                                                chain["block"]["tests"]))], hide_index=True)
c1, c2 = st.columns(2)
for col, name in ((c1, "token"), (c2, "block")):
    kept = chain[name]
    col.metric(f"{name}-wise keeps" if name == "token" else "block keeps", f"{kept['accepted']} of {gamma}",
               help="accepted drafts; one closing token follows")
    col.markdown(f"emits **{md_tokens(kept['emitted'])}**")
if widgets.within_bounds(scheme_view.check_contexts, model, gamma):
    st.markdown(f"Exact E[tokens per round] with γ = {gamma}, from every context:")
    st.dataframe([{"context": r["context"], "token-wise": widgets.fmt(r["token"]), "block": widgets.fmt(r["block"]),
                   "block − token": widgets.fmt(r["gain"]), "≈ gain": f"{float(r['gain']):+.4f}"}
                  for r in token_vs_block(model.to_json(), gamma)], hide_index=True)

# -- 3. every scheme within a budget -------------------------------------------------------------
st.header("Which scheme for a drafting budget?")
top = scheme_view.largest_budget(model, limit=bounds.LIMITS.interactive_work)
budget = widgets.int_slider("budget: drafted tokens per round", 1, top,
                            widgets.query_int(params.get("budget"), 1, top) or min(4, top), key=f"{KEY}-budget",
                            help=f"up to {top}: the largest budget whose every scheme is within the work limit")
if widgets.within_bounds(scheme_view.check_budget, model, budget):
    rows = compare_rows(model.to_json(), context, budget)
    curve = scheme_view.best_by_budget(rows, budget)
    st.plotly_chart(plots_tree.budget_figure(curve, f"Best exact E[tokens per round] after \"{html.escape(' '.join(context))}\""),
                    key=f"{KEY}-budget-chart")
    st.caption("Each line is the best scheme of its kind that drafts at most that many tokens (hover for its "
               "name). Lines that coincide mean the best tree is the chain itself.")
    st.dataframe([{"scheme": scheme_view.scheme_label(r), "drafted": r["drafted_tokens"],
                   "E[tokens per round]": widgets.fmt(r["expected_tokens"]), "≈": f"{float(r['expected_tokens']):.4f}"}
                  for r in rows], hide_index=True, key=f"{KEY}-compare")

# -- 4. the tree attention mask ------------------------------------------------------------------
st.header("The tree attention mask")
if scheme is not None:
    mask = tree_view.verify_mask(context, walked["nodes"])
    st.markdown("One target pass verifies the whole drafted tree: each query sees the cached context, the root "
                "and its own ancestors, never a sibling. Siblings share a **position id**: they are alternatives "
                "for the same place in the text.")
    st.plotly_chart(plots_tree.mask_figure(mask["grid"], mask["rows"], mask["columns"],
                                           f"Attention in one pass over the {scheme.name} (blue: the query sees the key)"), key=f"{KEY}-mask")
    st.markdown("Position ids of the queries (the root is the last context token):")
    st.dataframe([dict(zip(mask["rows"], mask["positions"]))], hide_index=True)


if scheme is not None:
    tree_gpt_section.show(scheme.shape, scheme.drafts)
