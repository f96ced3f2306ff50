"""`specsim gpt selfcheck`: every check passes on the shipped pair on CPU, each one fails when
the thing it checks is broken, and a missing device is one line."""
import json
import subprocess
import sys

import pytest
import torch

from specsim.gpt import api

from specsim.gpt.measure import selfcheck


def test_selfcheck_cli_passes_on_cpu_and_prints_json():
    out = subprocess.run([sys.executable, "-m", "specsim.cli", "gpt", "selfcheck", "--device", "cpu",
                          "--json"], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["passed"] and report["device"] == "cpu"
    names = [c["name"] for c in report["checks"]]
    assert len(names) == 9 and all(c["passed"] for c in report["checks"])
    assert "greedy eagle tree:2,2,1 = plain greedy" in names and "eagle cache = a fresh start" in names
    b = report["bench"]
    assert b["plain_tokens_per_s"] > 0 and b["repeats"] == selfcheck.BENCH_REPEATS and b["gamma"] in (2, 4)
    assert b["speedup_interval"][0] <= b["speedup"] <= b["speedup_interval"][1] and 0 < b["ratio"] <= 1


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is present: cuda is a valid device here")
def test_cuda_without_a_gpu_is_one_line():
    out = subprocess.run([sys.executable, "-m", "specsim.cli", "gpt", "selfcheck", "--device", "cuda"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "CUDA is not available" in out.stderr and "Traceback" not in out.stderr


def test_greedy_check_fails_when_the_decoder_keeps_rejected_drafts(pair, monkeypatch):
    from specsim.schemes import as_scheme
    real = api.speculative_generate
    broken = lambda *a, **k: real(*a, **{**k, "crop": as_scheme(a[3]).kind != "chain"})  # noqa: E731  chains only
    monkeypatch.setattr(api, "speculative_generate", broken)
    checks = {c.name: c for c in selfcheck.check_greedy(pair)}
    assert not checks["greedy chain:4 = plain greedy"].passed
    assert "differs" in checks["greedy chain:4 = plain greedy"].detail
    assert checks["greedy tree:2,2,1 = plain greedy"].passed  # the tree rounds were left alone


def test_mask_check_fails_on_an_upper_left_mask(monkeypatch):
    assert selfcheck.check_tree_mask(torch.device("cpu")).passed
    monkeypatch.setattr(selfcheck, "tree_mask", lambda parents, n, device=None: torch.ones(
        len(parents) + 1, n + len(parents) + 1, dtype=torch.bool))
    assert not selfcheck.check_tree_mask(torch.device("cpu")).passed


def test_cache_check_measures_a_real_gap(pair, monkeypatch):
    assert selfcheck.check_caches(pair, rounds=3).passed
    real = selfcheck._cache_gap
    other = lambda ids: ids[:-1] + [(ids[-1] + 1) % len(pair.vocab)]  # same length, last character changed
    monkeypatch.setattr(selfcheck, "_cache_gap", lambda model, cache, ids, device: real(model, cache, other(ids), device))
    check = selfcheck.check_caches(pair, rounds=2)  # compared against the wrong text: the last slot differs
    assert not check.passed and "inf" not in check.detail


def test_eagle_cache_check_fails_when_the_target_features_are_not_handed_back(monkeypatch):
    """The verify pass hands the kept positions' real features to the EAGLE drafter; drop them and the
    drafter's state no longer matches a fresh start (its queue runs short)."""
    from specsim.gpt.eagle import EagleDrafter
    eagle = api.load_pair("eagle", device="cpu")
    assert selfcheck.check_eagle_cache(eagle, rounds=3).passed
    monkeypatch.setattr(EagleDrafter, "features", lambda self, ids, h: None)
    check = selfcheck.check_eagle_cache(eagle, rounds=3)
    assert not check.passed and "expected" in check.detail
