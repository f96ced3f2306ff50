"""Check a rule from a file in a child process, with a clock and a memory limit; trust only a completed report.

``check_rule_file(path, class_name, ...)`` is ``checker.check_rule`` for a
rule you did not write (what ``specsim check-rule`` runs):

1. the whole check is bounded first (``checker.check_total_work``): nothing
   starts when it is too large;
2. a fresh Python (``specsim.labs.sandbox_child``) imports the file and runs the
   check under an address-space limit (``memory_mb``); its stdout and
   stderr are discarded;
3. the parent waits on a wall clock (``timeout`` seconds) and kills the
   child's whole process group when it runs past it;
4. a verdict comes only from a *completed* report: read from a pipe of its
   own (not stdout, so a rule that prints cannot forge it), bounded in size,
   tagged with a random nonce, closed by an end marker, read back strictly
   (``CheckResult.from_dict``), and followed by exit code 0. Any other
   ending (an exit without a report, a signal, the clock, a malformed or
   partial report) is a ``SandboxError`` naming it, in one line: no verdict.

What it does not do: the child still runs the user's code with the user's
permissions (it can read and write files, open sockets, start processes,
and a rule written to fool the checker can patch the engine it runs in).
The sandbox bounds time and memory and refuses to trust anything but a
completed report; it is a guard against accidents, not a security boundary.
"""
from __future__ import annotations

import json
import os
import select
import signal
import stat
import sys
import time
from pathlib import Path

from .sandbox_child import END, HEAD

DEFAULT_TIMEOUT, MAX_TIMEOUT = 300, 3600  # seconds of wall clock for the whole check
DEFAULT_MEMORY_MB, MIN_MEMORY_MB, MAX_MEMORY_MB = 2048, 128, 65536  # the child's address space
MAX_REPORT = 2**20  # bytes: a report is a few kB
_ROOT = str(Path(__file__).resolve().parents[2])  # the folder that holds specsim/: the child imports this copy
_BOOT = "import sys; sys.path.insert(0, sys.argv[1]); from specsim.labs.sandbox_child import main; main()"


class SandboxError(ValueError):
    """No verdict: the child ended without a completed report, or reported a bad file or rule; one line."""


def parse_target(spec: str) -> tuple:
    """``PATH.py:ClassName`` -> (path, class name), the file checked to exist (nothing imported)."""
    path, colon, name = spec.rpartition(":")
    if not colon or not path or not name:
        raise SandboxError(f"expected PATH.py:ClassName, got {spec[:80]!r}")
    check_path(path)
    return path, name


def check_path(path: str) -> None:
    if not path.endswith(".py"):
        raise SandboxError(f"{path[:200]!r} is not a .py file")
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        raise SandboxError(f"rule file {path[:200]!r} does not exist") from None
    if not stat.S_ISREG(info.st_mode):
        raise SandboxError(f"rule file {path[:200]!r} is not a regular file")


def check_limits(timeout: float, memory_mb: int) -> None:
    if not 0 < timeout <= MAX_TIMEOUT:
        raise SandboxError(f"timeout must be more than 0 and at most {MAX_TIMEOUT} seconds, got {timeout:g}")
    if not MIN_MEMORY_MB <= memory_mb <= MAX_MEMORY_MB:
        raise SandboxError(f"memory must be between {MIN_MEMORY_MB} and {MAX_MEMORY_MB} MB, got {memory_mb}")


