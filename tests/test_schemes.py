"""specsim.schemes: one grammar, one protocol, and each scheme's sampled round against its exact round.

Sampled-vs-exact tests are chi-square goodness-of-fit tests at false-alarm rate
LEVEL = 1e-3 per test, with fixed seeds (so the verdicts are reproducible).
Hand-built rows pin a verdict worked out by hand in the comments.
"""
from fractions import Fraction as F

import pytest

from specsim import exact, montecarlo, sampling, stats
from specsim.schemes import Block, Chain, Tree, as_scheme, from_flags, parse, parse_list
from specsim.toy import load_model, random_model

SEED = load_model("seed")
LEVEL = 1e-3
SCHEMES = [Chain(3), Block(3), Tree((2, 2, 1)), Tree((2, 1), "distinct")]


# -- the grammar -----------------------------------------------------------------
@pytest.mark.parametrize("scheme", SCHEMES + [Chain(1), Block(64), Tree((1,)), Tree((3, 1), "distinct")],
                         ids=lambda s: s.name)
def test_the_name_is_the_grammar_and_parses_back(scheme):
    assert parse(scheme.name) == scheme
    assert parse(f"  {scheme.name} ") == scheme  # blanks around are fine
    assert as_scheme(scheme.name) == scheme and as_scheme(scheme) is scheme


def test_names_kinds_and_the_shorthands():
    assert [s.name for s in SCHEMES] == ["chain:3", "block:3", "tree:2,2,1", "tree:2,1:distinct"]
    assert [s.kind for s in SCHEMES] == ["chain", "block", "tree", "tree"]
    assert parse("tree:2,1:iid") == Tree((2, 1)) and parse("tree:2,1").name == "tree:2,1"
    assert Chain(3) != Block(3) and len({Chain(3), Chain(3), Block(3)}) == 2  # values: equal by name, hashable
    assert as_scheme(4) == Chain(4)  # an int G is chain:G
    assert from_flags(4) == Chain(4) and from_flags(4, "block") == Block(4)
    assert from_flags(tree="2,1", drafts="distinct") == Tree((2, 1), "distinct")
    assert parse_list("chain:4; block:4 ;tree:2,2,1") == [Chain(4), Block(4), Tree((2, 2, 1))]


@pytest.mark.parametrize("text, names", [
    ("", "no scheme given"),
    ("foo:3", "unknown kind 'foo'"),
    ("Chain:3", "unknown kind 'Chain'"),
    ("chain", "chain needs its G"),
    ("chain:0", "got 0"),
    ("block:0", "got 0"),
    ("chain:65", "from 1 to 64"),
    ("chain:\uff14", "U+FF14 FULLWIDTH DIGIT FOUR is not an ASCII digit"),
    ("tree:\u0663", "U+0663 ARABIC-INDIC DIGIT THREE is not an ASCII digit"),
    ("tree:0", ">= 1"),
    ("tree:2,,1", "empty width"),
    ("tree:" + ",".join(["1"] * 65), "depth 65 is above the limit"),
    ("tree:8,8", "drafts 72 tokens"),
    ("tree:2:foo", "drafts must be iid or distinct, got 'foo'"),
])
def test_bad_grammar_gets_one_line_naming_the_problem(text, names):
    with pytest.raises(ValueError) as e:
        parse(text)
    message = str(e.value)
    assert names in message and "\n" not in message
    assert message.startswith("scheme ")  # says which scheme it read


def test_other_bad_values_are_refused_in_one_line():
    for call, names in [(lambda: as_scheme(2.5), "not a verification scheme"),
                        (lambda: as_scheme(True), "not a verification scheme"),
                        (lambda: parse_list("chain:2;chain:2"), "listed twice"),
                        (lambda: from_flags(3, "block", tree="2"), "do not combine"),
                        (lambda: Chain(0), "gamma"), (lambda: Tree((2,), "sorted"), "drafts must be")]:
        with pytest.raises(ValueError, match=names) as e:
            call()
        assert "\n" not in str(e.value)


# -- the layout: parents, mask, positions ------------------------------------------
def ancestors(parents, j) -> set:
    out = set()
    while parents[j] != -1:
        j = parents[j]
        out.add(j)
    return out


