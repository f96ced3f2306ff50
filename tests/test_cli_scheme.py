"""--scheme on every toy command: the grammar and the historical flags give the same output,
bad schemes are one line and exit 2, --help shows the grammar, and the CLI starts without heavy imports."""
import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

from specsim import exact
from specsim.cli import build_parser
from specsim.schemes import parse
from specsim.toy import load_model

# (the historical flags, the same scheme in the grammar): a chain, a block, a tree
SAME = [(["--gamma", "2"], "chain:2"),
        (["--gamma", "2", "--verify", "block"], "block:2"),
        (["--tree", "2,1", "--drafts", "distinct"], "tree:2,1:distinct")]


def both(cli, argv, flags, scheme):
    """(stdout with the old flags, stdout with --scheme), both runs asserted to exit 0."""
    runs = []
    for extra in (flags, ["--scheme", scheme]):
        code, out, err = cli(*argv, *extra)
        assert code == 0, (argv, extra, err)
        runs.append(out)
    return runs


@pytest.mark.parametrize("flags, scheme", SAME)
@pytest.mark.parametrize("argv", [
    ["round", "seed", "--context", "b", "--json"],
    ["round", "seed", "--context", "b"],
    ["prove", "seed", "--tokens", "2", "--json"],
    ["prove", "order2", "--tokens", "2", "--context", "0 1", "--table"],
    ["trace", "seed", "--context", "a", "--seed", "4", "--json"],
    ["trace", "seed", "--context", "a", "--seed", "4"],
    ["generate", "seed", "--tokens", "6", "--seed", "2", "--json"],
    ["sample", "seed", "--context", "a", "--rounds", "600", "--seed", "5", "--check", "--json"],
    ["sample", "seed", "--context", "c", "--rounds", "300", "--seed", "5", "--top", "0"],
])
def test_the_scheme_and_the_old_flags_print_the_same(cli, argv, flags, scheme):
    old, new = both(cli, argv, flags, scheme)
    assert old == new and old.strip()


@pytest.mark.parametrize("flags, scheme", SAME)
def test_round_json_numbers_are_the_engines(cli_json, flags, scheme):
    out = cli_json("round", "seed", "--context", "b", "--scheme", scheme)
    r = exact.round_distribution(load_model("seed"), ("b",), parse(scheme))
    assert out["scheme"] == scheme and Fraction(out["expected_tokens"]) == r.expected_tokens
    assert [Fraction(x) for x in out["accepted"]] == r.accepted
    assert {tuple(o["tokens"]): Fraction(o["probability"]) for o in out["outcomes"]} == r.outcomes


@pytest.mark.parametrize("flags, scheme", SAME)
def test_trace_json_is_the_round_trace_of_the_scheme(cli_json, flags, scheme):
    """The trace JSON names the scheme and its parents, and "accepted" is K (an int)."""
    from specsim import sampling
    out = cli_json("trace", "seed", "--context", "a", "--seed", "4", "--scheme", scheme)
    t = sampling.trace_round(load_model("seed"), ("a",), parse(scheme), 4)
    assert out == json.loads(json.dumps(t.to_dict()))
    assert out["scheme"] == scheme and out["parents"] == t.parents and out["accepted"] == t.accepted
    assert isinstance(out["accepted"], int) and out["emitted"][:out["accepted"]] == \
        [out["drafts"][j] for j in t.verdict.path]


def test_prove_takes_a_list_of_schemes_as_its_gammas(cli):
    old, new = both(cli, ["prove", "seed", "--tokens", "2", "--json"], ["--gammas", "1-3"], "chain:1;chain:2;chain:3")
    assert old == new and json.loads(new)["schemes"] == ["chain:1", "chain:2", "chain:3"]
    code, out, _ = cli("prove", "seed", "--tokens", "2", "--context", "a", "--json",
                       "--scheme", "chain:2;block:2;tree:2,1")
    checks = json.loads(out)["checks"]
    assert code == 0 and [c["scheme"] for c in checks] == ["chain:2", "block:2", "tree:2,1"]
    assert all(c["exact"] for c in checks)


@pytest.mark.parametrize("flags, scheme", [
    (["--gamma", "2"], "chain:2"), (["--gamma", "2", "--verify", "block"], "block:2"), (["--tree", "2"], "tree:2")])
