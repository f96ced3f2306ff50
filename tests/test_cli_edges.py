"""CLI edges: one seed rule on every command, non-finite temperatures, an empty
model path, and control characters in tokens never reaching the terminal raw."""
import argparse
import json

import pytest

from specsim.cli import build_parser
from specsim.cli.common import parse_seed, shown, table


def seeded_commands() -> list:
    """Every sub-command (gpt ones included) that takes --seed, as argv prefixes."""
    found = []

    def walk(parser, prefix):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, prefix + [name])
            elif "--seed" in action.option_strings:
                found.append(prefix)
    walk(build_parser(), [])
    return found


def argv_for(prefix):
    """A valid invocation apart from the option under test."""
    extra = {"round": ["seed"], "trace": ["seed"], "generate": ["seed"], "sample": ["seed"],
             "pitfalls": ["seed"], "prove": ["seed"]}.get(prefix[-1], [])
    if prefix == ["gpt", "generate"]:
        extra = ["--prompt", "ab"]
    return prefix + extra


def test_seeded_commands_are_found():
    names = {" ".join(p) for p in seeded_commands()}
    assert {"trace", "generate", "sample", "gpt generate", "gpt bench", "gpt train"} <= names


@pytest.mark.parametrize("seed", ["-1", "18446744073709551616", str(2**63), "x", "1.5", "²", "9" * 5000])
def test_one_seed_rule_one_message_on_every_command(cli, seed):
    for prefix in seeded_commands():
        code, out, err = cli(*argv_for(prefix), "--seed", seed)
        assert code == 2, (prefix, err)
        lines = err.strip().splitlines()
        assert len(lines) == 1 and "--seed" in lines[0] and "0 to 2^63 - 1" in lines[0], (prefix, err)
        assert "Traceback" not in err and "Overflow" not in err


def test_seed_rule_accepts_its_whole_range():
    assert parse_seed("0") == 0 and parse_seed(str(2**63 - 1)) == 2**63 - 1


def test_largest_seed_runs(cli):
    code, out, err = cli("trace", "seed", "--seed", str(2**63 - 1))
    assert code == 0, err


@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "Infinity", "1e400"])
def test_non_finite_temperature_refused_on_toy_and_gpt(cli, value):
    for argv in (["trace", "seed"], ["generate", "seed"], ["sample", "seed"],
                 ["gpt", "generate", "--prompt", "ab"], ["gpt", "bench"]):
        code, out, err = cli(*argv, "--temperature", value)
        assert code == 2, (argv, err)
        assert len(err.strip().splitlines()) == 1 and "temperature" in err, (argv, err)


@pytest.mark.parametrize("path", ["", "  "])
def test_empty_model_path_says_empty(cli, path):
    code, out, err = cli("round", path)
    assert code == 2 and "empty" in err and "directory" not in err


def test_table_shows_control_characters_escaped():
    text = table([["a\x1b[31mred", "\x07"]], ["tok\n", "x"])
    assert "\x1b" not in text and "\x07" not in text and "\\x1b[31m" in text and "\\x07" in text
    assert shown("plain é") == "plain é"


def test_model_with_control_character_token_refused(cli, tmp_path):
    model = json.loads(build_model_json())
    model["vocab"][0] = "a\x1b[2J"
    path = tmp_path / "ansi.json"
    path.write_text(json.dumps(model))
    code, out, err = cli("round", path)
    assert code == 2 and "control character" in err and "\x1b" not in err


def build_model_json():
    from specsim.toy import load_model
    return load_model("seed").to_json()


def test_huge_gamma_range_refused_before_it_is_built(cli):
    import time
    t = time.perf_counter()
    code, out, err = cli("gpt", "bench", "--gammas", "1-1000000000")
    assert code == 2 and "gammas" in err and "MemoryError" not in err
    assert time.perf_counter() - t < 1
