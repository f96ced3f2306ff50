"""Small helpers the test files share (fixtures live in ``conftest.py``; the page tests' in ``apptest.py``)."""
from __future__ import annotations

import contextlib

import pytest


@contextlib.contextmanager
def refused_in_one_line(match: str | None = None, error=ValueError):
    """``with refused_in_one_line("words"): call()``: the call raises ``error`` matching ``match``, and its
    message is one line (what the CLI and the app show)."""
    with pytest.raises(error, match=match) as e:
        yield e
    assert "\n" not in str(e.value)


def assert_rounds_fit_the_exact_round(model, context, scheme, n: int, seed: int, k: float = 5) -> None:
    """``n`` seeded rounds of ``montecarlo.sample_rounds`` against ``scheme.enumerate``: only outcomes the
    exact round has, each counted within ``k`` binomial standard deviations (+1) of n P(outcome)."""
    from specsim import montecarlo
    res = montecarlo.sample_rounds(model, context, scheme, n, seed=seed)
    dist = scheme.enumerate(model, context).outcomes
    assert set(res.outcomes) <= set(dist)
    for seq, pr in dist.items():
        mean, var = n * float(pr), n * float(pr) * (1 - float(pr))
        assert abs(res.outcomes.get(seq, 0) - mean) <= k * var ** 0.5 + 1, (seq, res.outcomes.get(seq, 0), mean)