def test_pitfalls_same_with_the_scheme(cli, flags, scheme):
    argv = ["pitfalls", "seed", "--context", "a", "--tokens", "2", "--json"]
    old, new = both(cli, argv, flags, scheme)
    assert old == new
    rules = json.loads(new)["rules"]
    correct = [r for r in rules if r["name"] == "correct"]
    assert correct and correct[0]["total_variation"] == "0" and correct[0]["scheme"] == scheme


def test_pitfalls_rules_follow_the_scheme(cli, cli_json):
    tree = cli_json("pitfalls", "seed", "--scheme", "tree:2,1", "--tokens", "1")
    assert {r["name"]: r["scheme"] for r in tree["rules"]} == {
        "correct": "tree:2,1", "tree-no-residual-update": "tree:2,1", "top-k-tree-as-if-sampled": "tree:2,1:distinct"}
    code, _, err = cli("pitfalls", "seed", "--scheme", "chain:2", "--rule", "tree-no-residual-update")
    assert code == 2 and "does not apply to chain:2" in err and err.count("\n") == 1
    code, _, err = cli("pitfalls", "seed", "--scheme", "tree:2", "--rule", "always-accept")
    assert code == 2 and "does not apply to tree:2" in err and err.count("\n") == 1
    code, _, err = cli("sample", "seed", "--scheme", "block:2", "--rule", "always-accept")
    assert code == 2 and "does not apply to block:2" in err and err.count("\n") == 1


def test_sample_runs_a_tree_rule_on_a_tree(cli_json):
    d = cli_json("sample", "seed", "--scheme", "tree:2,1", "--rule", "tree-no-residual-update",
                 "--rounds", "400", "--seed", "1")
    assert d["scheme"] == "tree:2,1" and sum(d["accepted_counts"]) == 400


@pytest.mark.parametrize("scheme", ["chain:2", "block:2", "tree:2,1:distinct"])
def test_compare_a_named_scheme_is_its_row_in_the_budget(cli_json, scheme):
    named = cli_json("compare", "seed", "--context", "a", "--scheme", scheme)["schemes"]
    within = cli_json("compare", "seed", "--context", "a", "--budget", "4")["schemes"]
    assert len(named) == 1 and named[0] == next(r for r in within if r["scheme"] == scheme)


def test_compare_named_schemes_best_first(cli_json):
    rows = cli_json("compare", "seed", "--context", "a", "--scheme", "chain:3;block:3")["schemes"]
    assert [(r["scheme"], r["expected_tokens"]) for r in rows] == [("block:3", "1699/500"), ("chain:3", "1659/500")]


RULE = "from specsim.rule import RoundRule\n\nclass Mine(RoundRule):\n    name = 'mine'\n"


def test_check_rule_takes_chains_as_schemes(cli, tmp_path):
    path = tmp_path / "mine.py"
    path.write_text(RULE)
    argv = ["check-rule", f"{path}:Mine", "--models", "1", "--tokens", "1", "--json"]
    old, new = both(cli, argv, ["--gammas", "1-2"], "chain:1;chain:2")
    assert json.loads(old)["exact"] and [t["gamma"] for t in json.loads(old)["tokens_per_round"]] == [1, 2]
    assert {k: v for k, v in json.loads(old).items() if k != "seconds"} == \
        {k: v for k, v in json.loads(new).items() if k != "seconds"}
    for scheme in ("block:2", "tree:2,1"):
        code, out, err = cli(*argv, "--scheme", scheme)
        assert code == 2 and out == "" and "chains" in err and err.count("\n") == 1


# -- bad input ---------------------------------------------------------------------

COMMANDS = [["round", "seed"], ["prove", "seed"], ["compare", "seed"], ["trace", "seed"], ["generate", "seed"],
            ["sample", "seed"], ["pitfalls", "seed"], ["check-rule", "x.py:R"]]
BAD = ["", "chain", "chain:", "chain:0", "chain:65", "chain:-1", "chain:1.5", "chain:\uff14", "block:x",
       "tree:", "tree:0", "tree:2,,1", "tree:2:sorted", "wheel:3", "CHAIN:3", "chain:3 tree:2", "x" * 100_000]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
@pytest.mark.parametrize("scheme", BAD, ids=lambda s: repr(s[:20]))
def test_a_bad_scheme_is_one_line_exit_2(cli, command, scheme):
    code, out, err = cli(*command, "--scheme", scheme)
    assert code == 2 and out == "" and err.count("\n") == 1 and "--scheme" in err, (command, scheme, err)
    assert len(err) < 400 and "Traceback" not in err


