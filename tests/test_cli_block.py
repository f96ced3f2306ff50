"""CLI: --verify block on round, prove, sample; compare."""
from fractions import Fraction

from specsim import exact
from specsim.schemes.block import Block
from specsim.toy import load_model


def test_round_verify_block_json(cli_json):
    out = cli_json("round", "seed", "--context", "a", "--gamma", 3, "--verify", "block")
    assert out["verify"] == "block"
    r = exact.round_distribution(load_model("seed"), ("a",), Block(3))
    assert Fraction(out["expected_tokens"]) == r.expected_tokens
    assert [Fraction(x) for x in out["accepted"]] == r.accepted
    assert {"context", "gamma", "outcomes", "alpha", "iid_expected_tokens"} <= set(out)
    token = cli_json("round", "seed", "--context", "a", "--gamma", 3)
    assert "verify" not in token and Fraction(token["expected_tokens"]) < r.expected_tokens


def test_prove_verify_block(cli, cli_json):
    out = cli_json("prove", "zeros", "--tokens", 2, "--gammas", "1-3", "--verify", "block")
    assert out["exact"] and [c["gamma"] for c in out["checks"]][:3] == [1, 2, 3]
    code, text, _ = cli("prove", "seed", "--tokens", 2, "--gamma", 2, "--verify", "block")
    assert code == 0 and "exact" in text


def test_block_work_is_refused_in_one_line(cli):
    code, _, err = cli("prove", "seed", "--tokens", 5, "--gamma", 9, "--verify", "block")
    assert code == 2 and "block:9" in err and len(err.strip().splitlines()) == 1


def test_sample_verify_block_check(cli_json):
    out = cli_json("sample", "seed", "--context", "a", "--gamma", 2, "--verify", "block",
                   "--rounds", 5000, "--seed", 3, "--check")
    assert out["rounds"] == 5000 and sum(out["accepted_counts"]) == 5000
    assert out["check"]["outcomes"]["p_value"] > 1e-3 and out["check"]["accepted"]["p_value"] > 1e-3
    again = cli_json("sample", "seed", "--context", "a", "--gamma", 2, "--verify", "block",
                     "--rounds", 5000, "--seed", 3, "--check")
    assert again == out  # deterministic for a seed


def test_compare_sorted_best_first(cli, cli_json):
    out = cli_json("compare", "seed", "--context", "a", "--budget", 3)
    chains = [s for s in out["schemes"] if s["kind"] != "tree"]
    assert len(chains) == 6 and all("tree" not in s for s in chains)
    values = [Fraction(s["expected_tokens"]) for s in out["schemes"]]
    assert values == sorted(values, reverse=True)
    best = {s["scheme"]: Fraction(s["expected_tokens"]) for s in chains}
    assert best["block:3"] == Fraction(1699, 500) > best["chain:3"] == Fraction(1659, 500)
    assert cli("compare", "seed", "--budget", 9)[0] == 2
