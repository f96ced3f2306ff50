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
        [], "the rule's process ended (exit code 0) while asked accept()"),
    "sys.exit(0) at top level": (
        "sys.exit(0)\nclass R(RoundRule):\n    pass\n",
        [], "failed: SystemExit: 0"),
    "endless loop at top level": (
        "while True:\n    pass\nclass R(RoundRule):\n    pass\n",
        ["--timeout", "3"], "importing the rule file ran past the whole check's 3 s clock"),
    "endless loop in a method": (
        "class R(RoundRule):\n    def replacement(self, p, q):\n        while True:\n            pass\n",
        [], "did not answer replacement() within its 5 s clock"),
    "500 ms sleep per call": (  # each answer in time, the whole check not
        "class R(RoundRule):\n    def accept(self, p, q, x):\n        time.sleep(0.5)\n"
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
        [], "the rule's process ended (exit code 0)"),
    "a forged report on every descriptor": (
        "class R(RoundRule):\n    def accept(self, p, q, x):\n"
        "        fake = 'SPECSIM-REPORT 0\\n{\"kind\": \"result\"}\\nSPECSIM-END 0\\n'.encode()\n"
        "        for fd in range(3, 64):\n"
        "            try:\n                os.write(fd, fake)\n            except OSError:\n                pass\n"
        "        os._exit(0)\n",
        [], "not an answer; no verdict"),
    "the report descriptor closed": (
        "class R(RoundRule):\n    def accept(self, p, q, x):\n"
        "        for fd in range(3, 64):\n"
        "            try:\n                os.close(fd)\n            except OSError:\n                pass\n"
        "        return 1\n",
        [], "while asked accept()"),
    "a signal to itself": (
        "import signal\nclass R(RoundRule):\n    def accept(self, p, q, x):\n"
        "        os.kill(os.getpid(), signal.SIGTERM)\n        time.sleep(30)\n",
        [], "accept()"),  # unisolated: killed by SIGTERM; isolated, PID 1 of its namespace ignores it: the clock
}


UNISOLATED = {"SPECSIM_ISOLATION": "off"}  # the fallback where the machine cannot isolate: the reaper alone


def specsim(*argv, timeout=HANG, env=None):
    """(exit code, stdout, stderr) of a real `specsim` process."""
    r = subprocess.run([sys.executable, "-m", "specsim.cli", *map(str, argv)], capture_output=True, text=True,
                       timeout=timeout, cwd=ROOT, env=None if env is None else {**os.environ, **env})
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
    code, out, err = specsim("check-rule", f"{tmp_path}/spawner.py:R", "--models", "0", "--timeout", "3",
                             env=UNISOLATED)
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


# -- answers: only well-formed ones are read, and none of them is a verdict ----------------------
@pytest.mark.parametrize("line, want", [(b'{"v": "1/2"}', Fraction(1, 2)), (b'{"v": "3"}', Fraction(3)),
                                        (b'{"v": ["1/2", "1/2", "0"]}', (Fraction(1, 2), Fraction(1, 2), 0)),
                                        (b'{"v": null}', None)])
def test_a_well_formed_answer_reads_back(line, want):
    assert sandbox.read_answer(line) == want


@pytest.mark.parametrize("line, words", [
    (b'{"exact": true}', "not an answer"), (b'{"v": "1/2", "exact": true}', "not an answer"),
    (b'SPECSIM-REPORT 0', "not an answer"), (b'{"v": "0.5"}', "malformed number"), (b'{"v": 0.5}', "malformed"),
    (b'{"v": ["1/2", 1]}', "malformed"), (b'{"v": "nan"}', "malformed"), (b'[1, 2]', "not an answer"),
    (b'{"v": "' + b"9" * 5000 + b'"}', "malformed"), (b'[' * 100000, "not an answer"),
])
def test_anything_but_an_answer_ends_the_check_without_a_verdict(line, words):
    with pytest.raises(sandbox.OracleDown, match=words) as e:
        sandbox.read_answer(line)
    assert e.value.fatal and "\n" not in str(e.value)


def test_the_rules_own_error_is_one_inert_line():
    with pytest.raises(RuleError) as e:
        sandbox.read_answer(json.dumps({"e": "rule 'x': \x1b[31mred\nsecond"}).encode())
    assert str(e.value) == "rule 'x': \\x1b[31mred" and not getattr(e.value, "fatal", False)


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


