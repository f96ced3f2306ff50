"""Time torch's CPU attention kernel for one query over S cached keys, bfloat16 against float32 (a script,
not collected by pytest): why a bfloat16 model on a CPU attends over its cache in float32
(``specsim.gpt.model.cached_attention``).

    python tests/bench_attention.py [--threads 1] [--keys 32,128,256]

Prints JSON: per S, the best of 5 repeats of the mean time per call (µs) of
``scaled_dot_product_attention`` with the shipped target's head shape (6 heads of 64), one query and
six (the verify pass of gamma = 5, with its lower-right mask), in bfloat16 and in float32, and their
ratio; and ``T1_cached``: ``cached_attention`` of one bfloat16 query (float32 with its casts). A benchmark: run it on a quiet machine and read the ratios, not the absolute times.
"""
from __future__ import annotations

import argparse
import json
import time

import torch
import torch.nn.functional as F

from specsim.gpt.model import cached_attention


def per_call_us(f, calls: int = 200, repeats: int = 5) -> float:
    for _ in range(10):
        f()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            f()
        best = min(best, (time.perf_counter() - t0) / calls)
    return best * 1e6


def main(threads: int, keys: list) -> dict:
    torch.set_num_threads(threads)
    gen = torch.Generator().manual_seed(0)
    out = {"threads": threads, "torch": torch.__version__, "heads": 6, "head_size": 64, "us": {}}
    with torch.inference_mode():
        for S in keys:
            row = {}
            for T in (1, 6):
                mask = None if T == 1 else torch.ones(T, S, dtype=torch.bool).tril(S - T)
                q, k, v = (torch.randn(1, 6, n, 64, generator=gen) for n in (T, S, S))
                for dtype in (torch.bfloat16, torch.float32):
                    a, b, c = (x.to(dtype) for x in (q, k, v))
                    row[f"T{T}_{str(dtype)[6:]}"] = round(per_call_us(
                        lambda: F.scaled_dot_product_attention(a, b, c, attn_mask=mask)), 1)
                row[f"T{T}_ratio"] = round(row[f"T{T}_bfloat16"] / row[f"T{T}_float32"], 2)
                if T == 1:
                    a, b, c = (x.to(torch.bfloat16) for x in (q, k, v))
                    row["T1_cached"] = round(per_call_us(lambda: cached_attention(a, b, c)), 1)
            out["us"][S] = row
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--keys", default="32,128,256", help="cached keys S, comma-separated (each 6 .. 4096)")
    args = ap.parse_args()
    try:
        keys = [int(s) for s in args.keys.split(",")]
        if not all(6 <= s <= 4096 for s in keys) or not 1 <= args.threads <= 256:
            raise ValueError
    except ValueError:
        raise SystemExit("bench_attention: --keys takes integers 6 .. 4096, --threads 1 .. 256")
    print(json.dumps(main(args.threads, keys), indent=1))
