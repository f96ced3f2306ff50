"""The Trees page with the adaptive schemes (AppTest): a confidence-stopped chain and EAGLE-2's
dynamic tree open from ?scheme= and from the picker, the round walk draws the layout the drafter chose
this round, the budget table lists both beside every fixed scheme with their exact drafting cost, and the
best static tree block shows the shape ``best_tree`` returns."""
from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from specsim import toy
from specsim.labs import best_tree
from specsim.sampling import trace_round
from specsim.schemes import ConfidenceChain, DynamicTree, Tree, parse
from specsim.schemes.adaptive import drafting_cost, equal_cost_chain
from specsim.views import scheme_view, tree_view

from tests.apptest import assert_budget_chart, chart_with, open_page, tables  # noqa: E402 (puts app/ on sys.path)
from parts import event_text  # noqa: E402

PAGE = "views/trees.py"
SEED = toy.load_model("seed")
DYNAMIC = "tree:dynamic,budget=6,depth=3,topk=2"
CONFIDENT = "chain:max=6,stop=0.45"


def open_trees(params=None) -> AppTest:
    return open_page(PAGE, params)


def player(at):
    return at.session_state["trees"]["player"]


def tree_chart(at) -> dict:
    return chart_with(at, "not reached")


def drawn_nodes(at) -> list:
    """(x, y, token) of every drafted node in the round chart (the context square and the closing diamond apart)."""
    out = []
    for t in tree_chart(at)["data"]:
        if t.get("mode") == "markers+text" and t.get("name") in ("accepted", "rejected", "not reached", "being tested"):
            out += list(zip(t["x"], t["y"], t["text"]))
    return sorted(out)


def table(at, column: str):
    return next(d for d in tables(at) if column in d.columns)


@pytest.mark.parametrize("text, cls", [(DYNAMIC, DynamicTree), (CONFIDENT, ConfidenceChain),
                                       ("chain:max=4,stop=2/5,on=draft", ConfidenceChain)])
def test_the_page_opens_each_adaptive_scheme_from_the_query(text, cls):
    at = open_trees({"scheme": text, "seed": "3"})
    assert not at.error, [e.value for e in at.error]
    scheme = player(at).trace.scheme
    assert isinstance(scheme, cls) and scheme == parse(text)
    assert player(at).trace.to_dict() == trace_round(SEED, ("a",), parse(text), seed=3).to_dict()
    assert at.radio(key="trees-kind").value == scheme.kind


def test_a_dynamic_round_is_drawn_with_the_layout_it_drafted_event_by_event():
    """Every event of the round: the nodes drawn are the drafted ones at their drafted depths (from the
    round's own parents, not a fixed shape), and each test is described as a point mass."""
    at = open_trees({"scheme": DYNAMIC, "seed": "0"})
    trace = trace_round(SEED, ("a",), parse(DYNAMIC), seed=0)
    assert trace.parents == [-1, -1, 0, 0, 1, 2]  # a, b; a's a and b; b's a; then a under a.a
    names = tree_view.sibling_paths(trace.parents)
    for e, ev in enumerate(trace.events()):
        view = tree_view.at_event(trace, e)
        assert sorted((y, tok) for _, y, tok in drawn_nodes(at)) == sorted((-n["depth"], n["token"])
                                                                          for n in view["nodes"])
        line = next(m.value for m in at.markdown if m.value.startswith(f"round 1 · event {e + 1} of"))
        assert line.endswith(event_text.describe_event(ev, trace.scheme, names))
        if ev["kind"] in ("accept", "reject"):
            assert f"p'(x) = {ev['acceptance']}" in line and "min(1, p'(x)/q'(x))" not in line
        if ev["kind"] == "draft":
            assert "chosen, not sampled" in line
        last = drawn_nodes(at)
        at.button(key="trees-next").click().run()
        assert not at.exception
    assert sorted(-y for _, y, _ in last) == [n["depth"] for n in tree_view.drafted_tree(trace)] == [1, 1, 2, 2, 2, 3]


def test_a_confidence_round_is_drawn_as_the_path_it_drafted():
    at = open_trees({"scheme": CONFIDENT, "seed": "0"})
    trace = player(at).trace
    assert len(trace.drafts) == 2 < 6  # the chain stopped after drafting "b" (top probability 2/5 < 0.45)
    at.button(key="trees-round").click().run()
    assert [tok for _, _, tok in sorted(drawn_nodes(at), key=lambda n: -n[1])] == list(trace.drafts)
    assert not at.exception and not at.error


def test_the_picker_makes_each_adaptive_scheme():
    at = open_trees()
    at.radio(key="trees-kind").set_value("dynamic").run()
    at.number_input(key="trees-nodes").set_value(5).run()
    at.number_input(key="trees-topk").set_value(3).run()
    assert player(at).trace.scheme == DynamicTree(5, 3, 3)
    at.radio(key="trees-kind").set_value("confidence").run()
    at.text_input(key="trees-stop").set_value("2/5").run()
    at.radio(key="trees-on").set_value("draft").run()
    assert player(at).trace.scheme == ConfidenceChain(6, "0.4", "draft")
    assert not at.error and not at.exception
    at.switch_page("views/speedup.py").run()  # the session remembers the scheme across pages
    at.switch_page("views/trees.py").run()
    assert player(at).trace.scheme == ConfidenceChain(6, "0.4", "draft")