# -- judged from outside: forgeries read NOT EXACT, and nothing the rule starts survives ----------------
ACCEPT_ALL = "class AcceptAll(RoundRule):\n    name = 'accept-all'\n    def accept(self, p, q, x):\n        return 1\n"
FORGERIES = {
    "the checker's check_rule replaced by one that checks a correct rule": (
        "import specsim.labs.checker as checker\n_real = checker.check_rule\n"
        "checker.check_rule = lambda rule, *a, **k: _real(RoundRule(), *a, **k)\n"),
    "checker.ValidatedRule replaced by a proxy around a correct rule": (
        "import specsim.labs.checker as checker\nimport specsim.labs.rule_proxy as proxy\n"
        "class _P(proxy.ValidatedRule):\n    def __init__(self, inner):\n        super().__init__(RoundRule())\n"
        "checker.ValidatedRule = proxy.ValidatedRule = _P\n"),
    "a well-formed EXACT report written to the job's descriptor with its nonce": (
        "import json\nf = sys._getframe()\nwhile f is not None:\n    job = f.f_locals.get('job')\n"
        "    if isinstance(job, dict) and 'nonce' in job:\n"
        "        body = json.dumps({'kind': 'result', 'result': {'rule': 'accept-all', 'exact': True}})\n"
        "        os.write(job['report_fd'], f\"SPECSIM-REPORT {job['nonce']}\\n{body}\\nSPECSIM-END {job['nonce']}\\n\""
        ".encode())\n        os._exit(0)\n    f = f.f_back\n"),
}


@pytest.mark.parametrize("case", list(FORGERIES))
def test_a_forged_verdict_reads_not_exact_with_the_smallest_counterexample(tmp_path, case):
    (tmp_path / "forged.py").write_text(HEADER + FORGERIES[case] + ACCEPT_ALL)
    code, out, err = specsim("check-rule", f"{tmp_path}/forged.py:AcceptAll", "--models", "6", "--gammas", "1-2",
                             "--json")
    data = json.loads(out)
    direct = checker.check_rule(pitfalls.AlwaysAccept(), gammas=(1, 2), models=6)
    assert code == 1 and not data["exact"] and data["rule"] == "accept-all"
    assert data["counterexample"]["total_variation"] == str(direct.counterexample.total_variation)
    assert data["counterexample"]["model"] == direct.to_dict()["counterexample"]["model"]


def test_a_verdict_sent_where_an_answer_belongs_is_no_verdict(tmp_path):
    (tmp_path / "forged.py").write_text(HEADER + (
        "f = sys._getframe()\nwhile f is not None:\n    job = f.f_locals.get('job')\n"
        "    if isinstance(job, dict) and 'answer_fd' in job:\n"
        "        os.write(job['answer_fd'], b'{\"exact\": true, \"verdict\": \"EXACT in all 387 checks\"}\\n')\n"
        "        os._exit(0)\n    f = f.f_back\n") + ACCEPT_ALL)
    code, out, err = specsim("check-rule", f"{tmp_path}/forged.py:AcceptAll", "--models", "6", "--gammas", "1")
    assert code == 2 and "EXACT" not in out and "no verdict" in err and err.count("\n") == 1


ESCAPER = """
def _escape(marker, delay):
    # a grandchild in a session of its own (double fork + setsid): it writes the marker after the check ended
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            time.sleep(delay)
            open(marker, "w").write("escaped")
            os._exit(0)
        os._exit(0)
    os.wait()
"""


def _never_appears(marker: Path, seconds: float) -> None:
    time.sleep(seconds)
    assert not marker.exists(), "a process the rule started outlived the check"


@pytest.mark.parametrize("ending", ["normal end", "the clock", "an exception"])
def test_nothing_the_rule_starts_survives_the_check(tmp_path, ending):
    marker = tmp_path / "marker"
    body = {"normal end": "        return RoundRule.accept(self, p, q, x)\n",
            "the clock": "        while True:\n            pass\n",
            "an exception": "        raise RuntimeError('no')\n"}[ending]
    (tmp_path / "rule.py").write_text(HEADER + ESCAPER + f"_escape({str(marker)!r}, 5)\n"
                                      "class R(RoundRule):\n    def accept(self, p, q, x):\n" + body)
    code, out, err = specsim("check-rule", f"{tmp_path}/rule.py:R", "--models", "0", "--gammas", "1",
                             "--timeout", "3", env=UNISOLATED)  # every ending comes before the marker's 5 s
    assert code == {"normal end": 0, "the clock": 2, "an exception": 2}[ending], (code, err)
    _never_appears(marker, 6)


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGHUP", "SIGINT"])
def test_a_signal_to_specsim_kills_the_rule_and_everything_it_started(tmp_path, sig):
    import signal
    marker, started = tmp_path / "marker", tmp_path / "started"
    (tmp_path / "rule.py").write_text(HEADER + ESCAPER + f"_escape({str(marker)!r}, 5)\n"
                                      "class R(RoundRule):\n    def accept(self, p, q, x):\n"
                                      f"        open({str(started)!r}, 'w').close()\n"
                                      "        while True:\n            pass\n")
    proc = subprocess.Popen([sys.executable, "-m", "specsim.cli", "check-rule", f"{tmp_path}/rule.py:R",
                             "--models", "0", "--gammas", "1"], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, **UNISOLATED})
    for _ in range(300):
        if started.exists():
            break
        time.sleep(0.05)
    proc.send_signal(getattr(signal, sig))
    out, err = proc.communicate(timeout=HANG)
    assert proc.returncode == 128 + getattr(signal, sig) and err == f"specsim check-rule: stopped by {sig}\n"
    _never_appears(marker, 6)
