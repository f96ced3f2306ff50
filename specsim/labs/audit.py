"""Judge an engine by the tokens it emits: a goodness-of-fit test against the target's exact distribution.

An engine that claims to sample the target's distribution p is run N times
(seeded, independent runs) and its first K tokens are counted. The exact
probabilities come from the target's own forward passes (``specsim.gpt.audit``),
never from the engine. This module is the arithmetic of the verdict:

* **cells**: every K-token sequence whose exact probability is at least
  ``MIN_EXPECTED / N`` is a cell of its own, the rest of the mass one more
  cell ("other"), merged with the smallest cells until every cell expects at
  least ``MIN_EXPECTED`` samples. The cells depend on p and N only, never on
  the samples, so the test keeps its stated false-alarm rate;
* **test**: Pearson's chi-square over the cells, rejected ("not the target")
  when the p-value is below the false-alarm rate ``alpha`` (default 0.001:
  one false alarm in a thousand audits of an exact engine);
* **TV**: half the sum of |observed frequency - p| over the cells, with the
  interval tv +- u, u the 95th percentile of the observed frequencies' own
  sampling error (seeded bootstrap; by the triangle inequality the engine's
  true cell TV lies within u of tv when its error does). Noise alone gives an
  exact engine a TV above 0 (``tv_exact_engine``: its mean with this many
  runs, simulated from p), and coarsening into cells can only hide a
  difference: read the figure beside those two;
* **power**: Cauchy-Schwarz gives sum (q - p)^2 / p >= (2 TV)^2 over the cells,
  so N samples meet any engine whose cell distribution is TV = d away with a
  noncentrality of at least 4 N d^2. ``detectable_tv`` is the d this budget
  detects with probability ``POWER`` (0.8), ``samples_needed(d)`` the N that
  detects d.

Samples can refute exactness, never prove it: "consistent with the target"
means this budget saw no difference larger than ``detectable_tv``.

>>> p = {("a",): 0.5, ("b",): 0.3, ("c",): 0.2}
>>> r = judge_samples([("a",)] * 50 + [("b",)] * 30 + [("c",)] * 20, p)
>>> r.verdict, r.p_value == 1.0, r.tv
('consistent with the target', True, 0.0)
>>> judge_samples([("a",)] * 100, p).verdict
'not the target'
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

ALPHA = 1e-3  # the default false-alarm rate
MAX_SAMPLES, MAX_TOKENS = 100_000, 3  # runs of one audit; K, the tokens judged jointly
MIN_EXPECTED = 5.0  # samples every cell must expect (the chi-square approximation)
POWER = 0.8
BOOTSTRAP = 400
OTHER = ("<other>",)


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

    def to_dict(self) -> dict:
        return {"verdict": self.verdict, "p_value": self.p_value, "statistic": round(self.statistic, 4),
                "df": self.df, "alpha": self.alpha, "tv": round(self.tv, 4),
                "tv_exact_engine": round(self.tv_exact_engine, 4),
                "tv_ci": [round(x, 4) for x in self.tv_ci], "samples": self.samples, "cells": self.cells,
                "detectable_tv": round(self.detectable_tv, 4),
                "top": [{"tokens": list(s), "observed": round(o, 5), "exact": round(e, 5)} for s, o, e in self.top]}


def cells_of(exact: dict, n: int) -> tuple:
    """(cells: sequence -> probability, merged: the sequences folded into "other") for ``n`` samples."""
    threshold = MIN_EXPECTED / n
    cells = {s: p for s, p in exact.items() if p >= threshold}
    rest = max(0.0, 1.0 - sum(cells.values()))
    merged = set()
    while rest * n < MIN_EXPECTED and cells and rest > 0:  # fold the smallest cells into "other"
        s = min(cells, key=cells.get)
        rest += cells.pop(s)
        merged.add(s)
    if rest > 0:
        cells[OTHER] = rest
    return cells, merged


DEFAULT_MEMORY_MB, MIN_MEMORY_MB, MAX_MEMORY_MB = 8192, 1024, 65536  # the engine's address space (torch: ~2 GB)


def preload() -> None:
    """Load what a verdict needs (scipy's chi-square, its noncentral twin, the root finder) now: the audit
    calls it before the engine's process exists, so nothing that process could write is imported later."""
    chi2_sf(1.0, 1)
    noncentrality(1)


def chi2_sf(x: float, df: int) -> float:
    from scipy.stats import chi2
    return float(chi2.sf(x, df))


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
    """Samples that detect a TV of ``tv`` over the cells with probability ``power`` (at least)."""
    return math.ceil(noncentrality(df, alpha, power) / (4 * tv * tv))


def judge_samples(samples: list, exact: dict, alpha: float = ALPHA, seed: int = 0, top: int = 10) -> AuditResult:
    """The verdict on ``samples`` (tuples of tokens) against ``exact`` (sequence -> probability, the sequences
    the target gives mass; what is missing counts as "other")."""
    n = len(samples)
    if n < 2:
        raise ValueError("an audit needs at least 2 samples")
    cells, merged = cells_of(exact, n)
    counts = {s: 0 for s in cells}
    for s in samples:
        s = tuple(s)
        counts[s if s in counts else OTHER] = counts.get(s if s in counts else OTHER, 0) + 1
    if OTHER in counts and OTHER not in cells:  # samples outside every cell where p leaves no mass at all
        cells[OTHER] = 0.0
    keys = list(cells)
    if any(cells[k] == 0 and counts[k] for k in keys):  # a sequence the target never emits
        stat, p_value, df = math.inf, 0.0, max(len(keys) - 1, 1)
    else:
        stat = sum((counts[k] - n * cells[k]) ** 2 / (n * cells[k]) for k in keys if cells[k] > 0)
        df = max(len(keys) - 1, 1)
        p_value = chi2_sf(stat, df) if len(keys) > 1 else 1.0
    tv = 0.5 * sum(abs(counts[k] / n - cells[k]) for k in keys)
    rng = random.Random(seed)
    seen = [k for k in keys for _ in range(counts[k])]
    # the sampling error of the observed frequencies: TV(resample, sample) over seeded bootstrap resamples; its
    # 95th percentile u gives tv +- u (the triangle inequality), and resamples of p itself show what an exact
    # engine's figure looks like with this many runs
    errors = sorted(_tv(_tally(rng.choices(seen, k=n), keys), {k: counts[k] / n for k in keys}, n)
                    for _ in range(BOOTSTRAP))
    u = errors[int(0.95 * BOOTSTRAP) - 1]
    ci = (max(0.0, tv - u), min(1.0, tv + u))
    weights = [cells[k] for k in keys]
    null = sum(_tv(_tally(rng.choices(keys, weights, k=n), keys), cells, n) for _ in range(BOOTSTRAP // 4))
    shown = sorted((k for k in keys if k != OTHER), key=lambda k: -cells[k])[:top]
    return AuditResult("not the target" if p_value < alpha else "consistent with the target", p_value, stat, df,
                       alpha, tv, ci, n, len(keys), detectable(n, df, alpha),
                       [(k, counts[k] / n, cells[k]) for k in shown], null / (BOOTSTRAP // 4))


def _tv(counts: dict, probs: dict, n: int) -> float:
    return 0.5 * sum(abs(c / n - probs[k]) for k, c in counts.items())


def _tally(draw, keys) -> dict:
    out = dict.fromkeys(keys, 0)
    for k in draw:
        out[k] += 1
    return out
