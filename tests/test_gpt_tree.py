"""Tree and block verification on the tiny GPT.

The same quantity two ways, every time: the one-pass tree forward against a
plain forward of each node's own path, the kept caches against a fresh pass
over the accepted text, greedy tree/block decoding against greedy plain
decoding, the decoder's round against ``scheme.verify`` on its recorded rows and
uniforms, and the first emitted token against p (exactly with the exact
engine, and by a chi-square test on the torch decoder).
"""
import random

import numpy as np
import pytest
import torch

from specsim import sampling as toy_sampling
from specsim.schemes import Block, Chain, Tree, masks
from specsim.schemes import block as exact_block
from specsim.schemes import tree as exact_tree
from specsim.gpt import api, rule
from specsim.gpt.config import PRESETS
from specsim.gpt.decode import Sampling, Context, one_round, plain_generate, speculative_generate
from specsim.gpt.drafters import ModelDrafter
from specsim.gpt.exact_adapter import GPTPair
from specsim.gpt.model import GPT
from specsim.gpt.tree_decode import draft_tree, flatten, tree_mask

from .test_gpt_decode import chi2_pvalue, skewed_tiny

PROMPT = "def __init__(self, "
ATOL = 1e-4  # float32 logits computed two ways (different attention shapes, same maths)


# -- the model: explicit positions and masks, KVCache.keep ---------------------------

@pytest.mark.parametrize("parents,n", [([-1, 0, -1, 2], 5), (masks.shape_parents((2, 2, 1)), 3),
                                       (masks.shape_parents((3, 1), "bfs"), 0)])
def test_torch_tree_mask_equals_tree_grid_and_sees_exactly_the_ancestors(parents, n):
    m = tree_mask(parents, n)
    assert m.dtype == torch.bool and m.shape == (len(parents) + 1, n + len(parents) + 1)
    assert np.array_equal(m.numpy(), masks.tree_grid(parents, n))
    for i in range(len(parents)):  # independently: node i sees the prefix, the root, its ancestors, itself
        seen, a = {i}, parents[i]
        while a >= 0:
            seen.add(a)
            a = parents[a]
        assert m[i + 1].tolist() == [True] * (n + 1) + [j in seen for j in range(len(parents))]


def test_one_pass_tree_logits_equal_each_nodes_own_path(pair):
    target = pair.target
    prefix = pair.tokenizer.encode(PROMPT)
    parents = masks.shape_parents((2, 2, 1))
    rng = random.Random(0)
    tokens = [rng.randrange(len(pair.vocab)) for _ in parents]
    n = len(prefix) - 1
    with torch.inference_mode():
        cache = target.new_cache()
        target(torch.tensor([prefix[:-1]]), cache)
        idx = torch.tensor([[prefix[-1]] + tokens])
        pos = torch.tensor(masks.tree_positions(parents, n))
        tree_logits = target(idx, cache, pos=pos, mask=tree_mask(parents, n))[0]  # (m + 1, V)
        assert cache.length == n + len(parents) + 1
        for i in range(len(parents) + 1):
            path, a = [], i - 1
            while a >= 0:
                path.insert(0, tokens[a])
                a = parents[a]
            plain = target(torch.tensor([prefix + path]))[0, -1]  # no cache, plain causal pass
            torch.testing.assert_close(tree_logits[i], plain, atol=ATOL, rtol=0)


def test_drafted_q_rows_are_the_drafters_rows_on_each_path(pair):
    ids = pair.tokenizer.encode(PROMPT)
    drafter = ModelDrafter(pair.draft, "distilled")
    drafter.start(ids)
    scheme = Tree((2, 2, 1))
    u_draft, _, _ = toy_sampling.uniforms(np.random.default_rng(0), scheme)
    with torch.inference_mode():
        tree = draft_tree(drafter, ids, scheme, Sampling(), u_draft, exact_tree.CORRECT_TREE)
        assert (tree.tokens, tree.parents) == scheme.draft(lambda path: tree.q_host[path_node(tree, path) + 1],
                                                           u_draft)  # the scheme's own draws on these rows
        assert tree.q_rows[len(tree.parents)] is None  # the last node is a leaf, never fed
        for i in [-1] + list(range(len(tree.parents))):
            if tree.q_rows[i + 1] is None:
                assert masks.tree_depths(tree.parents)[i] == 3
                continue
            path, a = [], i
            while a >= 0:
                path.insert(0, tree.tokens[a])
                a = tree.parents[a]
            q = torch.softmax(pair.draft(torch.tensor([ids + path]))[0, -1], -1)
            torch.testing.assert_close(tree.q_rows[i + 1], q, atol=ATOL, rtol=0)


