"""Judge a rule from a file you did not write: it answers questions from a child process; the verdict is ours.

``check_rule_file(path, class_name, ...)`` is ``checker.check_rule`` for a
rule this process never imports (what ``specsim check-rule`` runs):

1. the whole check is bounded first (``checker.check_total_work``): nothing
   starts when it is too large;
2. a fresh Python (``specsim.labs.sandbox_child``) imports the file under an
   address-space limit, its stdout and stderr discarded, and from then on
   only *answers questions*: the rule's row or number for given p, q and x,
   one JSON line each, over a pipe of its own;
3. this process runs the exact engine and the shrinker itself, on an
   ``OracleRule`` whose four methods ask the child. Every answer is read
   strictly (one line, bounded, numbers as "n/d" strings, nothing else) and
   checked again (``ValidatedRule``: rows of the right length, non-negative,
   summing to 1; an acceptance in [0, 1]). The same question is asked once:
   a rule is judged as the function its first answers define;
4. each answer has a clock (``question_seconds``) and the whole check one
   more (``timeout``, by default set from the work estimate: a rule that loops
   is stopped in seconds, not minutes). A child that ends, goes silent or
   sends anything malformed ends the check with one line and no verdict;
5. ``reaper.Reaper`` kills the child and everything it started, however it
   detached, when the check ends for any reason (see that module for what
   this covers on Linux and elsewhere).

Nothing the child can send is a verdict: patching the checker, the proxy or
the report inside the child changes nothing here, and the only thing a
rule's code controls is what the rule answers. The child still runs the
user's code with the user's permissions (files, sockets); the sandbox
bounds time and memory and judges from outside, it is not a jail.
"""
from __future__ import annotations

import json
import os
import re
import select
import signal
import stat
import sys
import time
from fractions import Fraction
from pathlib import Path

from ..rule import RoundRule
from .rule_proxy import RuleError

MAX_TIMEOUT = 3600  # seconds of wall clock for the whole check
DEFAULT_MEMORY_MB, MIN_MEMORY_MB, MAX_MEMORY_MB = 2048, 128, 65536  # the child's address space
QUESTION_SECONDS = 5.0  # one answer (a rule's method takes microseconds when it is not stuck)
START_SECONDS = 30.0  # importing the file and building the class
SECONDS_PER_STEP = 1e-6  # an honest check's pace through the oracle (the default check: 2.2e7 steps in ~23 s)
MAX_ANSWER = 2**18  # bytes of one answer line
NUMBER = re.compile(r"-?\d{1,4000}(/\d{1,4000})?")
_ROOT = str(Path(__file__).resolve().parents[2])  # the folder that holds specsim/: the child imports this copy
_BOOT = "import sys; sys.path.insert(0, sys.argv[1]); from specsim.labs.sandbox_child import main; main()"


class SandboxError(ValueError):
    """No verdict: the file or rule is unusable, or the child ended, went silent or misbehaved; one line."""


class OracleDown(RuleError):
    """The child cannot answer any more (gone, out of time, malformed): the check ends without a verdict."""
    fatal = True  # the shrinker must not take it for one candidate's misbehaviour


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


def check_limits(timeout: float | None, memory_mb: int) -> None:
    if timeout is not None and not 0 < timeout <= MAX_TIMEOUT:
        raise SandboxError(f"timeout must be more than 0 and at most {MAX_TIMEOUT} seconds, got {timeout:g}")
    if not MIN_MEMORY_MB <= memory_mb <= MAX_MEMORY_MB:
        raise SandboxError(f"memory must be between {MIN_MEMORY_MB} and {MAX_MEMORY_MB} MB, got {memory_mb}")


def auto_timeout(work: float) -> float:
    """The whole check's default clock: 30 s plus four times what ``work`` steps take an honest rule at
    ``SECONDS_PER_STEP``, at most ``MAX_TIMEOUT`` (the default check: about two minutes). A rule that loops
    in one method is stopped sooner, by its answer's own clock.

    >>> auto_timeout(0), auto_timeout(2.5e7)
    (30.0, 130.0)
    """
    return min(MAX_TIMEOUT, 30.0 + 4 * work * SECONDS_PER_STEP)


