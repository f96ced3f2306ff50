"""The best static tree for a budget (Sequoia's DP): against brute force over every tree, the exact
engine's acceptance vector, the prediction check, and compare --best-tree."""
import itertools
import random
from fractions import Fraction as F

import pytest

from specsim import bounds, exact
from specsim.labs import best_tree as bt
from specsim.schemes import Tree
from specsim.toy import load_model
from tests.helpers import refused_in_one_line

SEED, ORDER2 = load_model("seed"), load_model("order2")


# -- an independent brute force: build every tree, score every node by its path -------------

def level_shapes(budget):
    """Every (W1, ..., Wd) with W1 + W1*W2 + ... <= budget, by plain recursion over the levels."""
    out = []

    def grow(shape, last, used):
        for w in range(1, budget + 1):
            if used + last * w > budget:
                break
            out.append(shape + (w,))
            grow(shape + (w,), last * w, used + last * w)

    grow((), 1, 0)
    return out


def forests(n):
    """Every ordered forest of exactly n nodes, as a tuple of child forests (children in rank order)."""
    if n == 0:
        return [()]
    out = []
    for first in range(1, n + 1):  # the first tree takes `first` nodes: its root and a forest below it
        for below in forests(first - 1):
            for rest in forests(n - first):
                out.append((below,) + rest)
    return out


def score(p, forest, reach=1):
    """Sum over the nodes of the product of p_rank along the path (ranks past the vector: 0)."""
    total = 0
    for rank, below in enumerate(forest, 1):
        here = reach * (p[rank - 1] if rank <= len(p) else 0)
        total += here + score(p, below, here)
    return total


def level_forest(shape):
    """The forest of a level-width shape: each node of level i has shape[i] children."""
    if not shape:
        return ()
    return tuple(level_forest(shape[1:]) for _ in range(shape[0]))


def forest_of(parents):
    """A (parents) list, depth first, back to nested children."""
    kids = {}
    for i, parent in enumerate(parents):
        kids.setdefault(parent, []).append(i)

    def build(node):
        return tuple(build(c) for c in kids.get(node, []))

    return build(-1)


def vectors(n, seed=0):
    """Random positional vectors (Fractions, sum <= 1, not always decreasing) and a few edge ones."""
    rng = random.Random(seed)
    out = [(F(1, 2), F(1, 4)), (F(1),), (F(0), F(1, 2)), (F(9, 10), F(1, 20), F(1, 40))]
    for _ in range(n):
        raw = [rng.randint(0, 9) for _ in range(rng.randint(1, 5))]
        total = sum(raw) + rng.randint(0, 5) or 1
        out.append(tuple(F(r, total) for r in raw))
    return out


@pytest.mark.parametrize("budget", range(1, 7))
def test_the_level_dp_matches_brute_force_over_every_level_shape(budget):
    for p in vectors(25, seed=budget):
        best = bt.best_tree(p, budget)
        values = {s: 1 + score(p, level_forest(s)) for s in level_shapes(budget)}
        assert best.expected_tokens == max(values.values())
        assert values[best.shape] == best.expected_tokens == bt.predicted_tokens(p, best.shape)
        assert best.drafted_tokens == sum(1 for _ in _nodes(level_forest(best.shape))) <= budget


def _nodes(forest):
    for below in forest:
        yield below
        yield from _nodes(below)


@pytest.mark.parametrize("budget", range(1, 7))
def test_the_general_dp_matches_brute_force_over_every_ordered_tree(budget):
    every = [f for n in range(1, budget + 1) for f in forests(n)]
    assert len(forests(5)) == 42  # the Catalan number: the enumeration is complete
    for p in vectors(20, seed=10 + budget):
        best = bt.best_tree(p, budget)
        assert best.general.expected_tokens == 1 + max(score(p, f) for f in every)
        layout = forest_of(best.general.parents)
        assert 1 + score(p, layout) == best.general.expected_tokens and len(best.general.parents) <= budget
        assert best.general.expected_tokens >= best.expected_tokens  # a level shape is one layout


def test_a_general_tree_can_beat_every_level_shape():
    b = bt.best_tree([F(1, 2), F(1, 4)], 3)
    assert (b.shape, b.expected_tokens) == ((1, 1, 1), F(15, 8))
    assert b.general.expected_tokens == 2 > b.expected_tokens  # root: two children, the first with one child
    assert b.general.ranks == (1, 1, 2)


def test_floats_and_ties():
    b = bt.best_tree([0.5, 0.25], 3)
    assert b.shape == (1, 1, 1) and abs(b.expected_tokens - 1.875) < 1e-12
    # p_2 = 0: a second child adds nothing, the tie goes to fewer drafted nodes
    assert bt.best_tree([F(1, 2), F(0)], 1).shape == (1,)
    assert bt.best_tree([F(0)], 4).shape == (1,) and bt.best_tree([F(0)], 4).expected_tokens == 1


@pytest.mark.parametrize("bad, match", [([], "empty"), ([F(1, 2), F(2, 3)], "sums to"), ([F(-1, 2)], "in \\[0, 1\\]"),
                                        (["0.5"], "in \\[0, 1\\]")])
def test_bad_vectors_are_refused_in_one_line(bad, match):
    with refused_in_one_line(match):
        bt.best_tree(bad, 3)


