"""Any rule reaches the real model: the tiny GPT's one decoder runs the rule it is given through scheme.verify.

Exactly, on the float64 copies of the shipped pair (``GPTPair``): one round,
its first emitted token enumerated over all 96 characters -- p for the correct
rule (to 1e-9), measurably not p for a lossy one. And sampled, on the torch
decoder itself: its first tokens under a lossy rule follow that rule's exact
distribution, not p (chi-square, false-alarm rate 1e-3, fixed seeds).
"""
import pytest
import torch

from specsim.gpt import api
from specsim.gpt.decode import speculative_generate
from specsim.gpt.exact_adapter import GPTPair
from specsim.labs import pitfalls
from specsim.rule import CORRECT, total_variation
from specsim.schemes import Chain, Tree

from .test_gpt_decode import chi2_pvalue, skewed_tiny

LOSSY_TV = 0.05  # every lossy rule below is further than this from p after "for i in " (measured: 0.086 to 0.41)


def rule(name):
    return {**pitfalls.PITFALLS, **pitfalls.TREE_PITFALLS}[name].rule


def first_token(pair, context, scheme, r) -> list:
    """P(first emitted token = each character) of one exact round."""
    dist = scheme.enumerate(pair, context, r, limit=1)
    assert sum(dist.outcomes.values()) == pytest.approx(1.0, abs=1e-12)
    return [dist.outcomes.get((ch,), 0) for ch in pair.vocab]


@pytest.fixture(scope="module")
def shipped():
    torch.set_num_threads(1)
    return GPTPair.from_shipped()


@pytest.mark.parametrize("scheme,name", [(Chain(1), "typical-acceptance"), (Chain(1), "resample-from-target"),
                                         (Chain(1), "accept-if-p-at-least-q"),
                                         (Tree((2, 1)), "tree-no-residual-update")])
def test_exact_first_token_is_p_for_the_correct_rule_and_not_for_a_lossy_one(shipped, scheme, name):
    ctx = tuple("for i in ")
    p = shipped.p(ctx)
    correct = first_token(shipped, ctx, scheme, CORRECT)
    assert max(abs(a - b) for a, b in zip(correct, p)) < 1e-9
    lossy = first_token(shipped, ctx, scheme, rule(name))
    assert total_variation(lossy, p) > LOSSY_TV
    assert max(abs(a - b) for a, b in zip(shipped.p(ctx), shipped.q(ctx))) > 0.01  # p and q differ: not trivial


@pytest.mark.parametrize("scheme,name", [(Chain(2), "resample-from-target"), (Tree((3,)), "tree-no-residual-update"),
                                         (Chain(1), "typical-acceptance")])
def test_the_decoders_first_token_follows_the_rules_exact_distribution(scheme, name):
    """The torch decoder with a lossy rule: chi-square against the rule's exact first token (fits) and
    against p (refused): 1500 seeded rounds, false-alarm rate 1e-3."""
    torch.set_num_threads(1)
    target, draft = skewed_tiny(1), skewed_tiny(2)
    prompt = [1, 2, 3]
    exact = GPTPair(target, draft, "abcdefgh")
    ctx = tuple("abcdefgh"[i] for i in prompt)
    want = torch.tensor([float(x) for x in first_token(exact, ctx, scheme, rule(name))])
    p = torch.tensor(exact.p(ctx))
    assert total_variation(want.tolist(), p.tolist()) > LOSSY_TV  # the rule is lossy on these models
    counts = torch.zeros(8)
    for s in range(1500):
        counts[speculative_generate(target, draft, prompt, 1, scheme, seed=s, rule=rule(name)).tokens[0]] += 1
    never = want == 0  # a lossy rule may never emit some tokens: then the decoder never does either
    assert counts[never].sum() == 0
    assert chi2_pvalue(counts[~never], want[~never]) > 1e-3
    assert chi2_pvalue(counts, p) < 1e-3


def test_rules_by_name_through_the_api():
    pair = api.load_pair("distilled", device="cpu")
    g = api.speculative_generate(pair, "def f(x):", 30, "tree:2,1", rule="tree-no-residual-update", seed=1)
    assert len(g.tokens) == 30 and g.scheme == "tree:2,1"
    g = api.speculative_generate(pair, "def f(x):", 30, "chain:3", rule="typical-acceptance", seed=1)
    # typical acceptance closes every round with the target's argmax: the closing rows are one-hot
    assert all(r.closing_row.max().item() == 1.0 for r in g.rounds)
    for bad, message in (("no-such-rule", "unknown rule"), ("temperature-on-draft-only", "toy models only")):
        with pytest.raises(ValueError, match=message):
            api.speculative_generate(pair, "def ", 5, "chain:2", rule=bad)
    with pytest.raises(ValueError, match="is a chain rule"):
        api.speculative_generate(pair, "def ", 5, "tree:2", rule="typical-acceptance")


def documented_torch_keys() -> tuple:
    """The keys of the two tables in TRACE_FORMAT.md's torch section: (generation keys, round keys)."""
    import re
    from pathlib import Path

    import specsim
    text = Path(specsim.__file__).with_name("TRACE_FORMAT.md").read_text(encoding="utf-8")
    section = text[text.index("## Torch trace JSON"):]
    tables, current = [], None
    for line in section.splitlines():
        if line.startswith("| `"):
            current = current if current is not None else set()
            current |= set(re.findall(r"`([a-z_]+)`", line.split("|")[1]))
        elif current is not None:
            tables.append(current)
            current = None
    return tables[0], tables[1]


def test_trace_format_md_documents_every_torch_json_key():
    pair = api.load_pair("distilled", device="cpu")
    generation, round_keys = documented_torch_keys()
    seen = set()
    for scheme in ("chain:3", "block:3", "tree:2,1"):
        d = api.speculative_generate(pair, "def f(x):", 12, scheme, seed=0).to_dict(pair.vocab)
        assert set(d) == generation
        seen |= {k for r in d["rounds"] for k in r}
    assert seen == round_keys
