"""Multi-draft tree verification: exactness of both drafting modes, chain equivalence, shapes."""
from fractions import Fraction as F

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specsim import exact, montecarlo, sampling, stats
from specsim.rule import CORRECT
from specsim.toy import ToyModel, load_model, random_model
from specsim.schemes.tree import Tree, child_acceptance, parse_shape, residual_update, without

PRESETS = ["seed", "zeros", "order2"]
SHAPES = [(2,), (3,), (2, 2), (2, 2, 1), (1, 3), (3, 1)]


def _with_equal_rows(model, every=2):
    """The model with q replaced by p on every ``every``-th context (p == q rows)."""
    draft = dict(model.draft)
    for i, c in enumerate(sorted(draft)):
        if i % every == 0:
            draft[c] = model.target[c]
    return ToyModel(model.vocab, model.order, model.target, draft, model.name + "-eq")


@pytest.mark.parametrize("name", PRESETS)
@pytest.mark.parametrize("drafts", ["iid", "distinct"])
def test_both_variants_are_exact_on_the_presets(name, drafts):
    model = load_model(name)
    checks = exact.check_exactness(model, 3, [Tree(s, drafts) for s in SHAPES])
    assert checks and all(c.exact for c in checks)
    assert all(c.max_abs_difference == 0 for c in checks)


@settings(max_examples=20, deadline=None)
@given(vocab=st.integers(2, 4), order=st.integers(1, 2), seed=st.integers(0, 10**6),
       zeros=st.booleans(), equal=st.booleans(), drafts=st.sampled_from(["iid", "distinct"]),
       shape=st.lists(st.integers(1, 3), min_size=1, max_size=3))
def test_exact_on_random_rational_models(vocab, order, seed, zeros, equal, drafts, shape):
    model = random_model(vocab, order, seed, denominator=12, zeros=zeros)
    if equal:
        model = _with_equal_rows(model)
    tree = Tree(shape, drafts)
    for ctx in model.contexts()[:3]:
        assert exact.speculative_joint(model, ctx, tree, 2) == exact.target_joint(model, ctx, 2)
        r = exact.round_distribution(model, ctx, tree)
        assert sum(r.outcomes.values()) == 1 and sum(r.accepted) == 1
        assert len(r.accepted) == tree.depth + 1


@pytest.mark.parametrize("name", PRESETS)
@pytest.mark.parametrize("drafts", ["iid", "distinct"])
def test_a_chain_shape_is_token_wise_verification(name, drafts):
    model = load_model(name)
    for ctx in model.contexts():
        t = exact.round_distribution(model, ctx, Tree((1, 1, 1), drafts))
        c = exact.round_distribution(model, ctx, 3)
        assert t.outcomes == c.outcomes and t.accepted == c.accepted
        assert t.expected_tokens == c.expected_tokens


def test_seed_chain_reference_numbers():
    r = exact.round_distribution(load_model("seed"), ("a",), Tree((1, 1, 1)))
    assert r.expected_tokens == F(1659, 500)


@pytest.mark.parametrize("name", PRESETS)
def test_distinct_accepts_at_least_as_much_as_iid_on_the_presets(name):
    model = load_model(name)
    strict = 0
    for shape in [(2,), (3,), (2, 2), (2, 1), (4,), (2, 2, 1)]:
        for ctx in model.contexts():
            iid = exact.round_distribution(model, ctx, Tree(shape, "iid")).expected_tokens
            dis = exact.round_distribution(model, ctx, Tree(shape, "distinct")).expected_tokens
            assert dis >= iid, (shape, ctx)
            strict += dis > iid
    assert strict > 0


def test_wider_trees_never_emit_fewer_tokens_on_seed():
    model = load_model("seed")
    e = [exact.round_distribution(model, ("a",), Tree((w,), "distinct")).expected_tokens for w in (1, 2, 3)]
    assert e[0] <= e[1] <= e[2]


def test_limit_keeps_the_first_tokens():
    model = load_model("seed")
    tree = Tree((2, 2, 1))
    full = exact.round_distribution(model, ("a",), tree).outcomes
    cut = exact.round_distribution(model, ("a",), tree, limit=1).outcomes
    folded = {}
    for t, pr in full.items():
        folded[t[:1]] = folded.get(t[:1], 0) + pr
    assert cut == folded


def test_node_functions():
    p, q = [F(1, 2), F(1, 2), F(0)], [F(1, 4), F(1, 4), F(1, 2)]
    assert child_acceptance(p, q, 2) == 0 and child_acceptance(p, q, 0) == 1
    assert residual_update(p, q) == [F(1, 2), F(1, 2), F(0)]
    assert residual_update(p, p) is None
    assert without(q, {2}) == [F(1, 2), F(1, 2), F(0)]
    assert without([F(1), F(0)], {0}) is None


