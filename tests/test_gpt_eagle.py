"""The EAGLE-style drafter (specsim.gpt.eagle): greedy = plain, caches = a fresh forward, checksummed weights."""
import hashlib
import shutil

import pytest

torch = pytest.importorskip("torch")

from specsim.gpt import api  # noqa: E402
from specsim.gpt.config import PRESETS  # noqa: E402
from specsim.gpt.decode import Sampling, plain_generate, speculative_generate  # noqa: E402
from specsim.gpt.api import make_drafter  # noqa: E402
from specsim.gpt.drafters import parse_spec  # noqa: E402
from specsim.gpt.eagle import Eagle, EagleConfig, EagleDrafter, EagleLayer, parent_slots  # noqa: E402
from specsim.gpt.train.eagle import train_eagle  # noqa: E402
from specsim.gpt.train.loop import train_lm  # noqa: E402
from specsim.gpt.weights import WeightsError, default_dir, load_eagle, read_manifest  # noqa: E402
from specsim.schemes import masks  # noqa: E402

PROMPT = "def add(a, b):\n    return a + b\n\ndef sub(a, b):\n    return a - b\n\ndef "
SCHEMES = ["chain:1", "chain:4", "block:3", "tree:2,2,1", "tree:3,1:distinct"]
GREEDY = Sampling(greedy=True)
CACHE_ATOL = 1e-4  # float32, one pass over a window against the same slots built round by round


pytestmark = pytest.mark.usefixtures("one_thread")  # conftest: one torch thread, restored after


