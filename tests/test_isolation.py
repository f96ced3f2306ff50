"""The judge out of reach: judged code (a rule for check-rule, an engine for audit) cannot see, signal, trace
or write to the judge, cannot start processes, and dies with it; every rule question is asked twice.

Each attack is one the hostile review of the sandbox found working before isolation: writing the judge's
memory through /proc/<judge>/mem, ptrace, SIGSTOP, writing to its terminal through /proc/<judge>/fd/1,
planting a module where the judge imports later, a double fork that outlives the judge, answers that change
when asked again. The attacking code reports what it reached in its rule's *name* (the one thing it can
send), so a test reads exactly which attack got through.

The tests that need the kernel's isolation are skipped, with the reason, where this machine cannot isolate
(not Linux, user namespaces off, a container that forbids mounting proc): the probe runs the real
``isolation.enter`` in a child. The unisolated path (``SPECSIM_ISOLATION=off``) is tested everywhere.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from fractions import Fraction
from fractions import Fraction as F

from specsim.labs import isolation, reaper, sandbox

ROOT = Path(__file__).resolve().parent.parent
HANG = 120  # seconds: only a hang reaches this
UNISOLATED = {"SPECSIM_ISOLATION": "off"}


def _probe() -> str | None:
    """Why this machine cannot isolate a child (one line), or None: the real enter() in a child."""
    why = isolation.why_not()
    if why:
        return why
    code = ("import json, sys; sys.path.insert(0, sys.argv[1]); from specsim.labs import isolation\n"
            "r = isolation.enter()\nprint(json.dumps(r), flush=True)")
    r = subprocess.run([sys.executable, "-c", code, str(ROOT)], capture_output=True, text=True, timeout=HANG)
    try:
        said = json.loads(r.stdout.splitlines()[0])
    except (ValueError, IndexError):
        return f"the isolation probe failed: {r.stderr.strip().splitlines()[-1:]}"
    return None if said.get("isolated") else said.get("why", "not isolated")


WHY_NOT = _probe()
needs_isolation = pytest.mark.skipif(WHY_NOT is not None, reason=f"this machine cannot isolate: {WHY_NOT}")


def specsim(*argv, env=None, timeout=HANG):
    r = subprocess.run([sys.executable, "-m", "specsim.cli", *map(str, argv)], capture_output=True, text=True,
                       timeout=timeout, cwd=ROOT, env={**os.environ, **(env or {})})
    return r.returncode, r.stdout, r.stderr


ATTACKS = """
import ctypes, glob, os, signal, socket
from fractions import Fraction
from specsim.rule import RoundRule

JUDGE, PLANT, PORT, PTRACE = {judge}, {plant!r}, {port}, {ptrace}
reached = []


def attempt(name, act):
    try:
        if act() is not False:
            reached.append(name)
    except BaseException:
        pass


def ptrace():
    return ctypes.CDLL(None, use_errno=True).ptrace(16, JUDGE, 0, 0) == 0  # PTRACE_ATTACH


def fork():
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    return True


attempt("signal", lambda: os.kill(JUDGE, 0))
attempt("proc", lambda: open(f"/proc/{{JUDGE}}/status").read())
attempt("mem", lambda: open(f"/proc/{{JUDGE}}/mem", "r+b"))
attempt("fd", lambda: open(f"/proc/{{JUDGE}}/fd/1", "w").write(""))
if PTRACE:  # never in the unisolated control: an attach there would stop the test process itself
    attempt("ptrace", ptrace)
attempt("plant", lambda: open(PLANT, "w").write("raise SystemExit"))
attempt("fork", fork)
attempt("net", lambda: socket.create_connection(("127.0.0.1", PORT), timeout=2).close())
attempt("tty", lambda: open("/dev/tty", "w") and False or bool(glob.glob("/dev/pts/*")) or
        open("/dev/tty", "w"))
attempt("ps", lambda: len([d for d in os.listdir("/proc") if d.isdigit()]) > 1)