def test_distinct_drafts_stop_when_q_runs_out():
    model = load_model("zeros")  # rows with zeros: fewer distinct tokens than the width
    checks = exact.check_exactness(model, 2, [Tree((5,), "distinct"), Tree((4, 4), "distinct")])
    assert all(c.exact for c in checks)


def test_attributes_and_names():
    t = Tree.parse("2,2,1", "distinct")
    assert t.shape == (2, 2, 1) and t.depth == 3 and t.drafted_tokens == 2 + 4 + 4
    assert t.drafts == "distinct" and t.name == "tree:2,2,1:distinct"
    assert Tree((2, 2, 1)).name == "tree:2,2,1"  # i.i.d. drafts are the default, unwritten


@pytest.mark.parametrize("text, msg", [("0", ">= 1"), ("2,,1", "empty width"), ("-1", ">= 1"),
                                       ("x", "not a whole number"), ("8,8", "limit"),
                                       (",".join(["1"] * 65), "limit")])
def test_bad_shapes_get_one_line_errors(text, msg):
    with pytest.raises(ValueError, match=msg) as e:
        parse_shape(text)
    assert "\n" not in str(e.value)


def test_bad_drafts_and_chain_rules_are_refused():
    with pytest.raises(ValueError, match="drafts must be"):
        Tree((2,), "sorted")
    from specsim.labs.pitfalls import PITFALLS
    broken = next(p.rule for k, p in PITFALLS.items() if p.rule is not CORRECT and hasattr(p.rule, "accept"))
    with pytest.raises(ValueError, match="chain rule"):
        exact.round_distribution(load_model("seed"), ("a",), Tree((2,)), broken)


@pytest.mark.parametrize("drafts", ["iid", "distinct"])
def test_seeded_sampler_fits_the_exact_round(drafts):
    """Chi-square at level 0.001 (the false-alarm rate), fixed seed; same seed, same counts."""
    model, tree = load_model("seed"), Tree((2, 2, 1), drafts)
    s = montecarlo.sample_rounds(model, ("a",), tree, 20_000, seed=5)  # a tree runs the per-round loop
    fit = stats.fit_round(s, exact.round_distribution(model, ("a",), tree))
    assert all(f.passes(1e-3) and not f.unexpected for f in fit.values())
    assert montecarlo.sample_rounds(model, ("a",), tree, 200, seed=5) == \
        montecarlo.sample_rounds_loop(model, ("a",), tree, 200, seed=5)


@pytest.mark.parametrize("drafts", ["iid", "distinct"])
def test_trace_is_deterministic_and_is_the_first_sampled_round(drafts):
    model, tree = load_model("seed"), Tree((2, 1), drafts)
    support = exact.round_distribution(model, ("a",), tree).outcomes
    for seed in range(30):
        a, b = (sampling.trace_round(model, ("a",), tree, seed=seed) for _ in range(2))
        assert a.to_dict() == b.to_dict()
        d = a.to_dict()
        assert d["scheme"] == tree.name and d["events"][-2]["kind"] in ("bonus", "correct")
        assert len(a.emitted) == a.accepted + 1 and support[a.emitted] > 0
        # the trace is round 1 of a Monte-Carlo run on the same seed
        assert montecarlo.sample_rounds(model, ("a",), tree, 1, seed=seed).outcomes == {a.emitted: 1}


def test_trace_drafts_the_whole_tree_before_verifying():
    """Every node is drafted (from its parent's q) before the first test; the walk then
    descends only into accepted children, each tested against the rows of its parent."""
    model, tree = load_model("seed"), Tree((2, 2))
    for seed in range(40):
        t = sampling.trace_round(model, ("a",), tree, seed=seed)
        events = t.events()
        kinds = [e["kind"] for e in events]
        n = tree.drafted_tokens
        assert kinds[:n] == ["draft"] * n and kinds[n] == "verify" and "draft" not in kinds[n + 1:]
        assert [e["parent"] for e in events[:n]] == tree.parents() == t.parents
        path, parent = t.verdict.path, -1
        for node in path:
            assert t.parents[node] == parent
            parent = node
        tested = [e for e in events if e["kind"] in ("accept", "reject")]
        assert [e["node"] for e in tested if e["kind"] == "accept"] == path
        assert all(t.parents[e["node"]] in [-1] + path for e in tested)  # only children on the walk are tried
        for e in tested:  # min(1, p'/q') of its own test, p' and q' from the updates before it
            assert e["acceptance"] == str(min(F(1), F(e["p_x"]) / F(e["q_x"])))


def test_symbolic_two_iid_children_then_residual():
    from specsim.symbolic import prove_two_iid_children
    cases = prove_two_iid_children(3)
    assert cases and all(c.holds for c in cases)
    assert not all(c.holds for c in prove_two_iid_children(3, update=False))
