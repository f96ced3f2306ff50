"""The Trees page's and the stepper's library: a round's drafted tree read from the trace, node statuses for
any scheme, the walk's decisions, the layout, the mask, and the scheme comparisons
(``specsim.views.tree_view``, ``specsim.views.scheme_view``)."""
from __future__ import annotations

from collections import Counter
from fractions import Fraction as F

import pytest

from specsim import bounds, exact, stats, toy
from specsim.labs import compare
from specsim.sampling import trace_round
from specsim.schemes import Block, Chain, Tree, masks
from specsim.schemes.block import constant_model
from specsim.views import replay, scheme_view, tree_view

SEED = toy.load_model("seed")
FALSE_ALARM = 1e-3  # chi-square tests reject at p < 0.001: one false alarm in a thousand runs


def round_of(model, context, shape, drafts="iid", seed=0):
    tr = Tree(shape, drafts)
    trace = trace_round(model, context, tr, seed=seed)
    return tr, trace, tree_view.drafted_tree(trace), tree_view.walk_steps(trace)


# -- the drafted tree, read from the trace -------------------------------------------------------

@pytest.mark.parametrize("shape", [(2, 2, 1), (3, 1), (1, 1, 1), (2, 3)])
@pytest.mark.parametrize("seed", range(4))
def test_full_iid_tree_is_the_traced_tree_laid_out_like_the_scheme(shape, seed):
    tr, trace, nodes, _ = round_of(SEED, ("a",), shape, seed=seed)
    assert tree_view.parents(nodes) == trace.parents == tr.parents()
    assert [n["token"] for n in nodes] == list(trace.drafts)
    assert [n["depth"] for n in nodes] == masks.tree_depths(tree_view.parents(nodes))
    for n in nodes:  # a path is the parent's path plus the child's place among its siblings
        siblings = [m for m in nodes if m["parent"] == n["parent"]]
        assert n["path"][-1] == siblings.index(n)
        assert n["path"][:-1] == (nodes[n["parent"]]["path"] if n["parent"] >= 0 else ())
    # every tested node is the one the trace's events name, with its token
    for ev in trace.events():
        if ev["kind"] in ("accept", "reject"):
            assert nodes[ev["node"]]["token"] == ev["token"]


def test_a_chain_is_a_path():
    trace = trace_round(SEED, ("a",), Chain(3), seed=2)
    assert [n["path"] for n in tree_view.drafted_tree(trace)] == [(0,), (0, 0), (0, 0, 0)]


def test_same_seed_same_tree_and_distinct_siblings_differ():
    a = round_of(SEED, ("b",), (3, 2), "distinct", seed=5)[2]
    assert a == round_of(SEED, ("b",), (3, 2), "distinct", seed=5)[2]
    for parent in {n["path"][:-1] for n in a}:
        tokens = [n["token"] for n in a if n["path"][:-1] == parent]
        assert len(tokens) == len(set(tokens))


def test_distinct_tree_wider_than_the_drafter_support_has_fewer_nodes():
    zeros = toy.load_model("zeros")  # after "y" q has two tokens with q > 0
    for seed in range(10):
        tr, trace, nodes, steps = round_of(zeros, ("y",), (3, 1), "distinct", seed)
        assert len([n for n in nodes if n["depth"] == 1]) == 2
        assert steps[-1]["kind"] in ("bonus", "correct")
        tree_view.rows_after(steps, len(steps))  # q' = None after the last rejection: no error


def _pairs(drafts, n=1500):
    out = Counter()
    for seed in range(n):
        nodes = round_of(SEED, ("a",), (2,), drafts, seed)[2]
        out[(nodes[0]["token"], nodes[1]["token"])] += 1
    return out


def test_iid_tree_is_drafted_from_q():
    """The two root children of a (2,) tree, drafted before any verification, are i.i.d. from q."""
    q = dict(zip(SEED.vocab, SEED.q(("a",))))
    want = {(x, y): q[x] * q[y] for x in q for y in q}
    fit = stats.chi_square(_pairs("iid"), want)
    assert fit.p_value > FALSE_ALARM, fit


