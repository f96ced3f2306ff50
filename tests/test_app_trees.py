"""The Trees and blocks page through AppTest: its stepper plays the library's tree round event by event,
bad shapes and bad ?scheme= values are one line, the tables are the exact engine's."""
from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from specsim import bounds, toy
from specsim.labs import compare
from specsim.sampling import trace_round
from specsim.schemes import Tree
from specsim.views import scheme_view, tree_view

from tests.apptest import assert_budget_chart, chart_with, open_page, tables  # noqa: E402 (puts app/ on sys.path)
from parts import event_text  # noqa: E402

PAGE = "views/trees.py"
SEED = toy.load_model("seed")


def open_trees(params=None) -> AppTest:
    return open_page(PAGE, params)


def tree_chart(at) -> dict:
    return chart_with(at, "not reached")


def shown_statuses(at) -> dict:
    """legend name -> tokens drawn under it in the tree chart."""
    return {t["name"]: t["text"] for t in tree_chart(at)["data"] if t.get("mode") == "markers+text"}


def player(at):
    return at.session_state["trees"]["player"]


def test_page_opens_with_the_default_tree_and_no_error():
    at = open_trees()
    assert at.title[0].value == "Trees and blocks"
    assert not at.error
    assert player(at).trace.scheme == Tree((2, 2, 1))
    assert len(at.get("plotly_chart")) >= 3  # tree, budget curve, mask


@pytest.mark.parametrize("seed, drafts", [(0, "iid"), (7, "distinct")])
def test_next_plays_the_library_round_event_by_event(seed, drafts):
    at = open_trees()
    at.radio(key="trees-drafts").set_value(drafts).run()
    at.number_input(key="trees-seed").set_value(seed).run()
    trace = trace_round(SEED, ("a",), Tree((2, 2, 1), drafts), seed=seed)
    assert player(at).trace.to_dict() == trace.to_dict()
    events, names = trace.events(), tree_view.sibling_paths(trace.parents)
    for e, ev in enumerate(events):
        assert (player(at).round, player(at).event) == (0, e)
        view = tree_view.at_event(trace, e)
        status = tree_view.statuses(view["nodes"], view["steps"], view["k"])
        drawn = shown_statuses(at)
        for name in ("accepted", "rejected", "not reached"):
            assert drawn[name] == [n["token"] for n, s in zip(view["nodes"], status) if s == name]
        line = "\n".join(m.value for m in at.markdown)
        assert f"event {e + 1} of {len(events)}" in line and event_text.describe_event(ev, trace.scheme, names) in line
        at.button(key="trees-next").click().run()
        assert not at.exception
    closing = events[-2]  # the closing token, drawn in the last events' chart
    at.button(key="trees-prev").click().run()
    assert shown_statuses(at)[closing["kind"]] == [closing["token"]]
    assert (player(at).round, player(at).event) == (0, len(events) - 1)
    at.button(key="trees-reset").click().run()
    assert (player(at).round, player(at).event) == (0, 0)


def test_slider_and_play_pause():
    at = open_trees()
    n = player(at).events_in()
    at.slider(key="trees-slider-0").set_value(n).run()
    assert player(at).event == n - 1
    at.button(key="trees-play").click().run()
    assert at.session_state["trees"]["playing"]
    at.button(key="trees-play").click().run()
    assert not at.session_state["trees"]["playing"]
    assert not at.exception


@pytest.mark.parametrize("text, words", [("2,x", "not a whole number"), ("0", ">= 1"), ("8,8", "limit"),
                                         ("2,,1", "empty width")])
def test_a_bad_shape_is_one_error_line_and_the_rest_of_the_page_still_works(text, words):
    at = open_trees()
    at.text_input(key="trees-shape").set_value(text).run()
    assert not at.exception
    assert len(at.error) == 1 and words in at.error[0].value and "\n" not in at.error[0].value
    assert any(c for c in at.get("plotly_chart"))  # the budget chart is still drawn


