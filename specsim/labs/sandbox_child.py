"""The child process of ``specsim.labs.sandbox``: import a user's rule file, check the rule, write one report.

The parent (``specsim.labs.sandbox.check_rule_file``) starts a fresh Python that
calls ``main()``. The steps:

1. read the job, one JSON line on stdin (file, class, γs, N, models, seed,
   limits, the report's file descriptor and a random nonce); stdin then
   becomes /dev/null, and the report descriptor is not inherited by any
   process the rule starts;
2. limit the address space (``RLIMIT_AS``: an allocation over it raises
   ``MemoryError``) and the CPU time (``RLIMIT_CPU``: a backstop should the
   parent die; the parent's wall clock is the real limit);
3. import the file, build the class, run ``checker.check_rule``: any
   exception, ``BaseException`` included, becomes one line in the report;
4. write the report on its own descriptor (never stdout, which the parent
   discards): ``HEAD nonce``, one JSON line, ``END nonce``; then
   ``os._exit(0)``, so no atexit handler or finalizer of the user's runs after.

Importing this module does nothing; only ``main()`` acts.
"""
from __future__ import annotations

import importlib
import importlib.util
import json
import os
import resource
import sys
from pathlib import Path

from .. import bounds

from ..rule import RoundRule
from .rule_proxy import RuleError, first_line

HEAD, END = "SPECSIM-REPORT", "SPECSIM-END"
_ROOT = Path(__file__).resolve().parents[2]  # the folder that holds specsim/ (this file: specsim/labs/)


class Refused(ValueError):
    """The file, the class or the rule is unusable; the message is the report's one line."""


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


def run(job: dict) -> dict:
    """The whole check of one job, as ``CheckResult.to_dict()``."""
    from . import checker  # the engine, imported before the user's file (which cannot patch it first)
    rule = make_rule(load_rule_class(job["path"], job["class_name"]))
    result = checker.check_rule(rule, job["gammas"], job["tokens"], job["models"], job["seed"],
                                max_work=job["max_work"])
    return result.to_dict()


# -- steps 1, 2 and 4 -----------------------------------------------------------------
def _limit(memory_mb: int, cpu_seconds: int) -> None:
    """Hard limits (soft = hard), so the rule cannot raise them again."""
    for what, value, extra in ((resource.RLIMIT_AS, memory_mb * 2**20, 0),
                               (resource.RLIMIT_CPU, cpu_seconds, 5)):
        _, hard = resource.getrlimit(what)
        top = value + extra if hard == resource.RLIM_INFINITY else min(value + extra, hard)
        resource.setrlimit(what, (min(value, top), top))


def _write(fd: int, nonce: str, body: dict) -> None:
    data = memoryview(f"{HEAD} {nonce}\n{json.dumps(body)}\n{END} {nonce}\n".encode())
    while data:
        data = data[os.write(fd, data):]


def main() -> None:
    job = json.loads(sys.stdin.readline(100_000))  # step 1
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    fd = job["report_fd"]
    os.set_inheritable(fd, False)
    _limit(job["memory_mb"], job["cpu_seconds"])  # step 2
    try:  # step 3
        body = {"kind": "result", "result": run(job)}
    except (Refused, RuleError, bounds.WorkRefused) as e:
        body = {"kind": "error", "message": str(e)}
    except MemoryError:
        body = {"kind": "error", "message": "the check ran out of memory"}
    except ValueError as e:  # the engine refusing what a rule returned (e.g. a row with no positive entry)
        body = {"kind": "error", "message": str(e).splitlines()[0] if str(e) else "ValueError"}
    except BaseException as e:
        body = {"kind": "error", "message": f"the check failed: {first_line(e)}"}
    message = body.get("message", "")
    if "MemoryError" in message or "out of memory" in message:
        body["message"] = f"{message} (the child's memory limit is {job['memory_mb']} MB)"
    _write(fd, job["nonce"], body)  # step 4
    os._exit(0)