def one_line(text) -> str:
    """A message from the child as one printable line of at most 500 characters."""
    text = str(text).splitlines()[0] if str(text) else "(empty message)"
    text = "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)
    return text[:500]


def read_answer(line: bytes):
    """One answer line -> its value (a Fraction, a tuple of Fractions or None); RuleError for the rule's own
    error; OracleDown for anything that is not an answer."""
    try:
        body = json.loads(line)
    except (ValueError, RecursionError):
        body = None
    if not isinstance(body, dict) or len(body) != 1:
        raise OracleDown("the rule's process sent something that is not an answer; no verdict")
    (key, value), = body.items()
    if key == "e" and isinstance(value, str):
        raise RuleError(one_line(value))
    if key != "v":
        raise OracleDown("the rule's process sent something that is not an answer; no verdict")
    if value is None:
        return None
    if isinstance(value, str) and NUMBER.fullmatch(value):
        return Fraction(value)
    if isinstance(value, list) and len(value) <= 4096 and all(isinstance(x, str) and NUMBER.fullmatch(x)
                                                              for x in value):
        return tuple(Fraction(x) for x in value)
    raise OracleDown("the rule's process sent a malformed number; no verdict")


class Oracle:
    """The child that imported the rule, asked one question at a time under two clocks."""

    def __init__(self, reaper, path: str, class_name: str, memory_mb: int, deadline: float,
                 question_seconds: float = QUESTION_SECONDS, timeout: float = 0.0):
        import subprocess
        self.deadline, self.question_seconds, self.timeout = deadline, question_seconds, timeout
        ask_r, self.ask_w = os.pipe()
        self.answer_r, answer_w = os.pipe()
        job = {"path": path, "class_name": class_name, "memory_mb": memory_mb, "ask_fd": ask_r,
               "answer_fd": answer_w, "cpu_seconds": int(max(deadline - time.monotonic(), 1)) + 2}
        env = dict(os.environ)
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):  # few threads, little memory
            env.setdefault(var, "1")
        try:
            self.child = reaper.spawn([sys.executable, "-c", _BOOT, _ROOT], stdin=subprocess.PIPE,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                      pass_fds=(ask_r, answer_w), env=env)
        finally:
            os.close(ask_r)
            os.close(answer_w)  # the child holds the only writer: end of file when it is gone
        try:
            self.child.stdin.write((json.dumps(job) + "\n").encode())
            self.child.stdin.close()
        except OSError:  # the child died before reading its job: said when the first answer is missing
            pass
        self.buffer = b""

    def close(self) -> None:
        for fd in (self.ask_w, self.answer_r):
            try:
                os.close(fd)
            except OSError:
                pass

    def _line(self, what: str, seconds: float) -> bytes:
        """The next answer line, within ``seconds`` and the whole check's deadline."""
        clock_end = min(time.monotonic() + seconds, self.deadline)
        while b"\n" not in self.buffer:
            left = clock_end - time.monotonic()
            if left <= 0:
                whole = clock_end >= self.deadline
                raise OracleDown(f"the check ran past its {self.timeout:g} s clock and was killed (the rule loops, "
                                 "sleeps or is slow: raise --timeout or lower --models); no verdict" if whole else
                                 f"the rule did not answer {what} within its {seconds:g} s clock and was killed "
                                 "(it loops or sleeps); no verdict")
            ready, _, _ = select.select([self.answer_r], [], [], min(left, 0.5))
            if not ready:
                continue
            chunk = os.read(self.answer_r, 65536)
            if not chunk:
                raise OracleDown(self._ended(what))
            self.buffer += chunk
            if len(self.buffer) > MAX_ANSWER and b"\n" not in self.buffer[:MAX_ANSWER]:
                raise OracleDown(f"the rule's process sent over {MAX_ANSWER:,} bytes for one answer; no verdict")
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line

    def _ended(self, what: str) -> str:
        try:
            code = self.child.wait(timeout=2)
        except Exception:  # noqa: BLE001 (still running with its answer pipe closed)
            return f"the rule's process closed its answers while asked {what}; no verdict"
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            why = {"SIGXCPU": " (over its CPU time)", "SIGKILL": " (out of memory?)",
                   "SIGSEGV": " (a crash, maybe out of memory)"}.get(name, "")
            return f"the rule's process was killed by {name}{why} while asked {what}; no verdict"
        return f"the rule's process ended (exit code {code}) while asked {what}; no verdict"

    def start(self) -> str:
        """The rule's name, once the child imported the file (SandboxError: the file or rule is unusable)."""
        line = self._line("to start", START_SECONDS)
        try:
            body = json.loads(line)
        except (ValueError, RecursionError):
            raise OracleDown("the rule's process sent something that is not an answer; no verdict") from None
        if isinstance(body, dict) and set(body) == {"e"} and isinstance(body["e"], str):
            raise SandboxError(one_line(body["e"]))
        if not (isinstance(body, dict) and set(body) == {"name"} and isinstance(body["name"], str)):
            raise OracleDown("the rule's process did not start with its name; no verdict")
        return one_line(body["name"])[:80]

    def ask(self, method: str, p=(), q=(), x=None):
        question = {"m": method, "p": [f"{v.numerator}/{v.denominator}" for v in map(Fraction, p)],
                    "q": [f"{v.numerator}/{v.denominator}" for v in map(Fraction, q)], "x": x}
        try:
            os.write(self.ask_w, (json.dumps(question) + "\n").encode())
        except OSError:
            raise OracleDown(self._ended(f"{method}()")) from None
        return read_answer(self._line(f"{method}()", self.question_seconds))