def path_node(tree, path) -> int:
    """The first node whose path from the root is ``path`` (-1: the root)."""
    if not path:
        return -1
    tokens = getattr(tree, "drafts", None) or tree.tokens
    return next(j for j in range(len(tokens)) if tuple(node_of_path(tree, j)) == tuple(path))


def node_of_path(r, j):
    """The drafted ids from the root down to node j."""
    tokens = getattr(r, "drafts", None) or r.tokens
    path = []
    while j >= 0:
        path.insert(0, tokens[j])
        j = r.parents[j]
    return path


def test_cache_keep_gathers_then_crops():
    torch.manual_seed(0)
    m = GPT(PRESETS["tiny"]).eval()
    cache = m.new_cache()
    m(torch.tensor([[1, 2, 3, 4, 5, 6]]), cache)
    k, v = cache.k.clone(), cache.v.clone()
    cache.keep([0, 1, 3, 5])
    assert cache.length == 4
    assert torch.equal(cache.k[:, :, :, :4], k[:, :, :, [0, 1, 3, 5]])
    assert torch.equal(cache.v[:, :, :, :4], v[:, :, :, [0, 1, 3, 5]])
    for bad in ([0, 7], [2, 1], [1, 1]):
        with pytest.raises(ValueError, match="cannot keep"):
            cache.keep(bad)


def test_bad_position_ids_and_masks_are_refused():
    torch.manual_seed(0)
    m = GPT(PRESETS["tiny"]).eval()
    with pytest.raises(ValueError, match="position ids"):
        m(torch.tensor([[1, 2]]), pos=torch.tensor([0, 10**4]))
    with pytest.raises(ValueError, match="attention mask"):
        m(torch.tensor([[1, 2]]), mask=torch.ones(2, 3, dtype=torch.bool))


def assert_caches_match_a_fresh_pass(model, cache, ids):
    fresh = model.new_cache()
    model(torch.tensor([ids]), fresh)
    L = len(ids)
    assert cache.length == L
    torch.testing.assert_close(cache.k[:, :, :, :L], fresh.k[:, :, :, :L], atol=ATOL, rtol=0)
    torch.testing.assert_close(cache.v[:, :, :, :L], fresh.v[:, :, :, :L], atol=ATOL, rtol=0)


@pytest.mark.parametrize("widths,drafts,order", [((2, 2, 1), "iid", "dfs"), ((3, 1), "distinct", "bfs")])
def test_after_each_round_both_caches_equal_a_fresh_pass_over_the_accepted_text(pair, widths, drafts, order):
    drafter = ModelDrafter(pair.draft, "distilled")
    ctx = Context([pair.target], pair.tokenizer.encode(PROMPT), torch.device("cpu"))
    drafter.start(ctx.view)
    rng, moved = np.random.default_rng(1), 0
    with torch.inference_mode():
        for _ in range(8):
            r = one_round(pair.target, drafter, ctx, Tree(widths, drafts), Sampling(), rng, order=order)
            moved += r.accepted_nodes != list(range(r.accepted))  # the gather really moved slots
            assert r.cache["target"]["after_crop"] == r.start + r.accepted + 1
            assert_caches_match_a_fresh_pass(pair.target, ctx.caches[0], ctx.view[:-1])  # all but the closing token
            assert drafter.fed >= len(ctx.view) - 2  # at most an accepted leaf and the closing token unfed
            assert_caches_match_a_fresh_pass(pair.draft, drafter.cache, ctx.view[:drafter.fed])
    assert moved >= 1


# -- greedy decoding: token for token --------------------------------------------

@pytest.fixture(scope="module")
def greedy_plain(pair):
    return plain_generate(pair.target, pair.tokenizer.encode(PROMPT), 150, Sampling(greedy=True)).tokens


@pytest.mark.parametrize("widths,drafts,order", [((2, 2, 1), "iid", "dfs"), ((3, 1), "distinct", "dfs"),
                                                 ((1, 1, 1, 1), "iid", "bfs"), ((4,), "distinct", "bfs")])
def test_greedy_tree_decoding_equals_greedy_plain_for_150_tokens(pair, greedy_plain, widths, drafts, order):
    g = speculative_generate(pair.target, pair.drafter(), pair.tokenizer.encode(PROMPT), 150, Tree(widths, drafts),
                             Sampling(greedy=True), order=order)
    assert g.tokens == greedy_plain
    assert g.target_passes < 150


