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
import streamlit as st

from parts import memory, plain, presenter, stepper, toy_setup, widgets
from sections import tree_gpt_section, trees_schemes_section, tryit
from specsim.plots import tree as plots_tree
from specsim.views import tree_view

KEY = "trees"
SEED_MAX = 10**6 - 1

st.title("Trees and blocks")
tryit.back_to_lesson()
st.caption("A tree round played event by event, block against token-wise verification, every scheme within a "
           "drafting budget, and the tree attention mask; the settings are in the sidebar.")

params = st.query_params
with st.sidebar:
    model, context, scheme = toy_setup.pick(KEY, scheme=dict(default="tree:2,2,1",
                                                              kinds=("tree", "dynamic", "confidence")))
    if model is not None:
        memory.remember(f"{KEY}-seed", 0, widgets.query_int(params.get("seed"), 0, SEED_MAX),
                        valid=memory.within(0, SEED_MAX))
        seed = int(st.number_input("seed", 0, SEED_MAX, key=f"{KEY}-seed"))
        memory.remember(f"{KEY}-speed", 1.0, valid=memory.among((0.5, 1.0, 2.0)))
        speed = st.select_slider("play speed (seconds per event)", [0.5, 1.0, 2.0], key=f"{KEY}-speed")
if model is None:
    stepper.stop(KEY)
    st.stop()


# -- 1. a tree round, one event at a time --------------------------------------------------------
st.header("A tree round, one event at a time")
# the symbols the stepper's sentences use, defined before it speaks (short: the chart stays on the first screen)
st.caption("The walk keeps the first child with u < min(1, p'(x)/q'(x)): **p'**, **q'** are the target's and the "
           "drafter's rows at that node (p and q at first; after each rejected child p' ← normalize(max(0, p' − q'))). "
           "A **block** keeps its drafts up to the last position whose coin comes up: u < **h**, its stop "
           "probability there.")
if scheme is not None:
    st.markdown(f"The drafter drafts the whole **{scheme.name}** first, level by level; one target pass then "
                "gives p at the root and after every node, and the walk decides, node by node."
                + scheme.round_note)
    walked = stepper.show(KEY, model, context, scheme, seed, speed)
else:
    stepper.stop(KEY)


trees_schemes_section.block_vs_chain(model, context, seed)
trees_schemes_section.budget(model, context, scheme, params)

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
    plain.table([dict(zip(mask["rows"], mask["positions"]))])
    tree_gpt_section.show(scheme)