def test_distinct_tree_is_drafted_without_replacement():
    q = dict(zip(SEED.vocab, SEED.q(("a",))))
    want = {(x, y): q[x] * q[y] / (1 - q[x]) for x in q for y in q if x != y}
    fit = stats.chi_square(_pairs("distinct"), want)
    assert fit.p_value > FALSE_ALARM, fit


# -- what a viewer knows after each event, any scheme ------------------------------------------------

@pytest.mark.parametrize("seed", range(10))
def test_chain_node_statuses_read_like_the_paper(seed):
    """A chain of γ = 3: pending while drafted and verified; each test decides its own draft; a rejection at
    position K + 1 discards every later draft at once; the closing token comes last."""
    trace = trace_round(SEED, ("c",), Chain(3), seed=seed)
    k, events = trace.accepted, trace.events()
    tests = [e for e, ev in enumerate(events) if ev["kind"] in ("accept", "reject")]
    for e in range(len(events)):
        known = tree_view.node_statuses(trace, e)
        done = sum(t <= e for t in tests)  # tests shown so far
        want = ["accepted"] * min(done, k) + (["rejected"] if done > k else [])
        want += ["discarded" if done > k else "pending"] * (len(known["statuses"]) - len(want))
        assert known["statuses"] == want
        assert known["closing"] == (None if e < len(events) - 2 else (trace.verdict.closing_kind, trace.closing_token))
    assert replay.draft_statuses(trace, len(events) - 1) == (known["statuses"], known["closing"])


@pytest.mark.parametrize("scheme", [Chain(3), Block(3), Tree((2, 2, 1)), Tree((3, 1), "distinct")])
@pytest.mark.parametrize("seed", range(6))
def test_final_node_statuses_keep_exactly_the_accepted_path(scheme, seed):
    trace = trace_round(SEED, ("a",), scheme, seed=seed)
    events = trace.events()
    first = [tree_view.node_statuses(trace, e)["statuses"] for e in range(len(trace.drafts))]
    assert first == [["pending"] * (e + 1) for e in range(len(trace.drafts))]  # the drafts come first
    known = tree_view.node_statuses(trace, len(events) - 1)
    kept = [j for j, s in enumerate(known["statuses"]) if s == "accepted"]
    assert kept == sorted(trace.verdict.path) and "pending" not in known["statuses"]
    assert known["closing"] == (trace.verdict.closing_kind, trace.closing_token)
    assert [trace.drafts[j] for j in trace.verdict.path] + [trace.closing_token] == list(trace.emitted)


@pytest.mark.parametrize("seed", range(6))
def test_tree_drawing_grows_while_drafting_then_walks(seed):
    trace = trace_round(SEED, ("b",), Tree((2, 2)), seed=seed)
    nodes, steps = tree_view.drafted_tree(trace), tree_view.walk_steps(trace)
    for e, ev in enumerate(trace.events()):
        at = tree_view.at_event(trace, e)
        if ev["kind"] == "draft":
            assert at == {"nodes": nodes[:e + 1], "steps": [], "k": 0}
        else:
            assert at["nodes"] == nodes and at["steps"] == steps
    assert tree_view.at_event(trace, len(trace.events()) - 1)["k"] == len(steps)


# -- the walk's decisions and statuses ---------------------------------------------------------------

@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("drafts", ["iid", "distinct"])
def test_steps_and_final_statuses_agree_with_the_trace(seed, drafts):
    tr, trace, nodes, steps = round_of(SEED, ("c",), (2, 2, 1), drafts, seed)
    kinds = [e["kind"] for e in trace.events()]
    assert [s["kind"] for s in steps] == [k for k in kinds if k in ("accept", "reject", "bonus", "correct")]
    final = tree_view.statuses(nodes, steps, len(steps))
    assert final.count("accepted") == trace.accepted == kinds.count("accept")
    assert final.count("rejected") == kinds.count("reject")
    assert "testing" not in final
    accepted = [n["token"] for n, s in zip(nodes, final) if s == "accepted"]
    assert accepted + [steps[-1]["token"]] == list(trace.emitted)
    assert steps[-1]["kind"] == ("bonus" if trace.accepted == tr.depth else "correct")


