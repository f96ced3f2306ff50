"""The shipped pair with its target in bfloat16 (``load_pair(dtype="bfloat16")``, `--dtype bfloat16`).

What holds: the drafter stays float32, the rows p and q are float32 whatever the target's dtype, a
seed fixes the text, the first emitted token follows the target's row, and greedy speculative decoding
equals plain greedy decoding up to bfloat16 ties (``selfcheck.bf16_tie``: a pass over several positions
may round two nearly equal logits the other way than a pass over one, and then argmax picks the
other one). The flags refuse what they cannot do in one line.
"""
import pytest
import torch

from specsim.gpt import api
from specsim.gpt.measure import selfcheck

PROMPT = "def __init__(self, "


@pytest.fixture(scope="module")
def bf16(one_thread):
    return api.load_pair("distilled", device="cpu", dtype="bfloat16")


def test_only_the_target_is_bfloat16_and_the_rows_are_float32(bf16):
    assert bf16.target.wte.weight.dtype == torch.bfloat16 and bf16.target.new_cache().k.dtype == torch.bfloat16
    assert bf16.draft.wte.weight.dtype == torch.float32  # measured faster in float32 (api.load_pair)
    assert api.load_pair("distilled", device="cpu").target.wte.weight.dtype == torch.float32  # the default
    g = api.speculative_generate(bf16, PROMPT, 12, "chain:3", seed=0)
    r = g.rounds[0]
    assert r.p_rows.dtype == torch.float32 and r.q_rows.dtype == torch.float32
    assert torch.allclose(r.p_rows.sum(-1), torch.ones(len(r.p_rows)), atol=1e-5)


def test_a_seed_fixes_the_bfloat16_text(bf16):
    runs = [api.speculative_generate(bf16, PROMPT, 40, "chain:5", seed=s).tokens for s in (7, 7, 8)]
    assert runs[0] == runs[1] and runs[0] != runs[2]
    plain = [api.plain_generate(bf16, PROMPT, 40, seed=s).tokens for s in (7, 7)]
    assert plain[0] == plain[1]


def test_greedy_speculative_equals_plain_greedy_up_to_bfloat16_ties(bf16):
    """Every scheme of the selfcheck passes: equal texts, or the first difference sits at a tie of plain's
    top two logits (on this machine the 120 characters after PROMPT are equal for the distilled drafter)."""
    checks = selfcheck.check_greedy(bf16)
    assert all(c.passed for c in checks), [c.detail for c in checks]


def test_a_difference_away_from_a_tie_fails_the_greedy_check(bf16, monkeypatch):
    """A text that takes plain's least likely character at one place, where no tie can excuse it, fails.
    (A real bug, such as keeping rejected drafts, need not: its first difference may happen to fall on a
    tie and take the other of plain's top two, which the check rightly excuses.)"""
    real, at = api.speculative_generate, 20
    prompt_ids = bf16.tokenizer.encode(selfcheck.PROMPT)

    def broken(*a, **k):
        g = real(*a, **k)
        _, order = selfcheck.plain_top(bf16, prompt_ids, g.tokens, at, k=bf16.target.config.vocab_size)
        g.tokens[at] = order[-1]  # plain's least likely character there
        return g
    monkeypatch.setattr(api, "speculative_generate", broken)
    check = selfcheck.check_greedy(bf16, ("chain:4",))[0]
    assert not check.passed and f"differs from plain greedy at character {at}" == check.detail


def test_a_tie_excuses_only_one_of_plain_top_two(bf16, monkeypatch):
    """Where plain's top two logits tie, the speculative text may hold the other of the two, never a third."""
    monkeypatch.setattr(selfcheck, "TIE_EPS", 1e9)  # every position counts as a tie: only the character decides
    ids = bf16.tokenizer.encode(PROMPT)
    plain = api.plain_generate(bf16, PROMPT, 8, greedy=True).tokens
    _, (first, second, third) = selfcheck.plain_top(bf16, ids, plain, 5, k=3)
    assert first == plain[5]
    assert selfcheck.bf16_tie(bf16, ids, plain, 5, second) is not None
    assert selfcheck.bf16_tie(bf16, ids, plain, 5, third) is None


