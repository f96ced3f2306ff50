"""The reference round (``specsim/gpt/reference_round.py``) is the decoder's round, token for token.

The decoder (``specsim.gpt.decode.speculative_generate``, a chain with the shipped small-GPT drafter)
and the one-function reference run on the same shipped pair, the same prompt and the same seed; both
draw their uniforms from ``numpy.random.default_rng(seed)`` in the same layout (per round: gamma to
draw the drafts, gamma to test them, one to close), so every round must emit the same tokens and leave
both caches at the same lengths. Greedy (temperature 0) and sampled temperatures, several gammas and
seeds, rounds with a rejection and rounds with full acceptance (both branches of the walk).
"""
import inspect
import re
from pathlib import Path

import pytest
import torch

from specsim.gpt import reference_round as ref
from specsim.gpt.decode import Sampling, speculative_generate
from specsim.sampling import make_rng
from tests.helpers import refused_in_one_line

PROMPT = "def __init__(self, "
N_TOKENS = 40


def sampling(temperature: float) -> Sampling:
    return Sampling(greedy=True) if temperature == 0 else Sampling(temperature=temperature)


@pytest.mark.parametrize("temperature", [0, 0.7, 1.0, 1.5])
@pytest.mark.parametrize("gamma", [1, 3, 6])
@pytest.mark.parametrize("seed", [0, 1, 7])
def test_the_reference_round_emits_the_decoders_tokens_round_by_round(pair, seed, gamma, temperature):
    ids = pair.tokenizer.encode(PROMPT)
    g = speculative_generate(pair.target, pair.draft, ids, N_TOKENS, gamma, sampling(temperature), seed=seed)
    caches = pair.target.new_cache(), pair.draft.new_cache()
    for model, cache in zip((pair.target, pair.draft), caches):
        model(torch.tensor([ids[:-1]]), cache, last_only=True)
    seq, rng = list(ids), make_rng(seed)
    for r in g.rounds:
        emitted = ref.reference_round(pair.target, pair.draft, *caches, seq, gamma, temperature, rng)
        assert emitted == r.emitted
        assert [c.length for c in caches] == [r.cache["target"]["after_crop"], r.cache["draft"]["after_crop"]]
    assert seq[len(ids):len(ids) + N_TOKENS] == g.tokens
    assert ref.generate(pair.target, pair.draft, ids, N_TOKENS, gamma, temperature, seed) == g.tokens


def test_the_pinned_runs_take_both_branches_and_the_seed_matters(pair):
    """The pin above means something: its runs reject and fully accept, and another seed is other text."""
    ids = pair.tokenizer.encode(PROMPT)
    g = speculative_generate(pair.target, pair.draft, ids, N_TOKENS, 3, sampling(1.0), seed=0)
    assert {r.accepted for r in g.rounds} >= {0, 3}  # a rejection at the first draft, and a bonus token
    a = ref.generate(pair.target, pair.draft, ids, N_TOKENS, 3, 1.0, seed=0)
    b = ref.generate(pair.target, pair.draft, ids, N_TOKENS, 3, 1.0, seed=1)
    assert a != b


@pytest.mark.parametrize("gamma", [0, -2, 2.5, True, "3"])
def test_a_bad_gamma_is_refused_in_one_line(pair, gamma):
    ids = pair.tokenizer.encode(PROMPT)
    with refused_in_one_line("gamma must be an integer >= 1"):
        ref.generate(pair.target, pair.draft, ids, 5, gamma)
    caches = pair.target.new_cache(), pair.draft.new_cache()
    with refused_in_one_line("gamma must be an integer >= 1"):
        ref.reference_round(pair.target, pair.draft, *caches, list(ids), gamma, 1.0, make_rng(0))


def test_a_run_past_the_window_is_refused_in_one_line(pair):
    window = pair.target.config.block_size
    with refused_in_one_line("does not slide it"):
        ref.generate(pair.target, pair.draft, [1] * (window - 4), 3, 2)
    with refused_in_one_line("the prompt is empty"):
        ref.generate(pair.target, pair.draft, [], 3, 2)


def test_the_reference_round_is_one_function_of_at_most_60_lines():
    lines, _ = inspect.getsourcelines(ref.reference_round)
    assert len(lines) <= 60
    body = "".join(lines)
    for step in ("step 1: draft", "step 2: verify", "step 3: accept", "step 4: correct", "step 5: bonus",
                 "step 6: roll back"):
        assert step in body


def test_the_readme_example_runs_and_gives_the_decoders_text():
    readme = (Path(__file__).resolve().parent.parent / "specsim" / "gpt" / "README.md").read_text(encoding="utf-8")
    [block] = [b for b in re.findall(r"```python\n(.*?)```", readme, flags=re.S) if "reference_round.generate" in b]
    assert "assert " in block
    exec(compile(block, "specsim/gpt/README.md", "exec"), {})
