"""The child process of ``specsim.labs.sandbox``: import a user's rule file, then only answer questions.

The parent (``specsim.labs.sandbox``) starts a fresh Python that calls
``main()``. The child never runs the checker and never says a verdict; it
is an oracle for the rule's four methods:

1. read the job, one JSON line on stdin (file, class, limits and the two
   descriptors: questions in, answers out); stdin then becomes /dev/null
   and neither descriptor is inherited by a process the rule starts;
2. isolate itself (``specsim.labs.isolation.enter``: its own namespaces,
   read-only files, no capabilities, no new processes) and say so in its
   first line, ``{"isolation": {...}}`` (the parent checks it itself); then
   limit the address space (``RLIMIT_AS``: an allocation over it raises
   ``MemoryError``; with no new processes, one limit for the whole tree) and
   the CPU time (``RLIMIT_CPU``, a backstop; the parent's clocks are the
   real limits);
3. import the file, build the class and answer the first line: the rule's
   name, or why the file, class or rule is unusable;
4. answer each question (``{"m": method, "p": row, "q": row, "x": token}``,
   rows as "n/d" strings) with one line: the returned row or number read into
   plain fractions (``rule_proxy``: bounded, lying comparisons never called)
   as strings, ``null`` for no bonus, or the error, one line. End of the
   questions: ``os._exit(0)``, so no handler of the user's runs after.

Whatever this process sends is data for the parent, which checks every
answer again; the user's code can change what it answers, nothing else.
Importing this module does nothing; only ``main()`` acts.
"""
from __future__ import annotations

import importlib
import importlib.util
import json
import os
import resource
import sys
from fractions import Fraction
from pathlib import Path

from ..rule import RoundRule
from . import isolation
from .rule_proxy import RuleError, first_line, plain_number, plain_row, rule_name

_ROOT = Path(__file__).resolve().parents[2]  # the folder that holds specsim/ (this file: specsim/labs/)
MAX_QUESTION = 2**20  # bytes of one question line


class Refused(ValueError):
    """The file, the class or the rule is unusable; the message is the first answer."""


# -- step 3: the user's file, class and rule -------------------------------------------
def load_rule_class(path: str, name: str):
    """The RoundRule subclass ``name`` from the file at ``path`` (its top-level code runs); Refused names a problem."""
    own = Path(path).resolve()
    own = ".".join(own.relative_to(_ROOT).with_suffix("").parts) if own.is_relative_to(_ROOT / "specsim") else None
    try:  # one of specsim's own files is imported as its module, so RoundRule stays one class
        module = importlib.import_module(own) if own else _import(f"specsim_user_rule_{abs(hash(path))}", path)
    except BaseException as e:  # the user's file: syntax errors, exceptions, sys.exit, KeyboardInterrupt
        line = f" (line {e.lineno})" if isinstance(e, SyntaxError) and e.lineno else ""
        text = first_line(e)
        kind, _, rest = text.partition(": ")
        raise Refused(f"importing {path!r} failed: {kind}{line}" + (f": {rest}" if rest else "")) from None
    try:
        cls = getattr(module, name, None)
        ok = isinstance(cls, type) and issubclass(cls, RoundRule)
    except BaseException as e:  # a module __getattr__ or a metaclass of the user's
        raise Refused(f"reading {name!r} from {path!r} raised {first_line(e)}") from None
    if cls is None:
        raise Refused(f"{path!r} defines no {name!r}")
    if not ok:
        raise Refused(f"{name!r} in {path!r} is not a subclass of specsim.rule.RoundRule")
    return cls


def _import(module_name, path):
    module_spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[module_name] = module  # dataclasses and pickling look the module up
    module_spec.loader.exec_module(module)
    return module


def make_rule(cls):
    """``cls()``; Refused when the constructor needs arguments or raises anything."""
    try:
        return cls()
    except BaseException as e:
        raise Refused(f"{cls.__name__}() failed: {first_line(e)} "
                      "(the class must be constructible without arguments)") from None


