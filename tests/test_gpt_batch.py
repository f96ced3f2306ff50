"""Batched speculative decoding with ragged acceptance (specsim.gpt.batch) against the batch-1 decoder.

Greedy batched output equals each sequence's plain greedy output; the
ragged caches hold, row by row, the keys and values a fresh pass over that
row's tokens computes (tolerance 1e-5, float32); sampled rows follow the
batch-1 decoder with the row's own seed; bad input is one line.
"""
import pytest
import torch

from specsim.gpt.batch import MAX_BATCH, MAX_GAMMA, BatchCache, batch_generate, forward
from specsim.gpt.decode import Sampling, plain_generate, speculative_generate

GREEDY = Sampling(greedy=True)
TOKENS = 40
PROMPTS = ["def __init__(self, ", "class Foo:\n    ", "import os\nimport sys\n\ndef main():\n    ", "x = 1",
           "    return"]  # five different lengths
TOL = 1e-5


@pytest.fixture(scope="module")
def ids(pair):
    return [pair.tokenizer.encode(p) for p in PROMPTS]


@pytest.fixture(scope="module")
def plain(pair, ids):
    """Each prompt decoded alone, greedily, by the batch-1 decoder."""
    return [plain_generate(pair.target, i, TOKENS, GREEDY).tokens for i in ids]


@pytest.mark.parametrize("batch", [1, 3, 5])
@pytest.mark.parametrize("gamma", [0, 1, 3, 5])
def test_greedy_batched_equals_plain_greedy_of_every_sequence(pair, ids, plain, batch, gamma):
    g = batch_generate(pair.target, pair.draft, ids[:batch], TOKENS, gamma, GREEDY)
    assert g.tokens == plain[:batch]
    assert g.rounds == TOKENS if gamma == 0 else g.rounds < TOKENS


def test_acceptance_is_ragged(pair, ids, plain):
    g = batch_generate(pair.target, pair.draft, ids, TOKENS, 5, GREEDY)
    assert any(len(set(ks)) > 1 for ks in g.accepted)  # a round where rows kept different numbers of drafts
    assert len({len(s) for s in g.sequences}) > 1  # rows end at different lengths
    assert g.tokens == plain


def _fresh(model, tokens):
    cache = model.new_cache()
    model(torch.tensor([tokens]), cache)
    return cache


@pytest.mark.parametrize("gamma", [0, 3])
def test_caches_equal_a_fresh_forward_of_each_row(pair, ids, gamma):
    g = batch_generate(pair.target, pair.draft, ids, TOKENS, gamma, Sampling(), seed=5)
    assert g.rounds > 5
    for c, model in zip(g.caches, [pair.target, pair.draft]):
        for b, seq in enumerate(g.sequences):
            n = c.lengths[b]
            if model is pair.target:
                assert n == len(seq) - 1  # everything but the next token to feed
            else:
                assert len(seq) - 2 <= n <= len(seq) - 1  # one behind after a full acceptance
            fresh = _fresh(model, seq[:n])
            assert torch.allclose(c.k[:, b, :, :n], fresh.k[:, 0, :, :n], atol=TOL)
            assert torch.allclose(c.v[:, b, :, :n], fresh.v[:, 0, :, :n], atol=TOL)


def test_forward_with_ragged_lengths_matches_each_row_alone(pair, ids):
    model, rows = pair.target, [ids[0][:7], ids[2][:3], ids[4][:10]]
    cache = BatchCache(model, 3)
    width = max(len(r) for r in rows)
    forward(model, cache, torch.tensor([r + [0] * (width - len(r)) for r in rows]))
    cache.crop([len(r) for r in rows])
    new = torch.tensor([[5, 6, 7]] * 3)  # (3, 3): three new tokens per row, each after its own prefix
    logits = forward(model, cache, new)  # (3, 3, V)
    for b, r in enumerate(rows):
        alone = model(torch.tensor([r + [5, 6, 7]]))[0, -3:]  # no cache at all
        assert torch.allclose(logits[b], alone, atol=TOL)
    assert cache.lengths == [len(r) + 3 for r in rows]


def test_sampled_rows_follow_the_batch1_decoder_with_their_own_seed(pair, ids):
    g = batch_generate(pair.target, pair.draft, ids[:3], 60, 3, Sampling(), seed=11)
    for b in range(3):
        alone = speculative_generate(pair.target, pair.draft, ids[b], 60, 3, Sampling(), seed=11 + b)
        assert g.tokens[b] == alone.tokens


def test_one_seed_one_trace(pair, ids):
    run = lambda seed: batch_generate(pair.target, pair.draft, ids[:3], 30, 3, Sampling(), seed=seed)  # noqa: E731
    a, b, c = run(2), run(2), run(3)
    assert (a.tokens, a.accepted) == (b.tokens, b.accepted)
    assert a.tokens != c.tokens


def test_block_verification_runs_through_its_own_verify(pair, ids, plain):
    g = batch_generate(pair.target, pair.draft, ids[:3], TOKENS, 4, GREEDY, scheme="block:4")
    assert g.scheme == "block:4" and g.tokens == plain[:3]


@pytest.mark.parametrize("call, message", [
    (lambda p, i: batch_generate(p.target, p.draft, [i[0]] * (MAX_BATCH + 1), 4, 2),
     f"batch size must be in 1 .. {MAX_BATCH}, got {MAX_BATCH + 1}"),
    (lambda p, i: batch_generate(p.target, p.draft, i, 4, -1), "gamma must be an integer in"),
    (lambda p, i: batch_generate(p.target, p.draft, i, 4, MAX_GAMMA + 1), "gamma must be an integer in"),
    (lambda p, i: batch_generate(p.target, p.draft, [i[0], []], 4, 2), "a prompt is empty"),
    (lambda p, i: batch_generate(p.target, p.draft, i, 0, 2), "the number of tokens must be >= 1"),
    (lambda p, i: batch_generate(p.target, p.draft, i, 250, 2), "the batch does not slide"),
    (lambda p, i: batch_generate(p.target, p.draft, i, 4, 2, scheme="tree:2,1"), "a chain or block of"),
    (lambda p, i: batch_generate(p.target, p.draft, [i[0]] * 64, 200, 16), "target positions"),
])
def test_bad_input_is_one_line(pair, ids, call, message):
    with pytest.raises(ValueError) as e:
        call(pair, ids)
    assert message in str(e.value) and "\n" not in str(e.value)
