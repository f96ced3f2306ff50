"""The Trees page's tree round stepper: one seeded tree round walked a decision at a time.

The walk is ``specsim.schemes.tree.Tree.trace`` for the seed, completed into the whole
drafted tree by ``specsim.views.tree_view.drafted_tree``; Play advances by the clock
(``tree_view.due_step``), like the Round stepper. The round lives in
``st.session_state[KEY]`` and is rebuilt when the settings change; the button
callbacks read and change only that.
"""
from __future__ import annotations

import time

import streamlit as st

from specsim.plots import charts as plots

from specsim.plots import tree as plots_tree

from specsim.views import tree_view
from parts.tokens import md, md_tokens

KEY = "trees"


def state(model, context, scheme, seed) -> dict:
    """{"trace", "nodes", "steps", "k", "playing", "clock"}, new when the settings change."""
    settings = (model.to_json(), context, scheme.shape, scheme.drafts, seed)
    s = st.session_state.get(KEY)
    if s is None or s["settings"] != settings:
        trace = scheme.trace(model, context, seed=seed)
        s = st.session_state[KEY] = {
            "settings": settings, "trace": trace, "nodes": tree_view.drafted_tree(model, context, scheme, trace, seed),
            "steps": tree_view.walk_steps(trace), "k": 0, "playing": False, "clock": None}
    return s


def move(delta=None, to=None):
    s = st.session_state[KEY]
    s["k"] = min(max(s["k"] + delta if to is None else to, 0), len(s["steps"]))


def play_pause():
    s = st.session_state[KEY]
    s["playing"], s["clock"], s["rerun_app"] = not s["playing"], None, True
    if s["playing"] and s["k"] == len(s["steps"]):
        s["k"] = 0  # Play at the end starts the walk again


def slide():
    move(to=st.session_state[f"{KEY}-slider"])


def keep_time(s, speed: float):
    """While playing, show the decision the clock says is due; stop at the end."""
    now = time.monotonic()
    if s["clock"] is None or s["clock"][1] != speed:
        s["clock"] = (now, speed, s["k"])
    start, _, first = s["clock"]
    s["k"] = tree_view.due_step(start, now, speed, first, s["k"], len(s["steps"]))
    if s["k"] == len(s["steps"]):
        s["playing"], s["rerun_app"] = False, True


def view(model, context, scheme, seed, speed):
    s = state(model, context, scheme, seed)
    if s.pop("rerun_app", False):
        st.rerun(scope="app")  # play/pause changes the fragment's timer
    if s["playing"]:
        keep_time(s, speed)
    nodes, steps, k = s["nodes"], s["steps"], s["k"]
    bar = st.container(horizontal=True, wrap=True)
    bar.button("Previous", on_click=move, args=(-1,), icon=":material/skip_previous:", key=f"{KEY}-prev",
               disabled=k == 0)
    bar.button("Next", on_click=move, args=(1,), icon=":material/skip_next:", key=f"{KEY}-next", type="primary",
               disabled=k == len(steps))
    bar.button("Pause" if s["playing"] else "Play", on_click=play_pause, key=f"{KEY}-play",
               icon=":material/pause:" if s["playing"] else ":material/play_arrow:")
    bar.button("Reset", on_click=move, kwargs={"to": 0}, icon=":material/restart_alt:", key=f"{KEY}-reset")
    st.session_state[f"{KEY}-slider"] = k
    st.slider("decisions shown", 0, len(steps), key=f"{KEY}-slider", on_change=slide)
    line = (tree_view.describe({**steps[k - 1], "token": md(steps[k - 1]["token"])}) if k else
            f"{len(nodes)} drafted tokens; one target pass gives p at every node. Press **Next**.")
    st.markdown(f"decision {k} of {len(steps)} · {line}")
    if k == len(steps):
        t = s["trace"]
        st.success(f"Emitted **{md_tokens(t['emitted'])}**: {t['accepted']} accepted draft(s) and one "
                   f"{steps[-1]['kind']} token, for one target pass.")
    left, right = st.columns([3, 2])
    with left:
        st.plotly_chart(plots_tree.tree_figure(context, nodes, steps, k, f"{scheme.name}, seed {seed}"),
                        key=f"{KEY}-tree")
    with right:
        rows = tree_view.rows_after(steps, k)
        if rows is not None:
            st.plotly_chart(plots.pq_bars(model.vocab, rows[0], rows[1],
                                          "after the rejection: p' (the residual) and q'"), key=f"{KEY}-rows")
            st.caption("The next child of this node (or the closing token) is judged against these rows, "
                       "not against the node's own p and q.")
        else:
            st.info("The residual row appears here after a rejection.")


def show(model, context, scheme, seed: int, speed: float) -> dict:
    """The stepper as a fragment that reruns on the clock while playing; returns the round's state."""
    @st.fragment(run_every=speed if state(model, context, scheme, seed)["playing"] else None)
    def walk():
        view(model, context, scheme, seed, speed)

    walk()
    return state(model, context, scheme, seed)
