"""`specsim check-rule PATH.py:ClassName`: prove your own RoundRule exact or get its smallest counter-example.

The file is never imported here: ``specsim.labs.sandbox`` starts a child
process that isolates itself by the operating system (its own namespaces,
read-only files, no new processes: ``specsim.labs.isolation``), imports the
file and then only answers questions (the rule's row or number for given p,
q, x), each asked twice; this process runs the exact engine on those answers
and computes the verdict. The child has a clock per answer, the whole check
a wall clock (--timeout, by default set from the work estimate) and a memory
limit (--memory); it and everything it starts are killed when the check
ends. The output says whether the child was isolated; --require-isolation
refuses where the machine cannot isolate.
"""
from __future__ import annotations

import argparse

from ..labs import sandbox  # the child's limits; the checker and the engines load when a check runs
from . import common
from .common import (GAMMAS_HELP, UsageError, add_scheme_option, gammas_arg, int_in_range, max_work_arg, num, print_json,
                     schemes_from_args, seed_arg, table)

MAX_MODELS = 100_000

DESCRIPTION = (
    "Runs PATH.py:ClassName (a specsim.rule.RoundRule subclass) through the exact engine on every preset and "
    "on seeded random models. The whole check is bounded before it starts; then a child Python process "
    "isolates itself on Linux (its own user, PID, mount, network and IPC namespaces, read-only files but a "
    "private temporary folder, no capabilities, no new processes: it cannot see, signal or write to this process), "
    "imports the file and only answers questions (the rule's rows and numbers), each asked twice, under a "
    "clock per answer, a wall clock for the whole check (--timeout) and a memory limit (--memory), with its "
    "output discarded. This process runs the engine and computes the verdict: nothing the child sends is "
    "one. A child that ends, stalls or sends anything but answers is one line and no verdict; the child and "
    "every process it started are killed when the check ends (SIGINT, SIGTERM and SIGHUP included). The "
    "output says whether the child was isolated; where the machine cannot isolate, the file runs with your "
    "permissions (--require-isolation refuses instead).")
EPILOG = "exit codes: 0 exact on every check; 1 a counter-example (printed); 2 no verdict or bad input (one line)."


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"timeout must be a number of seconds, got {text[:40]!r}") from None
    if not 0 < value <= sandbox.MAX_TIMEOUT:  # NaN fails this too
        raise argparse.ArgumentTypeError(f"timeout must be more than 0 and at most {sandbox.MAX_TIMEOUT} s, got {text[:40]}")
    return value


def register(sub) -> None:
    p = sub.add_parser("check-rule", help="prove your RoundRule exact, or find its smallest counter-example",
                       description=DESCRIPTION, epilog=EPILOG)
    p.add_argument("target", metavar="PATH.py:ClassName", help="a Python file and the RoundRule subclass in it, "
                   "or the name of an entry of `specsim implementations` (checked in this process)")
    add_scheme_option(p, many=True)
    p.add_argument("--gammas", type=gammas_arg, default=None,
                   help=GAMMAS_HELP + " (default 1-3): shorthand for --scheme chain:1;chain:2;chain:3")
    p.add_argument("--tokens", type=int_in_range("tokens", 1, 6), default=2, help="N tokens compared (default 2)")
    p.add_argument("--models", type=int_in_range("models", 0, MAX_MODELS), default=500,
                   help="random models besides the presets (default 500)")
    p.add_argument("--seed", type=seed_arg, default=0, help="seed of the random models")
    p.add_argument("--timeout", type=_positive_seconds, default=None, metavar="SECONDS",
                   help=f"wall clock of the whole check; the child is killed past it (default: 30 s plus four "
                        f"times the work estimate at an honest rule's pace; at most {sandbox.MAX_TIMEOUT}); each "
                        f"answer also has its own {sandbox.QUESTION_SECONDS:g} s clock")
    p.add_argument("--memory", type=int_in_range("memory", sandbox.MIN_MEMORY_MB, sandbox.MAX_MEMORY_MB),
                   default=sandbox.DEFAULT_MEMORY_MB, metavar="MB",
                   help=f"the child's address space (default {sandbox.DEFAULT_MEMORY_MB})")
    p.add_argument("--require-isolation", action="store_true",
                   help="refuse (exit 2) where the child cannot be isolated by the operating system")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    max_work_arg(p)  # args.max_work: the work limit a person can raise (cli/common.py)
    p.set_defaults(func=cmd_check_rule)


def total_limit(args):
    """The whole check's work limit: ``checker.TOTAL_WORK`` (the default check-rule fits in it), scaled
    as far as --max-work moves the CLI's exact limit (``common.budget(args).scaled``), the way a
    command's other limits follow --max-work; None (the default) without the option."""
    if getattr(args, "max_work", None) is None:
        return None
    from ..labs import checker
    return common.budget(args).scaled(checker.TOTAL_WORK)


def rule_gammas(args) -> list:
    """The chains a RoundRule is checked on: --scheme chain:G;... or --gammas (default 1-3)."""
    schemes = schemes_from_args(args, gammas=[1, 2, 3])
    others = [s.name for s in schemes if s.chain_gamma is None]
    if others:
        raise UsageError(f"check-rule checks a RoundRule on chains (write chain:G), not {others[0]}: "
                         "block verification has its own rule and a tree takes a tree rule")
    return [s.chain_gamma for s in schemes]


