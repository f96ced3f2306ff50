"""Drafters (specsim.gpt.drafters): one interface, exact with any drafter, greedy = plain."""
from fractions import Fraction

import pytest

torch = pytest.importorskip("torch")

from specsim.exact import check_exactness  # noqa: E402
from specsim.gpt import api, specs  # noqa: E402
from specsim.gpt.decode import Sampling, speculative_generate  # noqa: E402
from specsim.gpt.api import make_drafter  # noqa: E402
from specsim.gpt.drafters import LookupDrafter, parse_spec  # noqa: E402
from specsim.toy import ToyModel, load_model  # noqa: E402

SPECS = list(specs.gallery())  # every drafter the registry offers (specsim.gpt.specs.DRAFTERS)
PROMPT = "def add(a, b):\n    return a + b\n\ndef sub(a, b):\n    return a - b\n\ndef "


pytestmark = pytest.mark.usefixtures("one_thread")  # conftest: one torch thread, restored after


def test_a_deterministic_draft_keeps_the_rule_exact():
    """q with mass 1 on one token (what lookup proposes): exact joint at every context and gamma."""
    m = load_model("seed")
    n = len(m.vocab)
    one_hot = {c: tuple(Fraction(int(i == sum(m.vocab.index(t) + 1 for t in c) % n)) for i in range(n)) for c in m.contexts()}
    degenerate = ToyModel(m.vocab, m.order, dict(m.target), one_hot, "one-hot")
    checks = check_exactness(degenerate, 3, [1, 2, 3])
    assert checks and all(c.exact and c.max_abs_difference == 0 for c in checks)


@pytest.mark.parametrize("spec", SPECS)
def test_greedy_speculative_equals_plain_greedy(spec):
    pair = api.load_pair(spec, "cpu")
    plain = api.plain_generate(pair, PROMPT, 50, greedy=True)
    for gamma in (1, 4):
        assert api.speculative_generate(pair, PROMPT, 50, gamma, greedy=True).tokens == plain.tokens


def test_lookup_drafts_vary_per_round_and_rejections_use_p_without_x():
    pair = api.load_pair("lookup:3", "cpu")
    g = api.speculative_generate(pair, PROMPT, 60, 4, seed=0)
    lengths = {len(r.drafts) for r in g.rounds}
    assert 0 in lengths and 4 in lengths  # no match -> a plain target step; a long match -> gamma drafts
    assert g.draft_passes == 0
    for r in g.rounds:
        for i, d in enumerate(r.drafts[:len(r.accepted_flags)]):
            assert r.q_rows[i, d] == 1 and r.q_rows[i].sum() == 1  # q: mass 1 on the proposal
            assert r.acceptance[i] == pytest.approx(float(r.p_rows[i, d]), abs=1e-6)  # min(1, p/1)
        if r.replacement_row is not None and r.accepted < len(r.drafts):
            x = r.drafts[r.accepted]
            expected = r.p_rows[r.accepted].double()  # the closing row is the host's float64 row
            expected[x] = 0
            if expected.sum() > 0:
                assert torch.allclose(r.replacement_row, expected / expected.sum(), atol=1e-6)


def test_lookup_falls_back_to_shorter_ngrams_and_most_recent_match():
    d = LookupDrafter(2)
    assert d.propose_ids([1, 2, 5, 1, 2, 6, 1, 2], 3) == [6, 1, 2]  # most recent "1 2"
    assert d.propose_ids([3, 7, 4, 7], 2) == [4, 7]  # "4 7" unseen -> "7"
    assert d.propose_ids([1, 2, 3], 2) == []