# -- step 4: one question, one answer ----------------------------------------------------
def _row(text) -> tuple:
    return tuple(Fraction(x) for x in text)


def _text(x: Fraction) -> str:
    return f"{x.numerator}/{x.denominator}"


def answer(rule, name: str, question: dict) -> dict:
    """The rule's answer to one question, as plain data: {"v": ...} or {"e": one line}."""
    method, p, q = question["m"], _row(question.get("p", ())), _row(question.get("q", ()))
    args = {"draft_row": (q,), "accept": (p, q, question.get("x")), "replacement": (p, q), "bonus": (p,)}[method]
    size = len(q) if method == "draft_row" else len(p)
    try:
        value = getattr(rule, method)(*args)
    except BaseException as e:  # the user's code: any exception, sys.exit included, becomes one line
        return {"e": f"rule {name!r}: {method}() raised {first_line(e)}"}
    try:
        if method == "accept":
            return {"v": _text(plain_number(value, f"rule {name!r}: accept"))}
        if method == "bonus" and value is None:
            return {"v": None}
        return {"v": [_text(x) for x in plain_row(value, size, f"rule {name!r}: {method}")]}
    except RuleError as e:
        return {"e": str(e)}
    except BaseException as e:  # reading what it returned raised (a hostile object)
        return {"e": f"rule {name!r}: reading what {method}() returned raised {first_line(e)}"}


# -- steps 1, 2 and the loop ---------------------------------------------------------------
def _limit(memory_mb: int, cpu_seconds: int) -> None:
    """Hard limits (soft = hard), so the rule cannot raise them again."""
    for what, value, extra in ((resource.RLIMIT_AS, memory_mb * 2**20, 0),
                               (resource.RLIMIT_CPU, cpu_seconds, 5)):
        _, hard = resource.getrlimit(what)
        top = value + extra if hard == resource.RLIM_INFINITY else min(value + extra, hard)
        resource.setrlimit(what, (min(value, top), top))


def _send(fd: int, body: dict) -> None:
    data = memoryview((json.dumps(body) + "\n").encode())
    while data:
        data = data[os.write(fd, data):]


def _start(job: dict) -> tuple:
    """(the rule, its name) or Refused."""
    rule = make_rule(load_rule_class(job["path"], job["class_name"]))
    try:
        return rule, rule_name(rule)
    except RuleError as e:
        raise Refused(str(e)) from None


def main() -> None:
    job = json.loads(sys.stdin.readline(100_000))  # step 1
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    ask, out = job["ask_fd"], job["answer_fd"]
    os.set_inheritable(ask, False)
    os.set_inheritable(out, False)
    try:  # step 2, before any of the user's code loads
        _send(out, {"isolation": isolation.enter(job.get("require_isolation", False))})
    except isolation.IsolationError as e:
        _send(out, {"isolation": {"isolated": False, "why": str(e)[:300], "refused": True}})
        os._exit(0)
    _limit(job["memory_mb"], job["cpu_seconds"])
    try:  # step 3
        rule, name = _start(job)
        _send(out, {"name": name})
    except Refused as e:
        _send(out, {"e": str(e)})
        os._exit(0)
    except BaseException as e:  # MemoryError while importing, and the like
        _send(out, {"e": f"starting the rule failed: {first_line(e)}"})
        os._exit(0)
    questions = os.fdopen(ask, "rb", buffering=65536)
    while True:  # step 4
        line = questions.readline(MAX_QUESTION)
        if not line:
            os._exit(0)
        try:
            body = answer(rule, name, json.loads(line))
        except MemoryError:
            body = {"e": f"rule {name!r}: ran out of memory (the child's limit is {job['memory_mb']} MB)"}
        if "MemoryError" in body.get("e", ""):
            body["e"] += f" (the child's memory limit is {job['memory_mb']} MB)"
        _send(out, body)