@pytest.mark.parametrize("scheme", [Chain(1), Chain(4), Block(3)], ids=lambda s: s.name)
@pytest.mark.parametrize("n", [0, 5])
def test_a_chain_is_a_path_with_the_lower_right_causal_mask(scheme, n):
    g = scheme.gamma
    assert scheme.parents() == [-1] + list(range(g - 1))  # node i's parent is node i - 1
    assert scheme.drafted_tokens == scheme.depth == g
    grid = scheme.mask(n)
    assert grid.shape == (g + 1, n + g + 1)
    assert grid.sum(axis=1).tolist() == [n + i + 1 for i in range(g + 1)]  # query i sees keys 0..n+i
    assert all(grid[i, j] == (j <= n + i) for i in range(g + 1) for j in range(n + g + 1))
    assert scheme.positions(n) == list(range(n, n + g + 1))


@pytest.mark.parametrize("scheme", [Tree((2,)), Tree((2, 2, 1)), Tree((3, 1), "distinct"), Tree((1, 1, 1))],
                         ids=lambda s: s.name)
@pytest.mark.parametrize("n", [0, 4])
def test_a_tree_mask_shows_each_query_the_cache_the_root_its_ancestors_and_itself(scheme, n):
    parents = scheme.parents()
    size = len(parents)
    assert size == scheme.drafted_tokens == sum(_level_sizes(scheme.shape))
    # nodes are numbered level by level, a parent before its children, each level as wide as the shape says
    depth = [len(ancestors(parents, j)) + 1 for j in range(size)]
    assert depth == sorted(depth) and all(parents[j] < j for j in range(size))
    assert [depth.count(d + 1) for d in range(scheme.depth)] == _level_sizes(scheme.shape)
    grid = scheme.mask(n)
    assert grid.shape == (size + 1, n + size + 1)
    for query in range(size + 1):  # query 0 is the root (the last token), query j + 1 is node j
        seen = set(range(n + 1))  # the n cached keys and the root
        if query:
            seen |= {n + 1 + a for a in ancestors(parents, query - 1) | {query - 1}}
        assert {int(k) for k in grid[query].nonzero()[0]} == seen, query
    assert scheme.positions(n) == [n] + [n + d for d in depth]  # a node sits at its depth after the root


def _level_sizes(shape) -> list:
    sizes, level = [], 1
    for w in shape:
        level *= w
        sizes.append(level)
    return sizes


def test_a_chain_shaped_tree_has_the_chains_layout():
    assert Tree((1, 1, 1)).parents() == Chain(3).parents()
    assert (Tree((1, 1, 1)).mask(3) == Chain(3).mask(3)).all()
    assert Tree((1, 1, 1)).positions(3) == Chain(3).positions(3)


# -- exact rounds ----------------------------------------------------------------
@pytest.mark.parametrize("drafts", ["iid", "distinct"])
@pytest.mark.parametrize("name", ["seed", "zeros", "order2"])
def test_a_tree_of_width_one_is_a_chain_exactly_and_sampled(name, drafts):
    m = load_model(name)
    for ctx in m.contexts():
        t, c = Tree((1, 1, 1), drafts).enumerate(m, ctx), Chain(3).enumerate(m, ctx)
        assert t.outcomes == c.outcomes and t.accepted == c.accepted
    # the same uniforms in the same layout: the same round, seed by seed
    ctx = m.contexts()[0]
    for seed in range(25):
        a = sampling.trace_round(m, ctx, Tree((1, 1, 1), drafts), seed=seed)
        b = sampling.trace_round(m, ctx, Chain(3), seed=seed)
        assert (a.emitted, a.accepted, a.closing_token) == (b.emitted, b.accepted, b.closing_token)


def test_one_draft_block_is_one_draft_chain():
    for ctx in SEED.contexts():
        assert Block(1).enumerate(SEED, ctx) == Chain(1).enumerate(SEED, ctx)


@pytest.mark.parametrize("scheme", SCHEMES, ids=lambda s: s.name)
def test_every_scheme_is_exact_and_its_round_is_a_distribution(scheme):
    assert all(c.exact for c in exact.check_exactness(SEED, 2, [scheme]))
    r = scheme.enumerate(SEED, ("a",))
    assert sum(r.outcomes.values()) == 1 and sum(r.accepted) == 1 and len(r.accepted) == scheme.depth + 1
    assert exact.round_distribution(SEED, ("a",), scheme.name) == r  # the engine asks the scheme


