"""The sampling CLI commands: JSON shapes, readable forms, exit codes and one-line errors."""
import json
from fractions import Fraction as F

import pytest


def test_trace_json_is_reproducible_and_replayable(cli_json):
    args = ("trace", "seed", "--context", "a", "--gamma", "3", "--seed", "0")
    a, b = cli_json(*args), cli_json(*args)
    assert a == b
    assert a["emitted"] == ["b", "b"] and a["accepted"] == 1
    assert [e["kind"] for e in a["events"]] == ["draft"] * 3 + ["verify", "accept", "reject", "correct", "emit"]
    reject = a["events"][5]
    assert (reject["p_x"], reject["q_x"], reject["acceptance"]) == ("1/5", "2/5", "1/2")


def test_trace_readable_has_one_line_per_position(cli):
    code, out, _ = cli("trace", "seed", "--context", "a", "--seed", "0")
    assert code == 0
    lines = out.splitlines()
    assert any("accept (u < 3/4)" in line for line in lines)
    assert any("reject (u >= 1/2)" in line for line in lines)
    assert any(line.strip().startswith("3") and "discarded" in line for line in lines)
    assert "Emitted: b b" in out


def test_generate_json(cli_json, cli):
    d = cli_json("generate", "seed", "--context", "a", "--gamma", "3", "--tokens", "10", "--seed", "1")
    assert len(d["output"]) == 10 and len(d["kinds"]) == len(d["emitted"])
    assert d["target_passes"] == len(d["rounds"])
    assert F(d["tokens_per_pass"]) == F(len(d["emitted"]), d["target_passes"])
    assert d["rounds"][-1]["tokens_so_far"] == len(d["emitted"])
    code, out, _ = cli("generate", "seed", "--context", "a", "--tokens", "10", "--seed", "1")
    assert code == 0 and "tokens per pass" in out and "|" in out


def test_generate_greedy(cli_json):
    d = cli_json("generate", "seed", "--context", "a", "--tokens", "6", "--temperature", "0")
    assert d["output"] == ["a"] * 6  # argmax p after "a" is "a", forever


def test_sample_json_shape(cli_json):
    d = cli_json("sample", "seed", "--context", "a", "--gamma", "3", "--rounds", "5000", "--seed", "1")
    assert set(d) == {"scheme", "rounds", "outcomes", "accepted_counts"} and d["scheme"] == "chain:3"
    assert d["rounds"] == 5000 and len(d["accepted_counts"]) == 4
    assert sum(o["count"] for o in d["outcomes"]) == sum(d["accepted_counts"]) == 5000
    assert all(set(o) == {"tokens", "count"} for o in d["outcomes"])


def test_sample_check(cli_json, cli):
    d = cli_json("sample", "zeros", "--context", "x", "--rounds", "100000", "--seed", "3", "--check")
    fit = d["check"]["outcomes"]
    assert fit["p_value"] >= 1e-3 and fit["dof"] == fit["cells"] - 1 and fit["unexpected"] == []
    code, out, _ = cli("sample", "seed", "--rounds", "50000", "--check")
    assert code == 0 and "chi-square (outcomes)" in out and "p-value" in out


def test_sample_check_rejects_a_mismatch(cli, cli_json, monkeypatch):
    # feed the check a sampler that is wrong: the counts come from always-accept,
    # the exact round they are tested against is the correct rule's
    from specsim import montecarlo
    from specsim.labs import pitfalls
    broken = pitfalls.get("always-accept").rule
    monkeypatch.setattr(montecarlo, "sample_rounds",
                        lambda pair, ctx, scheme, rounds, seed, progress=None, rule=None: montecarlo.sample_rounds_loop(
                            pair, ctx, scheme, rounds, seed, broken, progress))
    d = cli_json("sample", "seed", "--context", "a", "--rounds", "20000", "--seed", "1", "--check")
    assert d["check"]["outcomes"]["p_value"] < 1e-3 and d["check"]["accepted"]["p_value"] < 1e-3
    code, out, _ = cli("sample", "seed", "--context", "a", "--rounds", "20000", "--seed", "1", "--check")
    assert code == 0 and "REJECTED at level 0.001" in out


def test_sample_check_passes_a_broken_rule_against_its_own_round(cli_json):
    # the per-round loop samples a broken rule faithfully: its counts fit that rule's exact round
    d = cli_json("sample", "seed", "--rule", "always-accept", "--rounds", "20000", "--check")
    assert d["check"]["outcomes"]["p_value"] >= 1e-3


def test_pitfalls_json(cli_json):
    d = cli_json("pitfalls", "seed", "--context", "a", "--gamma", "3", "--tokens", "2")
    assert (d["context"], d["gamma"], d["tokens"]) == ("a", 3, 2)
    rules = {r["name"]: r for r in d["rules"]}
    assert set(d["rules"][0]) == {"name", "source", "description", "total_variation",
                                  "expected_tokens", "exact", "scheme"}
    assert d["scheme"] == "chain:3" and {r["scheme"] for r in d["rules"]} == {"chain:3"}
    assert rules["correct"]["total_variation"] == "0" and rules["correct"]["exact"] is True
    assert rules["no-bonus-token"]["total_variation"] == "0"
    assert rules["no-bonus-token"]["expected_tokens"] == "267/100"
    assert rules["resample-from-target"]["source"] == "common pseudocode"
    assert rules["always-accept"]["exact"] is False


def test_pitfalls_selected_rules_and_readable(cli_json, cli):
    d = cli_json("pitfalls", "seed", "--rule", "always-accept", "--rule", "correct")
    assert [r["name"] for r in d["rules"]] == ["always-accept", "correct"]
    code, out, _ = cli("pitfalls", "seed")
    assert code == 0 and "resample-from-target" in out and "48/625" in out


@pytest.mark.parametrize("argv,needle", [
    (["sample", "seed", "--rounds", "0"], "rounds must be between 1"),
    (["sample", "seed", "--rule", "nope"], "unknown rule 'nope'"),
    (["trace", "seed", "--rule", "nope"], "unknown rule 'nope'"),
    (["pitfalls", "seed", "--rule", "nope"], "unknown rule 'nope'"),
    (["trace", "seed", "--temperature", "-1"], "temperature must be >= 0"),
    (["trace", "seed", "--temperature", "hot"], "temperature must be a number"),
    (["generate", "seed", "--top-k", "0"], "top-k must be between 1"),
    (["sample", "seed", "--top-p", "0"], "top-p must be in (0, 1]"),
    (["sample", "seed", "--top-p", "1.5"], "top-p must be in (0, 1]"),
    (["trace", "seed", "--gamma", "0"], "gamma must be between 1"),
    (["generate", "seed", "--tokens", "0"], "tokens must be between 1"),
    (["trace", "seed", "--context", "q"], "not in the vocabulary"),
    (["trace", "nosuchmodel"], "unknown preset"),
    (["sample", "seed", "--gamma", "20", "--check", "--rounds", "10"], "the limit is"),
])
def test_bad_input_is_one_line_and_exit_2(cli, argv, needle):
    code, out, err = cli(*argv)
    assert code == 2 and out == ""
    assert needle in err and len(err.strip().splitlines()) == 1


def test_bench_sample_runs_small(cli):
    code, out, _ = cli("bench-sample", "--rounds", "2000", "--repeats", "1", "--loop-repeats", "1")
    d = json.loads(out)
    assert code == 0 and d["same_counts"] is True and d["speedup"] > 0
    assert {"vectorized_s", "loop_s", "vectorized_rounds", "loop_rounds"} <= set(d)
