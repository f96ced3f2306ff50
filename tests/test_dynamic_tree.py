"""EAGLE-2 dynamic trees (``tree:dynamic,budget=B,depth=D,topk=K``): layout, exactness, the refuted cousin.

The independent checks below share no code with the scheme's walk: the
candidates are regrown here from their definition (every node of a level
ranked, the K best expanded), and the round is enumerated as "draw y from p at
the node; if y is a child, go there, else emit y" -- the point-mass rule
restated without removing tokens one at a time.
"""
from collections import defaultdict
from fractions import Fraction as F

import numpy as np
import pytest

from specsim import bounds, exact, sampling
from specsim.labs import judge, pitfalls
from specsim.schemes import DynamicTree, Tree, masks, parse
from specsim.schemes.dynamic_tree import POINT_MASS
from specsim.toy import load_model

from .test_adaptive_schemes import COMMANDS
from tests.helpers import assert_rounds_fit_the_exact_round

SHAPES = [(6, 3, 2), (4, 2, 2), (3, 3, 1), (6, 2, 3), (1, 1, 1), (8, 4, 3)]
AS_IF_SAMPLED = pitfalls.TREE_PITFALLS["top-k-tree-as-if-sampled"].rule


def q_after(m, ctx):
    return lambda path: m.q(ctx + tuple(m.vocab[x] for x in path))


def candidates(m, ctx, depth, topk):
    """{path: cumulative q} grown from the definition: level by level, the topk best of a level expanded."""
    score, expanded = {}, [()]
    for level in range(1, depth + 1):
        made = {}
        for node in expanded:
            q = m.q(ctx + tuple(m.vocab[x] for x in node))
            best = sorted(range(len(q)), key=lambda x: (-q[x], x))[:topk]
            made.update({node + (x,): score.get(node, 1) * q[x] for x in best if q[x] > 0})
        score.update(made)
        expanded = sorted(made, key=lambda path: (-made[path], path))[:topk]
    return score


def brute_round(m, ctx, tokens, parents):
    """Draw y from p at each node: a child equal to y is entered, else y is emitted (a leaf: the bonus)."""
    kids = defaultdict(dict)
    for j, (x, a) in enumerate(zip(tokens, parents)):
        kids[a][x] = j
    out = defaultdict(F)

    def walk(node, emitted, prob):
        for y, py in enumerate(m.p(ctx + emitted)):
            if not py:
                continue
            if y in kids[node]:
                walk(kids[node][y], emitted + (m.vocab[y],), prob * py)
            else:
                out[emitted + (m.vocab[y],)] += prob * py

    walk(-1, (), F(1))
    return dict(out)


@pytest.fixture(params=[(preset, shape) for preset in ("seed", "order2") for shape in SHAPES],
                ids=lambda c: f"{c[0]}-{'-'.join(map(str, c[1]))}")
def model_and_tree(request):
    """(toy model, dynamic tree): every shape of ``SHAPES`` on the seed and order-2 models."""
    preset, shape = request.param
    return load_model(preset), DynamicTree(*shape)


def test_layout_is_the_best_connected_subtree_of_the_candidates(model_and_tree):
    m, s = model_and_tree
    for ctx in m.contexts():
        tokens, parents = s.layout(q_after(m, ctx))
        pool = candidates(m, ctx, s.depth, s.topk)
        paths = []
        for x, a in zip(tokens, parents):
            assert a < len(paths)  # parents come first
            paths.append((paths[a] if a >= 0 else ()) + (x,))
        assert len(set(paths)) == len(paths) == min(s.budget, len(pool))
        assert set(paths) <= set(pool)
        assert [len(p) for p in paths] == sorted(len(p) for p in paths)  # level by level
        kept_low = min(pool[p] for p in paths)
        assert all(pool[p] <= kept_low for p in set(pool) - set(paths))  # no better candidate left out
        assert max(len(p) for p in paths) <= s.depth


def test_round_equals_the_independent_enumeration(model_and_tree):
    m, s = model_and_tree
    for ctx in m.contexts():
        r = s.enumerate(m, ctx)
        assert r.outcomes == brute_round(m, ctx, *s.layout(q_after(m, ctx)))
        assert sum(r.accepted) == 1


@pytest.mark.parametrize("budget,depth,topk", SHAPES)
def test_chained_rounds_give_the_target_joint_exactly(budget, depth, topk):
    for preset in ("seed", "order2"):
        checks = exact.check_exactness(load_model(preset), 3, [DynamicTree(budget, depth, topk)])
        assert all(c.exact and c.max_abs_difference == 0 for c in checks)


def test_seed_layout_and_numbers_by_hand():
    """After "a": q = (1/2, 2/5, 1/10), p = (3/5, 3/10, 1/10). Candidates a 1/2, b 2/5, aa 1/4, ab 1/5,
    ba 4/25, bb 3/25: budget 4 keeps a, b, aa, ab."""
    m = load_model("seed")
    s = DynamicTree(4, 2, 2)
    tokens, parents = s.layout(q_after(m, ("a",)))
    assert [m.vocab[x] for x in tokens] == ["a", "b", "a", "b"] and parents == [-1, -1, 0, 0]
    # E = 3/5 (a) * (2 + 9/10) + 3/10 (b, a leaf) * 2 + 1/10 * 1
    assert s.enumerate(m, ("a",)).expected_tokens == F(3, 5) * F(29, 10) + F(3, 10) * 2 + F(1, 10)


def test_ties_are_broken_by_token_index_and_keep_the_tree_connected():
    """Uniform rows: every candidate of a level ties; the lower indices win and parents come with children."""
    uniform = lambda path: [F(1, 4)] * 4  # noqa: E731
    tokens, parents = DynamicTree(5, 2, 2).layout(uniform)
    assert tokens == [0, 1, 0, 1, 0] and parents == [-1, -1, 0, 0, 1]


