"""Decoding with the shipped pair: greedy speculative = greedy plain, the caches
are rolled back to n + k + 1, skipping the crop breaks the output, the exact
engine proves the float64 distributions, and sampled first tokens follow p."""
import pytest
import torch
from scipy import stats

from specsim.exact import check_exactness
from specsim.gpt import api
from specsim.gpt.config import GPTConfig
from specsim.gpt.decode import Sampling, plain_generate, speculative_generate
from specsim.gpt.exact_adapter import GPTPair
from specsim.gpt.model import GPT
from specsim.gpt.rule import adjust

PROMPT = "def __init__(self, "


@pytest.mark.parametrize("gamma", [1, 3, 6])
def test_greedy_speculative_equals_greedy_plain_for_200_tokens(pair, gamma):
    plain = api.plain_generate(pair, PROMPT, 200, greedy=True)
    spec = api.speculative_generate(pair, PROMPT, 200, gamma, greedy=True)
    assert spec.tokens == plain.tokens
    assert spec.target_passes < plain.target_passes


def test_every_round_crops_both_caches_to_n_plus_k_plus_1(pair):
    g = api.speculative_generate(pair, PROMPT, 120, gamma=4, seed=3)
    assert any(r.accepted == 4 for r in g.rounds) and any(r.accepted < 4 for r in g.rounds)
    for r, nxt in zip(g.rounds, g.rounds[1:] + [None]):
        t, d = r.cache["target"], r.cache["draft"]
        n = t["start"]
        assert t["before_verify"] == n and t["after_verify"] == n + 4 + 1
        assert t["after_crop"] == n + r.accepted + 1
        assert d["before_verify"] == d["after_verify"] == n + 4  # the last draft is never fed
        assert d["after_crop"] == min(n + r.accepted + 1, n + 4)
        if nxt is not None:
            assert nxt.cache["target"]["start"] == n + r.accepted + 1
            assert nxt.cache["draft"]["start"] == d["after_crop"]  # full acceptance: one behind


def test_not_cropping_the_cache_changes_the_output(pair):
    ids = pair.tokenizer.encode(PROMPT)
    greedy = Sampling(greedy=True)
    plain = plain_generate(pair.target, ids, 60, greedy)
    good = speculative_generate(pair.target, pair.draft, ids, 60, 4, greedy)
    broken = speculative_generate(pair.target, pair.draft, ids, 60, 4, greedy, crop=False)
    assert good.tokens == plain.tokens
    assert broken.tokens != plain.tokens
    assert broken.rounds[1].cache["target"]["start"] == (len(ids) - 1) + 4 + 1  # stale drafts kept


def test_same_seed_same_trace(pair):
    a = api.speculative_generate(pair, PROMPT, 40, 3, seed=11, top_k=20).to_dict(pair.vocab)
    b = api.speculative_generate(pair, PROMPT, 40, 3, seed=11, top_k=20).to_dict(pair.vocab)
    c = api.speculative_generate(pair, PROMPT, 40, 3, seed=12, top_k=20).to_dict(pair.vocab)
    assert a == b and a != c


def test_trace_names_the_logit_row_of_each_draft(pair):
    r = api.speculative_generate(pair, PROMPT, 10, 3, seed=0).rounds[0]
    rows = r.scored_by()
    assert [x["scores"] for x in rows] == ["draft 1", "draft 2", "draft 3", "bonus"]
    assert rows[0]["query_token"] == r.last_token and rows[1]["query_token"] == r.drafts[0]
    d = r.to_dict(pair.vocab)
    assert len(d["p_rows"]) == 4 and len(d["u"]) == 3
    assert len(d["q_rows"]) == 4 and d["q_rows"][3] is None  # the scheme's layout: the last draft's q never computed


