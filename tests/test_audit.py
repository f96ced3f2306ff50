"""`specsim audit`: engines judged by their tokens, from a process that never imports them.

Every audit here is seeded, so each verdict is reproducible; the sample sizes are the smallest that separate
the example engines at the default false-alarm rate of 0.001 (their TVs are printed by `specsim audit`).
"""
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

from specsim.labs import audit as judge

torch = pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = f"{ROOT}/specsim/gpt/audit_engines.py"


# -- the arithmetic of the verdict ---------------------------------------------------------------------
P = {(a,): w for a, w in zip("abcdef", (0.4, 0.25, 0.15, 0.1, 0.06, 0.04))}


def draws(probs, n, seed):
    rng = random.Random(seed)
    keys = list(probs)
    return rng.choices(keys, [probs[k] for k in keys], k=n)


def test_samples_of_p_are_consistent_and_samples_of_another_distribution_are_not():
    q = {("a",): 0.3, ("b",): 0.35, ("c",): 0.15, ("d",): 0.1, ("e",): 0.06, ("f",): 0.04}  # TV 0.1 from P
    ok = judge.judge_samples(draws(P, 2000, 1), P)
    bad = judge.judge_samples(draws(q, 2000, 1), P)
    assert ok.verdict == "consistent with the target" and ok.p_value > judge.ALPHA
    assert bad.verdict == "not the target" and bad.tv_ci[0] <= 0.1 <= bad.tv_ci[1]
    assert bad.detectable_tv < 0.1 and judge.samples_needed(0.1, bad.df) <= 2000


def test_every_cell_expects_at_least_five_samples_and_the_rest_is_one_cell():
    exact = {(i,): 0.5 ** (i + 1) for i in range(30)}
    cells = judge.cells_of(exact, 200)
    assert all(200 * p >= judge.MIN_EXPECTED for p in cells.probs)
    assert sum(cells.probs) == pytest.approx(1.0) and cells.other == len(cells) - 1


def test_a_sequence_the_target_never_emits_is_refuted_outright():
    r = judge.judge_samples([("a",)] * 99 + [("z",)], {("a",): 1.0})
    assert r.verdict == "not the target" and r.p_value == 0.0


def test_the_false_alarm_rate_is_what_it_says_over_many_seeded_audits():
    """200 audits of exact samples at alpha = 0.05: the number of false alarms is Binomial(200, 0.05); more
    than 21 has probability below 0.001 (the test's own false-alarm rate)."""
    alarms = sum(judge.judge_samples(draws(P, 300, s), P, alpha=0.05).verdict == "not the target"
                 for s in range(200))
    assert alarms <= 21