@pytest.fixture(scope="module")
def tiny():
    """A two-layer tiny target trained on a periodic text and an eagle layer trained on it (seeded, ~2 s):
    the drafter agrees with the target often, so rounds accept drafts and reject others."""
    data = torch.tensor([(i * 3 + i // 11) % 13 + 10 for i in range(3000)])
    target = train_lm(PRESETS["tiny-2"], data, data, steps=60, batch_size=8, lr=1e-2, seed=0, progress=False).model
    layer, _ = train_eagle(target.eval(), data, data, steps=80, batch_size=8, block=32, lr=1e-2, width=8, n_head=2,
                           progress=False)
    return target, layer, data[:10].tolist()


@pytest.mark.parametrize("scheme", SCHEMES)
def test_tiny_greedy_speculative_equals_plain_greedy_with_accepted_drafts(tiny, scheme):
    target, layer, prompt = tiny
    plain = plain_generate(target, prompt, 60, GREEDY).tokens
    g = speculative_generate(target, EagleDrafter(Eagle(target, layer).eval()), prompt, 60, scheme, GREEDY)
    assert g.tokens == plain
    assert sum(r.accepted for r in g.rounds) >= len(g.rounds)  # at least one accepted draft a round on average


def _gap(a, b) -> float:
    return (a - b).abs().max().item()


@pytest.mark.parametrize("scheme", ["chain:3", "tree:2,2,1"])
@pytest.mark.parametrize("seed", [1, 3])
def test_caches_equal_a_fresh_forward(tiny, scheme, seed):
    """After sampled rounds (accepts and rejects), the drafter holds exactly the slots a fresh start over the
    kept tokens computes (keys, values, predicted features) and queues the target's features of the rest."""
    target, layer, prompt = tiny
    model = Eagle(target, layer).eval()
    drafter = EagleDrafter(model)
    g = speculative_generate(target, drafter, prompt[:4], 14, scheme, Sampling(temperature=2.0), seed=seed)
    assert not any(r.slid for r in g.rounds)  # 4 + 14 tokens and a round's drafts fit the window of 32
    accepted = {r.accepted for r in g.rounds}
    assert max(accepted) > 0 and min(accepted) < 3  # accepted drafts, and rejections (3: both layouts' depth)
    ids = prompt[:4] + [t for r in g.rounds for t in r.emitted]  # the last round may emit past 14
    fresh = EagleDrafter(model)
    with torch.inference_mode():
        fresh.start(ids)
        real = model.features(ids[:-1])  # (L - 1, C)
    n = drafter.fed
    assert drafter.cache.length == n and len(ids) - len(drafter.cache.queue) == n
    c, f = drafter.cache, fresh.cache
    worst = max(_gap(c.k[..., :n, :], f.k[..., :n, :]), _gap(c.v[..., :n, :], f.v[..., :n, :]),
                _gap(c.out[:n], f.out[:n]), _gap(c.queue, real[n - 1:]))
    assert worst <= CACHE_ATOL


def test_the_cached_drafter_equals_the_teacher_forced_one(tiny):
    """Fed the real features slot by slot (the queue), the layer gives the rows of one teacher-forced pass."""
    target, layer, prompt = tiny
    model = Eagle(target, layer).eval()
    with torch.inference_mode():
        forced = model(torch.tensor([prompt]))[0]  # (T, V)
        d = EagleDrafter(model)
        d.start(prompt + [prompt[0]])  # every prompt slot fed with its real feature
        assert d.cache.length == len(prompt)
        rows = model.readout(d.cache.out[:len(prompt)][None])[0]
    assert _gap(forced, rows) <= CACHE_ATOL


def test_parent_slots_follow_the_tree_mask():
    parents = [-1, -1, 0, 0, 1, 3]  # two children of the root, then deeper nodes
    n = 4  # cached positions before the root
    grid = torch.from_numpy(masks.tree_grid(parents, n))  # (m + 1, n + m + 1): the root, then the nodes
    got = parent_slots(n, len(parents) + 1, grid).tolist()
    assert got == [n - 1] + [n + 1 + a if a >= 0 else n for a in parents]


def test_bad_input_is_one_line(tiny):
    target, layer, prompt = tiny
    errors = []
    for bad in (lambda: parse_spec("eagle:2"),
                lambda: make_drafter("eagle", target),
                lambda: EagleConfig(n_embd=16, width=10, n_head=3),
                lambda: EagleConfig(width=0),
                lambda: Eagle(target, EagleLayer(EagleConfig(n_embd=32, width=8, n_head=2))),
                lambda: speculative_generate(target, EagleDrafter(Eagle(target, layer)), prompt, 20, "chain:3",
                                             GREEDY, crop=False)):
        with pytest.raises(ValueError) as e:
            bad()
        errors.append(str(e.value))
    assert all(m and "\n" not in m for m in errors)
    assert "unknown drafter" in errors[0] and "not loaded" in errors[1] and "divisible" in errors[2]
    d = EagleDrafter(Eagle(target, layer).eval())
    d.start(prompt)
    with torch.inference_mode(), pytest.raises(ValueError, match="real features for 1 slots, fed 2"):
        d.model(torch.tensor([prompt[:2]]), d.cache)


# the shipped drafter


def test_the_shipped_weights_match_their_checksum_and_a_tampered_copy_is_refused(tmp_path):
    entry = read_manifest()["models"]["eagle"]
    data = default_dir().joinpath(entry["file"]).read_bytes()
    assert hashlib.sha256(data).hexdigest() == entry["sha256"] and len(data) == entry["bytes"]
    for name in ("manifest.json", entry["file"]):
        shutil.copy(default_dir().joinpath(name), tmp_path / name)
    raw = bytearray(data)
    raw[-1] ^= 1
    (tmp_path / entry["file"]).write_bytes(bytes(raw))
    with pytest.raises(WeightsError, match="checksum mismatch") as e:
        load_eagle(tmp_path)
    assert "\n" not in str(e.value)


def test_the_shipped_drafter_is_small_and_shares_the_target():
    pair = api.load_pair("eagle", "cpu")
    layer = pair.draft.layer
    entry = read_manifest()["models"]["eagle"]
    assert pair.draft.target is pair.target and pair.draft.wte is pair.target.wte  # shared, not copied
    assert entry["parameters"] == sum(p.numel() for p in layer.parameters())
    assert entry["parameters"] < pair.target.num_parameters() / 20  # a narrow layer, not a fifth of the target
    assert all(not k.startswith(("target", "wte")) for k in layer.state_dict())


@pytest.mark.parametrize("scheme", SCHEMES)
def test_shipped_greedy_speculative_equals_plain_greedy(scheme):
    pair = api.load_pair("eagle", "cpu")
    plain = api.plain_generate(pair, PROMPT, 60, greedy=True)
    g = api.speculative_generate(pair, PROMPT, 60, scheme, greedy=True)
    assert g.tokens == plain.tokens
    assert 2 * sum(r.accepted for r in g.rounds) >= len(g.rounds)  # half an accepted draft a round or more


def test_the_manifest_alpha_is_the_shipped_drafters():
    """The recorded teacher-forced alpha (and its SE) is recomputed from the float16 file on the same
    validation windows within 0.002 (the float16 rounding of the weights; training ran in float32)."""
    from specsim.gpt.train.eagle import window_alphas
    from specsim.stats import mean_se
    from specsim.gpt.train.recipe import corpus_tensors
    pair = api.load_pair("eagle", "cpu")
    notes = read_manifest()["models"]["eagle"]["notes"]
    _, val = corpus_tensors()
    alphas = window_alphas(pair.target, pair.draft, val, pair.target.config.block_size, notes["alpha_windows"])
    est = mean_se(alphas)
    assert est.value == pytest.approx(notes["teacher_forced_alpha"], abs=0.002)
    assert est.se == pytest.approx(notes["teacher_forced_alpha_se"], abs=0.002)


def test_an_interrupted_eagle_stage_resumed_ends_with_the_same_weights(tiny, tmp_path,
                                                                       stopped_after_first_checkpoint):
    target, _, _ = tiny
    data = torch.tensor([(i * 5 + i // 7) % 11 + 20 for i in range(800)])
    kw = dict(steps=6, batch_size=2, block=16, width=8, n_head=2, noise=0.5, progress=False)  # noise: seeded too
    whole, _ = train_eagle(target, data, data, **kw)
    ckpt = str(tmp_path / "eagle.ckpt")
    with stopped_after_first_checkpoint():
        train_eagle(target, data, data, checkpoint=ckpt, checkpoint_every=3, **kw)
    resumed, notes = train_eagle(target, data, data, checkpoint=ckpt, checkpoint_every=3, **kw)
    assert all(torch.equal(a, b) for a, b in zip(whole.state_dict().values(), resumed.state_dict().values()))
    assert notes["steps"] == 6 and len(notes["curve"]) == 6
    assert all(p.requires_grad for p in target.parameters())  # the target is given back trainable


def test_unrolled_training_rows_are_the_chain_drafts_of_decoding(tiny):
    """Depth d of ``unrolled`` at slot j is what the cached drafter gives the d-th draft of a chain whose
    last real slot is j - d + 1 (the drafts being the text's own tokens)."""
    from specsim.gpt.train.eagle import unrolled
    target, layer, _ = tiny
    model = Eagle(target, layer).eval()
    ids = [(i * 3 + i // 11) % 13 + 10 for i in range(24)]
    x = torch.tensor([ids])
    with torch.inference_mode():
        h = target(x, hidden=True)[1]
        f = torch.cat([torch.zeros_like(h[:, :1]), h[:, :-1]], dim=1)
        rows = unrolled(layer, f, target.wte(x), 3)[0].view(3, len(ids), -1)  # (depth, T, C)
        worst = 0.0
        for m in (1, 5, 12, 20):  # the first draft's slot
            d = EagleDrafter(model)
            d.start(ids[:m + 1])  # slots 0 .. m - 1 real, slot m queued with its real feature
            for depth in range(3):
                model(x[:, m + depth:m + depth + 1], d.cache)
                worst = max(worst, _gap(d.cache.out[m + depth], rows[depth, m + depth]))
    assert worst <= CACHE_ATOL


def test_the_total_variation_term_is_one_minus_alpha_of_the_read_out(tiny):
    """At depth 1 the training loss's third term is 1 - alpha (``rule.alpha``, the decoder's own) of the
    target's row and the layer's read-out, averaged over the window's positions, with the target's pass
    in the training's number format (bfloat16 autocast where the CPU runs it natively); tolerance 1e-5
    for summation order."""
    from specsim.gpt.rule import alpha
    from specsim.gpt.train.eagle import eagle_losses
    from specsim.gpt.train.loop import native_bf16
    target, layer, _ = tiny
    x = torch.tensor([[(i * 3 + i // 11) % 13 + 10 for i in range(32)]])
    with torch.no_grad():
        _, _, tv = eagle_losses(target.eval(), layer.eval(), x, torch.Generator().manual_seed(0))
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=native_bf16(torch.device("cpu"))):
            logits, h = target(x, hidden=True)
        f = torch.cat([torch.zeros_like(h[:, :1]), h[:, :-1]], dim=1).float()
        q = torch.softmax(target.lm_head(target.ln_f(layer(f, target.wte(x)))), dim=-1)
        want = 1 - alpha(torch.softmax(logits.float(), dim=-1), q).mean().item()
    assert 0 < tv.item() < 1
    assert tv.item() == pytest.approx(want, abs=1e-5)


def test_training_on_from_a_layer_starts_from_its_weights_and_leaves_it_alone(tiny):
    """``init``: the run trains a copy of the given layer (its width and heads, not the ones passed), never
    the layer itself."""
    target, layer, _ = tiny
    before = {k: v.clone() for k, v in layer.state_dict().items()}
    data = torch.tensor([(i * 3 + i // 11) % 13 + 10 for i in range(800)])
    more, notes = train_eagle(target, data, data, steps=2, batch_size=2, block=16, lr=1e-3, width=64, n_head=8,
                              tv_weight=1.0, init=layer, progress=False)
    assert (more.config.width, more.config.n_head) == (layer.config.width, layer.config.n_head)
    assert all(torch.equal(v, layer.state_dict()[k]) for k, v in before.items())  # the original untouched
    assert any(not torch.equal(v, more.state_dict()[k]) for k, v in before.items())  # the copy trained
    assert notes["tv_weight"] == 1.0 and 0 <= notes["final_tv"] <= 1 and "(1 - alpha)" in notes["loss"]