class OracleRule(RoundRule):
    """A ``RoundRule`` whose methods ask the child; each distinct question once (memoized)."""

    def __init__(self, oracle: Oracle, name: str):
        self.oracle, self.name, self.memo = oracle, name, {}

    def _ask(self, method, p=(), q=(), x=None):
        key = (method, tuple(p), tuple(q), x)
        if key not in self.memo:
            self.memo[key] = self.oracle.ask(method, p, q, x)
        return self.memo[key]

    def draft_row(self, q):
        return self._ask("draft_row", q=q)

    def accept(self, p, q, x):
        return self._ask("accept", p, q, int(x))

    def replacement(self, p, q):
        return self._ask("replacement", p, q)

    def bonus(self, p):
        return self._ask("bonus", p)


def check_rule_file(path: str, class_name: str, gammas=(1, 2, 3), n_tokens: int = 2, models: int = 500,
                    seed: int = 0, timeout: float | None = None, memory_mb: int = DEFAULT_MEMORY_MB,
                    max_work: int | None = None, question_seconds: float = QUESTION_SECONDS):
    """``checker.check_rule`` on ``class_name()`` from the file at ``path``, asked from a child process.

    Raises ``SandboxError`` (one line, no verdict) for a bad file or rule and
    for a child that ends, stalls or misbehaves; ``bounds.WorkRefused`` before
    anything starts when the whole check is over ``max_work`` (steps, or a
    ``bounds.Budget``; default ``checker.TOTAL_WORK``). ``timeout``: the whole
    check's clock in seconds (None: ``auto_timeout`` of its work estimate).
    """
    from . import checker
    from .reaper import Reaper
    check_path(path)
    check_limits(timeout, memory_mb)
    gammas = sorted(set(int(g) for g in gammas))
    checker.check_total_work(models, gammas, n_tokens, max_work)  # step 1: before any process starts
    if timeout is None:
        timeout = auto_timeout(checker.total_work(models, gammas, n_tokens))
    deadline = time.monotonic() + timeout
    with Reaper() as reaper:
        oracle = Oracle(reaper, path, class_name, memory_mb, deadline, question_seconds, timeout)
        try:
            name = oracle.start()
            return checker.check_rule(OracleRule(oracle, name), gammas, n_tokens, models, seed, max_work=max_work)
        except OracleDown as e:
            raise SandboxError(str(e)) from None
        except RuleError as e:
            raise SandboxError(one_line(str(e))) from None
        finally:
            oracle.close()
