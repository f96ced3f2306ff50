"""The CLI's shared pieces: the --gammas grammar, the γ limit, the number formatter,
the temperature convention, and torch kept out of `specsim --help`."""
import subprocess
import sys
from fractions import Fraction as F

import pytest

from specsim.bounds import LIMITS
from specsim.cli.common import check_gamma, num, parse_gammas

MAX = LIMITS.gamma


@pytest.mark.parametrize("text, gammas", [
    ("3", [3]), ("1-4", [1, 2, 3, 4]), ("2,4,8", [2, 4, 8]), ("1-3,8", [1, 2, 3, 8]),
    ("8,1-3", [1, 2, 3, 8]), ("2-2", [2]), ("1-3,2-4", [1, 2, 3, 4]), (" 1 - 2 , 5 ", [1, 2, 5]),
    (f"{MAX}", [MAX]), (f"1-{MAX}", list(range(1, MAX + 1))),
])
def test_gammas_grammar_accepts_ranges_lists_and_mixes(text, gammas):
    assert parse_gammas(text) == gammas


@pytest.mark.parametrize("text, message", [
    ("", "must look like"), ("x", "must look like"), ("1-", "must look like"), ("-3", "must look like"),
    ("1,,2", "must look like"), ("1-2-3", "must look like"), ("1.5", "must look like"),
    ("4-1", "write 1-4, not '4-1'"), ("0", f"between 1 and {MAX}, got 0"),
    ("0-3", "got 0"), (f"1-{MAX + 1}", f"got {MAX + 1}"), (f"2,{MAX + 1}", f"got {MAX + 1}"),
])
def test_gammas_grammar_refuses_with_one_line(text, message):
    with pytest.raises(ValueError) as e:
        parse_gammas(text)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_one_gamma_limit_for_every_command(cli):
    """--gamma, --gammas and --max-gamma share one maximum, bounds.LIMITS.gamma, on toy and GPT commands."""
    over = str(MAX + 1)
    for argv in (["trace", "seed", "--gamma", over], ["round", "seed", "--gamma", over],
                 ["prove", "seed", "--gammas", over], ["best-gamma", "--alpha", "0.5", "--cost", "0.1",
                                                       "--max-gamma", over],
                 ["gpt", "generate", "--prompt", "x", "--gamma", over], ["gpt", "bench", "--gammas", f"1-{over}"]):
        code, out, err = cli(*argv)
        assert code == 2 and out == "" and f"between 1 and {MAX}, got {over}" in err, argv
        assert err.count("\n") == 1
    assert check_gamma(MAX) == MAX


def test_prove_takes_a_list_of_gammas(cli_json):
    d = cli_json("prove", "seed", "--tokens", "2", "--gammas", "1,3-4", "--context", "a")
    assert d["gammas"] == [1, 3, 4] and [c["gamma"] for c in d["checks"]] == [1, 3, 4] and d["exact"]


def test_number_formatter():
    x = F(1659, 500)
    assert (num(x), num(x, "decimal"), num(x, "both"), num(x, "short")) == \
        ("1659/500", "3.3180", "1659/500 (3.3180)", "3.318")
    assert (num(0), num(F(1)), num(1), num(F(-1, 3))) == ("0", "1", "1", "-1/3")
    assert (num(2 / 3), num(2 / 3, "decimal", 2), num(F(9, 10), "short"), num("n/a")) == \
        ("0.6667", "0.67", "0.9", "n/a")
    with pytest.raises(ValueError):
        num(x, "roman")


def test_temperature_zero_is_greedy_on_the_toy_path(cli_json):
    """0 means greedy: the same emitted tokens as the greedy pair, whatever the seed."""
    from specsim import sampling, transforms, toy
    runs = [cli_json("generate", "seed", "--context", "b", "--tokens", "8", "--temperature", "0",
                     "--seed", str(s))["output"] for s in (0, 1)]
    greedy = sampling.generate(transforms.greedy_pair(toy.load_model("seed")), ("b",), 3, 8, 5)
    assert runs[0] == runs[1] == list(greedy.output)


def test_help_lists_every_command_without_torch_or_scipy():
    code = ("import sys; from specsim.cli import build_parser; h = build_parser().format_help(); "
            "print(sorted(m for m in ('torch', 'scipy') if m in sys.modules)); print(h)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines()[0] == "[]"
    for command in ("round", "prove", "compare", "speedup", "best-gamma", "tables", "bench-exact",
                    "bench-schemes", "trace", "generate", "sample", "pitfalls", "bench-sample", "check-rule", "gpt"):
        assert command in out


def test_gpt_without_torch_is_one_line_exit_2(cli, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` now fails as if it were not installed
    code, out, err = cli("gpt", "generate", "--prompt", "x")
    assert code == 2 and out == "" and "need PyTorch" in err and err.count("\n") == 1


def test_specsim_gpt_does_not_import_the_cli():
    from pathlib import Path
    import specsim.gpt
    for path in Path(specsim.gpt.__file__).parent.glob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert "specsim.cli" not in text and "..cli" not in text, path.name
