"""Judge an engine by the tokens it emits: goodness-of-fit tests against the target's exact distribution.

An engine that claims to sample the target's distribution p is run N times
(seeded, independent runs). The exact probabilities come from the target's
own forward passes (``specsim.gpt.audit``), never from the engine. This
module is the arithmetic of the verdict, in two modes.

**Joint (K <= 3 tokens).** The first K tokens of each run are one draw of p:

* **cells**: every K-token sequence expecting at least ``MIN_EXPECTED`` of
  the N runs is a cell of its own; the others, sorted from likeliest down,
  are pooled in that order into cells of at least ``MIN_EXPECTED`` expected
  runs each (the mass p does not list, "other", closes the last one). A
  near-uniform target so keeps about N / 5 cells instead of one. The cells
  depend on p and N only, never on the samples;
* **test**: Pearson's chi-square over the cells. Where few cells and few
  runs allow (at most ``audit_exact.EXACT_LIMIT`` outcomes), its p-value is
  exact: every outcome enumerated (``specsim.labs.audit_exact``;
  ``p_value_method`` "exact (every outcome enumerated)"). Beyond, by Monte Carlo
  from p itself: B seeded draws of N runs from the cells' exact law,
  p = (1 + #{T* >= T}) / (1 + B). That p-value is valid at every N and every
  B (P(p <= f) <= f for an exact engine), so the false-alarm rate f
  (``alpha``, default 0.001) holds at every sample size, not only as N
  grows; B = ``mc_draws(alpha)`` (50 / f, from 2,000 to 1,000,000) and the
  p-value's Monte Carlo standard error is reported. The draws are seeded by
  the audit's seed and the statistic, so a verdict is reproducible and each
  outcome still meets its own draws: the rate is the average over them. Below the f that a
  million draws resolve (about 2e-5) the chi-square approximation is used
  and ``p_value_method`` says so: there the rate is approximate;
* **TV**: half the sum of |observed frequency - p| over the cells, with the
  interval tv +- u, u the 95th percentile of the observed frequencies' own
  sampling error (seeded bootstrap); beside it ``tv_exact_engine``, what
  noise alone shows with this many runs;
* **power**: Cauchy-Schwarz gives sum (e - p)^2 / p >= (2 TV)^2 over the
  cells (e the engine's law), so N runs meet any engine at cell distance d
  with a noncentrality of at least 4 N d^2. ``detectable_tv`` is the d this
  budget detects with probability ``POWER`` (0.8, from the noncentral
  chi-square: an approximation); ``runs_needed(p, d)`` the N at which the
  audit's own test detects the engine that meets the bound at distance d
  with probability 0.8, with the cells that N makes (their number grows with
  N), found from that approximation and then checked and raised by seeded
  simulation;
* **sequential** (optional): a mixture likelihood ratio over the cells the
  budget N makes (a Dirichlet(1/2) mixture of alternatives against p),
  updated run by run. For an exact engine it is a nonnegative martingale of
  mean 1, so by Ville's inequality it ever reaches 1 / f with probability at
  most f: the audit stops at the first run where it does ("not the target")
  and the rate still holds. It never stops early to say "consistent".

**Token by token (K > 3).** Each emitted token x is judged against the
target's exact conditional given the run's own prefix, through randomized
probability-integral transforms u = F(x-) + V p(x), V uniform (seeded here).
For an exact engine the u of all runs and positions are i.i.d. uniform on
(0, 1), whatever the prefixes (``judge_pits``). Three tests, each calibrated
by Monte Carlo from the uniform law, at f / 3 each (Bonferroni): the u in
token-id order on equal bins; the u with tokens ordered from likeliest to
least likely (cells of the conditional by probability rank: a too greedy
engine shows too many small u); and the pairs (u1, u2), (u3, u4), ... of a
run on an equal grid (random numbers shared between tokens). Uniform PITs are
necessary for exactness, not sufficient: the pooled tests see an average over
positions and prefixes, so errors of opposite sign at different positions or
after different prefixes can cancel, and dependence beyond neighbouring pairs
is not tested.

Samples can refute exactness, never prove it: "consistent with the target"
means this budget saw no difference larger than ``detectable_tv``.

>>> p = {("a",): 0.5, ("b",): 0.3, ("c",): 0.2}
>>> r = judge_samples([("a",)] * 50 + [("b",)] * 30 + [("c",)] * 20, p)
>>> r.verdict, r.p_value == 1.0, r.tv, r.p_value_method
('consistent with the target', True, 0.0, 'exact (every outcome enumerated)')
>>> judge_samples([("a",)] * 100, p).verdict
'not the target'
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

import numpy as np

from .audit_limits import (ALPHA, DEFAULT_MEMORY_MB, MAX_JOINT, MAX_MEMORY_MB, MAX_SAMPLES,  # noqa: F401
                           MAX_TOKENS, MIN_MEMORY_MB)
MIN_EXPECTED = 5.0  # samples every cell expects (power, not validity: the p-value is calibrated by Monte Carlo)
POWER = 0.8
BOOTSTRAP = 400
MIN_DRAWS, MAX_DRAWS = 2_000, 1_000_000  # Monte Carlo draws of a p-value: 50 / alpha within these
OTHER = ("<other>",)
PIT_BINS, PAIR_GRID = 20, 4
P_VALUE_METHODS = ("auto", "exact", "monte carlo")  # auto: exact enumeration where feasible, else Monte Carlo


@dataclass
class AuditResult:
    verdict: str  # "consistent with the target" or "not the target"
    p_value: float
    statistic: float
    df: int
    alpha: float
    tv: float
    tv_ci: tuple
    samples: int
    cells: int
    detectable_tv: float
    top: list = field(default_factory=list)  # (sequence, observed frequency, exact probability), most likely first
    tv_exact_engine: float = 0.0  # the TV an exact engine shows with this many runs (noise alone), on average
    p_value_method: str = "monte carlo"  # or "chi-square approximation" (alpha below what MAX_DRAWS resolves)
    mc_draws: int = 0
    p_value_se: float = 0.0  # the Monte Carlo standard error of the p-value
    sequential: dict | None = None  # {"decided_at": runs or None, "e_value": the largest e-value seen}

    def to_dict(self) -> dict:
        return {"verdict": self.verdict, "p_value": self.p_value, "p_value_method": self.p_value_method,
                "mc_draws": self.mc_draws, "p_value_se": round(self.p_value_se, 6),
                "statistic": round(self.statistic, 4), "df": self.df, "alpha": self.alpha, "tv": round(self.tv, 4),
                "tv_exact_engine": round(self.tv_exact_engine, 4),
                "tv_ci": [round(x, 4) for x in self.tv_ci], "samples": self.samples, "cells": self.cells,
                "detectable_tv": round(self.detectable_tv, 4), "sequential": self.sequential,
                "top": [{"tokens": list(s), "observed": round(o, 5), "exact": round(e, 5)} for s, o, e in self.top]}


@dataclass
class Cells:
    """The cells of a joint audit: ``probs[i]`` is cell i's exact probability, ``index`` maps a listed sequence
    to its cell, ``other`` is the cell of every unlisted sequence (None where p leaves them no mass)."""
    probs: list
    index: dict
    other: int | None
    singles: dict  # cell -> its one sequence, for the cells of one sequence

    def __len__(self) -> int:
        return len(self.probs)

    def cell_of(self, seq) -> int | None:
        return self.index.get(tuple(seq), self.other)

    def law(self, dist: dict) -> list:
        """Another law over sequences (an engine's, exact) gathered into these cells."""
        out = [0.0] * len(self.probs)
        for s, v in dist.items():
            c = self.cell_of(s)
            if c is not None:
                out[c] += float(v)
        return out


def cells_of(exact: dict, n: int) -> Cells:
    """The cells for ``n`` runs: each sequence expecting ``MIN_EXPECTED`` runs alone, the rest pooled in order of
    probability into cells of at least ``MIN_EXPECTED`` expected runs, the unlisted mass in the last.

    >>> c = cells_of({(i,): 1 / 100 for i in range(100)}, 200)  # near uniform: 2 expected runs each
    >>> len(c), min(c.probs) * 200 >= MIN_EXPECTED
    (33, True)
    """
    order = sorted(exact, key=lambda s: (-exact[s], repr(s)))
    probs, index, singles, group, mass = [], {}, {}, [], 0.0
    for s in order:
        v = float(exact[s])
        if v * n >= MIN_EXPECTED:
            singles[len(probs)] = s
            index[s] = len(probs)
            probs.append(v)
            continue
        group.append(s)
        mass += v
        if mass * n >= MIN_EXPECTED:
            for t in group:
                index[t] = len(probs)
            probs.append(mass)
            group, mass = [], 0.0
    rest = max(0.0, 1.0 - sum(float(v) for v in exact.values()))
    rest = rest if rest > 1e-12 else 0.0
    if group or rest > 0:  # the unlisted mass and the last short group: one cell, or folded into the last one
        if (mass + rest) * n >= MIN_EXPECTED or not probs:
            for t in group:
                index[t] = len(probs)
            probs.append(mass + rest)
        else:
            last = len(probs) - 1
            singles.pop(last, None)
            for t in group:
                index[t] = last
            probs[last] += mass + rest
    other = None if rest == 0 else len(probs) - 1
    return Cells(probs, index, other, singles)




def preload() -> None:
    """Load what a verdict needs (scipy's chi-square, its noncentral twin, the root finder, numpy's generator)
    now: the audit calls it before the engine's process exists, so nothing that process could write is
    imported later."""
    chi2_sf(1.0, 1)
    noncentrality(1)
    null_statistics([0.5, 0.5], 2, 2, 0)


def chi2_sf(x: float, df: int) -> float:
    from scipy.stats import chi2
    return float(chi2.sf(x, df))


def mc_draws(alpha: float) -> int:
    """Monte Carlo draws for a p-value judged at ``alpha``: 50 / alpha, from MIN_DRAWS to MAX_DRAWS."""
    return int(min(MAX_DRAWS, max(MIN_DRAWS, math.ceil(50 / alpha))))


def pearson(counts, probs, n: int):
    """Pearson's statistic of count rows (..., C) against ``probs`` (C,), all > 0."""
    e = n * np.asarray(probs, dtype=float)
    return (((np.asarray(counts, dtype=float) - e) ** 2) / e).sum(axis=-1)


def null_statistics(probs, n: int, draws: int, seed) -> np.ndarray:
    """Pearson's statistic of ``draws`` seeded samples of ``n`` runs from the cells' exact law ``probs``."""
    probs = np.asarray(probs, dtype=float)
    probs = probs / probs.sum()
    rng = np.random.default_rng([*np.atleast_1d(seed).tolist(), 2024])
    chunk = max(1, 2_000_000 // len(probs))
    out = [pearson(rng.multinomial(n, probs, size=min(chunk, draws - i)), probs, n) for i in range(0, draws, chunk)]
    return np.concatenate(out)


def mc_p_value(stat: float, null) -> tuple:
    """(p, its standard error): (1 + #{T* >= T}) / (1 + B), valid for an exact engine at every B (ties count
    against the engine's favour: T* within 1e-9 relative of T counts as >= T)."""
    null = np.asarray(null)
    hits = int(np.count_nonzero(null >= stat - 1e-9 * max(1.0, abs(stat))))
    p = (1 + hits) / (1 + len(null))
    return p, math.sqrt(p * (1 - p) / (1 + len(null)))


def calibrated(stat: float, probs, n: int, alpha: float, seed: int, df: int, method: str = "auto") -> tuple:
    """(p-value, method, draws, standard error) of Pearson's ``stat`` over cells ``probs``. ``method``: "auto"
    (exact enumeration where ``audit_exact.feasible``, Monte Carlo beyond), "exact" (the same, and a note in the
    method where it falls back) or "monte carlo"."""
    if method not in P_VALUE_METHODS:
        raise ValueError(f"the p-value method must be one of {', '.join(P_VALUE_METHODS)}, got {method!r}")
    if len(probs) < 2:
        return 1.0, "monte carlo", 0, 0.0
    note = ""
    if method != "monte carlo":
        from . import audit_exact
        if audit_exact.feasible(n, len(probs)):
            return audit_exact.exact_tail(stat, probs, n), "exact (every outcome enumerated)", 0, 0.0
        if method == "exact":
            note = (f" (exact enumeration would need {audit_exact.outcomes(n, len(probs)):.3g} outcomes, over its "
                    f"limit of {audit_exact.EXACT_LIMIT:,})")
    b = mc_draws(alpha)
    if alpha * (1 + b) < 20:  # a million draws cannot resolve this rate: say so
        return chi2_sf(stat, df), "chi-square approximation" + note, 0, 0.0
    # the draws are seeded by the seed and the statistic itself: reproducible, yet a fresh set of draws for each
    # outcome, so the rate over audits is the rate averaged over the draws (<= alpha), not the rate of one fixed
    # set of draws (which sits within about 1 / sqrt(50) of alpha, either side)
    key = int(round(min(stat, 1e12) * 1e6)) % 2**62
    p, se = mc_p_value(stat, null_statistics(probs, n, b, [seed, key]))
    return p, "monte carlo" + note, b, se


def detectable(n: int, df: int, alpha: float = ALPHA, power: float = POWER) -> float:
    """The TV over the cells that ``n`` samples detect with probability ``power`` (chi-square at ``alpha``)."""
    lam = noncentrality(df, alpha, power)
    return math.sqrt(lam / (4 * n))


def noncentrality(df: int, alpha: float = ALPHA, power: float = POWER) -> float:
    """The noncentrality at which the chi-square test at ``alpha`` with ``df`` degrees rejects with ``power``."""
    from scipy.optimize import brentq
    from scipy.stats import chi2, ncx2
    crit = chi2.isf(alpha, df)
    return float(brentq(lambda lam: ncx2.sf(crit, df, lam) - power, 1e-6, 1e6))


def detectable_curves(runs=(100, 200, 500, 1000, 2000, 5000, 10000), cells=(5, 20, 80),
                      alpha: float = ALPHA) -> dict:
    """{"C cells": [(N, detectable TV)]}: what audits of each size can see, for a few numbers of cells.

    >>> c = detectable_curves((100, 10000), (5,))
    >>> c["5 cells"][1][1] < c["5 cells"][0][1]
    True
    """
    return {f"{c} cells": [(n, detectable(n, c - 1, alpha)) for n in runs] for c in cells}


def samples_needed(tv: float, df: int, alpha: float = ALPHA, power: float = POWER) -> int:
    """Samples that detect a TV of ``tv`` over cells with ``df`` degrees with probability ``power`` (at least)."""
    return math.ceil(noncentrality(df, alpha, power) / (4 * tv * tv))


def worst_case_law(probs, tv: float) -> np.ndarray:
    """The engine that meets the Cauchy-Schwarz bound over cells ``probs`` at cell distance ``tv``: e = p (1 + c+)
    on a greedy half of p's mass (likeliest first) and p (1 - c-) on the rest, c+- set so that TV(e, p) = tv."""
    p = np.asarray(probs, dtype=float)
    s, plus = np.zeros(len(p)), 0.0
    for i in np.argsort(-p, kind="stable"):
        s[i] = 1.0 if plus <= 0.5 - p[i] / 2 else -1.0
        plus += p[i] if s[i] > 0 else 0.0
    mp, mm = p[s > 0].sum(), p[s < 0].sum()
    return p * np.where(s > 0, 1 + tv / mp, 1 - min(1.0, tv / mm))


def simulated_power(probs, law, n: int, alpha: float = ALPHA, sims: int = 2000, seed: int = 0) -> float:
    """The share of ``sims`` seeded audits of ``n`` runs from ``law`` (over cells ``probs``) that the judge's Monte
    Carlo test (its own draws and seed) calls "not the target"."""
    null = np.sort(null_statistics(probs, n, mc_draws(alpha), seed))
    stats = pearson(np.random.default_rng([seed, 99]).multinomial(n, law, size=sims), probs, n)
    hits = len(null) - np.searchsorted(null, stats - 1e-9 * np.maximum(1.0, stats), side="left")
    return float(np.mean((1 + hits) / (1 + len(null)) < alpha))


def runs_needed(exact: dict, tv: float, alpha: float = ALPHA, power: float = POWER, sims: int = 2000,
                seed: int = 0) -> tuple:
    """(N, df): the runs at which the audit detects the worst-case engine at cell distance ``tv`` (the one that
    meets the Cauchy-Schwarz bound, ``worst_case_law``) with probability ``power``, with the cells that N itself
    makes. The noncentral chi-square gives a first N (more runs make more cells: it iterates N ->
    samples_needed(tv, df(N)) until the degrees at N need no more runs); that approximation overstates the power
    of small-cell tables, so N then grows by 5% steps until ``sims`` seeded audits of the judge's own test reach
    ``power``.

    >>> n, df = runs_needed({(i,): 1 / 100 for i in range(100)}, 0.1)
    >>> df == len(cells_of({(i,): 1 / 100 for i in range(100)}, n)) - 1, samples_needed(0.1, df) <= n
    (True, True)
    """
    n = 2
    for _ in range(100):
        df = max(len(cells_of(exact, n)) - 1, 1)
        need = samples_needed(tv, df, alpha, power)
        if need <= n:
            break
        n = need
    for _ in range(60):
        cells = cells_of(exact, n)
        if len(cells) < 2 or simulated_power(cells.probs, worst_case_law(cells.probs, tv), n, alpha, sims,
                                             seed) >= power:
            break
        n = math.ceil(n * 1.05)
    return n, max(len(cells_of(exact, n)) - 1, 1)


# -- the sequential test: a mixture likelihood ratio, bounded by Ville's inequality ----------------------
def e_process(stream, probs, prior: float = 0.5) -> np.ndarray:
    """log e-values after each item of ``stream`` (cell indices) against the cells' law ``probs``: the
    Dirichlet(prior) mixture of multinomial alternatives over p. An exact engine's e-value is a nonnegative
    martingale of mean 1, so P(it ever reaches 1 / f) <= f (Ville's inequality)."""
    probs = np.asarray(probs, dtype=float)
    counts = np.zeros(len(probs))
    out = np.empty(len(stream))
    log_e = 0.0
    for t, c in enumerate(stream):
        if probs[c] <= 0:
            log_e = math.inf
        elif log_e < math.inf:
            log_e += math.log((counts[c] + prior) / (t + prior * len(probs))) - math.log(probs[c])
        counts[c] += 1
        out[t] = log_e
    return out


def sequential_decision(log_e, alpha: float, per_run=1) -> dict:
    """{"decided_at": the first run whose e-value reaches 1 / alpha (None: never), "e_value": the largest}."""
    log_e = np.asarray(log_e)[per_run - 1::per_run]
    hit = np.flatnonzero(log_e >= math.log(1 / alpha))
    top = float(np.max(log_e)) if len(log_e) else 0.0
    return {"decided_at": int(hit[0]) + 1 if len(hit) else None,
            "e_value": math.inf if top == math.inf else round(math.exp(min(top, 700.0)), 4)}


def judge_samples(samples: list, exact: dict, alpha: float = ALPHA, seed: int = 0, top: int = 10,
                  sequential: bool = False, budget: int | None = None, p_value_method: str = "auto") -> AuditResult:
    """The verdict on ``samples`` (tuples of tokens) against ``exact`` (sequence -> probability, the sequences
    the target gives mass; what is missing counts as "other"). ``sequential``: the mixture test over the cells
    of ``budget`` runs (default len(samples)); the verdict is "not the target" as soon as it decides.
    ``p_value_method``: "auto", "exact" or "monte carlo" (``calibrated``)."""
    n = len(samples)
    if n < 2:
        raise ValueError("an audit needs at least 2 samples")
    cells = cells_of(exact, n)
    keys = list(range(len(cells)))
    probs = list(cells.probs)
    cell = [cells.cell_of(s) for s in samples]
    impossible = any(c is None for c in cell)  # a sequence the target never emits
    if impossible:
        probs.append(0.0)
        keys.append(len(keys))
        cell = [len(keys) - 1 if c is None else c for c in cell]
    counts = np.bincount(cell, minlength=len(keys)).tolist()
    df = max(len(cells) - 1, 1)
    if impossible:
        stat, p_value, method, draws, se = math.inf, 0.0, "exact (a sequence the target never emits)", 0, 0.0
    else:
        stat = float(pearson(counts, probs, n))
        p_value, method, draws, se = calibrated(stat, probs, n, alpha, seed, df, p_value_method)
    tv = 0.5 * sum(abs(counts[k] / n - probs[k]) for k in keys)
    rng = random.Random(seed)
    seen = [k for k in keys for _ in range(counts[k])]
    # the sampling error of the observed frequencies: TV(resample, sample) over seeded bootstrap resamples; its
    # 95th percentile u gives tv +- u (the triangle inequality), and resamples of p itself show what an exact
    # engine's figure looks like with this many runs
    errors = sorted(_tv(_tally(rng.choices(seen, k=n), keys), {k: counts[k] / n for k in keys}, n)
                    for _ in range(BOOTSTRAP))
    u = errors[int(0.95 * BOOTSTRAP) - 1]
    ci = (max(0.0, tv - u), min(1.0, tv + u))
    null = sum(_tv(_tally(rng.choices(keys, probs, k=n), keys), dict(enumerate(probs)), n)
               for _ in range(BOOTSTRAP // 4))
    shown = sorted(cells.singles, key=lambda k: -probs[k])[:top]
    seq = judge_sequential(samples, exact, alpha, budget) if sequential else None
    rejected = p_value < alpha if not sequential else seq["decided_at"] is not None
    return AuditResult("not the target" if rejected else "consistent with the target", p_value, stat, df,
                       alpha, tv, ci, n, len(cells), detectable(n, df, alpha),
                       [(cells.singles[k], counts[k] / n, probs[k]) for k in shown], null / (BOOTSTRAP // 4),
                       method, draws, se, seq)


# -- token by token: randomized probability-integral transforms -----------------------------------------
def pit_inputs(rows, tokens) -> tuple:
    """(below_id, below_rank, mass) of ``tokens`` (..., K) under their conditionals ``rows`` (..., K, V):
    F(x-) in token-id order, F(x-) with tokens ordered likeliest first (ties by id), and p(x).

    >>> b, r, m = pit_inputs([[[0.2, 0.5, 0.3]]], [[2]])
    >>> [round(float(v[0][0]), 6) for v in (b, r, m)]
    [0.7, 0.5, 0.3]
    """
    rows = np.asarray(rows, dtype=float)
    x = np.asarray(tokens)[..., None]
    mass = np.take_along_axis(rows, x, axis=-1)
    below_id = np.take_along_axis(np.cumsum(rows, axis=-1), x, axis=-1) - mass
    ids = np.arange(rows.shape[-1])
    above = (rows > mass) | ((rows == mass) & (ids < x))
    below_rank = (rows * above).sum(axis=-1, keepdims=True)
    return below_id[..., 0], below_rank[..., 0], mass[..., 0]


def pits(below, mass, seed: int) -> np.ndarray:
    """u = F(x-) + V p(x) for each token (arrays of F(x-) and p(x) of any shape), V uniform from a generator
    seeded here: i.i.d. uniform on (0, 1) when each token is drawn from its conditional."""
    below, mass = np.asarray(below, dtype=float), np.asarray(mass, dtype=float)
    v = np.random.default_rng([seed, 7]).random(below.shape)
    return np.clip(below + v * mass, 0.0, 1.0)


def pit_bins(values: int) -> int:
    """The equal bins of the PIT tests for ``values`` PITs: PIT_BINS, fewer where each would expect under 5."""
    return int(min(PIT_BINS, max(2, values // 5)))


def _pit_cells(below_id, below_rank, mass, seed: int, budget: int | None = None) -> tuple:
    """The three streams of cell indices a token-by-token audit tests, {name: (cells, count of cells)}, with the
    bins that ``budget`` runs make (default: the runs given)."""
    n, k = mass.shape
    bins = pit_bins((budget or n) * k)
    grid = PAIR_GRID if (budget or n) * (k // 2) >= 5 * PAIR_GRID ** 2 else 2
    u_id, u_rank = pits(below_id, mass, seed), pits(below_rank, mass, seed)
    pairs = u_id[:, : 2 * (k // 2)].reshape(n, k // 2, 2).reshape(-1, 2)
    cut = lambda u, b: np.minimum((u * b).astype(int), b - 1)  # noqa: E731
    pair_cells = cut(pairs[:, 0], grid) * grid + cut(pairs[:, 1], grid)
    return {"pit, token-id order": (cut(u_id.ravel(), bins), bins),
            "pit, likeliest first (probability-rank cells)": (cut(u_rank.ravel(), bins), bins),
            "consecutive pairs": (pair_cells, grid * grid)}, u_rank


def pits_sequential(below_id, below_rank, mass, alpha: float = ALPHA, seed: int = 0,
                    budget: int | None = None) -> dict:
    """The sequential token-by-token test: the mean of the three streams' mixture e-processes (a mean of test
    martingales is one), token by token, read at the end of each run; cells fixed by ``budget`` runs."""
    below_id, below_rank, mass = (np.asarray(a, dtype=float) for a in (below_id, below_rank, mass))
    n, k = mass.shape
    streams, _ = _pit_cells(below_id, below_rank, mass, seed, budget)
    logs = []
    for name, (cells, c) in streams.items():
        le = e_process(cells, np.full(c, 1.0 / c))
        if name == "consecutive pairs":  # one pair per two tokens: its value held until the next pair
            le = np.repeat(le.reshape(n, k // 2), 2, axis=1) if k > 1 else np.zeros((n, 0))
            le = np.concatenate([le, le[:, -1:] if k > 1 else np.zeros((n, 1))], axis=1) if k % 2 else le
            le = le.ravel()
        logs.append(le)
    mean = np.log(np.mean(np.exp(np.minimum(np.stack(logs), 700.0)), axis=0))
    zero = np.flatnonzero(mass.ravel() <= 0)
    if len(zero):  # a token the target never emits: decided there
        mean[int(zero[0]):] = math.inf
    return sequential_decision(mean, alpha, per_run=k)


def judge_sequential(samples: list, exact: dict, alpha: float = ALPHA, budget: int | None = None) -> dict:
    """The sequential joint test over the cells of ``budget`` runs (default: the runs given)."""
    fixed = cells_of(exact, budget or len(samples))
    law = list(fixed.probs) + [0.0]
    stream = [fixed.cell_of(s) for s in samples]
    return sequential_decision(e_process([len(law) - 1 if c is None else c for c in stream], law), alpha)


def judge_pits(below_id, below_rank, mass, alpha: float = ALPHA, seed: int = 0, sequential: bool = False,
               budget: int | None = None, p_value_method: str = "auto") -> dict:
    """The token-by-token verdict on N runs of K tokens: ``below_id``, ``below_rank`` and ``mass`` are (N, K)
    arrays of F(x-) in token-id order, F(x-) in order of decreasing probability, and p(x), each from the
    target's exact conditional given the run's own prefix (``pit_inputs``). A token with p(x) = 0 refutes
    outright. ``sequential``: the verdict is the sequential test's (``pits_sequential``). The figures beside the
    verdict (``pit_figures``): the TV of each test's histogram from its uniform law, and for the probability-rank
    PITs its noise level, the TV this budget detects and the runs a TV needs (``pit_runs_needed``)."""
    below_id, below_rank, mass = (np.asarray(a, dtype=float) for a in (below_id, below_rank, mass))
    n, k = mass.shape
    if n < 2:
        raise ValueError("an audit needs at least 2 samples")
    zero = int(np.count_nonzero(mass <= 0))
    streams, u_rank = _pit_cells(below_id, below_rank, mass, seed)
    tests = []
    for i, (name, (cells, c)) in enumerate(streams.items()):
        m = len(cells)
        probs = np.full(c, 1.0 / c)
        stat = float(pearson(np.bincount(cells, minlength=c), probs, m)) if m else 0.0
        p, method, draws, se = calibrated(stat, probs, m, alpha / 3, seed + i, c - 1, p_value_method) if m else \
            (1.0, "monte carlo", 0, 0.0)
        tv = 0.5 * float(np.abs(np.bincount(cells, minlength=c) / m - probs).sum()) if m else 0.0
        tests.append({"name": name, "statistic": round(stat, 4), "cells": c, "values": m, "p_value": p,
                      "p_value_method": method, "mc_draws": draws, "p_value_se": round(se, 6), "tv": round(tv, 4)})
    p_value = 0.0 if zero else min(1.0, 3 * min(t["p_value"] for t in tests))
    seq = pits_sequential(below_id, below_rank, mass, alpha, seed, budget) if sequential else None
    rejected = p_value < alpha if not sequential else seq["decided_at"] is not None
    methods = sorted({t["p_value_method"] for t in tests})
    return {"verdict": "not the target" if rejected else "consistent with the target", "p_value": p_value,
            "p_value_method": ("exact (a token the target never emits)" if zero else
                               " and ".join(methods) + ", Bonferroni over 3 tests"),
            "alpha": alpha, "samples": n, "tokens_judged": n * k, "impossible_tokens": zero, "tests": tests,
            "sequential": seq, "mean_rank_pit": round(float(u_rank.mean()), 4)} | pit_figures(tests[1], alpha, seed)


def pit_figures(rank_test: dict, alpha: float, seed: int) -> dict:
    """The token-by-token audit's TV and power, defined on the probability-rank PITs' histogram (``rank_test``:
    its test's row): ``tv`` its TV from uniform over the bins, ``tv_exact_engine`` the mean TV that noise alone
    gives i.i.d. uniform PITs of the same count (seeded draws), ``detectable_tv`` the bins' TV at which that test
    alone, at f / 3, rejects i.i.d. PITs with probability 0.8 (noncentral chi-square over the values; the
    audit's Bonferroni verdict then rejects at least as often)."""
    m, c = rank_test["values"], rank_test["cells"]
    if m < 2:
        return {"tv": 0.0, "tv_exact_engine": 0.0, "detectable_tv": 1.0, "tv_definition": PIT_TV}
    draws = np.random.default_rng([seed, 31]).multinomial(m, np.full(c, 1.0 / c), size=BOOTSTRAP // 4)
    noise = float((0.5 * np.abs(draws / m - 1.0 / c).sum(axis=1)).mean())
    return {"tv": rank_test["tv"], "tv_exact_engine": round(noise, 4),
            "detectable_tv": round(detectable(m, c - 1, alpha / 3), 4), "tv_definition": PIT_TV}


PIT_TV = ("TV of the probability-rank PITs' histogram from uniform over its equal bins (every token of every run "
          "pooled); power for i.i.d. PITs, by the rank test alone at f/3")


def pit_runs_needed(tokens: int, tv: float, alpha: float = ALPHA, power: float = POWER, sims: int = 2000,
                    seed: int = 0) -> int:
    """Runs of ``tokens`` tokens at which the token-by-token audit detects, with probability ``power``, an engine
    whose probability-rank PITs are i.i.d. with a histogram at TV ``tv`` from uniform, the hardest such
    histogram (``worst_case_law`` over the bins that N * tokens values make): the noncentral chi-square gives a
    first N, then N grows by 5% steps until ``sims`` seeded simulations of the rank test at f / 3 (its Monte
    Carlo p-value, as the judge computes it) reach ``power``. The audit's verdict rejects whenever that test
    does, so its power is at least this.

    >>> n = pit_runs_needed(10, 0.1, alpha=0.01, sims=400)
    >>> bins = pit_bins(n * 10)
    >>> n * 10 >= samples_needed(0.1, bins - 1, 0.01 / 3) - 9
    True
    """
    n = 2
    for _ in range(100):
        need = math.ceil(samples_needed(tv, pit_bins(n * tokens) - 1, alpha / 3, power) / tokens)
        if need <= n:
            break
        n = need
    for _ in range(60):
        probs = np.full(pit_bins(n * tokens), 1.0 / pit_bins(n * tokens))
        if simulated_power(probs, worst_case_law(probs, tv), n * tokens, alpha / 3, sims, seed) >= power:
            break
        n = math.ceil(n * 1.05)
    return n


def _tv(counts: dict, probs: dict, n: int) -> float:
    return 0.5 * sum(abs(c / n - probs[k]) for k, c in counts.items())


def _tally(draw, keys) -> dict:
    out = dict.fromkeys(keys, 0)
    for k in draw:
        out[k] += 1
    return out
