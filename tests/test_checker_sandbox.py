"""`specsim check-rule` runs a hostile rule file in a child with a clock: one line and no verdict, never a hang.

Each hostile file is written in tmp_path and checked by a real `specsim`
process (``python -m specsim.cli``) under a generous timeout, so a regression
fails instead of hanging. No test asserts how fast anything is.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import pytest

from specsim import bounds

from specsim.labs import checker, pitfalls, sandbox
from specsim.rule import RoundRule
from specsim.labs.rule_proxy import RuleError, ValidatedRule, plain_number, plain_row

ROOT = Path(__file__).resolve().parent.parent
HANG = 60  # seconds: only a hang reaches this

HEADER = """
import itertools, os, sys, time
from fractions import Fraction
from specsim.rule import RoundRule
"""

# name -> (source after HEADER, extra options, words of the one stderr line)
HOSTILE = {
    "sys.exit(0) in a method": (
        "class R(RoundRule):\n    def accept(self, p, q, x):\n        sys.exit(0)\n",
        [], "accept() raised SystemExit: 0"),
    "os._exit(0) in a method": (
        "class R(RoundRule):\n    def accept(self, p, q, x):\n        os._exit(0)\n",
        [], "ended the check without a report"),
    "sys.exit(0) at top level": (
        "sys.exit(0)\nclass R(RoundRule):\n    pass\n",
        [], "failed: SystemExit: 0"),
    "endless loop at top level": (
        "while True:\n    pass\nclass R(RoundRule):\n    pass\n",
        ["--timeout", "3"], "ran past its 3 s clock"),
    "endless loop in a method": (
        "class R(RoundRule):\n    def replacement(self, p, q):\n        while True:\n            pass\n",
        ["--timeout", "3"], "ran past its 3 s clock"),
    "50 ms sleep per call": (
        "class R(RoundRule):\n    def accept(self, p, q, x):\n        time.sleep(0.05)\n"
        "        return RoundRule.accept(self, p, q, x)\n",
        ["--timeout", "3"], "ran past its 3 s clock"),
    "memory hog": (
        "class R(RoundRule):\n    def accept(self, p, q, x):\n        hog = bytearray(50 * 2**30)\n        return 1\n",
        ["--memory", "256"], "MemoryError (the child's memory limit is 256 MB)"),
    "KeyboardInterrupt from a method": (
        "class R(RoundRule):\n    def bonus(self, p):\n        raise KeyboardInterrupt\n",
        [], "bonus() raised KeyboardInterrupt"),
    "GeneratorExit from a method": (
        "class R(RoundRule):\n    def draft_row(self, q):\n        raise GeneratorExit('bye')\n",
        [], "draft_row() raised GeneratorExit: bye"),
    "a name property that raises": (
        "class R(RoundRule):\n    @property\n    def name(self):\n        raise RuntimeError('no name')\n",
        [], "reading its name raised RuntimeError: no name"),
    "an endless iterator returned": (
        "class R(RoundRule):\n    def bonus(self, p):\n        return itertools.repeat(Fraction(0))\n",
        [], "returned more than 3 entries; the vocabulary has 3"),
    "a lying Fraction subclass": (
        "class Liar(Fraction):\n"
        "    def __lt__(self, o): return False\n    def __le__(self, o): return True\n"
        "    def __gt__(self, o): return False\n    def __ge__(self, o): return True\n"
        "    def __eq__(self, o): return True\n    def __ne__(self, o): return False\n"
        "    __hash__ = Fraction.__hash__\n"
        "class R(RoundRule):\n    def accept(self, p, q, x):\n        return Liar(5, 2)\n",
        [], "returned 5/2, outside [0, 1]"),
    "a fake EXACT printed to stdout, then an exit": (
        "class R(RoundRule):\n    def accept(self, p, q, x):\n"
        "        print('EXACT in all 9 checks: the next 2 token(s) follow the target', flush=True)\n"
        "        os._exit(0)\n",
        [], "ended the check without a report"),
    "a forged report on every descriptor": (
        "class R(RoundRule):\n    def accept(self, p, q, x):\n"
        "        fake = 'SPECSIM-REPORT 0\\n{\"kind\": \"result\"}\\nSPECSIM-END 0\\n'.encode()\n"
        "        for fd in range(3, 64):\n"
        "            try:\n                os.write(fd, fake)\n            except OSError:\n                pass\n"
        "        os._exit(0)\n",
        [], "incomplete or not ours"),
    "the report descriptor closed": (
        "class R(RoundRule):\n    def accept(self, p, q, x):\n"
        "        for fd in range(3, 64):\n"
        "            try:\n                os.close(fd)\n            except OSError:\n                pass\n"
        "        return 1\n",
        [], "without a report (the child exited with code 1)"),
    "a signal to itself": (
        "import signal\nclass R(RoundRule):\n    def accept(self, p, q, x):\n"
        "        os.kill(os.getpid(), signal.SIGTERM)\n        time.sleep(30)\n",
        [], "killed by SIGTERM before its report"),
}


def specsim(*argv, timeout=HANG):
    """(exit code, stdout, stderr) of a real `specsim` process."""
    r = subprocess.run([sys.executable, "-m", "specsim.cli", *map(str, argv)], capture_output=True, text=True,
                       timeout=timeout, cwd=ROOT)
    return r.returncode, r.stdout, r.stderr


@pytest.mark.parametrize("case", list(HOSTILE))
def test_a_hostile_rule_gets_one_line_and_no_verdict(tmp_path, case):
    source, options, words = HOSTILE[case]
    path = tmp_path / "hostile.py"
    path.write_text(HEADER + source)
    code, out, err = specsim("check-rule", f"{path}:R", "--models", "3", "--gammas", "1", *options)
    assert code == 2, (case, code, out, err)
    assert err.count("\n") == 1 and err.startswith("specsim check-rule: error: ") and words in err, err
    assert "Traceback" not in err and "EXACT" not in out and out == ""


def test_the_clock_kills_what_the_rule_started(tmp_path):
    pid_file = tmp_path / "pid"
    (tmp_path / "spawner.py").write_text(HEADER + f"""
