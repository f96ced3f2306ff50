"""What stays on the device: α and TV over torch rows agree with specsim.rule's Fractions, and adjust is
the twin of the toy transforms (the round's decisions are made on the host by specsim.schemes)."""
import random
from fractions import Fraction

import pytest
import torch

from specsim import rule as exact_rule
from specsim.gpt import rule


def random_row(rng, n, zeros=0):
    w = [Fraction(rng.randint(1, 20)) for _ in range(n)]
    for i in rng.sample(range(n), zeros):
        w[i] = Fraction(0)
    s = sum(w)
    return [x / s for x in w]


@pytest.mark.parametrize("seed", range(25))
def test_torch_alpha_and_tv_agree_with_the_fraction_rule(seed):
    rng = random.Random(seed)
    n = rng.randint(2, 9)
    p, q = random_row(rng, n, rng.randint(0, n - 1)), random_row(rng, n, rng.randint(0, n - 1))
    tp, tq = (torch.tensor([float(x) for x in r], dtype=torch.float64) for r in (p, q))
    assert rule.alpha(tp, tq).item() == pytest.approx(float(exact_rule.alpha(p, q)), abs=1e-12)
    assert rule.total_variation(tp, tq).item() == pytest.approx(float(exact_rule.total_variation(p, q)), abs=1e-12)


def test_adjust_is_the_same_map_for_p_and_q():
    logits = torch.tensor([2.0, 1.0, 0.5, -1.0, 0.0])
    greedy = rule.adjust(logits, greedy=True)
    assert greedy.tolist() == [1.0, 0.0, 0.0, 0.0, 0.0]
    top2 = rule.adjust(logits, top_k=2)
    assert (top2 > 0).sum() == 2 and top2.sum().item() == pytest.approx(1.0)
    full = rule.adjust(logits)
    nucleus = rule.adjust(logits, top_p=0.8)
    kept = nucleus > 0
    assert full[kept].sum() >= 0.8 and full[kept].sum() - full[kept].min() < 0.8  # smallest such set
    hot, cold = rule.adjust(logits, temperature=2.0), rule.adjust(logits, temperature=0.5)
    assert hot.max() < full.max() < cold.max()
    with pytest.raises(ValueError):
        rule.adjust(logits, temperature=0.0)


@pytest.mark.parametrize("kwargs", [
    dict(temperature=0.5), dict(temperature=2.0), dict(top_k=2), dict(top_k=4),
    dict(top_p=0.5), dict(top_p=0.9), dict(greedy=True),
])
def test_adjust_is_the_twin_of_the_toy_transforms(kwargs):
    """The logits path (tiny GPT) and the probability-row path (toy models) agree."""
    from specsim import transforms

    p = [0.35, 0.25, 0.2, 0.12, 0.08]
    torch_row = rule.adjust(torch.tensor(p, dtype=torch.float64).log(), **kwargs).tolist()
    name, value = next(iter(kwargs.items()))
    fn = {"temperature": transforms.temperature, "top_k": transforms.top_k,
          "top_p": transforms.top_p, "greedy": lambda row, _: transforms.greedy(row)}[name]
    toy_row = [float(x) for x in fn(p, value)]
    assert torch_row == pytest.approx(toy_row, abs=1e-12)