def test_statuses_step_by_step():
    _, trace, nodes, steps = round_of(SEED, ("a",), (2, 2, 1), "iid", seed=0)
    assert tree_view.statuses(nodes, steps, 0)[0] == "testing"
    for k in range(len(steps)):
        now, after = tree_view.statuses(nodes, steps, k), tree_view.statuses(nodes, steps, k + 1)
        changed = [i for i in range(len(nodes)) if now[i] != after[i] and after[i] != "testing"]
        if steps[k]["kind"] in ("accept", "reject"):
            assert [nodes[i]["path"] for i in changed] == [steps[k]["path"]]
            assert now[changed[0]] == "testing"
        else:
            assert changed == []
    with pytest.raises(ValueError):
        tree_view.statuses(nodes, steps, len(steps) + 1)


def test_rows_after_a_rejection_are_the_residual_update():
    from specsim.schemes.tree import residual_update
    for seed in range(30):
        _, trace, nodes, steps = round_of(SEED, ("b",), (3,), "iid", seed)
        for k, s in enumerate(steps, 1):
            rows = tree_view.rows_after(steps, k)
            if s["kind"] == "reject" and k == 1:
                p, q = SEED.p(("b",)), SEED.q(("b",))
                assert rows == (list(residual_update(p, q)), list(q))
            if s["kind"] == "accept":
                assert rows is None


# -- layout ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape, seed", [((2, 2, 1), 0), ((3, 1), 2), ((1, 2), 1), ((2, 3), 4)])
def test_layout_leaves_on_distinct_slots_parents_centred(shape, seed):
    _, _, nodes, steps = round_of(SEED, ("a",), shape, seed=seed)
    end = tree_view.closing_path(steps)
    pos = tree_view.layout(nodes, end)
    xy = {(): pos["root"], **{n["path"]: p for n, p in zip(nodes, pos["nodes"])}}
    kids = {}
    for n in nodes:
        kids.setdefault(n["path"][:-1], []).append(xy[n["path"]][0])
    if end is not None:
        kids.setdefault(end, []).append(pos["closing"][0])
    leaves = [x for path, (x, _) in xy.items() if path not in kids]
    leaves += [pos["closing"][0]] if end is not None else []
    assert sorted(leaves) == [float(i) for i in range(len(leaves))]
    for path, xs in kids.items():
        assert xy[path][0] == sum(xs) / len(xs)
    assert all(y == -n["depth"] for n, (_, y) in zip(nodes, pos["nodes"]))
    assert pos["closing"][1] == -(len(end) + 1)


def test_due_step():
    assert tree_view.due_step(10.0, 10.0, 1.0, 3, 3, 9) == 3
    assert tree_view.due_step(10.0, 12.5, 1.0, 3, 3, 9) == 5
    assert tree_view.due_step(10.0, 99.0, 0.5, 0, 0, 40) == 10  # at most 10 ahead at once
    assert tree_view.due_step(10.0, 99.0, 0.5, 0, 38, 40) == 40


# -- the verification mask -------------------------------------------------------------------------

def test_verify_mask_is_the_tree_grid_with_distinct_labels():
    order2 = toy.load_model("order2")
    ctx = order2.contexts()[1]
    _, _, nodes, _ = round_of(order2, ctx, (2, 2), seed=3)
    m = tree_view.verify_mask(ctx, nodes)
    par = tree_view.parents(nodes)
    assert (m["grid"] == masks.tree_grid(par, 1)).all()
    assert m["positions"] == [1] + [1 + n["depth"] for n in nodes]
    assert len(set(m["rows"])) == len(m["rows"]) == len(nodes) + 1
    assert m["columns"] == ["cached 1 " + ctx[0]] + m["rows"]
    assert m["grid"].shape == (len(m["rows"]), len(m["columns"]))


def test_chain_mask_is_the_lower_right_causal_mask():
    _, _, nodes, _ = round_of(SEED, ("a",), (1, 1, 1), seed=0)
    assert (tree_view.verify_mask(("b", "a"), nodes)["grid"] == masks.lower_right_grid(1, 3)).all()


