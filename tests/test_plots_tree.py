"""The Trees page's figures: their data is the library's (``specsim.plots.tree``)."""
from __future__ import annotations

import pytest

from specsim import sampling, toy
from specsim.labs import compare
from specsim.plots import tree as plots_tree
from specsim.plots.colors import BONUS_COLOR, OVERLAP_COLOR, P_COLOR, PANEL, RESIDUAL_COLOR
from specsim.schemes import Tree
from specsim.views import scheme_view, tree_view

SEED = toy.load_model("seed")


def walk(shape=(2, 2, 1), drafts="iid", seed=0, context=("a",)):
    trace = sampling.trace_round(SEED, context, Tree(shape, drafts), seed=seed)
    return trace, tree_view.drafted_tree(trace), tree_view.walk_steps(trace)


def markers(fig) -> dict:
    """legend name -> [(x, y, token)] of every node trace."""
    return {t.name: list(zip(t.x, t.y, t.text)) for t in fig.data if t.mode == "markers+text"}


@pytest.mark.parametrize("seed", [0, 1, 5])
def test_tree_figure_draws_every_node_with_its_token_coloured_by_status(seed):
    trace, nodes, steps = walk(seed=seed)
    pos = tree_view.layout(nodes, tree_view.closing_path(steps))
    for k in range(len(steps) + 1):
        fig = plots_tree.tree_figure(("a",), nodes, steps, k)
        status = tree_view.statuses(nodes, steps, k)
        got = markers(fig)
        for name, colour in (("accepted", OVERLAP_COLOR), ("rejected", RESIDUAL_COLOR), ("not reached", PANEL)):
            want = [(*pos["nodes"][i], nodes[i]["token"]) for i, s in enumerate(status) if s == name]
            assert got[name] == want
            assert next(t for t in fig.data if t.name == name).marker.color == colour
        assert ("being tested" in got) == ("testing" in status)
        closing = steps[-1]["kind"]
        assert (closing in got) == (k == len(steps))
    assert got[closing] == [(*pos["closing"], trace.emitted[-1])]
    colour = next(t for t in fig.data if t.name == closing).marker.color
    assert colour == (BONUS_COLOR if closing == "bonus" else P_COLOR)


def test_budget_figure_plots_the_curve():
    curve = scheme_view.best_by_budget(compare.compare(SEED, ("b",), 3), 3)
    fig = plots_tree.budget_figure(curve)
    assert [t.name for t in fig.data] == list(scheme_view.FAMILIES)
    assert len({t.line.color for t in fig.data}) == len(fig.data)  # every family its own colour
    for t in fig.data:
        assert list(t.x) == [1, 2, 3] and list(t.y) == [float(v) for v in curve[t.name]]


def test_mask_figure_is_the_grid():
    _, nodes, _ = walk(shape=(2, 1))
    m = tree_view.verify_mask(("b", "a"), nodes)
    fig = plots_tree.mask_figure(m["grid"], m["rows"], m["columns"])
    heat = fig.data[0]
    assert [list(r) for r in heat.z] == m["grid"].astype(int).tolist()
    assert list(heat.y) == m["rows"] and list(heat.x) == m["columns"]
    with pytest.raises(ValueError):
        plots_tree.mask_figure(m["grid"][:2, :2], ["x", "x"], ["a", "b"])
