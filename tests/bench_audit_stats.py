"""Audit statistics benchmark (not part of the test suite): the false-alarm rate and the power of the joint test at
the default rate f = 0.001, by simulation on toy targets (no torch).

    python tests/bench_audit_stats.py [--sims 200000] [--power-sims 2000]

The judge's p-value for N runs over fixed cells is (1 + #{T* >= T}) / (1 + B) with B = 50 / f seeded draws of T*
from the target (``specsim.labs.audit.calibrated``); with the judge's seed fixed, its draws are fixed, so the audit
rejects exactly when T reaches a fixed critical value. This script draws that critical value with the judge's own
code and seed, then simulates many audits' statistics (multinomial counts over the cells) and prints, per target and
N, one JSON object: the alarms of an exact engine with a 95% Wilson interval, beside what the chi-square
approximation (the old p-value) gives on the same audits; and the power against the worst-case engine at the TV
``runs_needed`` was asked for (``worst_case_law``), at the runs it returned.
"""
import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from specsim import exact, toy  # noqa: E402
from specsim.labs import audit as judge  # noqa: E402


def wilson(k, n, z=1.96):
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return [round(max(0.0, c - h), 6), round(c + h, 6)]


def targets():
    lesson = {s: float(v) for s, v in exact.target_joint(toy.load_model("seed"), ("a",), 2).items()}
    zipf = {(i,): 1 / (i + 1) for i in range(60)}
    zipf = {s: v / sum(zipf.values()) for s, v in zipf.items()}
    flat = {(i,): 1 / 20 for i in range(20)}
    return {"lesson 24 (two tokens after 'a')": lesson, "Zipf-like, 60 tokens": zipf, "20 equal tokens": flat}


def rejections(probs, n, law, sims, alpha, seed):
    """(alarms by the judge's Monte Carlo p-value, alarms by the chi-square approximation) of ``sims`` audits of
    N runs from ``law`` over cells ``probs``; the judge's draws use ``seed`` (as an audit with --seed does), the
    simulated audits their own stream (not the one ``runs_needed`` simulated with)."""
    from scipy.stats import chi2
    null = np.sort(judge.null_statistics(probs, n, judge.mc_draws(alpha), seed))
    b = len(null)
    rng = np.random.default_rng([seed, 12345])
    mc = approx = 0
    crit = chi2.isf(alpha, len(probs) - 1)
    for i in range(0, sims, 50_000):
        stats = judge.pearson(rng.multinomial(n, law, size=min(50_000, sims - i)), probs, n)
        hits = b - np.searchsorted(null, stats - 1e-9 * np.maximum(1.0, stats), side="left")  # #{T* >= T}
        mc += int(np.count_nonzero((1 + hits) / (1 + b) < alpha))
        approx += int(np.count_nonzero(stats >= crit))
    return mc, approx


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sims", type=int, default=200_000)
    ap.add_argument("--power-sims", type=int, default=2_000)
    ap.add_argument("--alpha", type=float, default=judge.ALPHA)
    args = ap.parse_args()
    for name, p in targets().items():
        for n in (100, 200, 500):
            cells = judge.cells_of(p, n)
            mc, approx = rejections(cells.probs, n, cells.probs, args.sims, args.alpha, 0)
            print(json.dumps({"target": name, "runs": n, "cells": len(cells), "alpha": args.alpha,
                              "false_alarms_mc": [mc, args.sims], "rate_mc": wilson(mc, args.sims),
                              "false_alarms_chi2_approx": [approx, args.sims],
                              "rate_chi2_approx": wilson(approx, args.sims)}), flush=True)
        tv = 0.05 if len(p) > 10 else 0.1
        n, df = judge.runs_needed(p, tv, args.alpha)
        cells = judge.cells_of(p, n)
        hits, _ = rejections(cells.probs, n, judge.worst_case_law(cells.probs, tv), args.power_sims, args.alpha, 0)
        print(json.dumps({"target": name, "worst_case_tv": tv, "runs_needed": n, "df": df, "stated_power": judge.POWER,
                          "detected": [hits, args.power_sims], "power": wilson(hits, args.power_sims)}), flush=True)


if __name__ == "__main__":
    main()