def test_power_grows_with_the_budget():
    df = 10
    assert judge.detectable(4000, df) < judge.detectable(1000, df)
    n = judge.samples_needed(0.05, df)
    assert judge.detectable(n, df) <= 0.05 < judge.detectable(n // 2, df)


# -- engines, through the command ------------------------------------------------------------------------
def audit(cli, *argv):
    code, out, err = cli("audit", "--prompt", "def ", "--tokens", "1", *argv, "--json")
    return code, (json.loads(out) if out else None), err


@pytest.mark.parametrize("engine, samples, extra, code", [
    ("specsim", 200, [], 0),
    (f"{EXAMPLES}:SampleAndMatch", 300, [], 0),
    (f"{EXAMPLES}:EmitDraft", 200, [], 1),
    (f"{EXAMPLES}:ResampleFromTarget", 600, [], 1),
    (f"{EXAMPLES}:RawQUnderTopK", 600, ["--top-k", "5"], 1),
])
def test_exact_engines_pass_and_lossy_ones_are_caught(cli, engine, samples, extra, code):
    got, r, err = audit(cli, "--engine", engine, "--samples", samples, *extra)
    assert got == code, err
    assert r["samples"] == samples and r["alpha"] == 0.001 and 0 <= r["tv_ci"][0] <= r["tv"] <= r["tv_ci"][1]
    assert (r["p_value"] < 0.001) == (code == 1)


def test_transformers_assisted_generation_is_consistent_with_the_target(cli):
    pytest.importorskip("transformers")
    got, r, err = audit(cli, "--engine", "hf", "--samples", "150", "--tokens", "2")  # K = 1 drafts nothing: refused
    assert got == 0, err
    assert r["verdict"] == "consistent with the target" and r["samples_per_s"] > 0


def test_specsim_decodes_every_scheme_consistently(cli):
    for scheme in ("block:3", "tree:2,1", "tree:dynamic,budget=4,depth=2,topk=2", "chain:max=4,stop=0.5"):
        got, r, err = audit(cli, "--engine", "specsim", "--scheme", scheme, "--samples", "150", "--tokens", "2")
        assert got == 0, (scheme, err, r and r["p_value"])


def test_specsim_decodes_with_every_drafter_consistently(cli):
    for drafter in ("trained", "eagle", "lookup:2", "early-exit:2", "early-exit:2+head"):
        got, r, err = audit(cli, "--engine", "specsim", "--drafter", drafter, "--samples", "150", "--tokens", "2")
        assert got == 0, (drafter, err, r and r["p_value"])


HOSTILE = {
    "too few tokens": ("def generate(self, ids, n, generator):\n        return [1] * (n - 1)\n", "not 1 token id"),
    "a token outside the vocabulary": ("def generate(self, ids, n, generator):\n        return [10**6] * n\n",
                                       "not 1 token id"),
    "an exception": ("def generate(self, ids, n, generator):\n        raise RuntimeError('boom')\n",
                     "run 0 failed: RuntimeError: boom"),
    "an exit": ("def generate(self, ids, n, generator):\n        import os; os._exit(0)\n", "ended after 0 of"),
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_an_engine_that_misbehaves_gets_one_line_and_no_verdict(cli, tmp_path, case):
    body, words = HOSTILE[case]
    (tmp_path / "eng.py").write_text(f"class E:\n    def __init__(self, target, drafter, **kw):\n        pass\n"
                                     f"    {body}")
    got, r, err = audit(cli, "--engine", f"{tmp_path}/eng.py:E", "--samples", "20")
    assert got == 2 and r is None and words in err and err.count("\n") == 1, err
    assert not any(m.startswith("specsim_user_engine") for m in sys.modules)  # the judge never imported it


def test_nothing_the_engine_starts_outlives_the_audit(tmp_path):
    marker = tmp_path / "marker"
    (tmp_path / "eng.py").write_text(f"""
import os, time
from specsim.gpt.audit_engines import Textbook
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(20)
        open({str(marker)!r}, "w").write("escaped")
        os._exit(0)
    os._exit(0)
os.wait()
class E(Textbook):
    pass
""")
    start = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "specsim.cli", "audit", "--engine", f"{tmp_path}/eng.py:E",
                        "--prompt", "def ", "--tokens", "1", "--samples", "50"], capture_output=True, text=True,
                       cwd=ROOT, timeout=300, env={**os.environ, "SPECSIM_ISOLATION": "off"})  # the reaper alone
    assert r.returncode == 0, r.stderr
    time.sleep(max(0.0, 22 - (time.monotonic() - start)))
    assert not marker.exists(), "a process the engine started outlived the audit"


@pytest.mark.parametrize("argv, words", [
    (["--engine", "nofile.txt:E"], "is not a .py file"), (["--engine", "specsim", "--scheme", "chain:0"], "chain:0"),
    (["--engine", "specsim", "--samples", "1"], "samples must be"), (["--engine", "specsim", "--tokens", "201"], "tokens"),
    (["--engine", "specsim", "--temperature", "0"], "temperature above 0"),
    (["--engine", "specsim", "--alpha", "2"], "false-alarm rate"),
])
def test_bad_input_is_one_line(cli, argv, words):
    code, out, err = cli("audit", "--prompt", "def ", *argv)
    assert code == 2 and words in err and err.count("\n") == 1, err


def test_the_readmes_own_engine_example_runs_and_passes(cli, tmp_path):
    text = (ROOT / "README.md").read_text()
    block = text.split("Your own engine is a class in a file", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    (tmp_path / "plain.py").write_text(block)
    got, r, err = audit(cli, "--engine", f"{tmp_path}/plain.py:Plain", "--samples", "150")
    assert got == 0 and r["verdict"] == "consistent with the target", err