def gallery_entry(target: str):
    """The implementations-gallery entry named ``target`` (instead of PATH.py:ClassName), or None for a
    PATH.py:ClassName; a name that is neither is a one-line error listing the entries."""
    from ..labs import implementations
    if ":" in target:
        return None
    if target not in implementations.IMPLEMENTATIONS:
        raise ValueError(f"expected PATH.py:ClassName or an entry of `specsim implementations` "
                         f"({', '.join(implementations.IMPLEMENTATIONS)}), got {target[:80]!r}")
    return implementations.IMPLEMENTATIONS[target]


def cmd_check_rule(args) -> int:
    from ..labs import checker
    entry = gallery_entry(args.target)
    if entry is not None and entry.scheme.chain_gamma is None:  # a tree or a confidence-stopped chain
        return _check_entry_schemes(args, entry)
    args.gammas = rule_gammas(args)
    if entry is not None:  # the library's own rule: checked in this process, no sandbox needed
        result = checker.check_rule(entry.rule, args.gammas, args.tokens, args.models, args.seed,
                                    target=entry.target, max_work=total_limit(args))
    else:
        path, name = sandbox.parse_target(args.target)  # SandboxError and WorkRefused: one line, exit 2
        result = sandbox.check_rule_file(path, name, args.gammas, args.tokens, args.models, args.seed,
                                         timeout=args.timeout, memory_mb=args.memory, max_work=total_limit(args),
                                         require_isolation=args.require_isolation)
    if args.json:
        print_json(result.to_dict())
        return 0 if result.exact else 1
    gammas = ", ".join(str(g) for g in args.gammas)
    scope = (f"{result.models} models ({len(checker.PRESETS)} presets + {result.models - len(checker.PRESETS)} "
             f"random, seed {args.seed})" if result.counterexample is None else f"{result.models} model(s) up to the first failure")
    print(f"Rule {result.rule!r} ({sandbox.escaped(args.target)[:300]}): {scope}, {result.contexts:,} contexts, "
          f"γ = {gammas} with N = {args.tokens}")
    if result.isolation is not None:
        from ..labs.isolation import describe
        print(_sentence(describe(result.isolation["isolated"], result.isolation["why"]))
              + (f"; {result.questions:,} answers asked" if result.questions else ""))
    if result.skipped:
        print(f"({result.skipped} random model(s) skipped: over the work limit)")
    if result.exact:
        print(f"EXACT in all {result.checks:,} checks: the next {args.tokens} token(s) follow the target")
        print("(on these models, contexts and γ: evidence, not a proof for every model)")
    elif result.changed is not None:
        c = result.changed
        print(f"NOT EXACT: the rule answered the same question differently when asked again: {c['question']} "
              f"was first {c['first']}, then {c['again']}")
        print("(a rule is judged as a function of p, q and x; this one changes with the order, the count or the "
              "time of its questions)")
    else:
        _print_counterexample(result.counterexample)
    print()
    print("E[tokens per round], mean over the contexts checked" + ("" if result.exact else " (up to the first failure)"))
    print(table([(g, num(a, "decimal"), num(b, "decimal")) for g, a, b in result.tokens],
                ["γ", "this rule", "correct rule"]))
    return 0 if result.exact else 1


def _check_entry_schemes(args, entry) -> int:
    """A gallery rule on its own scheme (or --scheme / --gammas), proved like a chain rule (no shrinking)."""
    from ..labs import checker, implementations
    given = getattr(args, "scheme", None) is not None or args.gammas is not None
    schemes = [implementations.scheme_for(entry, s) for s in schemes_from_args(args)] if given else [entry.scheme]
    checker.check_total_work(args.models, [s.depth for s in schemes], args.tokens, total_limit(args))
    proofs = [(s, implementations.prove(entry, args.tokens, s, args.models, args.seed)) for s in schemes]
    exact = all(p.exact for _, p in proofs)
    if args.json:
        print_json({"rule": entry.name, "exact": exact, "schemes": [
            {"scheme": s.name, "exact": p.exact, "models": p.models, "checks": p.checks,
             "counterexample": p.counter_example.to_dict() if p.counter_example else None} for s, p in proofs]})
        return 0 if exact else 1
    for s, p in proofs:
        print(f"Rule {entry.name!r} on {s.name}: {p.models} models, {p.checks:,} contexts, N = {args.tokens}: "
              + ("EXACT in every check" if p.exact else "NOT EXACT"))
        if p.counter_example:
            _print_counterexample(p.counter_example)
    return 0 if exact else 1


def _print_counterexample(ce) -> None:
    from ..labs import checker
    print(f"NOT EXACT. Smallest counter-example found (first seen on {ce.found_on}):")
    print(f"context {' '.join(ce.context)!r}, γ = {ce.gamma}, N = {ce.n_tokens}: "
          f"TV(target, rule) = {num(ce.total_variation, 'both')}")
    print("model (save as a .json file; `specsim prove FILE` and `specsim pitfalls FILE` read it):")
    print(checker.model_json(ce.model))
    print(table([(" ".join(t), num(a), num(b), num(b - a)) for t, a, b in ce.differences],
                ["next tokens", "target", "this rule", "difference"]))
    print(f"E[tokens per round] here: this rule {num(ce.tokens_rule, 'both')}, "
          f"correct rule {num(ce.tokens_correct, 'both')}")


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]
