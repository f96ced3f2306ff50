"""Tree and block verification on the tiny GPT.

The same quantity two ways, every time: the one-pass tree forward against a
plain forward of each node's own path, the kept caches against a fresh pass
over the accepted text, greedy tree/block decoding against greedy plain
decoding, the torch walk against ``specsim.schemes.tree``'s own sampler on the same
rows and uniforms, the torch twins against ``specsim.schemes.tree`` / ``specsim.schemes.block``
element by element, and the first emitted token against p (exactly with the
exact engine, and by a chi-square test on the torch decoder).
"""
import random

import numpy as np
import pytest
import torch

from specsim.schemes import block as exact_block
from specsim import sampling as toy_sampling
from specsim.schemes import tree as exact_tree
from specsim.gpt import api, rule
from specsim.schemes import masks
from specsim.gpt.config import PRESETS
from specsim.gpt.decode import Sampling, _Context, plain_generate, speculative_generate
from specsim.gpt.drafters import ModelDrafter
from specsim.gpt.exact_adapter import GPTPair
from specsim.gpt.model import GPT
from specsim.gpt.tree_decode import draft_tree, tree_generate, tree_mask, tree_round, walk_tree

from .test_gpt_decode import chi2_pvalue, skewed_tiny

PROMPT = "def __init__(self, "
ATOL = 1e-4  # float32 logits computed two ways (different attention shapes, same maths)


@pytest.fixture(scope="module")
def pair():
    torch.set_num_threads(1)
    return api.load_pair("distilled", device="cpu")


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
    with torch.inference_mode():
        tree = draft_tree(drafter, ids, (2, 2, 1), "iid", "bfs", Sampling(), torch.Generator().manual_seed(0))
        assert tree.q_rows[len(tree.parents)] is None  # bfs: the last node is a leaf, never fed
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
    ctx = _Context([pair.target], pair.tokenizer.encode(PROMPT), torch.device("cpu"))
    drafter.start(ctx.view)
    gen, moved = torch.Generator().manual_seed(1), 0
    with torch.inference_mode():
        for _ in range(8):
            r = tree_round(pair.target, drafter, ctx, widths, drafts, order, Sampling(), gen)
            moved += r.accepted_nodes != list(range(r.accepted))  # the gather really moved slots
            assert r.cache["target"]["after_keep"] == r.n_cached + r.accepted + 1
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
    g = tree_generate(pair.target, pair.drafter(), pair.tokenizer.encode(PROMPT), 150, widths, drafts, order,
                      Sampling(greedy=True))
    assert g.tokens == greedy_plain
    assert g.target_passes < 150


def test_greedy_block_decoding_equals_greedy_plain_for_150_tokens(pair, greedy_plain):
    g = speculative_generate(pair.target, pair.drafter(), pair.tokenizer.encode(PROMPT), 150, 4,
                             Sampling(greedy=True), verify="block")
    assert g.tokens == greedy_plain and g.target_passes < 150


@pytest.mark.parametrize("seed", [0, 5])
def test_a_chain_shaped_tree_gives_the_chain_decoders_tokens(pair, seed):
    ids = pair.tokenizer.encode(PROMPT)
    chain = speculative_generate(pair.target, pair.drafter(), ids, 80, 4, Sampling(), seed)
    tree = tree_generate(pair.target, pair.drafter(), ids, 80, (1, 1, 1, 1), "iid", "dfs", Sampling(), seed)
    assert tree.tokens == chain.tokens
    assert [r.accepted for r in tree.rounds] == chain.accepted_per_round


# -- the walk is specsim.schemes.tree's -------------------------------------------------

class Uniforms:
    """A numpy-Generator stand-in handing out planned uniforms."""

    def __init__(self, values):
        self.values = list(values)

    def random(self):
        return self.values.pop(0)


