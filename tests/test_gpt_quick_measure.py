"""The Tiny GPT page shows a generation before it is timed: the timed run must be the very same generation."""
from __future__ import annotations

import pytest

from specsim.gpt import api
from specsim.gpt.measure import bench


@pytest.mark.parametrize("scheme, temperature, seed", [("chain:4", 1.0, 0), ("tree:2,2,1", 0.7, 3), ("chain:3", 0.0, 1)])
def test_the_timed_run_is_the_generation_shown_first(pair, scheme, temperature, seed):
    shown = api.speculative_generate(pair, "def ", 40, scheme, temperature=temperature, seed=seed)
    timed = bench.quick_measure(pair, "def ", 40, scheme, temperature, seed, runs=1).generation
    assert shown.tokens == timed.tokens
    assert [r.accepted for r in shown.rounds] == [r.accepted for r in timed.rounds]
