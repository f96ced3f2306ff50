"""The exact CLI commands: JSON shapes, exit codes and one-line errors."""
import json
import subprocess
import sys
from fractions import Fraction as F

import pytest

from specsim import formulas


def test_round_json(cli_json):
    data = cli_json("round", "seed", "--context", "a", "--gamma", "3")
    assert set(data) == {"context", "scheme", "gamma", "drafted_tokens", "outcomes", "accepted",
                         "expected_tokens", "alpha", "iid_expected_tokens"}
    assert data["context"] == "a" and data["gamma"] == 3 and data["scheme"] == "chain:3"
    assert len(data["outcomes"]) == 94
    assert sum(F(o["probability"]) for o in data["outcomes"]) == 1
    assert data["accepted"] == ["1/10", "13/100", "61/500", "81/125"]
    assert (data["expected_tokens"], data["alpha"], data["iid_expected_tokens"]) == \
        ("1659/500", "9/10", "3439/1000")


def test_round_readable(cli):
    code, out, _ = cli("round", "seed", "--context", "a", "--gamma", "3")
    assert code == 0 and "94 distinct emitted sequences" in out and "1659/500" in out


def test_prove_every_context(cli_json):
    data = cli_json("prove", "seed", "--tokens", "3", "--gammas", "1-4")
    assert data["exact"] is True and data["gammas"] == [1, 2, 3, 4]
    assert len(data["checks"]) == 12
    assert {c["context"] for c in data["checks"]} == {"a", "b", "c"}
    assert all(c["max_abs_difference"] == "0" and c["sequences"] == 27 for c in data["checks"])


def test_prove_table_and_one_context(cli):
    code, out, _ = cli("prove", "order2", "--tokens", "2", "--gamma", "2", "--context", "0 1", "--table")
    assert code == 0 and "spec γ=2" in out and "✓" in out and "✗" not in out


def test_prove_symbolic(cli_json, cli):
    code, out, _ = cli("prove", "--symbolic")
    assert code == 0 and "Q.E.D." in out
    data = cli_json("prove", "--symbolic")
    assert data["exact"] is True and len(data["symbolic"]["one_position"]["cases"]) == 7


def test_speedup_and_best_gamma(cli_json):
    data = cli_json("speedup", "--alpha", "0.6", "--gamma", "8", "--cost", "0.2")
    assert set(data) == {"alpha", "gamma", "cost", "expected_tokens", "speedup"}
    assert data["speedup"] == pytest.approx(float(formulas.speedup(F(3, 5), 8, F(1, 5))), rel=1e-12)
    data = cli_json("best-gamma", "--alpha", "0.9", "--cost", "1/20")
    assert (data["gamma"], round(data["speedup"], 2)) == (13, 4.67)
    data = cli_json("best-gamma", "--alpha", "0.9", "--cost", "0.05", "--max-gamma", "5")
    assert data["gamma"] == 5


def test_tables(cli_json):
    data = cli_json("tables")
    assert [t["cost"] for t in data["tables"]] == [0.05, 0.2]
    best = [(r["alpha"], r["best_gamma"]) for t in data["tables"] for r in t["rows"]]
    assert best == [(0.6, 4), (0.8, 8), (0.9, 13), (0.6, 2), (0.8, 4), (0.9, 7)]
    assert set(data["tables"][0]["rows"][0]["speedups"]) == {"1", "2", "4", "6", "8", "12"}


def test_json_model_file(cli_json, tmp_path):
    path = tmp_path / "model.json"
    path.write_text(json.dumps({"vocab": ["x", "y"], "order": 1,
                                "target": {"x": ["0.25", "0.75"], "y": [1, 0]},
                                "draft": {"x": ["1/2", "1/2"], "y": ["1/2", "1/2"]}}))
    data = cli_json("prove", str(path), "--tokens", "3")
    assert data["exact"]