@pytest.mark.parametrize("budget", [0, 17, True, 2.0])
def test_bad_budgets_are_refused_in_one_line(budget):
    with refused_in_one_line("budget must be an integer in 1..16"):
        bt.best_tree([F(1, 2)], budget)


# -- the acceptance vector from the exact engine --------------------------------------------

def test_at_one_context_a_one_level_tree_is_predicted_exactly():
    """p_k is defined so that the prediction of a one-level tree IS the exact engine's figure."""
    for pair in (SEED, ORDER2):
        for c in pair.contexts():
            for drafts in ("iid", "distinct"):
                p = bt.acceptance_vector(pair, [c], 4, drafts)
                assert sum(p) <= 1 and all(x >= 0 for x in p)
                for k in range(1, 5):
                    assert bt.predicted_tokens(p, (k,)) == \
                        exact.round_distribution(pair, c, Tree((k,), drafts)).expected_tokens


def test_the_vector_is_the_plain_mean_over_the_contexts():
    per = [bt.acceptance_vector(SEED, [c], 3) for c in SEED.contexts()]
    assert bt.acceptance_vector(SEED, SEED.contexts(), 3) == tuple(sum(x) / 3 for x in zip(*per))
    assert per[0] == (F(9, 10), F(1, 20), F(1, 40))  # seed after a: alpha = 9/10, then the residual's


def test_distinct_drafts_run_out_after_the_vocabulary():
    p = bt.acceptance_vector(ORDER2, ORDER2.contexts(), 4, "distinct")  # 2 tokens
    assert p[2:] == (0, 0) and sum(p) == 1  # two distinct drafts cover every token: always one accepted


def test_check_sets_the_prediction_beside_the_exact_engine():
    c = bt.check(SEED, ("a",), 3)
    scheme = Tree(c.best.shape)
    assert c.exact_tokens == exact.round_distribution(SEED, ("a",), scheme).expected_tokens
    assert c.exact_mean == sum(exact.round_distribution(SEED, x, scheme).expected_tokens
                               for x in SEED.contexts()) / 3
    assert c.best.expected_tokens != c.exact_mean  # the positional assumption is an approximation here
    assert c.refused is None


def test_check_keeps_the_prediction_when_the_exact_round_is_over_the_limit():
    c = bt.check(SEED, ("a",), 8, limit=10_000)
    assert c.exact_tokens is None and c.exact_mean is None
    assert "\n" not in c.refused and "lower the widths or the depth" in c.refused
    assert c.best.shape == bt.best_tree(bt.acceptance_vector(SEED, SEED.contexts(), 8), 8).shape
    with pytest.raises(bounds.WorkRefused):  # the estimate itself is bounded too
        bt.acceptance_vector(SEED, SEED.contexts(), 4, limit=1)


# -- compare --best-tree -----------------------------------------------------------------------

KEYS = {"context", "budget", "drafts", "contexts", "acceptance", "shape", "scheme", "drafted_tokens",
        "predicted_tokens", "general", "exact_tokens", "exact_mean", "exact_refused", "exhaustive",
        "exhaustive_refused"}


def test_cli_json_agrees_with_the_library_and_the_exhaustive_ranking(cli_json):
    data = cli_json("compare", "seed", "--budget", "4", "--best-tree", "--context", "b")
    assert set(data) == KEYS
    c = bt.check(SEED, ("b",), 4)
    assert data["shape"] == list(c.best.shape) and data["scheme"] == Tree(c.best.shape).name
    assert F(data["predicted_tokens"]) == c.best.expected_tokens and F(data["exact_tokens"]) == c.exact_tokens
    assert [F(x) for x in data["acceptance"]] == list(c.best.acceptance)
    best = cli_json("compare", "seed", "--budget", "4", "--context", "b")["schemes"]
    trees = [r for r in best if r["kind"] == "tree" and r["drafts"] == "iid"]
    assert data["exhaustive"]["best_tree"]["scheme"] == trees[0]["scheme"]
    assert data["exhaustive"]["best_scheme"]["scheme"] == best[0]["scheme"]
    assert F(data["exhaustive"]["best_tree"]["expected_tokens"]) >= F(data["exact_tokens"])  # it searched all
    assert data["exhaustive_refused"] is None and data["exact_refused"] is None


def test_cli_above_the_exhaustive_budget_still_predicts(cli_json):
    data = cli_json("compare", "order2", "--budget", "12", "--best-tree", "--drafts", "distinct")
    assert data["exhaustive"] is None and "up to budget 8" in data["exhaustive_refused"]
    assert data["drafts"] == "distinct" and data["scheme"].endswith(":distinct") and data["drafted_tokens"] <= 12


def test_cli_readable(cli):
    code, out, _ = cli("compare", "seed", "--budget", "3", "--best-tree")
    assert code == 0 and "best level shape: tree:1,1,1" in out and "exact engine, tree:1,1,1" in out
    assert "exhaustive ranking after 'a'" in out


@pytest.mark.parametrize("argv, match", [
    (["--budget", "17", "--best-tree"], "budget must be between 1 and 16"),
    (["--budget", "9"], "above 8 for the exhaustive ranking"),
    (["--drafts", "iid"], "--drafts goes with --best-tree"),
    (["--best-tree", "--scheme", "chain:2"], "do not combine"),
])
def test_cli_bad_input_is_one_line(cli, argv, match):
    code, out, err = cli("compare", "seed", *argv)
    assert code == 2 and out == "" and err.count("\n") == 1 and match in err