def replay_with_specsim_tree(r, widths, p64, q64, u, drafts, monkeypatch):
    """Run ``specsim.schemes.tree.Tree.sample_round`` on the round's rows: its drafts are forced to the
    drafted tokens (in the order they are tried), its uniforms are ``u``; returns its emitted
    tokens, K, the events and the row the closing token was drawn from."""
    node_of = {(): -1}
    for i, a in enumerate(r.parents):
        node_of.setdefault(tuple(node_of_path(r, i)), i)

    class Rows:
        vocab = tuple(range(p64.shape[1]))

        def p(self, ctx):
            return p64[node_of[tuple(ctx)] + 1].tolist()

        def q(self, ctx):
            return q64[node_of[tuple(ctx)] + 1].tolist()

    walk = walk_tree(r.parents, r.tokens, p64, q64, u, drafts)
    planned = [r.tokens[c] for c in walk.tried] + ["close"]
    rows_seen = []

    def forced_draw(row, _u):
        rows_seen.append(row)
        tok = planned.pop(0)
        return 0 if tok == "close" else tok

    monkeypatch.setattr(toy_sampling, "draw", forced_draw)
    uniforms = [x for c in walk.tried for x in (0.5, float(u[c]))] + [0.5]
    events = []
    out, k = exact_tree.Tree(widths, drafts).sample_round(Rows(), (), Uniforms(uniforms), events=events)
    return walk, out, k, events, rows_seen[-1]


def node_of_path(r, i):
    path = []
    while i >= 0:
        path.insert(0, r.tokens[i])
        i = r.parents[i]
    return path


@pytest.mark.parametrize("widths,drafts", [((2, 2, 1), "iid"), ((3, 1), "distinct"), ((2, 2), "distinct")])
def test_torch_walk_is_specsim_trees_walk_on_the_same_rows_and_uniforms(pair, widths, drafts, monkeypatch):
    g = api.tree_generate(pair, PROMPT, 30, widths, drafts, seed=2)
    rng = np.random.default_rng(0)
    kinds = set()
    for r in g.rounds:
        p64 = r.p_rows.double()
        q64 = torch.stack([q if q is not None else torch.full_like(r.p_rows[0], float("nan"))
                           for q in r.q_rows]).double()
        q64 = q64 / q64.sum(-1, keepdim=True)
        for u in [torch.tensor(r.u, dtype=torch.float64)] + [torch.tensor(rng.random(len(r.u))) for _ in range(3)]:
            walk, out, k, events, close_row = replay_with_specsim_tree(r, widths, p64, q64, u, drafts, monkeypatch)
            assert list(out[:-1]) == [r.tokens[i] for i in walk.accepted_nodes] and k == len(walk.accepted_nodes)
            tests = [e for e in events if e["kind"] in ("accept", "reject")]
            assert [e["kind"] == "accept" for e in tests] == walk.accepted_flags
            assert [float(e["acceptance"]) for e in tests] == pytest.approx(walk.acceptance, abs=1e-12)
            assert close_row == pytest.approx(walk.closing_row.tolist(), abs=1e-12)
            kinds.add(walk.correction)
    assert kinds == {"bonus", "residual"}


# -- torch twins, element by element -----------------------------------------------

def float_rows(seed, n=9, count=6):
    rng = np.random.default_rng(seed)
    rows = rng.dirichlet(np.full(n, 0.7), size=count)
    rows[rng.random(rows.shape) < 0.15] = 0  # some zeros
    rows[:, 0] += 1e-3  # never an empty row
    return rows / rows.sum(-1, keepdims=True)


@pytest.fixture(scope="module")
def model_rows(pair):
    """float64 rows of the shipped pair after a real prompt."""
    models = GPTPair(pair.target, pair.draft, pair.vocab)
    ctx = tuple("for i in ")
    return np.array(models.p(ctx)), np.array(models.q(ctx))


@pytest.mark.parametrize("seed", range(6))
def test_tree_twins_agree_with_specsim_tree(seed, model_rows):
    rows = float_rows(seed)
    pairs = [(rows[0], rows[1]), (rows[2], rows[3]), model_rows]
    for p, q in pairs:
        tp, tq = torch.tensor(p), torch.tensor(q)
        for x in np.flatnonzero(q > 0)[:12]:
            assert rule.child_acceptance(tp, tq, int(x)).item() == pytest.approx(
                exact_tree.child_acceptance(p.tolist(), q.tolist(), int(x)), abs=1e-12)
        want, got = exact_tree.residual_update(p.tolist(), q.tolist()), rule.residual_update(tp, tq)
        assert (want is None) == (got is None)
        if want is not None:
            assert got.tolist() == pytest.approx(want, abs=1e-12)
        tried = {int(i) for i in random.Random(seed).sample(range(len(q)), 3)}
        want, got = exact_tree.without(q.tolist(), tried), rule.without(tq, tried)
        assert got.tolist() == pytest.approx(want, abs=1e-12)
    one_hot = torch.tensor([0.0, 1.0, 0.0], dtype=torch.float64)
    assert rule.without(one_hot, {1}) is None and exact_tree.without(one_hot.tolist(), {1}) is None


