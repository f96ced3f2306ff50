"""`specsim gpt selfcheck`: one pass/fail line per check of the tiny GPT on a device, then a short bench.

Registered by ``gpt_cmds``; torch is imported only inside the handler. Exit 0 when every check
passes, 1 when one fails, 2 for bad input (a device that is not there: one line).
"""
from __future__ import annotations

from .common import print_json


def add_selfcheck(sub, needs_torch) -> None:
    s = sub.add_parser("selfcheck", help="check the tiny GPT on a device: greedy equality, caches, mask, "
                                         "exactness, and a short bench (run this first on a GPU)",
                       description="Loads the shipped pair and the EAGLE drafter on the device and checks that "
                                   "greedy chain, block and tree speculative decoding emit plain greedy's text, "
                                   "that the KV caches (and EAGLE's features) equal a fresh forward pass, that "
                                   "the tree mask equals the reference and that the first emitted token follows "
                                   "p (exact engine, float64). Then a short `gpt bench`. Exit 0: all pass; 1: a "
                                   "check failed; 2: bad input.")
    s.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    s.add_argument("--dtype", choices=["float32", "bfloat16"], default="float32",
                   help="the target's number format (default float32); in bfloat16 the cache tolerance is set by "
                        "its precision and a greedy difference must sit at a bfloat16 tie")
    s.add_argument("--no-bench", action="store_true", help="skip the timing")
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.set_defaults(func=needs_torch(cmd_selfcheck))


def cmd_selfcheck(args) -> int:
    import torch

    from ..gpt.measure.selfcheck import run_selfcheck
    torch.set_num_threads(1) if args.device == "cpu" else None
    report = run_selfcheck(args.device, with_bench=not args.no_bench, dtype=args.dtype)
    if args.json:
        print_json(report.to_dict())
        return 0 if report.passed else 1
    what = "" if report.dtype == "float32" else f", target in {report.dtype}"
    print(f"specsim gpt selfcheck on {report.device}{what} (torch {torch.__version__})")
    for c in report.checks:
        print(f"{'PASS' if c.passed else 'FAIL'}  {c.name}: {c.detail}")
    if report.bench:
        b = report.bench
        lo, hi = b["speedup_interval"]
        print(f"bench ({b['tokens']} tokens, the fastest of {b['repeats']} interleaved runs, {b['clock']}): plain "
              f"{b['plain_tokens_per_s']} tokens/s; best gamma {b['gamma']}: {b['spec_tokens_per_s']} tokens/s, "
              f"{b['speedup']}x [{lo}-{hi}] against {b['refined_speedup']}x predicted from alpha {b['alpha']}, "
              f"c {b['cost']}, v {b['verify_ratio']} (ratio {b['ratio']})")
    print("all checks passed" if report.passed else "SOME CHECKS FAILED")
    return 0 if report.passed else 1
