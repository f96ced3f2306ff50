"""`specsim check-rule PATH.py:ClassName`: prove your own RoundRule exact or get its smallest counter-example.

The file is imported in-process with importlib, so its top-level code runs
(as with ``python PATH.py``): check only files you trust.
"""
from __future__ import annotations

import importlib.util
import os
import stat
import sys
from pathlib import Path

from .. import checker
from ..rule import RoundRule
from .common import UsageError, gammas_arg, int_in_range, num, parse_gammas, print_json, seed_arg, table

MAX_MODELS = 100_000
_ROOT = Path(__file__).resolve().parent.parent.parent  # the folder that holds specsim/


def register(sub) -> None:
    p = sub.add_parser("check-rule", help="prove your RoundRule exact, or find its smallest counter-example",
                       description="Runs PATH.py:ClassName (a specsim.rule.RoundRule subclass) through the exact "
                                   "engine on every preset and on seeded random models. Exit 0: exact on all; "
                                   "1: a counter-example; 2: bad input. The file is imported: it executes.")
    p.add_argument("target", metavar="PATH.py:ClassName", help="a Python file and the RoundRule subclass in it")
    p.add_argument("--gammas", type=gammas_arg, default=parse_gammas("1-3"), help="draft lengths (default 1-3)")
    p.add_argument("--tokens", type=int_in_range("tokens", 1, 6), default=2, help="N tokens compared (default 2)")
    p.add_argument("--models", type=int_in_range("models", 0, MAX_MODELS), default=500,
                   help="random models besides the presets (default 500)")
    p.add_argument("--seed", type=seed_arg, default=0, help="seed of the random models")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_check_rule)


def load_rule_class(spec: str):
    """``PATH.py:ClassName`` -> the class, imported from the file; UsageError names any problem."""
    path, colon, name = spec.rpartition(":")
    if not colon or not path or not name:
        raise UsageError(f"expected PATH.py:ClassName, got {spec[:80]!r}")
    if not path.endswith(".py"):
        raise UsageError(f"{path!r} is not a .py file")
    try:
        info = os.stat(path)
    except OSError:
        raise UsageError(f"rule file {path!r} does not exist") from None
    if not stat.S_ISREG(info.st_mode):
        raise UsageError(f"rule file {path!r} is not a regular file")
    own = Path(path).resolve()
    own = ".".join(own.relative_to(_ROOT).with_suffix("").parts) if own.is_relative_to(_ROOT / "specsim") else None
    try:  # one of specsim's own files is imported as its module, so RoundRule stays one class
        module = importlib.import_module(own) if own else _import(f"specsim_user_rule_{abs(hash(path))}", path)
    except BaseException as e:  # the user's file: syntax errors, exceptions, even sys.exit
        if isinstance(e, KeyboardInterrupt):
            raise
        line = f" (line {e.lineno})" if isinstance(e, SyntaxError) and e.lineno else ""
        text = str(e).splitlines()[0] if str(e) else ""
        raise UsageError(f"importing {path!r} failed: {type(e).__name__}{line}" + (f": {text}" if text else "")) from None
    cls = getattr(module, name, None)
    if cls is None:
        raise UsageError(f"{path!r} defines no {name!r}")
    if not isinstance(cls, type) or not issubclass(cls, RoundRule):
        raise UsageError(f"{name!r} in {path!r} is not a subclass of specsim.rule.RoundRule")
    return cls


def _import(module_name, path):
    module_spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[module_name] = module  # dataclasses and pickling look the module up
    try:
        module_spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(module_name, None)
        raise
    return module


def _instance(cls):
    try:
        return cls()
    except Exception as e:
        raise UsageError(f"{cls.__name__}() failed: {type(e).__name__}: {str(e)[:80]} "
                         "(the class must be constructible without arguments)") from None


def cmd_check_rule(args) -> int:
    rule = _instance(load_rule_class(args.target))
    try:
        result = checker.check_rule(rule, args.gammas, args.tokens, args.models, args.seed)
    except checker.RuleError as e:
        raise UsageError(str(e)) from None
    if args.json:
        print_json(result.to_dict())
        return 0 if result.exact else 1
    gammas = ", ".join(str(g) for g in args.gammas)
    scope = (f"{result.models} models ({len(checker.PRESETS)} presets + {result.models - len(checker.PRESETS)} "
             f"random, seed {args.seed})" if result.exact else f"{result.models} model(s) up to the first failure")
    print(f"Rule {result.rule!r} ({args.target}): {scope}, {result.contexts:,} contexts, "
          f"γ = {gammas} with N = {args.tokens}")
    if result.skipped:
        print(f"({result.skipped} random model(s) skipped: over the work limit)")
    if result.exact:
        print(f"EXACT in all {result.checks:,} checks: the next {args.tokens} token(s) follow the target")
        print("(on these models, contexts and γ: evidence, not a proof for every model)")
    else:
        _print_counterexample(result.counterexample)
    print()
    print("E[tokens per round], mean over the contexts checked" + ("" if result.exact else " (up to the first failure)"))
    print(table([(g, num(a, "decimal"), num(b, "decimal")) for g, a, b in result.tokens],
                ["γ", "this rule", "correct rule"]))
    return 0 if result.exact else 1


def _print_counterexample(ce) -> None:
    print(f"NOT EXACT. Smallest counter-example found (first seen on {ce.found_on}):")
    print(f"context {' '.join(ce.context)!r}, γ = {ce.gamma}, N = {ce.n_tokens}: "
          f"TV(target, rule) = {num(ce.total_variation, 'both')}")
    print("model (save as a .json file; `specsim prove FILE` and `specsim pitfalls FILE` read it):")
    print(checker.model_json(ce.model))
    print(table([(" ".join(t), num(a), num(b), num(b - a)) for t, a, b in ce.differences],
                ["next tokens", "target", "this rule", "difference"]))
    print(f"E[tokens per round] here: this rule {num(ce.tokens_rule, 'both')}, "
          f"correct rule {num(ce.tokens_correct, 'both')}")
