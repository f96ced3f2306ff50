"""`specsim gpt serve-bench`: batched plain and speculative decoding on the tiny GPT, measured and predicted.

The work is ``specsim.gpt.measure.serve_bench``; here the options, the
refusals made before torch loads (ranges, then ``bounds.check_gpt`` on the
whole run, raisable with --max-work) and the printing.
"""
from __future__ import annotations

import os

from .. import bounds
from ..gpt import specs
from ..parsing import parse_ranges
from .common import (argtype, TEMPERATURE_HELP, budget, int_in_range, max_work_arg, num, print_json, seed_arg, table,
                     temperature_arg)

MAX_BATCH, MAX_GAMMA = 64, 16  # specsim.gpt.batch's limits (a test checks they agree)
MAX_TOKENS, MAX_REPEATS = 160, 20  # specsim.gpt.measure.serve_bench's
WORK_FLAGS = "--batch, --gammas, --tokens, --repeats or --threads"


def parse_threads(text: str) -> list:
    """--threads: 1, all (``os.cpu_count()``) or 1,all, as thread counts.

    >>> parse_threads("1"), parse_threads("1,all") == sorted({1, os.cpu_count() or 1})
    ([1], True)
    """
    items = [t.strip() for t in str(text).split(",")]
    if not items or any(t not in ("1", "all") for t in items):
        raise ValueError(f"threads must be 1, all or 1,all, got {str(text)[:40]!r}")
    return sorted({1 if t == "1" else os.cpu_count() or 1 for t in items})


def add_serve_bench(sub, needs_torch) -> None:
    """Register `gpt serve-bench` on the gpt sub-parsers; ``needs_torch`` wraps the handler."""
    p = sub.add_parser("serve-bench", help="batched plain vs speculative tokens/s per batch size, beside the "
                                           "roofline's prediction (v, crossover batch)")
    p.add_argument("--batch", type=argtype("batch", lambda t: parse_ranges(t, "batch", 1, MAX_BATCH)),
                   default=[1, 2, 4, 8, 16, 32], help=f"batch sizes, e.g. 1,2,4,8 or 1-4 (each 1 .. {MAX_BATCH}; "
                                                      "default 1,2,4,8,16,32)")
    p.add_argument("--gammas", type=argtype("gammas", lambda t: parse_ranges(t, "gammas", 0, MAX_GAMMA)),
                   default=list(range(7)),
                   help="draft lengths, 0 = plain (always run): e.g. 0-6 or 0,2,4 (default 0-6)")
    p.add_argument("--tokens", type=int_in_range("tokens", 1, MAX_TOKENS), default=32,
                   help=f"tokens per sequence (1 .. {MAX_TOKENS}; default 32)")
    p.add_argument("--repeats", type=int_in_range("repeats", 1, MAX_REPEATS), default=3,
                   help="interleaved repeats (default 3)")
    p.add_argument("--threads", type=argtype("threads", parse_threads), default=[1],
                   help="torch threads: 1, all or 1,all (default 1)")
    p.add_argument("--temperature", type=temperature_arg, default=1.0, help=TEMPERATURE_HELP + " (default 1)")
    p.add_argument("--seed", type=seed_arg, default=0)
    p.add_argument("--draft", choices=specs.batched(), default="distilled")  # read when the parser is built
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    p.add_argument("--json", action="store_true")
    max_work_arg(p)
    p.set_defaults(func=_checked(needs_torch(cmd_serve_bench)))  # refused before torch loads


def check_work(args) -> None:
    """The whole run against ``bounds.check_gpt`` before torch loads (``serve_bench.check_work`` again after)."""
    bounds.check_gpt(args.tokens, sorted(set(args.gammas) | {0}),
                     runs=sum(args.batch) * args.repeats * len(args.threads), limit=budget(args), lower=WORK_FLAGS)


def _checked(handler):
    def run(args):
        check_work(args)
        return handler(args)
    run.__name__ = handler.__name__
    return run


KEYS = ["batch", "gamma", "tokens_per_s", "min_max", "speedup", "predicted_speedup", "tokens_per_round", "v",
        "predicted_v", "v_ratio", "bound"]


def cmd_serve_bench(args) -> int:
    from ..gpt.api import load_pair
    from ..gpt.measure.serve_bench import serve_bench
    pair = load_pair(args.draft, args.device)
    say = (lambda text: None) if args.json else (lambda text: print(f"... {text}", flush=True))
    result = serve_bench(pair, args.batch, args.gammas, args.tokens, args.repeats, args.threads,
                         float(args.temperature), args.seed, progress=say, limit=budget(args))
    if args.json:
        print_json(result)
        return 0
    print(f"device {result['device']}, drafter {result['draft']}, temperature {result['temperature']}, "
          f"{result['tokens']} tokens per sequence, {result['repeats']} interleaved repeats, context "
          f"{result['context']} for the timed passes")
    for run in result["runs"]:
        cal = run["calibration"]
        print(f"\n{run['threads']} thread(s). Measured here: {cal['bandwidth_gb_s']} GB/s, {cal['matmul_gflop_s']} "
              f"GFLOP/s; calibrated overhead per pass (B = 1 step {cal['step_b1_ms']['target']} / "
              f"{cal['step_b1_ms']['draft']} ms minus the roofline): target {cal['overhead_ms']['target']} ms, "
              f"drafter {cal['overhead_ms']['draft']} ms; every predicted figure follows from these "
              "(memory and compute time added: one CPU core does them in turn).")
        rows = [[r["batch"], r["gamma"], r["tokens_per_s"], "-".join(str(x) for x in r["tokens_per_s_min_max"]),
                 r["speedup"], r["predicted_speedup"], r["tokens_per_round"], r["v"], r["predicted_v"],
                 r["v_ratio"], r["bound"]] for r in run["rows"]]
        print(table(rows, KEYS))
        w = run["worst_v"]
        print(f"crossover batch: measured {run['crossover_batch'] or 'none in the list'}, predicted "
              f"{run['predicted_crossover_batch'] or 'none in the list'}")
        if w:
            print(f"worst v (B <= 16, 1 <= γ <= 6): B {w['batch']}, γ {w['gamma']}: measured {w['v']}, predicted "
                  f"{w['predicted_v']} (ratio {num(w['v_ratio'], 'decimal', 2)})")
    return 0
