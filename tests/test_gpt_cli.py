"""`specsim gpt ...`: JSON shapes, readable output, and bad input as one line with exit code 2."""
import json

import pytest
import torch

from specsim.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_generate_json_has_the_documented_fields(capsys):
    code, out, _ = run(capsys, "gpt", "generate", "--prompt", "import ", "--tokens", "15", "--gamma", "3",
                       "--device", "cpu", "--json")
    d = json.loads(out)
    assert code == 0 and len(d["text"]) == 15 and len(d["tokens"]) == 15
    assert {"text", "tokens", "target_passes", "accepted_per_round", "alpha", "rounds"} <= set(d)
    assert len(d["accepted_per_round"]) == len(d["rounds"]) == d["target_passes"]
    r = d["rounds"][0]
    assert {"drafts", "p_rows", "q_rows", "u", "accepted", "correction", "cache", "scored_by"} <= set(r)


def test_generate_plain_and_readable(capsys):
    code, out, _ = run(capsys, "gpt", "generate", "--prompt", "x = ", "--tokens", "10", "--plain", "--device", "cpu")
    assert code == 0 and out.startswith("x = ") and "plain: 10 tokens, 10 target passes" in out
    code, out, _ = run(capsys, "gpt", "generate", "--prompt", "x = ", "--tokens", "10", "--device", "cpu",
                       "--draft", "trained", "--greedy")
    assert code == 0 and "accepted per round:" in out


@pytest.mark.parametrize("argv,message", [
    (["--prompt", "caf\u00e9"], "'é'"),
    (["--prompt", ""], "empty"),
    (["--prompt", "x" * 257], "the context window is 256"),
    (["--prompt", "x", "--gamma", "0"], "gamma must be between 1 and 64"),
    (["--prompt", "x", "--tokens", "0"], "tokens must be between"),
    (["--prompt", "x", "--temperature", "0"], "temperature must be >="),
    (["--prompt", "x", "--top-p", "1.5"], "top-p must be <="),
])
def test_bad_generate_input_is_one_line_exit_2(capsys, argv, message):
    with pytest.raises(SystemExit) as e:  # argparse-level errors exit from the parser
        code = main(["gpt", "generate", "--device", "cpu", *argv])
        raise SystemExit(code)
    err = capsys.readouterr().err
    assert e.value.code == 2 and message in err and err.count("\n") == 1


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA is present here")
def test_unavailable_device_is_one_line_exit_2(capsys):
    code, _, err = run(capsys, "gpt", "generate", "--prompt", "x", "--device", "cuda")
    assert code == 2 and "CUDA is not available" in err and err.count("\n") == 1


def test_bench_json_shape(capsys, monkeypatch):
    from specsim.gpt import bench
    monkeypatch.setattr(bench, "COST_STEPS", 2)  # shape only: keep it quick
    monkeypatch.setattr(bench, "COST_REPEATS", 1)
    monkeypatch.setattr(bench, "N_PROMPTS", 1)
    code, out, _ = run(capsys, "gpt", "bench", "--gammas", "1-2", "--tokens", "8", "--repeats", "1",
                       "--device", "cpu", "--json")
    d = json.loads(out)
    assert code == 0 and d["device"] == "cpu" and d["best_gamma"] in (1, 2)
    keys = {"gamma", "alpha", "cost", "verify_ratio", "tokens_per_round", "plain_tokens_per_s",
            "spec_tokens_per_s", "speedup", "formula_speedup", "refined_speedup"}
    assert [r["gamma"] for r in d["results"]] == [1, 2] and all(keys <= set(r) for r in d["results"])


def test_bad_gammas_range(capsys):
    code, _, err = run(capsys, "gpt", "bench", "--gammas", "3-x", "--device", "cpu")
    assert code == 2 and "--gammas" in err