@pytest.mark.parametrize("seed", range(8))
def test_block_twins_agree_with_specsim_block(seed, model_rows):
    rng = np.random.default_rng(100 + seed)
    gamma = 1 + seed % 4
    rows = float_rows(seed, count=2 * gamma + 2)
    p_rows, q_rows = rows[:gamma + 1], rows[gamma + 1:2 * gamma + 1]
    if seed % 2:  # the real model's rows at the first position
        p_rows[0], q_rows[0] = model_rows[0][:9] / model_rows[0][:9].sum(), model_rows[1][:9] / model_rows[1][:9].sum()
    if seed == 2:  # w_1 = 1 and p_2 = q_2: the 0/0 case, h_1 = 0
        p_rows[0], p_rows[1] = q_rows[0], q_rows[1]
    drafts = [int(rng.choice(np.flatnonzero(q > 0))) for q in q_rows]
    w = exact_block.weights(p_rows.tolist(), q_rows.tolist(), drafts)
    h = exact_block.stop_probabilities(w, p_rows.tolist(), q_rows.tolist())
    tw = rule.block_weights(torch.tensor(p_rows), torch.tensor(q_rows), torch.tensor(drafts))
    th = rule.stop_probabilities(tw, torch.tensor(p_rows), torch.tensor(q_rows))
    assert tw.tolist() == pytest.approx([float(x) for x in w], abs=1e-12)
    assert th.tolist() == pytest.approx([float(x) for x in h], abs=1e-12)
    if seed == 2:
        assert th[0].item() == 0 == h[0]
    for i in range(gamma):
        try:
            want = exact_block.block_residual(w[i], p_rows[i].tolist(), q_rows[i].tolist())
        except ValueError:
            want = None
        got = rule.block_residual(tw[i], torch.tensor(p_rows[i]), torch.tensor(q_rows[i]))
        assert (want is None) == (got is None)
        if want is not None:
            assert got.tolist() == pytest.approx(want, abs=1e-12)
    u = torch.tensor(rng.random(gamma))
    _, _, stops, tau = rule.accept_block(torch.tensor(p_rows), torch.tensor(q_rows), torch.tensor(drafts), u)
    assert tau == max((i + 1 for i in range(gamma) if u[i] < h[i]), default=0)


def test_block_verification_of_an_empty_chain_is_one_bonus_step():
    p = torch.tensor([[0.25, 0.75]], dtype=torch.float64)
    w, h, stops, tau = rule.accept_block(p, p[:0], torch.tensor([], dtype=torch.long), torch.tensor([]))
    assert w.tolist() == [1.0] and h.numel() == stops.numel() == 0 and tau == 0


def test_greedy_block_with_the_lookup_drafter_equals_plain(greedy_plain):
    lookup = api.load_pair("lookup:2", device="cpu")  # proposes nothing in some rounds
    g = api.block_generate(lookup, PROMPT, 150, gamma=4, greedy=True)
    assert g.tokens == greedy_plain and any(len(r.drafts) == 0 for r in g.rounds)


def test_block_rounds_trace_the_rule(pair):
    g = api.block_generate(pair, PROMPT, 80, gamma=4, seed=3)
    assert g.verify == "block" and {r.correction for r in g.rounds} == {"bonus", "residual"}
    for r in g.rounds:
        w, h = r.block["w"], r.block["h"]
        assert r.accepted == max((i + 1 for i in range(4) if r.u[i] < h[i]), default=0)
        want_w = exact_block.weights(r.p_rows.tolist(), r.q_rows.tolist(), r.drafts)
        assert w == pytest.approx(want_w, abs=1e-5)
        if r.accepted < 4:
            want = exact_block.block_residual(w[r.accepted], r.p_rows[r.accepted].tolist(),
                                              r.q_rows[r.accepted].tolist())
            assert r.replacement_row.tolist() == pytest.approx(want, abs=1e-5)
        assert r.to_dict()["verify"] == "block"


# -- exactness: the first emitted token follows p ------------------------------------