def check_rule_file(path: str, class_name: str, gammas=(1, 2, 3), n_tokens: int = 2, models: int = 500,
                    seed: int = 0, timeout: float = DEFAULT_TIMEOUT, memory_mb: int = DEFAULT_MEMORY_MB,
                    max_work: int | None = None) -> checker.CheckResult:
    """``checker.check_rule`` on ``class_name()`` from the file at ``path``, run in a child process.

    Raises ``SandboxError`` (one line, no verdict) for a bad file or rule and
    for any ending but a completed report; ``bounds.WorkRefused`` before
    anything starts when the whole check is over ``max_work`` (steps, or a
    ``bounds.Budget``; default ``checker.TOTAL_WORK``).
    """
    import secrets
    import subprocess  # secrets, subprocess and the engine load when a check runs, not when the CLI starts

    from . import checker
    check_path(path)
    check_limits(timeout, memory_mb)
    gammas = sorted(set(int(g) for g in gammas))
    checker.check_total_work(models, gammas, n_tokens, max_work)  # step 1: before any process starts
    nonce = secrets.token_hex(16)
    steps = getattr(max_work, "steps", max_work)  # a bounds.Budget travels as its number of steps
    job = {"path": path, "class_name": class_name, "gammas": gammas, "tokens": n_tokens, "models": models,
           "seed": seed, "max_work": steps, "memory_mb": memory_mb, "cpu_seconds": int(timeout) + 2,
           "nonce": nonce}
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):  # few threads: little address space
        env.setdefault(var, "1")
    read_fd, write_fd = os.pipe()
    job["report_fd"] = write_fd
    try:  # step 2: the child in a session of its own, so the clock can kill all it started
        child = subprocess.Popen([sys.executable, "-c", _BOOT, _ROOT], stdin=subprocess.PIPE,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, pass_fds=(write_fd,),
                                 start_new_session=True, env=env)
    except BaseException:
        os.close(read_fd)
        raise
    finally:
        os.close(write_fd)  # the child holds the only writer now: end of file when it is gone
    try:
        try:
            child.stdin.write((json.dumps(job) + "\n").encode())
            child.stdin.close()
        except OSError:  # the child died before reading its job: no report, said below
            pass
        data, ending = _collect(child, read_fd, time.monotonic() + timeout)  # step 3
    finally:
        os.close(read_fd)
        if child.poll() is None:
            _kill(child)
    return _verdict(data, ending, child.returncode, nonce, timeout)


def _kill(child) -> None:
    try:
        os.killpg(child.pid, signal.SIGKILL)  # the group led by the child (not reaped yet: its id is still ours)
    except (ProcessLookupError, PermissionError):
        child.kill()
    child.wait()


def _collect(child, fd: int, deadline: float) -> tuple:
    """(bytes read from the report pipe, how it ended: "eof", "gone", "clock" or "large")."""
    import subprocess
    data = bytearray()
    poll = select.poll()
    poll.register(fd, select.POLLIN | select.POLLHUP)
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return bytes(data), "clock"
        if poll.poll(min(left, 0.2) * 1000):
            chunk = os.read(fd, 65536)
            if not chunk:
                break  # every writer closed
            data += chunk
            if len(data) > MAX_REPORT:
                return bytes(data), "large"
        elif child.poll() is not None:
            break  # the child is gone and nothing is left to read (a process it started may hold the pipe)
    try:
        child.wait(timeout=max(deadline - time.monotonic(), 0.001))
    except subprocess.TimeoutExpired:
        return bytes(data), "clock"
    return bytes(data), "gone"


def _verdict(data: bytes, ending: str, code: int, nonce: str, timeout: float) -> checker.CheckResult:
    """The CheckResult of a completed report, else a one-line SandboxError naming how the check ended."""
    from . import checker
    if ending == "clock":
        raise SandboxError(f"the check ran past its {timeout:g} s clock and was killed (the rule loops, sleeps "
                           "or is slow: raise --timeout or lower --models); no verdict")
    if ending == "large":
        raise SandboxError(f"the child wrote over {MAX_REPORT:,} bytes on the report pipe: not a report; no verdict")
    head, end = f"{HEAD} {nonce}\n".encode(), f"\n{END} {nonce}\n".encode()
    if not data:
        raise SandboxError(_no_report(code))
    if not (data.startswith(head) and data.endswith(end)) or data.count(b"\n") != 3:
        raise SandboxError(f"the child's report is incomplete or not ours (exit code {code}); no verdict")
    if code != 0:
        raise SandboxError(f"the child exited with code {code} after its report; no verdict")
    try:
        body = json.loads(data[len(head):-len(end)])
        if body["kind"] == "error":
            raise SandboxError(one_line(body["message"]))
        if body["kind"] != "result":
            raise ValueError("unknown kind")
        return checker.CheckResult.from_dict(body["result"])
    except SandboxError:
        raise
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
        raise SandboxError("the child's report does not read back as a check result; no verdict") from None


def _no_report(code: int) -> str:
    if code == 0:
        return ("the rule ended the check without a report (the child exited with code 0: "
                "os._exit or an exit the checker could not catch); no verdict")
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        why = {"SIGXCPU": " (over its CPU time)", "SIGKILL": " (out of memory?)",
               "SIGSEGV": " (a crash, maybe out of memory)"}.get(name, "")
        return f"the child was killed by {name}{why} before its report; no verdict"
    return f"the check ended without a report (the child exited with code {code}); no verdict"


def one_line(text) -> str:
    """A message from the child as one printable line of at most 500 characters."""
    text = str(text).splitlines()[0] if str(text) else "(empty message)"
    text = "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)
    return text[:500]
