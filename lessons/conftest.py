"""Run the lessons' doctests with torch on one thread.

The tiny-GPT lessons time and run small models. On a machine whose cores are
shared with other work, several torch threads per process oversubscribe the
cores and a step can take ten times longer; one thread keeps the lessons fast
and their timing checks meaningful. The previous setting is restored after
each lesson.
"""
import sys

import pytest


@pytest.fixture(autouse=True)
def _one_torch_thread():
    torch = sys.modules.get("torch")
    if torch is None:
        try:
            import torch
        except ImportError:  # pragma: no cover - torch is a dependency
            yield
            return
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)