@pytest.mark.parametrize("widths,drafts", [((2, 2, 1), "iid"), ((2, 2, 1), "distinct"), ((4,), "iid")])
def test_exact_first_token_of_a_tree_round_on_the_real_rows_is_p(pair, widths, drafts):
    """Enumerated exactly (``specsim.exact`` via ``Tree.round_distribution``) on float64 rows: within 1e-9."""
    models = GPTPair(pair.target, pair.draft, pair.vocab)
    ctx = tuple("for i in ")
    dist = exact_tree.Tree(widths, drafts).round_distribution(models, ctx, limit=1)
    p = models.p(ctx)
    assert sum(dist.outcomes.values()) == pytest.approx(1.0, abs=1e-12)
    assert max(abs(dist.outcomes.get((ch,), 0) - p[i]) for i, ch in enumerate(models.vocab)) < 1e-9
    q = models.q(ctx)
    assert max(abs(a - b) for a, b in zip(p, q)) > 0.01  # p and q differ: the check is not trivial


@pytest.mark.parametrize("scheme", ["tree 3 iid", "tree 2,2 distinct", "block 2"])
def test_first_emitted_token_of_the_torch_decoders_follows_p_monte_carlo(scheme):
    """Chi-square goodness of fit, 600 independent seeded rounds, false-alarm rate 1e-3."""
    torch.set_num_threads(1)
    target, draft = skewed_tiny(1), skewed_tiny(2)
    prompt = [1, 2, 3]
    with torch.inference_mode():
        p = rule.adjust(target(torch.tensor([prompt]))[0, -1]).double()
        q = rule.adjust(draft(torch.tensor([prompt]))[0, -1]).double()
    kind, *rest = scheme.split()
    counts = torch.zeros(8)
    for s in range(600):
        if kind == "tree":
            g = tree_generate(target, draft, prompt, 1, exact_tree.parse_shape(rest[0]), rest[1], seed=s)
        else:
            g = speculative_generate(target, draft, prompt, 1, int(rest[0]), seed=s, verify="block")
        counts[g.tokens[0]] += 1
    assert chi2_pvalue(counts, p) > 1e-3
    assert chi2_pvalue(counts, q) < 1e-3  # the drafter's q is rejected: the test has power


# -- bad input ----------------------------------------------------------------------

@pytest.mark.parametrize("widths,message", [("0", "must be >= 1"), ("2,,1", "empty width"), ("-1", "must be >= 1"),
                                            ("a", "not a whole number"), ("8,8", "the limit is 64"),
                                            ((0, 2), "must be >= 1"), ((), "at least one level")])
def test_bad_tree_specs_are_refused_with_one_line(pair, widths, message):
    with pytest.raises(ValueError, match=message) as e:
        api.tree_generate(pair, PROMPT, 5, widths)
    assert "\n" not in str(e.value)


def test_other_tree_arguments_are_refused_with_one_line(pair):
    with pytest.raises(ValueError, match="drafts must be one of iid, distinct"):
        api.tree_generate(pair, PROMPT, 5, (2,), drafts="unique")
    with pytest.raises(ValueError, match="order must be one of dfs, bfs"):
        api.tree_generate(pair, PROMPT, 5, (2,), order="random")
    with pytest.raises(ValueError, match="the lookup:2 drafter cannot draft a tree"):
        api.tree_generate(api.load_pair("lookup:2", device="cpu"), PROMPT, 5, (2,))
    with pytest.raises(ValueError, match="verify must be one of token, block"):
        api.speculative_generate(pair, PROMPT, 5, verify="tree")
    with pytest.raises(ValueError, match="recorded probabilities; the limit is 1,000,000: lower the number of tok"):
        api.tree_generate(pair, PROMPT, 4000, (4, 4, 2))


def test_api_tree_round_fields_for_the_app(pair):
    g = api.tree_generate(pair, PROMPT, 20, widths=(2, 2, 1), drafts="iid", temperature=1.0, seed=0, order="dfs")
    r = g.rounds[-1]
    assert r.parents == masks.shape_parents((2, 2, 1)) and len(r.tokens) == len(r.parents)
    assert r.emitted == [r.tokens[i] for i in r.accepted_nodes] + [r.closing_token]
    assert all(r.parents[b] == a for a, b in zip(r.accepted_nodes, r.accepted_nodes[1:]))
    assert r.n_cached == g.rounds[0].n_cached + sum(len(x.emitted) for x in g.rounds[:-1])
    assert r.text == pair.tokenizer.decode(r.emitted) and g.text == pair.tokenizer.decode(g.tokens)
    assert api.tree_generate(pair, PROMPT, 20, "2,2,1", seed=0).tokens == g.tokens  # text spec, same seed
    assert api.tree_generate(pair, PROMPT, 20, (2, 2, 1), seed=1).tokens != g.tokens