def test_greedy_block_decoding_equals_greedy_plain_for_150_tokens(pair, greedy_plain):
    g = speculative_generate(pair.target, pair.drafter(), pair.tokenizer.encode(PROMPT), 150, Block(4),
                             Sampling(greedy=True))
    assert g.tokens == greedy_plain and g.target_passes < 150


@pytest.mark.parametrize("seed", [0, 5])
def test_a_chain_shaped_tree_gives_the_chain_decoders_tokens(pair, seed):
    ids = pair.tokenizer.encode(PROMPT)
    chain = speculative_generate(pair.target, pair.drafter(), ids, 80, 4, Sampling(), seed)
    tree = speculative_generate(pair.target, pair.drafter(), ids, 80, Tree((1, 1, 1, 1)), Sampling(), seed)
    assert tree.tokens == chain.tokens
    assert [r.accepted for r in tree.rounds] == chain.accepted_per_round


# -- the round is the scheme's own walk -------------------------------------------

@pytest.mark.parametrize("scheme", [Chain(3), Block(3), Tree((2, 2, 1)), Tree((3, 1), "distinct")])
def test_each_round_is_scheme_verify_on_its_recorded_rows(pair, scheme):
    """The decoder keeps what scheme.verify decided on the rows it recorded: replayed on the recorded rows
    (as floats, the uniforms of the same seed), the verdict is the round's, path, closing token and tests."""
    g = api.speculative_generate(pair, PROMPT, 40, scheme, seed=2)
    rng = np.random.default_rng(2)
    kinds = set()
    for r in g.rounds:
        u_draft, u_test, u_final = toy_sampling.uniforms(rng, scheme)
        assert r.u == u_test
        q = r.q_layout()
        q_host = [None if row is None else row.tolist() for row in q]
        verdict = scheme.verify(r.drafts, r.p_rows.tolist(), q_host, u_test, u_final, parents=r.parents)
        assert (verdict.path, verdict.closing, verdict.tests) == (r.accepted_nodes, r.closing_token, r.verdict.tests)
        drafts, parents = scheme.draft(lambda path: q_host[path_node(r, path) + 1], u_draft)
        assert (drafts, parents) == (r.drafts, r.parents)  # the drafts are the scheme's draws on these rows
        kinds.add(r.closing_kind)
    assert kinds == {"bonus", "correct"}


@pytest.mark.parametrize("widths,drafts", [((2, 2, 1), "iid"), ((3, 1), "distinct")])
def test_the_order_of_the_verify_pass_changes_the_layout_not_the_tokens(pair, widths, drafts):
    dfs = api.speculative_generate(pair, PROMPT, 40, Tree(widths, drafts), seed=4, order="dfs")
    bfs = api.speculative_generate(pair, PROMPT, 40, Tree(widths, drafts), seed=4, order="bfs")
    assert dfs.tokens == bfs.tokens and dfs.accepted_per_round == bfs.accepted_per_round
    assert flatten(Tree(widths).parents(), "dfs") != list(range(len(Tree(widths).parents())))  # the layouts differ
    for a, b in zip(dfs.rounds, bfs.rounds):
        torch.testing.assert_close(a.p_rows, b.p_rows, atol=ATOL, rtol=0)  # node j's row, whatever the layout


def test_greedy_block_with_the_lookup_drafter_equals_plain(greedy_plain):
    lookup = api.load_pair("lookup:2", device="cpu")  # proposes nothing in some rounds
    g = api.speculative_generate(lookup, PROMPT, 150, "block:4", greedy=True)
    assert g.tokens == greedy_plain and any(len(r.drafts) == 0 for r in g.rounds)


def test_block_rounds_trace_the_rule(pair):
    g = api.speculative_generate(pair, PROMPT, 80, "block:4", seed=3)
    assert g.scheme == "block:4" and {r.closing_kind for r in g.rounds} == {"bonus", "correct"}
    for r in g.rounds:
        w, h = r.block["w"], r.block["h"]
        assert r.accepted == max((i + 1 for i in range(4) if r.u[i] < h[i]), default=0)
        assert w == exact_block.weights(r.p_rows.tolist(), r.q_rows.tolist(), r.drafts)
        if r.accepted < 4:
            want = exact_block.block_residual(w[r.accepted], r.p_rows[r.accepted].tolist(),
                                              r.q_rows[r.accepted].tolist())
            assert r.replacement_row.tolist() == want
        assert r.to_dict()["block"] == r.block and r.to_dict()["scheme"] == "block:4"


# -- exactness: the first emitted token follows p ------------------------------------