def test_bf16_tie_is_none_for_float32(pair):
    assert selfcheck.bf16_tie(pair, pair.tokenizer.encode(PROMPT), [1, 2, 3], 2) is None


def test_the_bfloat16_caches_match_a_fresh_pass_within_the_precision_tolerance(bf16):
    check = selfcheck.check_caches(bf16, rounds=3)
    assert check.passed and "bfloat16 eps" in check.detail
    assert selfcheck.cache_tolerance(torch.bfloat16, 5, 4.0) == 5 * 2 ** -7 * 4.0
    assert selfcheck.cache_tolerance(torch.float32, 5, 4.0) == selfcheck.CACHE_ATOL


def test_the_eagle_drafter_reads_bfloat16_features_in_float32(one_thread):
    eagle = api.load_pair("eagle", device="cpu", dtype="bfloat16")
    assert eagle.draft.layer.fc.weight.dtype == torch.float32 and eagle.draft.new_cache().out.dtype == torch.float32
    assert selfcheck.check_eagle_cache(eagle, rounds=3).passed
    g = api.speculative_generate(eagle, PROMPT, 30, "tree:2,2,1", seed=1)
    assert len(g.tokens) == 30


def test_first_token_follows_the_bfloat16_target_row(bf16):
    """Sampled: the first token of 800 seeded chain:3 rounds against plain's row p (one position per pass),
    Pearson chi-square, false-alarm rate 1e-3. (The verify pass's row may differ from it by a unit in the
    last place of a logit, far below what 800 draws can see.) The exact version, on float64 copies of
    the rounded weights, is ``selfcheck.check_first_token``."""
    from collections import Counter

    from specsim.gpt.decode import Context
    from specsim.stats import chi_square
    ids = bf16.tokenizer.encode("def ")
    with torch.inference_mode():
        ctx = Context([bf16.target], ids, torch.device("cpu"))
        p = bf16.target(ctx.pending, ctx.caches[0])[0, -1].float().softmax(-1).tolist()
    counts = Counter(api.speculative_generate(bf16, "def ", 1, "chain:3", seed=s).tokens[0] for s in range(800))
    assert chi_square(counts, dict(enumerate(p))).p_value > 1e-3
    assert selfcheck.check_first_token(bf16).passed


def test_dtype_flags_refuse_in_one_line(cli, monkeypatch):
    code, _, err = cli("gpt", "generate", "--prompt", "x", "--dtype", "float16")
    assert code == 2 and err.count("\n") == 1 and "--dtype" in err
    code, _, err = cli("gpt", "bench", "--dtype", "bfloat16", "--drafters", "distilled")
    assert code == 2 and err.count("\n") == 1 and "--drafters" in err
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda: False)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: "an old GPU")
    with pytest.raises(api.DeviceError, match="no bfloat16"):
        api.resolve_dtype("bfloat16", torch.device("cuda"))
    with pytest.raises(ValueError, match="unknown dtype"):
        api.load_pair("distilled", device="cpu", dtype="float16")


def test_generate_takes_the_dtype_flag(cli):
    code, out, err = cli("gpt", "generate", "--prompt", PROMPT, "--tokens", "20", "--dtype", "bfloat16", "--device",
                         "cpu", "--greedy")
    assert code == 0, err
    assert "20 tokens" in out


def test_selfcheck_passes_with_a_bfloat16_target(cli_json):
    report = cli_json("gpt", "selfcheck", "--device", "cpu", "--dtype", "bfloat16", "--no-bench")
    assert report["passed"] and report["dtype"] == "bfloat16" and len(report["checks"]) == 9
    caches = next(c for c in report["checks"] if c["name"] == "caches = a fresh forward")
    assert "bfloat16 eps" in caches["detail"]