def test_the_as_if_sampled_cousin_is_refuted_with_its_exact_tv():
    """The same top-k children verified with min(1, p'/q') and the residual, as if drawn from q."""
    m = load_model("seed")
    s = parse("tree:dynamic,budget=6,depth=3,topk=2")
    assert judge.judge(m, ("a",), s, n_tokens=2).total_variation == 0
    # one token: after "a", p(a) = 3/5 >= q(a) = 1/2, so the first child "a" is always kept: P(a) = 1, TV = 2/5
    assert judge.judge(m, ("a",), s, AS_IF_SAMPLED, 1).total_variation == F(2, 5)
    assert judge.judge(m, ("a",), s, AS_IF_SAMPLED, 2).total_variation == F(16, 25)
    for ctx in load_model("order2").contexts():
        assert judge.judge(load_model("order2"), ctx, s, AS_IF_SAMPLED, 2).total_variation > 0


def test_mask_and_positions_come_from_the_drafted_parents():
    s = DynamicTree(6, 3, 2)
    parents = [-1, -1, 0, 0, 2, 1]
    assert np.array_equal(s.mask(4, parents), masks.tree_grid(parents, 4))
    assert s.positions(4, parents) == masks.tree_positions(parents, 4) == [4, 5, 5, 6, 6, 7, 6]
    with pytest.raises(ValueError, match="depends on the drafter's rows"):
        s.parents()


def test_correct_rule_is_the_point_mass_rule_and_chain_rules_are_refused():
    m = load_model("seed")
    s = DynamicTree(4, 2, 2)
    assert s.enumerate(m, ("b",)).outcomes == s.enumerate(m, ("b",), POINT_MASS).outcomes
    with pytest.raises(ValueError, match="chain rule"):
        s.enumerate(m, ("b",), pitfalls.PITFALLS["always-accept"].rule)


# -- sampled ---------------------------------------------------------------------

def test_a_sampled_round_drafts_the_layout_and_walks_it():
    m = load_model("seed")
    s = DynamicTree(6, 3, 2)
    t = sampling.trace_round(m, ("a",), s, seed=3)
    assert (t.played.drafts, t.parents) == tuple(s.layout(q_after(m, ("a",))))
    assert t.emitted in s.enumerate(m, ("a",)).outcomes


def test_monte_carlo_loop_agrees_with_the_exact_round():
    """10,000 seeded rounds; every outcome within 5 standard deviations (+1): false-alarm rate < 1e-4."""
    assert_rounds_fit_the_exact_round(load_model("seed"), ("c",), DynamicTree(6, 3, 2), n=10_000, seed=11)


# -- the grammar and the work bound ---------------------------------------------

def test_name_parses_back_and_is_a_tree_for_the_decoder():
    s = parse("tree:dynamic,budget=6,depth=3,topk=2")
    assert parse(s.name) == s == DynamicTree(6, 3, 2) and isinstance(s, Tree)
    assert (s.kind, s.drafted_tokens, s.depth) == ("dynamic", 6, 3)
    assert parse("tree:dynamic,topk=2,depth=3,budget=6") == s  # options in any order


def test_work_bound_estimates_the_layout_and_refuses_a_huge_proof():
    m = load_model("order2")
    bounds.check_joint(m, 2, [parse("tree:dynamic,budget=6,depth=3,topk=2")], contexts=4)  # a two-token proof: allowed
    with pytest.raises(bounds.WorkRefused, match="the budget, the depth, topk or N"):
        bounds.check_joint(load_model("seed"), 12, [parse("tree:dynamic,budget=64,depth=64,topk=64")], contexts=3)


def test_drafting_cost_is_the_layouts_size_and_one_pass_per_level():
    from specsim.schemes.adaptive import DraftCost, drafting_cost
    m = load_model("seed")
    assert drafting_cost(m, ("a",), DynamicTree(6, 3, 2)) == DraftCost(6, 3)
    assert drafting_cost(m, ("a",), DynamicTree(8, 4, 3)) == DraftCost(8, 4)
    wide = DynamicTree(6, 3, 3)  # 3 tokens: each node has at most 3 children
    assert drafting_cost(m, ("b",), wide).drafts == 6


# -- the commands ----------------------------------------------------------------

@pytest.mark.parametrize("argv", COMMANDS)
def test_every_toy_command_takes_the_scheme(cli_json, argv):
    name = "tree:dynamic,budget=6,depth=3,topk=2"
    out = cli_json(*argv, "--scheme", name)
    assert out["scheme"] == name if "scheme" in out else out["schemes"] == [name]
    if argv[0] == "prove":
        assert out["exact"]
    if argv[0] == "trace":
        m = load_model("seed")
        assert out["parents"] == parse(name).layout(q_after(m, ("a",)))[1]


def test_the_trace_says_how_a_point_mass_is_tested(cli):
    code, out, err = cli("trace", "seed", "--scheme", "tree:dynamic,budget=6,depth=3,topk=2", "--seed", "3")
    assert code == 0 and "each child a point mass: accept while u < p'(x)" in out and "parents -1 -1 0 0" in out


def test_the_pitfalls_lab_runs_the_tree_rules_on_a_dynamic_tree():
    m = load_model("seed")
    s = parse("tree:dynamic,budget=6,depth=3,topk=2")
    pitfalls.check_lab(m, s, 2)
    got = {r.name: (r.total_variation, r.scheme) for r in pitfalls.run_lab(m, ("a",), s, 2)}
    assert got["correct"] == (0, s.name)
    assert got["top-k-tree-as-if-sampled"] == (F(16, 25), s.name)  # the same dynamic layout, not a fixed tree
