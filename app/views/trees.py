"""Trees and blocks: a tree round played one event at a time, block vs chain on one drafted chain,
every scheme within a drafting budget, and the tree attention mask.

The tree round is the Round stepper's own part (``parts.stepper``) over
``specsim.sampling.trace_round`` with the chosen tree: the tree is drafted whole,
then one target pass scores every node, then the walk decides. Query parameters:
``?scheme=tree:2,2:distinct&seed=3&budget=4&from_lesson=19`` (``?tree=2,2&drafts=distinct``
is shorthand for the scheme).
"""
import html

import streamlit as st

from parts import cached, heavy, memory, stepper, widgets
from parts.tokens import md_tokens
from sections import tree_gpt_section, tryit
from specsim import bounds, toy
from specsim.labs import compare
from specsim.plots import tree as plots_tree
from specsim.schemes import Block, Chain
from specsim.views import scheme_view, tree_view

KEY = "trees"
MAX_CHAIN = 4  # γ of the block vs chain comparison
SEED_MAX = 10**6 - 1

st.title("Trees and blocks")
tryit.back_to_lesson()
st.caption("A tree round played event by event, block against token-wise verification, every scheme within a "
           "drafting budget, and the tree attention mask; the settings are in the sidebar.")

params = st.query_params
with st.sidebar:
    model = widgets.model_picker(KEY)
    if model is not None:
        context = widgets.context_picker(model, f"{KEY}-ctx")
        scheme = widgets.scheme_picker(KEY, model, "tree:2,2,1", kinds=("tree",))
        memory.remember(f"{KEY}-seed", 0, widgets.query_int(params.get("seed"), 0, SEED_MAX))
        seed = int(st.number_input("seed", 0, SEED_MAX, key=f"{KEY}-seed"))
        memory.to_url("seed", str(seed), f"{KEY}-seed")  # a reload restores seed and scheme
        memory.remember(f"{KEY}-speed", 1.0)
        speed = st.select_slider("play speed (seconds per event)", [0.5, 1.0, 2.0], key=f"{KEY}-speed")
if model is None:
    stepper.stop(KEY)
    st.stop()


@st.cache_data(max_entries=64, ttl=cached.TTL, show_spinner=False)
def compare_rows(model_json: str, ctx: tuple, budget: int) -> list:
    model = toy.loads_model(model_json)
    with heavy.exact_slot(sum(bounds.exact_work(model, s, rounds=1) for s in compare.schemes(budget))):
        return compare.compare(model, ctx, budget)


@st.cache_data(max_entries=64, ttl=cached.TTL, show_spinner=False)
def chain_vs_block(model_json: str, gamma: int) -> list:
    model = toy.loads_model(model_json)
    with heavy.exact_slot(bounds.exact_work(model, schemes=[Chain(gamma), Block(gamma)],
                                            rounds=len(model.contexts()))):
        return scheme_view.chain_vs_block(model, gamma)


# -- 1. a tree round, one event at a time --------------------------------------------------------
st.header("A tree round, one event at a time")
if scheme is not None:
    st.markdown(f"The drafter drafts the whole **{scheme.name}** first, level by level; one target pass then "
                "gives p at the root and after every node, and the walk decides, node by node.")
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
memory.to_url("budget", str(budget), f"{KEY}-budget")
if widgets.within_bounds(scheme_view.check_budget, model, budget):
    rows = compare_rows(model.to_json(), context, budget)
    curve = scheme_view.best_by_budget(rows, budget)
    st.plotly_chart(plots_tree.budget_figure(curve, f"Best exact E[tokens per round] after "
                                                    f"\"{html.escape(' '.join(context))}\""), key=f"{KEY}-budget-chart")
    st.caption("Each line is the best scheme of its kind that drafts at most that many tokens (hover for its "
               "name). Lines that coincide mean the best tree is the chain itself.")
    st.dataframe([{"scheme": r["scheme"], "drafted": r["drafted_tokens"],
                   "E[tokens per round]": widgets.fmt(r["expected_tokens"]), "≈": f"{float(r['expected_tokens']):.4f}"}
                  for r in rows], hide_index=True, key=f"{KEY}-compare")

# -- 4. the tree attention mask ------------------------------------------------------------------
st.header("The tree attention mask")
if scheme is not None:
    round_no = walked["player"].round + 1
    mask = tree_view.verify_mask(walked["player"].trace.context, tree_view.drafted_tree(walked["player"].trace))
    st.markdown(f"One target pass verifies the whole drafted tree of round {round_no} above: each query sees the "
                "cached context, the root and its own ancestors, never a sibling. Siblings share a **position "
                "id**: they are alternatives for the same place in the text.")
    st.plotly_chart(plots_tree.mask_figure(mask["grid"], mask["rows"], mask["columns"],
                                           f"Attention in one pass over the {scheme.name} (blue: the query sees the key)"),
                    key=f"{KEY}-mask")
    st.markdown("Position ids of the queries (the root is the last context token):")
    st.dataframe([dict(zip(mask["rows"], mask["positions"]))], hide_index=True)
    tree_gpt_section.show(scheme)