def test_early_exit_shares_the_target_weights_and_its_kv_cache():
    pair = api.load_pair("early-exit:2", "cpu")
    assert pair.draft.target is pair.target and pair.draft.config.n_layer == 2
    ids = pair.tokenizer.encode(PROMPT)
    shared = pair.drafter()
    g = speculative_generate(pair.target, shared, ids, 120, 3, Sampling(), seed=5)
    assert g.draft_passes == 3 * len(g.rounds)
    assert shared.cache.k.shape[0] == pair.target.config.n_layer  # the target's own cache, all 5 layers
    for r in g.rounds:  # one cache: the drafter's lengths are the target's, drafts cropped before verifying
        assert r.cache["draft"] == r.cache["target"]
        assert r.cache["target"]["before_verify"] == r.cache["target"]["start"]
    own = speculative_generate(pair.target, shared.own_cache(), ids, 120, 3, Sampling(), seed=5)
    assert own.rounds[1].cache["draft"] != own.rounds[1].cache["target"]  # a K-layer cache of its own
    assert own.tokens == g.tokens  # the same keys and values, so the same q rows and the same draws
    for a, b in zip(g.rounds, own.rounds):
        torch.testing.assert_close(a.q_rows, b.q_rows, rtol=0, atol=1e-5)


def test_a_trained_exit_head_raises_teacher_forced_alpha_on_held_out_text():
    from specsim.gpt.train import corpus
    from specsim.gpt.train.loop import teacher_forced_alpha
    plain, headed = api.load_pair("early-exit:2", "cpu"), api.load_pair("early-exit:2+head", "cpu")
    assert headed.draft.exit_head is not None and plain.draft.exit_head is None
    _, heldout = corpus.shipped_splits()
    data = torch.tensor(plain.tokenizer.encode(heldout[:1025]))  # 4 windows of 256, no sampling
    a = [teacher_forced_alpha(p.target, p.draft, data, block=256, max_windows=4) for p in (plain, headed)]
    assert a[1] > a[0]


def test_tree_decoding_gives_early_exit_a_cache_of_its_own():
    pair = api.load_pair("early-exit:2", "cpu")
    g = api.speculative_generate(pair, PROMPT, 30, "tree:2,1", greedy=True)
    assert g.tokens == api.plain_generate(pair, PROMPT, 30, greedy=True).tokens


@pytest.mark.parametrize("bad", ["lookup", "lookup:x", "early-exit:0", "early-exit:5", "medusa", "lookup:0",
                                 "early-exit:5+head", "early-exit:2+hed"])
def test_bad_specs_are_one_line_errors(bad):
    with pytest.raises(ValueError) as e:
        api.load_pair(bad, "cpu")
    assert "\n" not in str(e.value)


def test_parse_spec():
    assert parse_spec("lookup:3") == ("lookup", 3) and parse_spec("trained") == ("trained", None)
    assert make_drafter("lookup:2", api.load_pair("distilled", "cpu").target).name == "lookup:2"


def test_gallery_figure_has_one_marker_per_drafter_and_contours_rise_with_alpha():
    from specsim.plots.gallery import alpha_cost_map, best_speedup
    rows = [{"drafter": s, "alpha": a, "alpha_se": 0.02, "cost": c, "speedup": 1.0}
            for s, a, c in [("distilled", 0.8, 0.1), ("trained", 0.75, 0.15), ("lookup:3", 0.3, 0.0),
                            ("early-exit:2", 0.8, 0.45)]]
    fig = alpha_cost_map(rows)
    markers = [t for t in fig.data if t.type == "scatter"]
    assert len(markers) == 1 and list(markers[0].text) == [r["drafter"] for r in rows]
    assert best_speedup(0.9, 0.1) > best_speedup(0.5, 0.1) > best_speedup(0.5, 0.5)


def test_gallery_rows_on_short_runs():
    from specsim.gpt.gallery import gallery, repetitive_prompts
    assert all(len(p) < 256 for p in repetitive_prompts())
    r = gallery(["lookup:3", "early-exit:2"], sets=("repetitive",), n_tokens=12, repeats=1, n_prompts=1)
    rows = r["sets"]["repetitive"]
    assert [row["drafter"] for row in rows] == ["lookup:3", "early-exit:2"]
    for row in rows:
        assert 0 <= row["alpha"] <= 1 and row["cost"] >= 0 and row["speedup"] > 0
        assert 1 <= row["tokens_per_pass"] <= 5 and 1 <= row["best_gamma"] <= 8
    assert rows[1]["drafted_per_round"] == 4  # a model drafter always drafts gamma


def test_bad_prompt_set():
    from specsim.gpt.gallery import gallery
    with pytest.raises(ValueError, match="unknown prompt set"):
        gallery(["lookup:2"], sets=("nope",), n_tokens=4, repeats=1)