# -- sampled rounds against the exact round ----------------------------------------
@pytest.mark.parametrize("scheme", SCHEMES, ids=lambda s: s.name)
def test_sampled_round_frequencies_fit_the_exact_round(scheme):
    """20,000 rounds through the per-round loop (scheme.draft, scheme.verify) against scheme.enumerate."""
    s = montecarlo.sample_rounds_loop(SEED, ("a",), scheme, 20_000, seed=2026)
    assert s.rounds == sum(s.outcomes.values()) == sum(s.accepted_counts)
    fit = stats.fit_round(s, scheme.enumerate(SEED, ("a",)))
    assert not fit["outcomes"].unexpected  # no sequence the exact round gives probability 0
    assert fit["outcomes"].passes(LEVEL) and fit["accepted"].passes(LEVEL), {k: f.to_dict() for k, f in fit.items()}


def test_the_fit_can_fail():
    """The same test tells two schemes apart: block rounds do not fit the chain's exact round."""
    s = montecarlo.sample_rounds_loop(SEED, ("a",), Block(3), 20_000, seed=2026)
    assert not stats.fit_round(s, Chain(3).enumerate(SEED, ("a",)))["outcomes"].passes(LEVEL)


@pytest.mark.parametrize("kind", [Chain, Block])
@pytest.mark.parametrize("model, context, gamma", [(SEED, ("a",), 3), (load_model("zeros"), ("x",), 4),
                                                   (random_model(5, seed=9), None, 2)])
def test_the_kernel_is_the_loop_on_the_same_seed(kind, model, context, gamma):
    context = context or model.contexts()[0]
    assert montecarlo.sample_rounds(model, context, kind(gamma), 5000, seed=31) == \
        montecarlo.sample_rounds_loop(model, context, kind(gamma), 5000, seed=31)


@pytest.mark.parametrize("scheme", SCHEMES, ids=lambda s: s.name)
def test_the_trace_names_its_scheme_and_is_round_one_of_a_run(scheme):
    for seed in range(10):
        t = sampling.trace_round(SEED, ("b",), scheme, seed=seed)
        d = t.to_dict()
        assert parse(d["scheme"]) == scheme and d["parents"] == scheme.parents()
        assert montecarlo.sample_rounds_loop(SEED, ("b",), scheme, 1, seed=seed).outcomes == {t.emitted: 1}


# -- verify on hand-built rows -------------------------------------------------------
HALF = [F(1, 2), F(1, 2)]


def test_chain_with_p_equal_to_q_accepts_every_draft_with_acceptance_one():
    rows = [HALF] * 4  # p = q at every position: min(1, p/q) = 1, and every u < 1 passes
    v = Chain(3).verify([0, 1, 1], rows, rows, [0.999] * 3, 0.75)
    assert v.path == [0, 1, 2] and v.accepted == 3
    assert [t["acceptance"] for t in v.tests] == [1, 1, 1] and all(t["accepted"] for t in v.tests)
    assert (v.closing_kind, v.closing, v.closing_row) == ("bonus", 1, HALF)  # 0.75 >= 1/2: token 1 of p


def test_chain_rejection_draws_from_the_residual():
    # p = (1/2, 1/2), q = (1/4, 3/4); draft token 1: min(1, (1/2)/(3/4)) = 2/3 and u = 0.7 >= 2/3: rejected.
    # residual max(0, p - q) = (1/4, 0), normalized (1, 0): the replacement is token 0 whatever u_final is.
    p, q = HALF, [F(1, 4), F(3, 4)]
    v = Chain(2).verify([1, 0], [p, p, p], [q, q], [0.7, 0.0], 0.99)
    assert v.path == [] and v.tests[0]["acceptance"] == F(2, 3) and len(v.tests) == 1
    assert (v.closing_kind, v.closing, v.closing_row) == ("correct", 0, [1, 0])


