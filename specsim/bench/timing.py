"""The one timing helper: run a function some times, keep every wall time and the last result.

Every benchmark in specsim (``specsim.bench.toy`` for the toy engines,
``specsim.gpt.measure.bench`` for the tiny GPT, the Tiny GPT page) times through
``measure``; the statistic a caller reports (median, fastest) is a property.

Example
-------
>>> t = measure(lambda: sum(range(1000)), repeats=3)
>>> len(t.seconds), t.result, t.median >= t.best >= 0
(3, 499500, True)
"""
from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True)
class Timing:
    seconds: list  # wall time of each run, in order
    result: Any  # what the last run returned

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    @property
    def best(self) -> float:
        """The fastest run: the least disturbed by other work on a shared machine."""
        return min(self.seconds)


def measure(fn: Callable[[], Any], repeats: int = 1, warmup: int = 0,
            sync: Callable[[], Any] | None = None) -> Timing:
    """Call ``fn`` ``warmup`` times untimed, then ``repeats`` times timed.

    ``sync`` (e.g. ``torch.cuda.synchronize``) is called before the clock
    starts and before it stops, so work queued on an accelerator is counted.
    """
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    sync = sync or (lambda: None)
    for _ in range(warmup):
        fn()
    seconds, result = [], None
    for _ in range(repeats):
        sync()
        t0 = time.perf_counter()
        result = fn()
        sync()
        seconds.append(time.perf_counter() - t0)
    return Timing(seconds, result)
