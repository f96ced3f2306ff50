"""Audit statistics benchmark (not part of the test suite): the false-alarm rate and the power of the joint test at
the default rate f = 0.001, by simulation on toy targets (no torch).

    python tests/bench_audit_stats.py [--sims 200000] [--power-sims 2000]

The judge's p-value for N runs over fixed cells is (1 + #{T* >= T}) / (1 + B) with B = 50 / f seeded draws of T*
from the target (``specsim.labs.audit.calibrated``), a fresh set of draws for each outcome (seeded by the
statistic). With one set of draws the audit rejects exactly when T reaches a fixed critical value; this script
draws ``--judge-seeds`` such sets with the judge's own code, simulates many audits' statistics (multinomial counts
over the cells) against each, and prints, per target and N, one JSON object: the false-alarm rate of an exact
engine averaged over the sets (the judge's rate) with a 95% interval from the spread between sets, the smallest and
largest rate of a single set, and what the chi-square approximation (the old p-value) gives on the same audits
(Wilson interval); and the power against the worst-case engine at the TV
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
    ap.add_argument("--judge-seeds", type=int, default=100, help="sets of the judge's Monte Carlo draws")
    args = ap.parse_args()
    for name, p in targets().items():
        for n in (100, 200, 500):
            cells = judge.cells_of(p, n)
            per = args.sims // args.judge_seeds  # the judge's draws are fresh for each outcome: average over sets
            runs = [rejections(cells.probs, n, cells.probs, per, args.alpha, s) for s in range(args.judge_seeds)]
            rates = np.array([r[0] / per for r in runs])
            mean, se = float(rates.mean()), float(rates.std(ddof=1) / math.sqrt(len(rates)))
            approx, total = sum(r[1] for r in runs), per * args.judge_seeds
            print(json.dumps({"target": name, "runs": n, "cells": len(cells), "alpha": args.alpha,
                              "rate_mc": round(mean, 6), "rate_mc_95": [round(mean - 1.96 * se, 6),
                                                                       round(mean + 1.96 * se, 6)],
                              "rate_mc_per_set_of_draws": [float(rates.min()), float(rates.max())],
                              "false_alarms_chi2_approx": [approx, total],
                              "rate_chi2_approx": wilson(approx, total)}), flush=True)
        tv = 0.05 if len(p) > 10 else 0.1
        n, df = judge.runs_needed(p, tv, args.alpha)
        cells = judge.cells_of(p, n)
        hits, _ = rejections(cells.probs, n, judge.worst_case_law(cells.probs, tv), args.power_sims, args.alpha, 0)
        print(json.dumps({"target": name, "worst_case_tv": tv, "runs_needed": n, "df": df, "stated_power": judge.POWER,
                          "detected": [hits, args.power_sims], "power": wilson(hits, args.power_sims)}), flush=True)


if __name__ == "__main__":
    main()