# -- scheme_view -----------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(8))
def test_chain_keep_reads_one_chain_as_the_two_library_traces_do(seed):
    c = scheme_view.chain_keep(SEED, ("b",), 3, seed)
    tok, blk = trace_round(SEED, ("b",), Chain(3), seed), trace_round(SEED, ("b",), Block(3), seed)
    assert c["drafts"] == list(tok.drafts) == list(blk.drafts)
    assert (c["chain"]["accepted"], c["chain"]["emitted"]) == (tok.accepted, list(tok.emitted))
    assert (c["block"]["accepted"], c["block"]["emitted"]) == (blk.accepted, list(blk.emitted))
    passed = [t[2] for t in c["chain"]["tests"]]
    assert passed == [True] * tok.accepted + ([False] if tok.accepted < 3 else [])
    assert c["block"]["accepted"] == max([i + 1 for i, t in enumerate(c["block"]["tests"]) if t[2]], default=0)


def test_chain_vs_block_is_the_exact_engine_for_every_context():
    rows = scheme_view.chain_vs_block(SEED, 2)
    assert [r["context"] for r in rows] == ["a", "b", "c"]
    for r in rows:
        ctx = (r["context"],)
        assert r["chain"] == exact.round_distribution(SEED, ctx, Chain(2)).expected_tokens
        assert r["block"] == exact.round_distribution(SEED, ctx, Block(2)).expected_tokens
        assert r["gain"] == r["block"] - r["chain"] and r["gain"] >= 0


def test_block_gains_on_the_papers_two_token_example():
    m = constant_model(["1/3", "2/3"], ["2/3", "1/3"])
    r = scheme_view.chain_vs_block(m, 2)[0]
    assert r["chain"] - 1 == F(10, 9) and r["block"] - 1 == F(11, 9)  # E[accepted] 10/9 vs 11/9


def test_best_by_budget_is_the_best_row_of_each_family():
    rows = compare.compare(SEED, ("c",), 4)
    curve = scheme_view.best_by_budget(rows, 4)
    assert curve["budgets"] == [1, 2, 3, 4]
    for b in curve["budgets"]:
        fit = [r for r in rows if r["drafted_tokens"] <= b]
        assert curve["chain"][b - 1] == max(r["expected_tokens"] for r in fit if r["kind"] == "chain")
        assert curve["block"][b - 1] == max(r["expected_tokens"] for r in fit if r["kind"] == "block")
        for fam, d in (("tree", "iid"), ("tree:distinct", "distinct")):
            best = max(r["expected_tokens"] for r in fit if r.get("drafts") == d)
            assert curve[fam][b - 1] == best >= curve["chain"][b - 1]  # a chain is a tree
    for fam in scheme_view.FAMILIES:
        assert curve[fam] == sorted(curve[fam])  # a larger budget never loses


def test_budget_bounds_refuse_a_large_vocabulary():
    vocab = [f"t{i}" for i in range(12)]
    big = toy.model_from_dict({"vocab": vocab, "order": 1,
                               "target": {v: [F(1, 12)] * 12 for v in vocab},
                               "draft": {v: [F(1, 12)] * 12 for v in vocab}})
    top = scheme_view.largest_budget(big, limit=bounds.LIMITS.interactive_work)
    assert top < scheme_view.MAX_BUDGET
    scheme_view.check_budget(big, top, bounds.LIMITS.interactive_work)
    with pytest.raises(bounds.WorkRefused):
        scheme_view.check_budget(big, top + 1, bounds.LIMITS.interactive_work)
    order2 = toy.load_model("order2")
    assert scheme_view.largest_budget(order2, limit=bounds.LIMITS.interactive_work) == scheme_view.MAX_BUDGET
    assert scheme_view.largest_budget(SEED, limit=bounds.LIMITS.interactive_work) == 5  # 6 takes about a second
    with pytest.raises(bounds.WorkRefused) as e:
        scheme_view.check_budget(SEED, 6, bounds.LIMITS.interactive_work)
    assert "\n" not in str(e.value) and "lower the budget" in str(e.value)


def test_tree_trace_survives_distinct_drafts_running_out():
    """Regression: after the last untried token is rejected q' is None; the trace records it as null."""
    trace = trace_round(toy.load_model("zeros"), ("y",), Tree((3, 1), "distinct"), seed=1)
    events = trace.events()
    updates = [e for e in events if e["kind"] == "update"]
    assert updates[-1]["q"] is None and events[-2]["kind"] == "correct"