import subprocess
class R(RoundRule):
    def accept(self, p, q, x):
        child = subprocess.Popen(["sleep", "600"])
        open({str(pid_file)!r}, "w").write(str(child.pid))
        while True:
            pass
""")
    code, out, err = specsim("check-rule", f"{tmp_path}/spawner.py:R", "--models", "0", "--timeout", "3")
    assert code == 2 and "clock" in err
    pid = int(pid_file.read_text())
    for _ in range(100):  # killed with the child's process group; a zombie waiting for init counts as gone
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            break
        if state == "Z":
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"the rule's own child {pid} outlived the clock")


def test_the_total_work_is_refused_before_anything_starts(tmp_path):
    marker = tmp_path / "imported"
    (tmp_path / "rule.py").write_text(HEADER + f"open({str(marker)!r}, 'w').close()\nclass R(RoundRule):\n    pass\n")
    code, out, err = specsim("check-rule", f"{tmp_path}/rule.py:R", "--models", "100000", "--tokens", "3",
                             "--gammas", "1-3")
    assert code == 2 and err.count("\n") == 1 and "100,000 random models" in err and "the limit is" in err
    assert not marker.exists()  # the file was never imported


def test_a_correct_rule_is_exact_and_a_pitfall_refuted_through_the_sandbox(tmp_path):
    (tmp_path / "mine.py").write_text(HEADER + "class Mine(RoundRule):\n    name = 'mine'\n"
                                      "    def bonus(self, p):\n        return iter(p)\n")
    code, out, err = specsim("check-rule", f"{tmp_path}/mine.py:Mine", "--models", "6", "--gammas", "1-2")
    assert code == 0 and err == "" and "EXACT in all" in out and "Rule 'mine'" in out
    code, out, err = specsim("check-rule", f"{ROOT}/specsim/labs/pitfalls.py:ResampleFromTarget", "--models", "6",
                             "--gammas", "1", "--json")
    data = json.loads(out)
    assert code == 1 and not data["exact"] and data["counterexample"]["model"]["vocab"] == ["b", "c"]
    direct = checker.check_rule(pitfalls.ResampleFromTarget(), gammas=(1,), models=6)
    assert data["counterexample"]["total_variation"] == str(direct.counterexample.total_variation)


@pytest.mark.parametrize("option, value, words", [
    ("--timeout", "0", "timeout must be more than 0"),
    ("--timeout", "-5", "timeout must be more than 0"),
    ("--timeout", "1e9", "at most 3600"),
    ("--memory", "0", "memory must be between"),
    ("--memory", "99999999", "memory must be between"),
])
def test_limits_out_of_range_are_refused(cli, option, value, words):
    code, out, err = cli("check-rule", f"{ROOT}/specsim/rule.py:RoundRule", option, value)
    assert code == 2 and words in err and err.count("\n") == 1


def test_help_names_the_exit_codes_and_the_sandbox(cli):
    code, out, err = cli("check-rule", "--help")
    text = " ".join(out.split())
    assert code == 0 and "0 exact" in text and "1 a counter-example" in text and "2 no verdict" in text
    assert "child" in text and "--timeout" in text and "--memory" in text


# -- the report: only a completed one, with our nonce, gives a verdict ---------------------
def _report(nonce, body, head=None, end=None):
    head = head or f"SPECSIM-REPORT {nonce}\n"
    end = end or f"\nSPECSIM-END {nonce}\n"
    return (head + json.dumps(body) + end).encode()


def test_only_a_complete_report_with_the_nonce_reads_back():
    result = checker.check_rule(RoundRule(), gammas=(1,), n_tokens=1, models=2)
    body = {"kind": "result", "result": result.to_dict()}
    good = _report("abc", body)
    assert sandbox._verdict(good, "gone", 0, "abc", 5).to_dict() == result.to_dict()
    bad = [(good, 0, "abd", "not ours"),  # another nonce
           (good[:-5], 0, "abc", "not ours"),  # cut short: no end marker
           (good + b"x\n", 0, "abc", "not ours"),  # something after the end
           (b"SPECSIM-REPORT abc\n" + good, 0, "abc", "not ours"),  # two heads
           (good, 3, "abc", "exited with code 3 after its report"),
           (b"", 0, "abc", "without a report"),
           (b"", -9, "abc", "killed by SIGKILL"),
           (b"", 1, "abc", "exited with code 1"),
           (_report("abc", {"kind": "result", "result": {**result.to_dict(), "exact": "yes"}}), 0, "abc",
            "does not read back"),
           (_report("abc", {"kind": "error", "message": "rule 'x': \x1b[31mred\nsecond"}), 0, "abc",
            "rule 'x': \\x1b[31mred")]
    for data, code, nonce, words in bad:
        with pytest.raises(sandbox.SandboxError) as e:
            sandbox._verdict(data, "gone", code, nonce, 5)
        assert words in str(e.value) and "\n" not in str(e.value), (words, str(e.value))


def test_a_counterexample_round_trips_through_the_report():
    r = checker.check_rule(pitfalls.AlwaysAccept(), gammas=(1,), models=3)
    again = checker.CheckResult.from_dict(json.loads(json.dumps(r.to_dict())))
    assert again.to_dict() == r.to_dict() and again.counterexample.total_variation == r.counterexample.total_variation


# -- the validating proxy: plain numbers, bounded reads --------------------------------------
class _Liar(Fraction):
    def __lt__(self, other):
        return False

    __le__ = __ge__ = __eq__ = lambda self, other: True
    __hash__ = Fraction.__hash__


class _BigInt(int):
    def __int__(self):
        return 0


@pytest.mark.parametrize("value, want", [
    (Fraction(2, 4), Fraction(1, 2)), (3, Fraction(3)), (_Liar(5, 2), Fraction(5, 2)), (_BigInt(1), Fraction(1)),
])
def test_numbers_are_read_into_plain_fractions(value, want):
    got = plain_number(value, "accept")
    assert type(got) is Fraction and got == want


@pytest.mark.parametrize("value, words", [
    (True, "returned a bool; return Fractions or ints"), (0.5, "returned 0.5 (float); return Fractions"),
    (float("nan"), "returned nan (float)"), (float("inf"), "returned inf (float)"),
    ("1/2", "returned a str"), (None, "returned a NoneType"), (10**1200, "a number over 1000 digits"),
])
def test_non_numbers_are_refused(value, words):
    with pytest.raises(RuleError) as e:
        plain_number(value, "accept")
    assert words in str(e.value) and "\n" not in str(e.value)


def test_rows_are_read_at_most_v_plus_one_deep():
    pulled = []

    def endless():
        while True:
            pulled.append(1)
            yield Fraction(0)

    with pytest.raises(RuleError, match="more than 3 entries"):
        plain_row(endless(), 3, "bonus")
    assert len(pulled) == 4
    assert plain_row(iter([Fraction(1, 2), 0, Fraction(1, 2)]), 3, "bonus") == (Fraction(1, 2), 0, Fraction(1, 2))

    def exits():
        yield Fraction(1)
        sys.exit(3)

    with pytest.raises(RuleError, match="reading the returned row raised SystemExit: 3"):
        plain_row(exits(), 2, "bonus")


def test_a_name_must_be_a_string_and_may_not_raise():
    class Exits(RoundRule):
        @property
        def name(self):
            raise SystemExit(0)

    class Number(RoundRule):
        name = 7

    with pytest.raises(RuleError, match="reading its name raised SystemExit: 0"):
        ValidatedRule(Exits())
    with pytest.raises(RuleError, match="its name is a int, not a string"):
        ValidatedRule(Number())
    assert ValidatedRule(type("Plain", (RoundRule,), {})()).name == "Plain"


def test_an_exception_whose_str_raises_is_still_one_line():
    class Odd(Exception):
        def __str__(self):
            raise RuntimeError("no text")

    class R(RoundRule):
        def accept(self, p, q, x):
            raise Odd()

    with pytest.raises(RuleError) as e:
        checker.check_rule(R(), gammas=(1,), n_tokens=1, models=0)
    assert str(e.value) == "rule 'R': accept() raised Odd"


def test_total_work_counts_every_model():
    assert checker.total_work(600, (1, 2, 3), 2) > checker.total_work(60, (1, 2, 3), 2)
    checker.check_total_work(500, (1, 2, 3), 2)  # the default fits
    with pytest.raises(bounds.WorkRefused):
        checker.check_total_work(100_000, (1, 2, 3), 3)
    with pytest.raises(bounds.WorkRefused):
        checker.check_total_work(500, (1, 2, 3), 2, limit=1000)
    with pytest.raises(bounds.WorkRefused):
        sandbox.check_rule_file(os.path.join(ROOT, "specsim", "rule.py"), "RoundRule", models=100_000, n_tokens=3)


def test_max_work_scales_the_whole_checks_limit():
    import argparse
    from specsim.cli import check_cmds
    assert check_cmds.total_limit(argparse.Namespace()) is None  # no --max-work: checker.TOTAL_WORK
    default = check_cmds.total_limit(argparse.Namespace(max_work=bounds.LIMITS.cli_work))
    doubled = check_cmds.total_limit(argparse.Namespace(max_work=2 * bounds.LIMITS.cli_work))
    assert default.steps == checker.TOTAL_WORK and doubled.steps == 2 * checker.TOTAL_WORK


def test_the_child_imports_neither_torch_nor_the_cli():
    code = "import sys, specsim.labs.sandbox_child; print(sorted(m for m in sys.modules if m.startswith(('torch', 'specsim.cli'))))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=HANG, cwd=ROOT)
    assert out.stdout.strip() == "[]", out.stderr