class R(RoundRule):
    name = "reached: " + (", ".join(reached) or "nothing")

    def accept(self, p, q, x):  # always keeps the draft: lossy; a forged verdict would read exact
        return Fraction(1)
"""


@pytest.fixture
def plant():
    """A path in a folder outside /tmp that the judge could import from (the child's /tmp is its own)."""
    import shutil
    import tempfile
    folder = tempfile.mkdtemp(prefix="specsim-plant-", dir="/var/tmp" if os.path.isdir("/var/tmp") else ROOT)
    yield Path(folder) / "planted_module.py"
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def listener():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    yield s.getsockname()[1]
    s.close()


@needs_isolation
def test_an_isolated_rule_reaches_nothing_of_the_judge_and_reads_not_exact(tmp_path, listener, plant):
    path = tmp_path / "attack.py"
    path.write_text(ATTACKS.format(judge=os.getpid(), plant=str(plant), port=listener, ptrace=True))
    r = sandbox.check_rule_file(str(path), "R", gammas=(1,), n_tokens=1, models=2)
    assert r.rule == "reached: nothing"
    assert r.isolation == {"isolated": True, "why": ""}
    assert not r.exact and r.counterexample is not None  # always accepting is lossy: nothing forged it
    assert not plant.exists()


def test_unisolated_the_same_attacks_reach_the_judge_so_the_output_says_so(tmp_path, listener, plant,
                                                                            monkeypatch):
    """The control: without isolation the attacks work (so the test above measures something), and the
    result says the verdict was not isolated. Only harmless attacks: the judge is this test process."""
    monkeypatch.setenv("SPECSIM_ISOLATION", "off")
    path = tmp_path / "attack.py"
    path.write_text(ATTACKS.format(judge=os.getpid(), plant=str(plant), port=listener, ptrace=False))
    r = sandbox.check_rule_file(str(path), "R", gammas=(1,), n_tokens=1, models=2)
    assert {"signal", "proc", "fd", "plant", "fork", "net", "ps"} <= set(r.rule.partition(": ")[2].split(", "))
    assert plant.exists()
    assert r.isolation == {"isolated": False, "why": "turned off by SPECSIM_ISOLATION=off"}
    assert not r.exact


def test_the_cli_says_what_the_verdict_is_worth_and_require_isolation_refuses(tmp_path):
    path = tmp_path / "ok.py"
    path.write_text("from specsim.rule import RoundRule\nclass R(RoundRule):\n    pass\n")
    code, out, err = specsim("check-rule", f"{path}:R", "--models", "2", "--gammas", "1", env=UNISOLATED)
    assert code == 0 and "NOT isolated (turned off by SPECSIM_ISOLATION=off)" in out
    code, out, err = specsim("check-rule", f"{path}:R", "--models", "2", "--gammas", "1", "--require-isolation",
                             env=UNISOLATED)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "isolation is required and not available here: turned off by SPECSIM_ISOLATION=off" in err
    if WHY_NOT is None:
        code, out, err = specsim("check-rule", f"{path}:R", "--models", "2", "--gammas", "1",
                                 "--require-isolation", "--json")
        assert code == 0 and json.loads(out)["isolation"] == {"isolated": True, "why": ""}


@needs_isolation
def test_killing_the_judge_even_with_sigkill_kills_the_isolated_tree(tmp_path):
    path = tmp_path / "loop.py"
    path.write_text("from specsim.rule import RoundRule\nclass R(RoundRule):\n"
                    "    def accept(self, p, q, x):\n        while True:\n            pass\n")
    judge = subprocess.Popen([sys.executable, "-m", "specsim.cli", "check-rule", f"{path}:R", "--models", "0",
                              "--gammas", "1"], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        tree = _wait_for(lambda: _isolated_tree(judge.pid), "the judge's isolated child")
        judge.send_signal(signal.SIGKILL)
        judge.wait(timeout=HANG)
        _wait_for(lambda: not any(_alive(pid) for pid in tree) or None, "the tree to die with its judge")
    finally:
        if judge.poll() is None:
            judge.kill()


def _isolated_tree(judge_pid: int):
    """The judge's descendants once one of them is PID 1 of a namespace of its own (holder and child)."""
    found = reaper.descendants(judge_pid)
    mine = os.readlink("/proc/self/ns/pid")
    for pid in found:
        try:
            if os.readlink(f"/proc/{pid}/ns/pid") != mine:
                return found
        except OSError:
            continue
    return None


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state != "Z"


def _wait_for(condition, what: str):
    """Poll ``condition`` until it returns something truthy: the event, with a hang's bound only."""
    import time
    end = time.monotonic() + HANG
    while time.monotonic() < end:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    pytest.fail(f"waited {HANG} s for {what}")


CHANGING = {
    "lossy on repeats": """
seen = set()
class R(RoundRule):
    def accept(self, p, q, x):
        key = (tuple(p), tuple(q), x)
        if key in seen:
            return Fraction(1)
        seen.add(key)
        return RoundRule.accept(self, p, q, x)
""",
    "lossy 0.05 s after import": """
import time
start = time.monotonic()
class R(RoundRule):  # thousands of answers take well over 0.05 s: the later ones, and the repeats, are lossy
    def accept(self, p, q, x):
        return RoundRule.accept(self, p, q, x) if time.monotonic() - start < 0.05 else Fraction(1)
""",
    "lossy after 300 answers": """
count = [0]
class R(RoundRule):
    def accept(self, p, q, x):
        count[0] += 1
        return RoundRule.accept(self, p, q, x) if count[0] < 300 else Fraction(1)
""",
}


@pytest.mark.parametrize("case", list(CHANGING))
def test_a_rule_whose_answers_change_when_asked_again_reads_not_exact(tmp_path, case):
    path = tmp_path / "changing.py"
    path.write_text("from fractions import Fraction\nfrom specsim.rule import RoundRule\n" + CHANGING[case])
    code, out, err = specsim("check-rule", f"{path}:R", "--models", "20", "--gammas", "1,2")
    assert code == 1, (out, err)
    if case == "lossy 0.05 s after import":  # new questions after the switch may show a counter-example first
        assert "NOT EXACT" in out
        return
    assert "NOT EXACT: the rule answered the same question differently when asked again: accept(p = (" in out
    assert "was first" in out and ", then 1" in out


class _Oracle:
    """Answers like the correct rule and counts every question; ``lie_from`` on, repeats are answered 1."""

    def __init__(self, lie_from=None):
        self.asked, self.lie_from = [], lie_from

    def ask(self, method, p=(), q=(), x=None):
        from specsim.rule import RoundRule
        key = (method, tuple(p), tuple(q), x)
        repeat = key in self.asked
        self.asked.append(key)
        if self.lie_from is not None and repeat and len(self.asked) >= self.lie_from:
            return Fraction(1)
        return RoundRule.accept(RoundRule(), p, q, x)


def test_every_question_is_asked_again_in_another_order():
    oracle = _Oracle()
    rule = sandbox.OracleRule(oracle, "r", seed=0)
    rows = [((F(k, 10), 1 - F(k, 10)), (F(10 - k, 10), F(k, 10))) for k in range(1, 10)]
    for _ in range(5):
        for p, q in rows:
            assert rule.accept(p, q, 0) == min(1, p[0] / q[0])
    during = len(oracle.asked)
    assert rule.recheck() is None
    firsts = oracle.asked[:len(rows)]
    again = oracle.asked[during:during + len(rows)]
    assert sorted(again) == sorted(firsts) and again != firsts  # each asked again, in a shuffled order
    assert len(oracle.asked) >= 2 * len(rows)


def test_a_changed_answer_is_reported_with_its_question():
    rule = sandbox.OracleRule(_Oracle(lie_from=1), "r", seed=0)
    p, q = (F(1, 2), F(1, 2)), (F(3, 4), F(1, 4))
    assert rule.accept(p, q, 0) == F(2, 3)
    key, first, later = rule.recheck()
    assert (key, first, later) == (("accept", p, q, 0), F(2, 3), F(1))
    assert sandbox.question_text(key) == "accept(p = (1/2, 1/2), q = (3/4, 1/4), x = 0)"


@pytest.fixture
def modules_at_spawn(monkeypatch) -> dict:
    """{"at start": the modules loaded when the judge started its child}, filled by a spy on the spawn."""
    loaded = {}
    spawn = reaper.Reaper.spawn

    def spying(self, argv, **kwargs):
        loaded["at start"] = set(sys.modules)
        return spawn(self, argv, **kwargs)

    monkeypatch.setattr(reaper.Reaper, "spawn", spying)
    return loaded


def test_nothing_the_verdict_needs_is_imported_after_the_child_starts(tmp_path, modules_at_spawn):
    """Everything the checker, the engines and the shrinker use is loaded before the child exists: a child
    that could write files (the unisolated case) still cannot plant what the judge imports later."""
    path = tmp_path / "lossy.py"
    path.write_text("from fractions import Fraction\nfrom specsim.rule import RoundRule\n"
                    "class R(RoundRule):\n    def accept(self, p, q, x):\n        return Fraction(1)\n")
    r = sandbox.check_rule_file(str(path), "R", gammas=(1, 2), n_tokens=2, models=5)
    assert not r.exact and r.counterexample is not None  # the shrinker ran
    assert set(sys.modules) - modules_at_spawn["at start"] == set()


@pytest.mark.parametrize("kind", ["directory", "fifo", "device"])
def test_a_rule_file_that_is_not_a_file_is_named_for_what_it_is(tmp_path, kind):
    path = tmp_path / "rule.py"
    if kind == "directory":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/null")
    code, out, err = specsim("check-rule", f"{path}:R")
    words = {"directory": "is a directory", "fifo": "is a FIFO (named pipe)", "device": "is a character device"}
    assert code == 2 and err.count("\n") == 1 and words[kind] in err, err


def test_control_characters_in_a_path_are_shown_escaped(tmp_path):
    path = tmp_path / "rule\x1b]0;owned\x07.py"
    path.write_text("from specsim.rule import RoundRule\nclass R(RoundRule):\n    pass\n")
    code, out, err = specsim("check-rule", f"{path}:R", "--models", "1", "--gammas", "1")
    assert code == 0, err
    assert "\x1b" not in out and "\x07" not in out and "rule\\x1b]0;owned\\x07.py:R" in out
    code, out, err = specsim("check-rule", f"{tmp_path}/none\x1b[2J.py:R")
    assert code == 2 and "\x1b" not in err and "none\\x1b[2J.py" in err


@needs_isolation
@pytest.mark.parametrize("memory", [256])
def test_the_memory_limit_holds_for_the_whole_tree(tmp_path, memory):
    """Forking children that each hold memory (three of them held 633 MB under --memory 256 before): no
    new process can start, so the one process's limit is the tree's."""
    path = tmp_path / "forks.py"
    path.write_text("""import os
from specsim.rule import RoundRule
held = []
for _ in range(3):
    try:
        if os.fork() == 0:
            held.append(bytearray(200 * 2**20))
            os._exit(0)
        started = "a child started"
        break
    except OSError as e:
        started = f"fork refused ({e.strerror})"
class R(RoundRule):
    name = started
""")
    r = sandbox.check_rule_file(str(path), "R", gammas=(1,), n_tokens=1, models=1, memory_mb=memory)
    assert r.rule == "fork refused (Operation not permitted)" and r.exact


def test_the_process_filter_is_well_formed():
    for machine in isolation.SYSCALLS:
        program = isolation.seccomp_program(machine)
        assert len(program) % 8 == 0 and len(program) // 8 < 4096  # whole instructions, under BPF's limit
        assert program.endswith(isolation._op(isolation.RET, isolation.RET_ALLOW))


# -- the audit's engine ------------------------------------------------------------------------------------
ENGINE = """
import os
from specsim.gpt.audit_engines import Textbook
PLANT = {plant!r}
try:
    os.makedirs(os.path.join(PLANT, "scipy"), exist_ok=True)  # a patched scipy where the judge would import
    open(os.path.join(PLANT, "scipy", "__init__.py"), "w").write("raise SystemExit")
except OSError:
    pass
class One(Textbook):  # always the same token: not the target
    def generate(self, ids, n, generator):
        return [ids[-1]] * n
class Floats(Textbook):  # an id plus 0.9: converting with int() in the child would hide it
    def generate(self, ids, n, generator):
        return [t + 0.9 for t in super().generate(ids, n, generator)]
"""


def _audit(path, cls, *extra, env=None):
    code, out, err = specsim("audit", "--engine", f"{path}:{cls}", "--prompt", "def ", "--tokens", "1",
                             "--samples", "40", "--json", *extra, env=env)
    return code, (json.loads(out) if out else None), err


def test_an_audited_engine_cannot_plant_what_the_judge_imports_and_its_outputs_are_checked_here(tmp_path, plant):
    path = tmp_path / "engine.py"
    path.write_text(ENGINE.format(plant=str(plant.parent)))
    env = {"PYTHONPATH": str(plant.parent)} | ({} if WHY_NOT is None else UNISOLATED)
    code, r, err = _audit(path, "One", env=env)
    assert code == 1 and r["verdict"] == "not the target", err
    assert r["isolation"]["isolated"] is (WHY_NOT is None)
    if WHY_NOT is None:
        assert not (plant.parent / "scipy").exists()
    code, r, err = _audit(path, "Floats", env=env)
    assert code == 2 and r is None and "not 1 token id(s) of the vocabulary" in err and err.count("\n") == 1


def test_the_audit_loads_everything_its_verdict_needs_before_the_engine_starts(modules_at_spawn):
    from specsim.gpt import audit
    r = audit.audit("specsim", "def ", tokens=1, samples=30)
    assert r["verdict"] in ("consistent with the target", "not the target")
    assert set(sys.modules) - modules_at_spawn["at start"] == set()


@needs_isolation
def test_the_audited_engine_has_one_memory_limit(tmp_path):
    path = tmp_path / "hog.py"
    path.write_text("from specsim.gpt.audit_engines import Textbook\nclass Hog(Textbook):\n"
                    "    def generate(self, ids, n, generator):\n        self.hog = bytearray(3 * 2**30)\n"
                    "        return super().generate(ids, n, generator)\n")
    code, r, err = _audit(path, "Hog", "--memory", "2048")
    assert code == 2 and "MemoryError" in err and err.count("\n") == 1, err


@needs_isolation
def test_a_kernel_that_refuses_a_later_step_leaves_the_child_unisolated_and_untouched():
    """A trial run in a throwaway fork tries every step first: a refusal at the last one (here the filter,
    refused on purpose) leaves the child in the judge's own namespaces, running unisolated, and says why."""
    code = ("import json, os, sys; sys.path.insert(0, sys.argv[1]); from specsim.labs import isolation\n"
            "def refused():\n    raise isolation.IsolationError('installing the process filter (seccomp) failed')\n"
            "isolation._filter = refused\n"
            "r = isolation.enter()\n"
            "print(json.dumps([r, os.readlink('/proc/self/ns/user'), os.readlink('/proc/self/ns/mnt')]))")
    r = subprocess.run([sys.executable, "-c", code, str(ROOT)], capture_output=True, text=True, timeout=HANG)
    said, user, mnt = json.loads(r.stdout)
    assert said == {"isolated": False, "why": "installing the process filter (seccomp) failed"}
    assert (user, mnt) == (os.readlink("/proc/self/ns/user"), os.readlink("/proc/self/ns/mnt"))