def test_compare_table_is_the_library_compare():
    at = open_trees()
    assert at.slider(key="trees-budget").max == scheme_view.largest_budget(SEED, limit=bounds.LIMITS.interactive_work)
    at.slider(key="trees-budget").set_value(3).run()
    rows = scheme_view.budget_rows(SEED, ("a",), 3)  # every fixed scheme, then the adaptive ones
    assert {r["scheme"] for r in compare.compare(SEED, ("a",), 3)} < {r["scheme"] for r in rows}
    table = next(d for d in tables(at) if "scheme" in d.columns)
    assert table["scheme"].tolist() == [r["scheme"] for r in rows]
    assert table["E[tokens per round]"].tolist() == [str(r["expected_tokens"]) for r in rows]
    assert table["drafted"].tolist() == [str(r["drafted_tokens"]) for r in rows]
    assert_budget_chart(at, rows, 3, "tree:distinct")


def test_block_vs_chain_table_is_the_exact_engine():
    at = open_trees()
    at.number_input(key="trees-gamma").set_value(2).run()
    table = next(d for d in tables(at) if "block − token-wise" in d.columns)
    want = scheme_view.chain_vs_block(SEED, 2)
    assert table["token-wise"].tolist() == [str(r["chain"]) for r in want]
    assert table["block"].tolist() == [str(r["block"]) for r in want]


@pytest.mark.parametrize("params", [{"scheme": "tree:3,1:distinct"}, {"tree": "3,1", "drafts": "distinct"}])
def test_the_scheme_comes_from_the_query_or_its_shorthand(params):
    at = open_trees({**params, "seed": "4", "budget": "2", "from_lesson": "19"})
    assert player(at).trace.to_dict() == trace_round(SEED, ("a",), Tree((3, 1), "distinct"), seed=4).to_dict()
    assert at.slider(key="trees-budget").value == 2
    assert any("lesson 19" in str(p.proto.label) for p in at.get("page_link"))
    assert not at.error


def test_bad_shorthand_parameters_are_ignored():
    at = open_trees({"tree": "0,9x", "drafts": "both", "seed": "-3", "budget": "99"})
    assert player(at).trace.scheme == Tree((2, 2, 1)) and not at.error


@pytest.mark.parametrize("value, words", [("tree:0,1", ">= 1"), ("tree:2,1:both", "drafts must be"),
                                          ("chain:3", "this page shows tree"), ("x" * 5000, "the limit is 60"),
                                          ("tree:9,9", "limit")])
def test_a_bad_scheme_parameter_is_one_error_line(value, words):
    at = open_trees({"scheme": value})
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and words in errors[0] and "\n" not in errors[0] and len(errors[0]) < 300, errors
    assert player(at).trace.scheme == Tree((2, 2, 1))  # the page goes on with its default tree


def test_tiny_gpt_section_runs_a_real_tree_and_measures_every_scheme():
    """The real pair's round: its mask has one row per drafted node (and the root), each node sees
    its ancestors only; the scheme table lists every scheme with tokens per pass >= 1."""
    from specsim.schemes import masks
    at = open_trees({"scheme": "tree:2,1"})
    at.text_input(key="tree-gpt-prompt").set_value("def f(x):\n    return ")
    next(b for b in at.button if b.label == "Generate with tree:2,1").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    mask = next(json.loads(c.proto.spec) for c in at.get("plotly_chart")
                if "tree mask of its one target pass" in json.dumps(json.loads(c.proto.spec)["layout"].get("title", "")))
    rows = mask["data"][0]["y"]
    assert rows[0].startswith("root") and len(rows) == 1 + 4  # shape 2,1 drafts 4 nodes
    grid = mask["data"][0]["z"]
    want = masks.tree_grid(Tree((2, 1)).parents(), 0)  # the new columns: root and the 4 nodes, level by level
    assert [row[-5:] for row in grid] == want.astype(int).tolist()
    next(b for b in at.button if b.label.startswith("Measure every scheme")).click().run()
    assert not at.exception and not at.error
    table = next(t for t in tables(at) if "tokens / pass" in t.columns)
    assert list(table["scheme"]) == ["chain:4", "block:4", "tree:1,1,1,1", "tree:2,1", "tree:2,1:distinct", "tree:4",
                                     "chain:max=4,stop=0.45", "tree:dynamic,budget=4,depth=3,topk=2"]
    assert (table["tokens / pass"].astype(float) >= 1).all() and (table["drafted"] == "4").all()