BAD = [
    (["round", str("/nonexistent/model.json")], "does not exist"),
    (["round", "nosuch"], "unknown preset 'nosuch'"),
    (["round", "seed", "--context", "z"], "token 'z'"),
    (["round", "seed", "--gamma", "0"], "gamma must be between 1 and 64"),
    (["round", "seed", "--gamma", "1000"], "gamma must be between 1 and 64"),
    (["round", "seed", "--gamma", "40"], "the limit is"),
    (["prove", "seed", "--tokens", "0"], "tokens must be between"),
    (["prove", "seed", "--gammas", "4-1"], "gammas must be ranges A-B with A <= B: write 1-4"),
    (["speedup", "--alpha", "1.2", "--gamma", "2", "--cost", "0.1"], "alpha must be <= 1"),
    (["speedup", "--alpha", "-0.1", "--gamma", "2", "--cost", "0.1"], "alpha must be >= 0"),
    (["best-gamma", "--alpha", "0.5", "--cost", "-1"], "cost must be >= 0"),
    (["best-gamma", "--alpha", "abc", "--cost", "0.1"], "alpha must be a number"),
]


@pytest.mark.parametrize("argv, message", BAD)
def test_bad_input_is_one_line_exit_2(cli, argv, message):
    code, out, err = cli(*argv)
    assert code == 2
    assert message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize("content, message", [
    ("{oops", "is not valid JSON"),
    ('{"vocab": ["a"], "order": 1, "target": {"a": ["1/2"]}, "draft": {"a": ["1"]}}', "row sums to 1/2"),
    ('{"vocab": ["a", "b"], "order": 1, "target": {"a": ["1"]}, "draft": {}}', "expected a list of 2"),
    ('{"vocab": ["a", "b"], "order": 1, "target": {"a": ["-1", "2"], "b": ["0", "1"]}, "draft": {}}', "negative"),
    ('{"vocab": ["a", "b"], "order": 1, "target": {"a": ["x", "1"], "b": ["0", "1"]}, "draft": {}}', "not a number"),
    ('{"vocab": ["a", "b"], "order": 1, "target": {"a": ["0", "1"]}, "draft": {}}', "context 'b' is missing"),
])
def test_bad_model_files(cli, tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content)
    code, _, err = cli("round", str(path))
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_console_script_entry_point_exit_codes():
    ok = subprocess.run([sys.executable, "-m", "specsim.cli", "best-gamma", "--alpha", "0.8", "--cost", "0.05"],
                        capture_output=True, text=True)
    assert ok.returncode == 0 and "best γ = 8" in ok.stdout
    bad = subprocess.run([sys.executable, "-m", "specsim.cli", "round", "seed", "--context", "q"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and "'q'" in bad.stderr


# -- the work limit a person can raise ---------------------------------------------

def test_prove_refused_names_max_work_and_runs_when_raised(cli):
    """Refused under a low --max-work with the value that would do; that value runs the proof."""
    import re
    code, out, err = cli("prove", "seed", "--tokens", "3", "--gammas", "1-4", "--max-work", "1000")
    assert code == 2 and out == "" and err.count("\n") == 1
    need = re.search(r"lower γ or N, or raise it with --max-work (\d+)$", err.strip())
    assert need, err
    code, out, _ = cli("prove", "seed", "--tokens", "3", "--gammas", "1-4", "--max-work", need.group(1))
    assert code == 0 and "All 12 checks exact" in out


@pytest.mark.parametrize("command", [["round", "seed"], ["prove", "seed"], ["compare", "seed"],
                                     ["sample", "seed"], ["pitfalls", "seed"], ["generate", "seed"],
                                     ["check-rule", "x.py:R"], ["gpt", "generate", "--prompt", "a"],
                                     ["gpt", "bench"]])
def test_every_bounded_command_takes_max_work(command, monkeypatch):
    from specsim.bounds import LIMITS
    monkeypatch.delenv("SPECSIM_MAX_WORK", raising=False)
    from specsim.cli import build_parser
    args = build_parser().parse_args(command + ["--max-work", "123"])
    assert args.max_work == 123
    assert build_parser().parse_args(command).max_work == LIMITS.cli_work
