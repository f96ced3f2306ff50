"""`specsim gpt ...`: JSON shapes, readable output, and bad input as one line with exit code 2."""
import json

import pytest
import torch


def test_generate_json_has_the_documented_fields(cli):
    code, out, _ = cli("gpt", "generate", "--prompt", "import ", "--tokens", "15", "--gamma", "3",
                       "--device", "cpu", "--json")
    d = json.loads(out)
    assert code == 0 and len(d["text"]) == 15 and len(d["tokens"]) == 15
    assert {"trace_format", "text", "tokens", "scheme", "target_passes", "accepted_per_round", "alpha",
            "rounds"} <= set(d)
    assert d["trace_format"] == 2 and d["scheme"] == "chain:3"
    assert len(d["accepted_per_round"]) == len(d["rounds"]) == d["target_passes"]
    for r in d["rounds"]:
        assert {"drafts", "p_rows", "q_rows", "u", "acceptance", "accepted", "accepted_flags", "closing_token",
                "closing_kind", "cache", "scored_by"} <= set(r)
        assert isinstance(r["accepted"], int) and r["accepted_flags"][:r["accepted"]] == [True] * r["accepted"]


def test_generate_plain_and_readable(cli):
    code, out, _ = cli("gpt", "generate", "--prompt", "x = ", "--tokens", "10", "--plain", "--device", "cpu")
    assert code == 0 and out.startswith("x = ") and "plain: 10 tokens, 10 target passes" in out
    code, out, _ = cli("gpt", "generate", "--prompt", "x = ", "--tokens", "10", "--device", "cpu",
                       "--draft", "trained", "--greedy")
    assert code == 0 and "accepted per round:" in out


@pytest.mark.parametrize("argv,message", [
    (["--prompt", "caf\u00e9"], "'é'"),
    (["--prompt", ""], "empty"),
    (["--prompt", "x" * 257], "the context window is 256"),
    (["--prompt", "x", "--gamma", "0"], "gamma must be between 1 and 64"),
    (["--prompt", "x", "--tokens", "0"], "tokens must be between"),
    (["--prompt", "x", "--temperature", "-1"], "temperature must be >= 0"),
    (["--prompt", "x", "--temperature", "warm"], "temperature must be a number"),
    (["--prompt", "x", "--top-p", "1.5"], "top-p must be in (0, 1]"),
])
def test_bad_generate_input_is_one_line_exit_2(cli, argv, message):
    code, out, err = cli("gpt", "generate", "--device", "cpu", *argv)
    assert code == 2 and out == "" and message in err and err.count("\n") == 1


def test_temperature_zero_is_greedy(cli_json):
    args = ("gpt", "generate", "--prompt", "def ", "--tokens", "12", "--gamma", "3", "--device", "cpu")
    zero = cli_json(*args, "--temperature", "0", "--seed", "1")
    assert zero["tokens"] == cli_json(*args, "--greedy", "--seed", "2")["tokens"]
    assert zero["tokens"] == cli_json(*args, "--temperature", "0", "--seed", "3")["tokens"]  # no randomness left
    rows = [row for r in zero["rounds"] for row in r["p_rows"] + r["q_rows"] if row is not None]  # None: a leaf's q
    assert all(max(row.values()) == 1.0 for row in rows)  # one-hot
    assert zero["tokens"] != cli_json(*args, "--seed", "1")["tokens"]


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA is present here")
def test_unavailable_device_is_one_line_exit_2(cli):
    code, _, err = cli("gpt", "generate", "--prompt", "x", "--device", "cuda")
    assert code == 2 and "CUDA is not available" in err and err.count("\n") == 1


def test_bench_json_shape(cli, monkeypatch):
    from specsim.gpt.measure import bench
    monkeypatch.setattr(bench, "N_PROMPTS", 1)  # shape only: keep it quick
    code, out, _ = cli("gpt", "bench", "--gammas", "1,3", "--tokens", "8", "--repeats", "1",
                       "--temperature", "0", "--device", "cpu", "--json")
    d = json.loads(out)
    assert code == 0 and d["device"] == "cpu" and d["best_gamma"] in (1, 3) and d["temperature"] == 0
    keys = {"gamma", "alpha", "cost", "verify_ratio", "host_ratio", "tokens_per_round", "plain_tokens_per_s",
            "spec_tokens_per_s", "speedup", "formula_speedup", "refined_speedup", "speedup_with_prefill"}
    assert [r["gamma"] for r in d["results"]] == [1, 3] and all(keys <= set(r) for r in d["results"])


