"""Judge a rule from a file you did not write: it answers questions from an isolated child; the verdict is ours.

``check_rule_file(path, class_name, ...)`` is ``checker.check_rule`` for a
rule this process never imports (what ``specsim check-rule`` runs):

1. the whole check is bounded first (``checker.check_total_work``), and
   everything the verdict needs (the checker, the engines, the shrinker) is
   imported before any child exists: nothing the child could write is read
   afterwards;
2. a fresh Python (``specsim.labs.sandbox_child``) isolates itself by the
   operating system before it reads the file (``specsim.labs.isolation``:
   its own user, PID, mount, network and IPC namespaces, read-only files
   but a private temporary folder, no capabilities, no new processes, one memory limit),
   which this process checks from outside (``isolation.verify``); this
   process is non-dumpable meanwhile (no ptrace, no /proc/<pid>/mem);
3. the child imports the file, its stdout and stderr discarded, and from
   then on only *answers questions*: the rule's row or number for given p,
   q and x, one JSON line each, over a pipe of its own;
4. this process runs the exact engine and the shrinker itself, on an
   ``OracleRule`` whose four methods ask the child. Every answer is read
   strictly (one line, bounded, numbers as "n/d" strings, nothing else) and
   checked again (``ValidatedRule``: rows of the right length, non-negative,
   summing to 1; an acceptance in [0, 1]);
5. **every question is asked twice**: a random sample again during the
   check, and all of them again at its end in a random order (a sample a
   third time): a rule whose answer changes with order, count or time reads
   NOT EXACT, naming the question that changed;
6. each answer has a clock (``question_seconds``), importing the file one
   (``START_SECONDS``) and the whole check one more (``timeout``, by default
   set from the work estimate). A child that ends, goes silent or sends
   anything malformed ends the check with one line and no verdict;
7. ``reaper.Reaper`` kills the child and everything it started when the
   check ends for any reason; in the isolated case the PID namespace dies
   with its first process, which dies with this one, even on SIGKILL.

Nothing the child can send is a verdict. Where the machine cannot isolate
(another OS, user namespaces disabled), the child runs as before, bounded
only by the clocks and limits, and the result says so
(``CheckResult.isolation``); ``require_isolation=True`` refuses instead.
What an isolated verdict does and does not guarantee: ``isolation``'s
docstring.
"""
from __future__ import annotations

import json
import os
import random
import re
import select
import signal
import stat
import sys
import time
from fractions import Fraction
from pathlib import Path

from ..rule import RoundRule
from . import isolation
from .rule_proxy import RuleError

MAX_TIMEOUT = 3600  # seconds of wall clock for the whole check
DEFAULT_MEMORY_MB, MIN_MEMORY_MB, MAX_MEMORY_MB = 2048, 128, 65536  # the child's address space
QUESTION_SECONDS = 5.0  # one answer (a rule's method takes microseconds when it is not stuck)
START_SECONDS = 30.0  # importing the file and building the class
SECONDS_PER_STEP = 1e-6  # an honest check's pace through the oracle (the default check: 2.2e7 steps in ~23 s)
MAX_ANSWER = 2**18  # bytes of one answer line
SPOT = 1 / 16  # share of repeated questions asked the child again during the check
THIRD = 200  # questions asked a third time at the very end
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


FILE_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
              (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def shown(path: str) -> str:
    r"""A path for a message: quoted, control characters (ESC included) escaped, at most 200 characters.

    >>> shown("rule\x1b]0;x\x07.py")
    "'rule\\x1b]0;x\\x07.py'"
    """
    return repr(str(path)[:200])


def file_kind(path: str) -> str | None:
    """What ``path`` is when it is not a regular file ("a FIFO (named pipe)", "a directory", ...), else None;
    links are followed. Never opens the file (a FIFO would block)."""
    mode = os.stat(path).st_mode
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in FILE_KINDS if test(mode)), "not a regular file")


def check_path(path: str, what: str = "rule file") -> None:
    if not path.endswith(".py"):
        raise SandboxError(f"{shown(path)} is not a .py file")
    try:
        kind = file_kind(path)
    except (OSError, ValueError):
        raise SandboxError(f"{what} {shown(path)} does not exist") from None
    if kind is not None:
        raise SandboxError(f"{what} {shown(path)} is {kind}, not a regular file")


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


def escaped(text) -> str:
    r"""Text from outside (a path, a message) shown inert: every control character (ESC, newline, BEL)
    as its escape, so nothing reaches the terminal raw.

    >>> escaped("a\x1b]0;owned\x07\nb")
    'a\\x1b]0;owned\\x07\\nb'
    """
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in str(text))