@pytest.mark.parametrize("field, value, words", [("trees-stop", "1.5", "strictly between 0 and 1"),
                                                 ("trees-stop", "x", "stop")])
def test_a_bad_threshold_is_one_error_line(field, value, words):
    at = open_trees({"scheme": CONFIDENT})
    at.text_input(key=field).set_value(value).run()
    assert not at.exception
    assert len(at.error) == 1 and words in at.error[0].value and "\n" not in at.error[0].value


@pytest.mark.parametrize("value, words", [("chain:max=6,stop=1.5", "strictly between 0 and 1"),
                                          ("tree:dynamic,budget=3,depth=4,topk=2", "depth"),
                                          ("chain:max=6,stop=0.45,on=both", "on must be")])
def test_a_bad_adaptive_query_is_one_error_line(value, words):
    at = open_trees({"scheme": value})
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and words in errors[0] and "\n" not in errors[0], errors
    assert player(at).trace.scheme == Tree((2, 2, 1))


@pytest.mark.parametrize("text", [DYNAMIC, CONFIDENT])
def test_the_budget_table_and_chart_include_the_adaptive_schemes_exactly(text):
    at = open_trees({"scheme": text, "budget": "4"})
    rows = scheme_view.budget_rows(SEED, ("a",), 4, parse(text))
    got = table(at, "E[drafts]")
    assert got["scheme"].tolist() == [r["scheme"] for r in rows]
    adaptive = [s.name for s in scheme_view.adaptive_schemes(4, parse(text))]
    assert set(adaptive) <= set(got["scheme"]) and len(adaptive) == 8
    by_name = dict(zip(got["scheme"], got.to_dict("records")))
    for name in adaptive:
        s = parse(name)
        cost = drafting_cost(SEED, ("a",), s)
        row = by_name[name]
        assert row["E[tokens per round]"] == str(s.enumerate(SEED, ("a",)).expected_tokens)
        assert (row["E[drafts]"], row["drafter passes"]) == (f"{float(cost.drafts):.4f}", f"{float(cost.passes):.4f}")
        fixed = f"{float(equal_cost_chain(SEED, ('a',), cost.drafts)):.4f}" if s.kind == "confidence" else ""
        assert row["fixed chain at equal E[drafts]"] == fixed
    assert_budget_chart(at, rows, 4, "dynamic")


def test_the_sidebar_scheme_sets_the_compared_adaptive_settings():
    at = open_trees({"scheme": "tree:dynamic,budget=4,depth=2,topk=3", "budget": "3"})
    names = set(table(at, "E[drafts]")["scheme"])
    assert {"tree:dynamic,budget=3,depth=2,topk=3", "chain:max=3,stop=0.45"} <= names


@pytest.mark.parametrize("budget", [2, 4])
def test_the_best_tree_block_shows_the_dp_shape(budget):
    at = open_trees({"budget": str(budget)})
    got = table(at, "best shape")
    for drafts, row in zip(("iid", "distinct"), got.to_dict("records")):
        vector = best_tree.acceptance_vector(SEED, SEED.contexts(), budget, drafts)
        best = best_tree.best_tree(vector, budget)
        check = best_tree.check(SEED, ("a",), budget, drafts)
        assert row["children"] == drafts
        assert row["best shape"] == "tree:" + ",".join(map(str, best.shape))
        assert row["predicted E[tokens]"] == f"{float(best.expected_tokens):.4f}"
        assert row["exact here"] == f"{float(check.exact_tokens):.4f}"
        assert row["exact, mean over contexts"] == f"{float(check.exact_mean):.4f}"
        assert row["best layout (parents)"] == str(list(best.general.parents))
    assert not at.error



def test_tiny_gpt_section_runs_a_dynamic_tree_and_draws_its_drafted_mask():
    """The real pair's dynamic round: the mask has one row per node the drafter kept this round (at most the
    budget), and its new columns are the tree mask of those nodes' own parents (read back from their names)."""
    from specsim.schemes import masks
    name = "tree:dynamic,budget=4,depth=3,topk=2"
    at = open_trees({"scheme": name})
    next(b for b in at.button if b.label == f"Generate with {name}").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    mask = next(json.loads(c.proto.spec) for c in at.get("plotly_chart")
                if "tree mask of its one target pass" in json.dumps(json.loads(c.proto.spec)["layout"].get("title", "")))
    rows, grid = mask["data"][0]["y"], mask["data"][0]["z"]
    assert rows[0].startswith("root") and 2 <= len(rows) <= 1 + 4
    names = [r.split()[0] for r in rows[1:]]  # "1", "1.1", "2", ...: each node's sibling numbers from the root
    drafted = [names.index(n.rsplit(".", 1)[0]) if "." in n else -1 for n in names]
    assert tree_view.sibling_paths(drafted) == names
    assert [row[-len(rows):] for row in grid] == masks.tree_grid(drafted, 0).astype(int).tolist()


def test_a_huge_threshold_box_is_refused_without_echo():
    at = open_trees({"scheme": CONFIDENT})
    at.text_input(key="trees-stop").set_value("0." + "4" * 5000).run()
    assert not at.exception
    assert len(at.error) == 1 and "4" * 30 not in at.error[0].value and len(at.error[0].value) < 300
