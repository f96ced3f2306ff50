"""What one event of a stepped round looks like: the event's figure (a chain's or a block's, or the drafted
tree as far as it is known) and, for a tree, the rows p' and q' after a rejection (``parts.stepper``)."""
from __future__ import annotations

import streamlit as st

from parts import presenter
from specsim.plots import charts
from specsim.plots import rounds as plots_rounds
from specsim.plots import tree as plots_tree
from specsim.views import tree_view


def round_figure(trace, e: int, title: str):
    """The figure of event ``e``: a chain's or a block's event figure, or the drafted layout (a tree, a dynamic
    tree as the drafter grew it this round, a confidence chain as long as it ran) drawn as far as it is known."""
    if not tree_view.node_by_node(trace.scheme):
        return plots_rounds.event_figure(trace, e)
    at = tree_view.at_event(trace, e)
    return plots_tree.tree_figure(trace.context, at["nodes"], at["steps"], at["k"], title)


def figure(s: dict, j: int, trace, e: int, title: str):
    """``round_figure`` of event ``e`` of round ``j``, built once per stepper state ``s``. While Play holds an
    event it builds the next one here, so the run that shows it sends the caption and the chart together
    (building one took 20-30 ms between them)."""
    memo = s.setdefault("figures", {})
    got = memo.get((j, e, title))
    if got is None or got[0] is not trace:  # the trace itself is kept: a Reset's new rounds never match
        if len(memo) >= 3:
            memo.clear()
        got = memo[(j, e, title)] = (trace, round_figure(trace, e, f"{title}, round {j + 1}"))
    return got[1]


def tree_rows(model, trace, e: int, key: str) -> None:
    """A tree's current rows (p', q') after a rejection, beside the drawing."""
    at = tree_view.at_event(trace, e)
    rows = tree_view.rows_after(at["steps"], at["k"])
    if rows is not None:
        what = "the rejected token removed" if trace.scheme.point_mass_drafts else "the residual"
        presenter.chart(charts.pq_bars(model.vocab, rows[0], rows[1], f"after the rejection: p' ({what}) and q'"),
                        key=f"{key}-rows")
        st.caption("The next child of this node (or the closing token) is judged against these rows, "
                   "not against the node's own p and q.")
    else:
        st.info("The rows p' and q' after a rejection appear here.")
