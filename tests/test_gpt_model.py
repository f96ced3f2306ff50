"""The model and its cache: cached logits equal a full forward pass, the
verification mask is the lower-right one, crop forgets what it should."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch.nn.attention.bias import causal_lower_right

from specsim.schemes import masks
from specsim.gpt.config import GPTConfig, PRESETS
from specsim.gpt.model import GPT, attend, cached_attention, lower_right_mask, span_mask

TOL = 1e-5  # float32: cached and uncached paths differ only by summation order


def small_model(seed=0):
    torch.manual_seed(seed)
    return GPT(GPTConfig(block_size=64, n_layer=2, n_head=4, n_embd=32)).eval()


@torch.inference_mode()
def test_cached_logits_equal_full_forward():
    m = small_model()
    ids = torch.randint(0, 96, (1, 40), generator=torch.Generator().manual_seed(1))
    full = m(ids)[0]  # (40, V)
    cache = m.new_cache()
    pieces = [m(ids[:, :17], cache)[0], m(ids[:, 17:22], cache)[0]]  # prefill, then a 5-query verify
    pieces += [m(ids[:, t:t + 1], cache)[0] for t in range(22, 40)]  # one position at a time
    assert cache.length == 40
    assert torch.allclose(torch.cat(pieces), full, atol=TOL, rtol=0)


@torch.inference_mode()
def test_verify_after_crop_equals_full_forward():
    """Rejected drafts in the cache leave no trace once it is cropped."""
    m = small_model()
    ids = torch.randint(0, 96, (1, 30), generator=torch.Generator().manual_seed(2))
    cache = m.new_cache()
    m(ids[:, :20], cache)
    m(torch.randint(0, 96, (1, 6)), cache)  # six "rejected" positions
    cache.crop(20)
    assert torch.allclose(m(ids[:, 20:], cache)[0], m(ids)[0, 20:], atol=TOL, rtol=0)


@pytest.mark.parametrize("n,gamma", [(5, 3), (1, 1), (12, 6)])
def test_lower_right_mask_matches_explicit_mask_and_is_causal_does_not(n, gamma):
    g = torch.Generator().manual_seed(n + gamma)
    L, S = gamma + 1, n + gamma + 1
    q = torch.randn(1, 2, L, 8, generator=g)  # (B, nh, L, hs)
    k = torch.randn(1, 2, S, 8, generator=g)  # (B, nh, S, hs)
    v = torch.randn(1, 2, S, 8, generator=g)  # (B, nh, S, hs)
    explicit = torch.from_numpy(masks.lower_right_grid(n, gamma))  # (L, S) built by hand
    want = F.scaled_dot_product_attention(q, k, v, attn_mask=explicit)
    assert torch.allclose(attend(q, k, v), want, atol=1e-6, rtol=0)
    assert torch.equal(lower_right_mask(L, S), explicit)
    assert torch.equal(lower_right_mask(L, S), causal_lower_right(L, S)._materialize())  # torch's own, materialized
    assert torch.allclose(F.scaled_dot_product_attention(q, k, v, attn_mask=causal_lower_right(L, S)),
                          want, atol=1e-6, rtol=0)
    wrong = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # upper-left when L != S
    upper = torch.from_numpy(masks.upper_left_grid(n, gamma))
    assert not torch.allclose(wrong, want, atol=1e-3)
    assert torch.allclose(wrong, F.scaled_dot_product_attention(q, k, v, attn_mask=upper), atol=1e-6)


def test_mask_grids_match_torch_bias():
    for n, gamma in [(0, 0), (5, 3), (3, 7)]:
        bias = causal_lower_right(gamma + 1, n + gamma + 1)._materialize()
        assert np.array_equal(bias.numpy(), masks.lower_right_grid(n, gamma))
    assert masks.visible_keys(masks.lower_right_grid(5, 3)) == [6, 7, 8, 9]
    assert masks.visible_keys(masks.upper_left_grid(5, 3)) == [1, 2, 3, 4]


def test_crop_keeps_n_plus_k_plus_one():
    m = small_model()
    cache = m.new_cache()
    n, gamma = 9, 4
    with torch.inference_mode():
        m(torch.zeros(1, n, dtype=torch.long), cache)
        m(torch.ones(1, gamma + 1, dtype=torch.long), cache)  # last token + gamma drafts
    assert cache.length == n + gamma + 1
    for k in range(gamma, -1, -1):
        cache.crop(n + k + 1)
        assert cache.length == n + k + 1
    with pytest.raises(ValueError):
        cache.crop(n + 3)  # a crop never grows the cache


def test_window_overflow_is_an_error():
    m = small_model()
    with pytest.raises(ValueError, match="context window"):
        m(torch.zeros(1, 65, dtype=torch.long))


def test_presets_are_sized_as_documented():
    t, d = GPT(PRESETS["target"]), GPT(PRESETS["draft"])
    assert t.num_parameters() > 20 * d.num_parameters()
    assert t.lm_head.weight is t.wte.weight  # tied embeddings


def test_tree_grid_by_hand_and_on_a_chain():
    """The tree mask: every query sees the prefix, the root and its own ancestors, nothing else."""
    parents = masks.shape_parents((2, 2), "dfs")  # a, a1, a2, b, b1, b2
    assert parents == [-1, 0, 0, -1, 3, 3]
    n = 3
    grid = masks.tree_grid(parents, n)
    assert grid.shape == (7, n + 7)
    # built by hand: ancestors of each node (itself included), as node indices
    lines = {0: {0}, 1: {0, 1}, 2: {0, 2}, 3: {3}, 4: {3, 4}, 5: {3, 5}}
    for i, seen in lines.items():
        expect = [True] * (n + 1) + [j in seen for j in range(6)]
        assert grid[i + 1].tolist() == expect, i
    assert grid[0].tolist() == [True] * (n + 1) + [False] * 6
    assert masks.tree_positions(parents, n) == [3, 4, 5, 5, 4, 5, 5]
    bfs = masks.shape_parents((2, 2), "bfs")
    assert bfs == [-1, -1, 0, 0, 1, 1]
    assert masks.tree_depths(bfs) == [1, 1, 2, 2, 2, 2]
    for gamma in range(1, 5):  # a chain is the ordinary lower-right verification mask
        chain = masks.shape_parents((1,) * gamma)
        assert np.array_equal(masks.tree_grid(chain, n), masks.lower_right_grid(n, gamma))


def test_tree_grid_refuses_bad_parents():
    with pytest.raises(ValueError, match="node 1: parent 1"):
        masks.tree_grid([-1, 1], 0)
    with pytest.raises(ValueError, match="widths must be >= 1"):
        masks.shape_parents((2, 0))


def test_span_mask_is_the_additive_form_of_the_boolean_mask_attention_would_convert():
    """One additive mask per pass: 0 where a query may attend, -inf elsewhere, in the dtype attention runs
    in; none where no mask is needed; and the same attention, to the bit, as the boolean mask."""
    like32, like16 = torch.zeros(1), torch.zeros(1, dtype=torch.bfloat16)
    assert span_mask(1, 9, None, like32) is None and span_mask(5, 0, None, like32) is None
    for T, n in ((2, 1), (6, 40), (8, 3)):
        want = torch.where(lower_right_mask(T, n + T), 0.0, float("-inf"))
        assert torch.equal(span_mask(T, n, None, like32), want)
        assert span_mask(T, n, None, like16).dtype == torch.float32  # bfloat16 on a CPU attends in float32
        tree = torch.rand(T, n + T, generator=torch.Generator().manual_seed(T)) < 0.5
        tree[:, 0] = True  # every query sees something
        assert torch.equal(span_mask(T, n, tree, like32), torch.where(tree, 0.0, float("-inf")))
        q, k, v = torch.randn(1, 2, T, 8), torch.randn(1, 2, n + T, 8), torch.randn(1, 2, n + T, 8)
        assert torch.equal(attend(q, k, v, span_mask(T, n, tree, like32)), attend(q, k, v, tree))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_forward_without_module_calls_equals_the_module_calls_bit_for_bit(dtype):
    """``GPT.forward`` calls its layers' kernels directly (``model.linear``, ``model.norm``): the same numbers
    as calling each ``nn.Module``, to the bit, with a cache and T = 1 and T = 6 after a prefix."""
    torch.manual_seed(0)
    m = GPT(PRESETS["tiny"]).eval().to(dtype)

    def by_modules(idx, cache):  # the layers called as modules, as the model did before
        n, T = cache.length, idx.size(1)
        x = m.wte(idx) + m.wpe(torch.arange(n, n + T))
        mask = lower_right_mask(T, n + T) if 1 < T and n > 0 else None
        for i, b in enumerate(m.blocks):
            a, h = b.attn, b.ln_1(x)
            q, k, v = a.c_attn(h).split(a.n_embd, dim=2)
            shape = (1, T, a.n_head, a.n_embd // a.n_head)
            q, k, v = (t.view(shape).transpose(1, 2) for t in (q, k, v))
            cache.k[i, :, :, n:n + T], cache.v[i, :, :, n:n + T] = k, v
            y = cached_attention(q, cache.k[i, :, :, :n + T], cache.v[i, :, :, :n + T], mask)
            x = x + a.c_proj(y.transpose(1, 2).reshape(1, T, a.n_embd))
            x = x + b.mlp.c_proj(F.gelu(b.mlp.c_fc(b.ln_2(x)), approximate="tanh"))
        cache.length = n + T
        return m.lm_head(m.ln_f(x))

    with torch.inference_mode():
        for T in (1, 6):
            c1, c2 = m.new_cache(), m.new_cache()
            prefix = torch.randint(0, 96, (1, 20))
            m(prefix, c1)
            by_modules(prefix, c2)
            idx = torch.randint(0, 96, (1, T))
            assert torch.equal(m(idx, c1), by_modules(idx, c2))
            assert torch.equal(c1.k[:, :, :, :26], c2.k[:, :, :, :26])


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_one_position_step_equals_the_forward_pass_bit_for_bit(dtype):
    """``GPT.stepper()`` (the token loop's lean pass) gives the forward pass's logits and cache, to the bit,
    step after step from an empty cache and after a prefix; over the first K blocks and a head as well
    (early exit); a step past the window is refused like the forward pass's."""
    from specsim.gpt.drafters import EarlyExit, ExitHead
    torch.manual_seed(0)
    m = GPT(GPTConfig(block_size=24, n_layer=3, n_head=4, n_embd=32)).eval().to(dtype)
    head = ExitHead(32, rank=8).to(dtype)
    torch.nn.init.normal_(head.up.weight, std=0.5)  # a trained exit: not the identity
    tokens = torch.randint(0, 96, (24,), generator=torch.Generator().manual_seed(3)).tolist()
    for model in (m, EarlyExit(m, 2), EarlyExit(m, 1, head)):
        with torch.inference_mode():
            for prefix in (0, 9):
                c1, c2, step = model.new_cache(), model.new_cache(), model.stepper()
                if prefix:
                    model(torch.tensor([tokens[:prefix]]), c1)
                    model(torch.tensor([tokens[:prefix]]), c2)
                for t in tokens[prefix:]:
                    want = model(torch.tensor([[t]]), c1, last_only=True)[0, -1]
                    assert torch.equal(step(t, c2), want)
                assert c1.length == c2.length == 24
                assert torch.equal(c1.k, c2.k) and torch.equal(c1.v, c2.v)
                with pytest.raises(ValueError, match="25 positions exceed the context window of 24"):
                    step(tokens[0], c2)


def test_bfloat16_attention_over_a_cache_on_a_cpu_runs_in_float32_and_is_rounded_back():
    """``cached_attention``: bfloat16 numbers on a CPU give exactly the float32 attention over the same
    (exactly widened) numbers, rounded to bfloat16, one query or six under a mask; float32 is ``attend``
    untouched; and a bfloat16 model's step and its one-position forward pass agree to the bit."""
    g = torch.Generator().manual_seed(0)
    for T, mask in ((1, None), (6, lower_right_mask(6, 40))):
        q, k, v = (torch.randn(1, 6, n, 64, generator=g) for n in (T, 40, 40))
        half = [t.to(torch.bfloat16) for t in (q, k, v)]
        expected = attend(*(t.float() for t in half), mask).to(torch.bfloat16)
        got = cached_attention(*half, mask)
        assert got.dtype == torch.bfloat16 and torch.equal(got, expected)
        assert torch.equal(cached_attention(q, k, v, mask), attend(q, k, v, mask))
    torch.manual_seed(0)
    m = GPT(PRESETS["tiny"]).eval().to(torch.bfloat16)
    with torch.inference_mode():
        c1, c2 = m.new_cache(), m.new_cache()
        prefix = torch.randint(0, 96, (1, 9))
        m(prefix, c1), m(prefix, c2)
        assert c1.k.dtype == torch.bfloat16  # the cache keeps the model's format
        assert torch.equal(m.stepper()(5, c1), m(torch.tensor([[5]]), c2, last_only=True)[0, -1])
