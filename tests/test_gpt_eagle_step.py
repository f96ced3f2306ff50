"""The EAGLE drafter's one-slot step (``Eagle.stepper``) against its forward pass: the same bits."""
import pytest

torch = pytest.importorskip("torch")

from specsim.gpt.config import GPTConfig  # noqa: E402
from specsim.gpt.eagle import Eagle, EagleConfig, EagleDrafter, EagleLayer  # noqa: E402
from specsim.gpt.model import GPT  # noqa: E402


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_the_step_equals_the_forward_pass_bit_for_bit(dtype):
    """Slot by slot, from the queued real feature of the prompt's last token, then from predicted features
    (a chain), then from a real feature queued after a round: equal logits, keys, values and predicted
    features. A bfloat16 target is read out through the layer's float32 copies (``Eagle.readout``)."""
    torch.manual_seed(0)
    target = GPT(GPTConfig(block_size=32, n_layer=2, n_head=2, n_embd=16)).eval().to(dtype)
    layer = EagleLayer(EagleConfig.for_target(target.config, width=8, n_head=2)).eval()
    for p in layer.parameters():  # weights of a trained size, so every term of the pass matters
        torch.nn.init.normal_(p, std=0.3)
    model = Eagle(target, layer).eval()
    prompt, drafts = [5, 9, 3, 17, 4], [8, 2, 11]
    a, b = EagleDrafter(model), EagleDrafter(model)
    step = model.stepper()
    with torch.inference_mode():
        for d in (a, b):
            d.start(prompt)
        for t in [prompt[-1]] + drafts:
            want = model(torch.tensor([[t]]), a.cache, last_only=True)[0, -1]
            assert torch.equal(step(t, b.cache), want)
        h = target(torch.tensor([prompt + drafts[:1]]), hidden=True)[1][0, -1:]  # a real feature, queued
        for d in (a, b):
            d.cache.crop(len(prompt) + 1)
            d.cache.queue = h
        want = model(torch.tensor([[drafts[1]]]), a.cache, last_only=True)[0, -1]
        assert torch.equal(step(drafts[1], b.cache), want)
    assert a.cache.length == b.cache.length == len(prompt) + 2
    for name in ("k", "v", "out"):
        assert torch.equal(getattr(a.cache, name), getattr(b.cache, name)), name


def test_the_step_refuses_what_the_forward_pass_refuses():
    torch.manual_seed(0)
    target = GPT(GPTConfig(block_size=4, n_layer=1, n_head=2, n_embd=16)).eval()
    model = Eagle(target, EagleLayer(EagleConfig.for_target(target.config, width=8, n_head=2))).eval()
    step, cache = model.stepper(), model.new_cache()
    with torch.inference_mode():
        with pytest.raises(ValueError, match="drafts from slots already scored"):
            step(1, cache)  # an empty cache and no real feature: nothing to draft from
        cache.queue = torch.zeros(2, 16)
        with pytest.raises(ValueError, match="real features for 2 slots, fed 1"):
            step(1, cache)
        cache.queue = torch.zeros(1, 16)
        for t in range(4):
            step(t, cache)
        with pytest.raises(ValueError, match="5 positions exceed the context window of 4"):
            step(0, cache)


def test_the_float32_readout_follows_the_targets_weights():
    """Beside a bfloat16 target the layer reads out through float32 copies of the target's final norm and
    head: a change to those weights, in place or by a cast, is read at once, not a stale copy."""
    torch.manual_seed(0)
    target = GPT(GPTConfig(block_size=16, n_layer=1, n_head=2, n_embd=16)).eval().to(torch.bfloat16)
    model = Eagle(target, EagleLayer(EagleConfig.for_target(target.config, width=8, n_head=2))).eval()
    f = torch.randn(1, 3, 16)

    def fresh():  # the copies made anew from the target's weights as they are now
        w, b, head = (x.float() for x in (target.ln_f.weight, target.ln_f.bias, target.lm_head.weight))
        return torch.nn.functional.linear(torch.nn.functional.layer_norm(f, (16,), w, b, 1e-5), head)

    with torch.inference_mode():
        assert torch.equal(model.readout(f), fresh())
    with torch.no_grad():
        target.ln_f.weight.mul_(2)  # in place
        target.lm_head.weight.add_(0.5)
    with torch.inference_mode():
        assert torch.equal(model.readout(f), fresh())
    target.half().to(torch.bfloat16)  # new tensors, as a cast makes
    with torch.inference_mode():
        assert torch.equal(model.readout(f), fresh())
