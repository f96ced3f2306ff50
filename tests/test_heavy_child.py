"""``heavy.in_child``: the app's benches run in a worker process, off the server's interpreter."""
import math
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "app"))
from parts import heavy  # noqa: E402


def test_the_result_comes_back_from_another_process():
    assert heavy.in_child(math.factorial, 20) == math.factorial(20)
    assert heavy.in_child(os.getpid) != os.getpid()


def test_an_error_in_the_child_is_one_line():
    with pytest.raises(RuntimeError) as e:
        heavy.in_child(int, "not a number")
    assert str(e.value).startswith("ValueError: invalid literal") and "\n" not in str(e.value)


def test_a_child_that_dies_without_an_answer_is_one_line():
    with pytest.raises(RuntimeError, match=r"ended without an answer \(exit code 3\)"):
        heavy.in_child(os._exit, 3)


def test_the_scheme_bench_runs_in_a_child_on_the_shipped_pair():
    from specsim.gpt.measure import bench_schemes
    result = heavy.in_child(bench_schemes.bench_shipped, "chain:2", n_tokens=8, repeats=1, n_prompts=1)
    assert [r["scheme"] for r in result["schemes"]] == ["chain:2"] and result["tokens"] == 8