def test_torch_trace_uses_the_toy_trace_names_and_json_keys(pair):
    from specsim import rule as exact_rule

    g = api.speculative_generate(pair, PROMPT, 120, gamma=4, seed=3)
    assert {r.accepted for r in g.rounds} >= {4} and min(r.accepted for r in g.rounds) < 4
    for r in g.rounds:
        k = r.accepted
        assert r.accepted_flags == [True] * k + ([False] if k < 4 else [])
        assert [u < a for u, a in zip(r.u, r.acceptance)] == r.accepted_flags  # one acceptance per test
        assert r.emitted == r.drafts[:k] + [r.closing_token]
        if k < 4:  # a rejection: the replacement comes from the residual at position k, on the host's rows
            assert r.replacement == r.closing_token and r.bonus is None and r.closing_kind == "correct"
            want = exact_rule.residual(r.p_rows[k].tolist(), r.q_rows[k].tolist())
            assert r.replacement_row.tolist() == want
            assert r.replacement_row[r.closing_token] > 0
        else:
            assert r.bonus == r.closing_token and r.replacement is None and r.replacement_row is None
            assert r.closing_kind == "bonus"
        d = r.to_dict()
        assert (d["accepted"], d["accepted_flags"], d["acceptance"], d["closing_token"], d["closing_kind"]) == (
            k, r.accepted_flags, r.acceptance, r.closing_token, r.closing_kind)
        assert not {"k", "accept_prob", "correction_token", "correction", "n_cached"} & set(d)  # format 1 keys gone
    assert g.accepted_per_round == [r.accepted for r in g.rounds]
    assert g.to_dict()["trace_format"] == 2


@pytest.mark.parametrize("temperature", [1.0, 0.7])
def test_exact_engine_proves_the_shipped_pair_for_two_tokens(pair, temperature):
    models = GPTPair(pair.target, pair.draft, pair.vocab, Sampling(temperature))
    checks = check_exactness(models, 2, [1, 2, 3], contexts=[tuple("for i in ")], tolerance=1e-9)
    assert all(c.exact for c in checks), [c.max_abs_difference for c in checks]
    assert len(checks[0].target) == len(pair.vocab) ** 2  # every 2-token continuation has p > 0
    assert sum(checks[0].target.values()) == pytest.approx(1.0, abs=1e-12)


def skewed_tiny(seed):
    torch.manual_seed(seed)
    m = GPT(GPTConfig(vocab_size=8, block_size=16, n_layer=1, n_head=2, n_embd=16))
    with torch.no_grad():
        m.wte.weight.mul_(5)  # sharper rows, so that p and q really differ
    return m.eval()


def test_first_emitted_token_follows_p_monte_carlo():
    """Chi-square goodness of fit, 4000 rounds, false-alarm rate 1e-3 (fixed seeds: deterministic)."""
    torch.set_num_threads(1)
    target, draft = skewed_tiny(1), skewed_tiny(2)
    prompt = [1, 2, 3]
    with torch.inference_mode():
        p = adjust(target(torch.tensor([prompt]))[0, -1]).double()
        q = adjust(draft(torch.tensor([prompt]))[0, -1]).double()
    assert torch.minimum(p, q).sum() < 0.9  # rejections are frequent enough to matter
    n = 4000
    counts = torch.zeros(8)
    for s in range(n):
        counts[speculative_generate(target, draft, prompt, 1, 2, seed=s).tokens[0]] += 1
    assert chi2_pvalue(counts, p) > 1e-3
    assert chi2_pvalue(counts, q) < 1e-3  # the drafter's own q is rejected: the test has power


def chi2_pvalue(counts, probs):
    """Chi-square goodness of fit; cells expecting fewer than 5 are merged into one."""
    expected = (probs / probs.sum() * counts.sum()).numpy()
    small = expected < 5
    obs, exp = list(counts.numpy()[~small]), list(expected[~small])
    if small.any():
        obs.append(counts.numpy()[small].sum())
        exp.append(expected[small].sum())
    return stats.chisquare(obs, exp).pvalue


def test_bad_inputs_are_value_errors(pair):
    with pytest.raises(ValueError, match="'é'"):
        api.speculative_generate(pair, "caf\u00e9", 5)
    with pytest.raises(ValueError, match="empty"):
        api.plain_generate(pair, "", 5)
    with pytest.raises(ValueError, match="context window"):
        api.plain_generate(pair, "x" * 300, 5)
    with pytest.raises(ValueError, match="gamma"):
        api.speculative_generate(pair, "x", 5, gamma=0)


def test_generation_past_the_window_slides(pair):
    g = api.speculative_generate(pair, "x = 1\n" * 40, 40, 4, seed=0)
    assert len(g.tokens) == 40 and any(r.slid for r in g.rounds)