@pytest.mark.parametrize("command", [["prove", "seed"], ["compare", "seed"], ["check-rule", "x.py:R"]])
def test_a_list_names_its_bad_item_and_refuses_repeats(cli, command):
    code, _, err = cli(*command, "--scheme", "chain:2;tree:0")
    assert code == 2 and "'tree:0'" in err and err.count("\n") == 1
    code, _, err = cli(*command, "--scheme", "chain:2;chain:2")
    assert code == 2 and "twice" in err and err.count("\n") == 1


@pytest.mark.parametrize("command, flag", [
    (["round", "seed"], ["--gamma", "3"]), (["round", "seed"], ["--verify", "block"]),
    (["round", "seed"], ["--tree", "2"]), (["round", "seed"], ["--drafts", "distinct"]),
    (["prove", "seed"], ["--gammas", "1-2"]), (["trace", "seed"], ["--gamma", "3"]),
    (["generate", "seed"], ["--tree", "2"]), (["sample", "seed"], ["--verify", "block"]),
    (["pitfalls", "seed"], ["--gamma", "2"]), (["check-rule", "x.py:R"], ["--gammas", "1-2"])])
def test_the_scheme_with_a_shorthand_flag_is_one_line_exit_2(cli, command, flag):
    code, out, err = cli(*command, "--scheme", "chain:3", *flag)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert f"--scheme and {flag[0]} do not combine" in err


@pytest.mark.parametrize("command", [["round", "seed"], ["prove", "seed"], ["sample", "seed"], ["pitfalls", "seed"],
                                     ["trace", "seed"], ["generate", "seed"]])
def test_tree_and_block_do_not_combine_one_sentence(cli, command):
    code, out, err = cli(*command, "--tree", "2", "--verify", "block")
    assert code == 2 and out == "" and "--tree and --verify block do not combine" in err and err.count("\n") == 1


def test_the_sentence_is_written_once():
    """The historical flags are read in one place (schemes.from_flags), so their one error is written once."""
    import specsim
    root = Path(specsim.__file__).parent
    hits = [p for p in root.rglob("*.py") if "--tree and --verify block do not combine" in p.read_text("utf-8")]
    assert [p.relative_to(root).as_posix() for p in hits] == ["schemes/grammar.py"]


# -- help --------------------------------------------------------------------------

def _subparser(names):
    parser = build_parser()
    for name in names:
        sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
        parser = sub.choices[name]
    return parser


@pytest.mark.parametrize("command", ["round", "prove", "compare", "trace", "generate", "sample", "pitfalls",
                                     "check-rule"])
def test_help_shows_the_scheme_grammar(command):
    text = " ".join(_subparser([command]).format_help().split())  # argparse wraps lines
    assert "--scheme" in text and "chain:G, block:G" in text and "tree:W1,W2,...[:iid|distinct]" in text


# -- start-up ----------------------------------------------------------------------

HEAVY = ("torch", "scipy", "sympy", "plotly", "numpy", "specsim.labs.checker", "specsim.symbolic")


def _loaded(code: str) -> list:
    code = f"import sys\n{code}\nprint([m for m in {HEAVY!r} if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1].replace("'", '"'))


def test_help_imports_nothing_heavy():
    assert _loaded("from specsim.cli import build_parser\nbuild_parser().format_help()") == []


def test_an_exact_round_imports_nothing_heavy():
    """`specsim round seed --gamma 3` runs on Fractions: no numpy, scipy, sympy, torch or plotly."""
    code = "from contextlib import redirect_stdout\nimport io\nfrom specsim.cli import main\n" \
           "with redirect_stdout(io.StringIO()):\n    assert main(['round', 'seed', '--gamma', '3']) == 0"
    assert _loaded(code) == []


def test_commands_lists_what_each_module_registers():
    """``specsim.cli.COMMANDS`` (what ``main`` imports for a command) matches each module's ``register``."""
    import argparse
    import importlib
    from specsim.cli import COMMANDS
    for name, commands in COMMANDS.items():
        sub = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(f"specsim.cli.{name}").register(sub)
        assert tuple(sub.choices) == commands, name


def test_a_toy_command_does_not_load_the_gpt_commands():
    code = "from contextlib import redirect_stdout\nimport io\nfrom specsim.cli import main\n" \
           "with redirect_stdout(io.StringIO()):\n    assert main(['round', 'seed', '--gamma', '3']) == 0\n" \
           "print(sorted(m for m in sys.modules if m.startswith('specsim.cli.')))"
    out = subprocess.run([sys.executable, "-c", "import sys\n" + code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "['specsim.cli.common', 'specsim.cli.exact_cmds']"