def one_line(text) -> str:
    """A message from the child as one printable line of at most 500 characters."""
    text = str(text).splitlines()[0] if str(text) else "(empty message)"
    return escaped(text)[:500]


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
                 question_seconds: float = QUESTION_SECONDS, timeout: float = 0.0, require_isolation: bool = False):
        import subprocess
        self.deadline, self.question_seconds, self.timeout = deadline, question_seconds, timeout
        self.require_isolation, self.isolation = require_isolation, {"isolated": False, "why": "not started"}
        ask_r, self.ask_w = os.pipe()
        self.answer_r, answer_w = os.pipe()
        job = {"path": os.path.abspath(path), "class_name": class_name, "memory_mb": memory_mb, "ask_fd": ask_r,
               "answer_fd": answer_w, "cpu_seconds": int(max(deadline - time.monotonic(), 1)) + 2,
               "require_isolation": require_isolation}
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

    def _line(self, what: str, seconds: float, importing: bool = False) -> bytes:
        """The next answer line, within ``seconds`` and the whole check's deadline."""
        clock_end = min(time.monotonic() + seconds, self.deadline)
        while b"\n" not in self.buffer:
            left = clock_end - time.monotonic()
            if left <= 0:
                whole = clock_end >= self.deadline
                if importing:
                    clock = f"the whole check's {self.timeout:g} s" if whole else f"its {seconds:g} s"
                    raise OracleDown(f"importing the rule file ran past {clock} clock and was killed (its top-level "
                                     "code loops, sleeps or is slow); no verdict")
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
        """The rule's name, once the child isolated itself and imported the file (SandboxError: the file or
        rule is unusable, or isolation was required and is not there)."""
        self.isolation = read_isolation(self._line("to start", START_SECONDS), self.child.pid, self.require_isolation)
        line = self._line("to start", START_SECONDS, importing=True)
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


def read_isolation(line: bytes, child_pid: int, require: bool) -> dict:
    """The child's first line, {"isolation": {...}}, read strictly and checked from outside: a child that
    says it is isolated is believed only when ``isolation.verify`` sees its namespaces differ from ours.
    {"isolated": bool, "why": one line}; SandboxError when isolation is required and missing."""
    try:
        body = json.loads(line)
    except (ValueError, RecursionError):
        body = None
    said = body.get("isolation") if isinstance(body, dict) and len(body) == 1 else None
    if not (isinstance(said, dict) and type(said.get("isolated")) is bool and isinstance(said.get("why"), str)):
        raise OracleDown("the child did not start with its isolation report; no verdict")
    out = {"isolated": said["isolated"], "why": one_line(said["why"])[:300] if said["why"] else ""}
    if out["isolated"] and not isolation.verify(child_pid):
        out = {"isolated": False, "why": "the child said it was isolated, but its namespaces are the judge's own"}
    if require and not out["isolated"]:
        raise SandboxError(f"isolation is required and not available here: {out['why']}")
    return out


def question_text(key) -> str:
    """A question as a reader writes it: ``accept(p = (1/2, 1/2), q = (1, 0), x = 0)``."""
    method, p, q, x = key
    parts = [f"p = ({', '.join(map(str, p))})" if p else "", f"q = ({', '.join(map(str, q))})" if q else "",
             f"x = {x}" if x is not None else ""]
    return f"{method}({', '.join(part for part in parts if part)})"


def answer_text(value) -> str:
    return "none" if value is None else str(value) if isinstance(value, Fraction) else \
        "(" + ", ".join(map(str, value)) + ")"


class OracleRule(RoundRule):
    """A ``RoundRule`` whose methods ask the child. The first answer to a question is the one used; a
    random share (``SPOT``) of repeated questions is asked again during the check and ``recheck`` asks
    every question again at the end, in a random order, so an answer that changes shows up (``changed``)."""

    def __init__(self, oracle: Oracle, name: str, seed: int = 0):
        self.oracle, self.name, self.memo = oracle, name, {}
        self.rng = random.Random(f"specsim-ask-twice-{seed}")
        self.changed = None  # (question, first answer, later answer) of the first change seen
        self.asked = 0

    def _ask(self, method, p=(), q=(), x=None):
        key = (method, tuple(p), tuple(q), x)
        if key not in self.memo:
            self.memo[key] = self.oracle.ask(method, p, q, x)
            self.asked += 1
        elif self.rng.random() < SPOT:
            self._again(key)
        return self.memo[key]

    def _again(self, key) -> None:
        value = self.oracle.ask(*key)
        self.asked += 1
        if value != self.memo[key] and self.changed is None:
            self.changed = (key, self.memo[key], value)

    def recheck(self):
        """Every question asked so far asked again, in a random order, then up to ``THIRD`` of them a third
        time; the first change seen (question, first answer, later answer) or None."""
        keys = list(self.memo)
        self.rng.shuffle(keys)
        for key in keys + self.rng.sample(keys, min(THIRD, len(keys))):
            if self.changed is not None:
                break
            self._again(key)
        return self.changed

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
                    max_work: int | None = None, question_seconds: float = QUESTION_SECONDS,
                    require_isolation: bool = False):
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
        oracle = Oracle(reaper, path, class_name, memory_mb, deadline, question_seconds, timeout, require_isolation)
        try:
            name = oracle.start()
            rule = OracleRule(oracle, name, seed)
            result = checker.check_rule(rule, gammas, n_tokens, models, seed, max_work=max_work)
            changed = rule.recheck()
            result.isolation = dict(oracle.isolation)
            result.questions = rule.asked
            if changed is not None:
                key, first, later = changed
                result.exact = False
                result.changed = {"question": question_text(key), "first": answer_text(first),
                                  "again": answer_text(later)}
            return result
        except OracleDown as e:
            raise SandboxError(str(e)) from None
        except RuleError as e:
            raise SandboxError(one_line(str(e))) from None
        finally:
            oracle.close()