def test_bench_text_output(cli, monkeypatch):
    """The table a person reads: every gamma a row, the clock and the unit of c and v said, the best gamma."""
    from specsim.gpt.measure import bench
    monkeypatch.setattr(bench, "N_PROMPTS", 1)
    code, out, err = cli("gpt", "bench", "--gammas", "1,2", "--tokens", "8", "--repeats", "2", "--device", "cpu")
    assert code == 0, err
    lines = out.splitlines()
    assert "minimum over repeats" in lines[0] and "tokens/s" in lines[0] and "ms a token" in lines[0]
    assert lines[1].startswith("on ") and f"torch {torch.__version__.split('+')[0]} with " in lines[1]  # the machine
    header = lines[2].split()
    assert header[:5] == ["gamma", "alpha", "cost", "verify_ratio", "host_ratio"]
    assert [line.split()[0] for line in lines[4:6]] == ["1", "2"]
    assert "timed inside the rounds" in out and any(line.startswith("best gamma: ") for line in lines)
    assert lines[-1].startswith("2x at gamma ")  # what alpha 2x would take (or that it is out of reach)


def test_bench_prompts_takes_more_held_out_text(cli_json):
    """--prompts N decodes the first N held-out prompts (the default's 3 among them), here 4: the bootstrap over
    prompts then has four units to resample."""
    d = cli_json("gpt", "bench", "--prompts", "4", "--gammas", "1,2", "--tokens", "6", "--repeats", "1",
                 "--device", "cpu")
    assert d["prompts"] == 4 and d["alpha_se_unit"] == "prompt" and d["results"][0]["speedup_prompt_interval"]
    share = d["best_gamma_share"]  # how often each gamma is the best when the prompts are resampled
    assert set(share) == {"1", "2"} and sum(share.values()) == pytest.approx(1.0)


@pytest.mark.parametrize("argv,message", [
    (["--prompts", "11"], "argument --prompts: prompts must be"),
    (["--prompts", "2", "--rules", "textbook"], "--prompts and --rules do not combine"),
    (["--prompts", "2", "--drafters", "distilled"], "--prompts and --drafters do not combine"),
])
def test_bench_prompts_refusals_are_one_line(cli, argv, message):
    code, _, err = cli("gpt", "bench", *argv, "--device", "cpu")
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("draft", ["eagle", "lookup:3"])
def test_bench_over_gammas_takes_any_drafter(cli_json, monkeypatch, draft):
    """--draft eagle or lookup:3 runs the gamma bench with that drafter (the gallery is --drafters)."""
    from specsim.gpt.measure import bench
    monkeypatch.setattr(bench, "N_PROMPTS", 1)
    d = cli_json("gpt", "bench", "--draft", draft, "--gammas", "1,2", "--tokens", "8", "--repeats", "1",
                 "--device", "cpu")
    assert d["draft"] == draft and [r["gamma"] for r in d["results"]] == [1, 2]


@pytest.mark.parametrize("gammas", ["3-x", "0-2", "4-1", "65"])
def test_bad_gammas_is_one_line_exit_2(cli, gammas):
    code, _, err = cli("gpt", "bench", "--gammas", gammas, "--device", "cpu")
    assert code == 2 and "argument --gammas: gammas must" in err and err.count("\n") == 1


@pytest.mark.parametrize("spec", ["lookup:3", "early-exit:2"])
def test_generate_with_every_drafter_kind_greedy_equals_plain(cli, spec):
    prompt = "def f(x):\n    return x\n\ndef f("
    _, plain, _ = cli("gpt", "generate", "--prompt", prompt, "--tokens", "20", "--greedy", "--plain",
                      "--device", "cpu", "--json")
    code, out, _ = cli("gpt", "generate", "--prompt", prompt, "--tokens", "20", "--greedy", "--draft", spec,
                       "--device", "cpu", "--json")
    assert code == 0 and json.loads(out)["tokens"] == json.loads(plain)["tokens"]


@pytest.mark.parametrize("argv,message", [
    (["generate", "--prompt", "x", "--draft", "lookup:x"], "unknown drafter 'lookup:x'"),
    (["generate", "--prompt", "x", "--draft", "early-exit:9"], "early-exit needs 1 <= K < 5"),
    (["bench", "--drafters", "distilled,medusa"], "unknown drafter 'medusa'"),
])
def test_bad_drafter_specs_are_one_line_errors(cli, argv, message):
    code, out, err = cli("gpt", *argv, "--device", "cpu")
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_bench_drafters_json(cli):
    code, out, _ = cli("gpt", "bench", "--drafters", "lookup:2", "--tokens", "8", "--repeats", "1",
                       "--device", "cpu", "--json")
    d = json.loads(out)
    assert code == 0 and set(d["sets"]) == {"heldout", "repetitive"}
    assert [r["drafter"] for r in d["sets"]["heldout"]] == ["lookup:2"]