def test_block_on_the_papers_rows():
    # p = (1/3, 2/3), q = (2/3, 1/3) at every position. Drafts (1, 0): w1 = min(1, (2/3)/(1/3)) = 1,
    # w2 = min(1, 1 * (1/3)/(2/3)) = 1/2. h1 = r1 / (r1 + 1 - w1) with r1 = sum max(p - q, 0) = 1/3: h1 = 1;
    # h2 = w2 = 1/2. Coins u = (0.5, 0.6): up at 1, not at 2, so tau = 1, and the closing token comes
    # from the block residual max(w1 p - q, 0) = (0, 1/3) -> (0, 1) at position 2.
    p, q = [F(1, 3), F(2, 3)], [F(2, 3), F(1, 3)]
    v = Block(2).verify([1, 0], [p, p, p], [q, q, q], [0.5, 0.6], 0.1)
    assert v.extra == {"w": [1, 1, F(1, 2)], "h": [1, F(1, 2)]}
    assert [t["stop"] for t in v.tests] == [True, False]
    assert (v.path, v.closing_kind, v.closing, v.closing_row) == ([0], "correct", 1, [0, 1])
    # drafts (0, 0): w = (1, 1/2, 1/4), r1 = max(1/6 - 2/3, 0) + max(1/3 - 1/3, 0) = 0 so h1 = 0; h2 = 1/4.
    v = Block(2).verify([0, 0], [p, p, p], [q, q, q], [0.0, 0.2], 0.5)  # 0.2 < 1/4: tau = 2, the bonus
    assert v.extra["h"] == [0, F(1, 4)] and (v.path, v.closing_kind, v.closing) == ([0, 1], "bonus", 1)
    v = Block(2).verify([0, 0], [p, p, p], [q, q, q], [0.0, 0.3], 0.5)  # no coin up: tau = 0
    assert (v.path, v.closing_kind, v.closing_row) == ([], "correct", [0, 1])  # normalize(max(p - q, 0))


@pytest.mark.parametrize("drafts, q_next", [("iid", HALF), ("distinct", [0, 1])])
def test_tree_second_child_judged_against_the_residual(drafts, q_next):
    # Tree (2,): p = (0, 1), q = (1/2, 1/2) at the root, children tokens (0, 1).
    # Child 0: min(1, 0 / (1/2)) = 0, rejected; p' = normalize(max(0, p - q)) = (0, 1); q' = q (i.i.d.)
    # or q without token 0 = (0, 1) (distinct). Child 1: min(1, 1 / q'(1)) = 1, accepted; it is a leaf,
    # so the bonus comes from p after it.
    root_p, root_q, after = [F(0), F(1)], HALF, [F(1, 4), F(3, 4)]
    v = Tree((2,), drafts).verify([0, 1], [root_p, after, after], [root_q, None, None], [0.3, 0.99], 0.5)
    assert [(t["node"], t["acceptance"], t["accepted"]) for t in v.tests] == [(0, 0, False), (1, 1, True)]
    assert v.tests[0]["p_next"] == [0, 1] and v.tests[0]["q_next"] == q_next
    assert (v.path, v.closing_kind, v.closing, v.closing_row) == ([1], "bonus", 1, after)


def test_tree_every_child_rejected_closes_from_the_last_residual():
    # Tree (2,) i.i.d., p = (1/4, 3/4), q = (3/4, 1/4), both children token 0.
    # Child 1: min(1, (1/4)/(3/4)) = 1/3, u = 0.5: rejected; p' = normalize(max(0, p - q)) = (0, 1).
    # Child 2: min(1, 0 / (3/4)) = 0: rejected; p'' = normalize(max(0, p' - q)) = (0, 1).
    # Every child rejected: the closing token is drawn from p'' = (0, 1), token 1.
    p, q = [F(1, 4), F(3, 4)], [F(3, 4), F(1, 4)]
    v = Tree((2,)).verify([0, 0], [p, p, p], [q, None, None], [0.5, 0.0], 0.0)
    assert [t["acceptance"] for t in v.tests] == [F(1, 3), 0]
    assert (v.path, v.closing_kind, v.closing, v.closing_row) == ([], "correct", 1, [0, 1])


def test_draft_draws_the_whole_layout_with_one_uniform_per_node():
    q_at = lambda path: [F(1, 2), F(1, 4), F(1, 4)]  # the same q after any prefix
    # inverse CDF: u < 1/2 -> 0, u < 3/4 -> 1, else 2
    assert Chain(3).draft(q_at, [0.1, 0.6, 0.9]) == ([0, 1, 2], [-1, 0, 1])
    assert Tree((2, 1)).draft(q_at, [0.1, 0.2, 0.6, 0.9]) == ([0, 0, 1, 2], [-1, -1, 0, 1])
    # distinct: the second child is drawn from q without token 0, (0, 1/2, 1/2): u = 0.2 -> token 1
    assert Tree((2, 1), "distinct").draft(q_at, [0.1, 0.2, 0.6, 0.9]) == ([0, 1, 1, 2], [-1, -1, 0, 1])