@pytest.mark.parametrize("widths,drafts", [((2, 2, 1), "iid"), ((2, 2, 1), "distinct"), ((4,), "iid")])
def test_exact_first_token_of_a_tree_round_on_the_real_rows_is_p(pair, widths, drafts):
    """Enumerated exactly (``Tree.enumerate``) on float64 rows: within 1e-9."""
    models = GPTPair(pair.target, pair.draft, pair.vocab)
    ctx = tuple("for i in ")
    dist = Tree(widths, drafts).enumerate(models, ctx, limit=1)
    p = models.p(ctx)
    assert sum(dist.outcomes.values()) == pytest.approx(1.0, abs=1e-12)
    assert max(abs(dist.outcomes.get((ch,), 0) - p[i]) for i, ch in enumerate(models.vocab)) < 1e-9
    q = models.q(ctx)
    assert max(abs(a - b) for a, b in zip(p, q)) > 0.01  # p and q differ: the check is not trivial


@pytest.mark.parametrize("scheme", ["tree:3", "tree:2,2:distinct", "block:2"])
def test_first_emitted_token_of_the_torch_decoders_follows_p_monte_carlo(scheme):
    """Chi-square goodness of fit, 600 independent seeded rounds, false-alarm rate 1e-3."""
    torch.set_num_threads(1)
    target, draft = skewed_tiny(1), skewed_tiny(2)
    prompt = [1, 2, 3]
    with torch.inference_mode():
        p = rule.adjust(target(torch.tensor([prompt]))[0, -1]).double()
        q = rule.adjust(draft(torch.tensor([prompt]))[0, -1]).double()
    counts = torch.zeros(8)
    for s in range(600):
        counts[speculative_generate(target, draft, prompt, 1, scheme, seed=s).tokens[0]] += 1
    assert chi2_pvalue(counts, p) > 1e-3
    assert chi2_pvalue(counts, q) < 1e-3  # the drafter's q is rejected: the test has power


# -- bad input ----------------------------------------------------------------------

@pytest.mark.parametrize("widths,message", [("0", "must be >= 1"), ("2,,1", "empty width"), ("-1", "must be >= 1"),
                                            ("a", "not a whole number"), ("8,8", "the limit is 64"),
                                            ((0, 2), "must be >= 1"), ((), "at least one level")])
def test_bad_tree_specs_are_refused_with_one_line(pair, widths, message):
    with pytest.raises(ValueError, match=message) as e:
        api.speculative_generate(pair, PROMPT, 5, f"tree:{widths}" if isinstance(widths, str) else Tree(widths))
    assert "\n" not in str(e.value)


def test_other_tree_arguments_are_refused_with_one_line(pair):
    with pytest.raises(ValueError, match="drafts must be one of iid, distinct"):
        api.speculative_generate(pair, PROMPT, 5, Tree((2,), drafts="unique"))
    with pytest.raises(ValueError, match="order must be one of dfs, bfs"):
        api.speculative_generate(pair, PROMPT, 5, "tree:2", order="random")
    with pytest.raises(ValueError, match="the lookup:2 drafter cannot draft a tree"):
        api.speculative_generate(api.load_pair("lookup:2", device="cpu"), PROMPT, 5, "tree:2")
    with pytest.raises(ValueError, match="scheme 'tree:2,x'"):
        api.speculative_generate(pair, PROMPT, 5, "tree:2,x")
    with pytest.raises(ValueError, match="recorded probabilities; the limit is 1,000,000: lower the number of tok"):
        api.speculative_generate(pair, PROMPT, 4000, "tree:4,4,2")


def test_api_tree_round_fields_for_the_app(pair):
    g = api.speculative_generate(pair, PROMPT, 20, Tree((2, 2, 1), "iid"), temperature=1.0, seed=0, order="dfs")
    r = g.rounds[-1]
    assert r.parents == Tree((2, 2, 1)).parents() and len(r.drafts) == len(r.parents)
    assert r.emitted == [r.drafts[i] for i in r.accepted_nodes] + [r.closing_token]
    assert all(r.parents[b] == a for a, b in zip(r.accepted_nodes, r.accepted_nodes[1:]))
    assert r.start == g.rounds[0].start + sum(len(x.emitted) for x in g.rounds[:-1])
    assert r.text == pair.tokenizer.decode(r.emitted) and g.text == pair.tokenizer.decode(g.tokens)
    assert api.speculative_generate(pair, PROMPT, 20, "tree:2,2,1", seed=0).tokens == g.tokens  # grammar, same seed
    assert api.speculative_generate(pair, PROMPT, 20, Tree((2, 2, 1)), seed=1).tokens != g.tokens
