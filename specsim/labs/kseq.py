"""k i.i.d. drafts of one position: SpecInfer, SpecTr's K-SEQ, and the optimal-transport bound.

k drafts x_1..x_k are drawn i.i.d. from the drafter's row q; the output y
must be distributed exactly as the target's row p. How often can y be one of
the drafts ("acceptance")? Three answers, for the same p, q and k:

* **SpecInfer** (Miao et al. 2024, "SpecInfer: Accelerating Large Language
  Model Serving with Tree-based Speculative Inference and Verification",
  ASPLOS '24, multi-step speculative sampling): try x_1, x_2, ... in turn,
  each against the current (p', q) with min(1, p'(x)/q(x)), and after a
  rejection p' <- normalize(max(0, p' - q)). This is specsim's
  ``Tree((k,))`` with i.i.d. drafts at the root, so ``specinfer_acceptance``
  reads it off the exact engine.
* **K-SEQ** (Sun et al. 2023, "SpecTr: Fast Speculative Decoding via Optimal
  Transport", NeurIPS 2023, arXiv:2310.15141, the k-sequential draft
  selection; the paper writes p for the drafter and q for the target, the
  other way round): accept x_i with min(1, p(x_i) / (rho q(x_i))), the same test
  for every i, and when all k are rejected draw y from the corrected residual

      p_res(x) = (p(x) - c min(q(x), p(x)/rho)) / (1 - beta)^k,
      beta = sum_x min(q(x), p(x)/rho),  c = (1 - (1 - beta)^k) / beta.

  It is a distribution (the output is exactly p) when c <= rho, i.e. when
  phi(rho) = rho beta - 1 + (1 - beta)^k >= 0. phi does not decrease in rho,
  phi(1) <= 0 <= phi(k), and the acceptance 1 - (1 - beta)^k does not
  increase in rho, so the best valid rho is rho*, the smallest root of
  phi (the paper's equation 1 - (1 - beta)^k = rho beta). ``kseq`` finds it
  by exact bisection; it is reported exact (``rho_exact``) when it is a
  rational with denominator <= 10^6 that makes phi exactly 0, and otherwise
  the rational just above rho* (within ``RHO_TOLERANCE``) is used: still a
  valid rho, so the output is still exactly p, with an acceptance at most a
  hair below the optimum's.
* **The optimal-transport bound**: the largest P(y in {x_1..x_k}) over every
  coupling of (k i.i.d. drafts from q) with y ~ p, a transport problem
  (SpecTr's optimal transport with membership cost). By max-flow
  min-cut (each tuple of drafts sends its mass to outputs among its own
  tokens), it equals min over token sets S of p(S) + 1 - q(S)^k, i.e.
  ``1 - max_S (q(S)^k - p(S))``: for k = 1 this is 1 - TV(p, q). ``ot_bound``
  computes it exactly over every subset; ``ot_bound_lp`` solves the linear
  program itself with scipy's HiGHS as a cross-check (within ``LP_TOLERANCE``).

>>> from fractions import Fraction as F
>>> p, q = (F(1, 2), F(1, 3), F(1, 6)), (F(1, 6), F(1, 3), F(1, 2))
>>> m = compare_multidraft(p, q, 2)
>>> m.alpha, m.specinfer, m.kseq.acceptance, m.ot
(Fraction(2, 3), Fraction(13, 18), Fraction(3, 4), Fraction(29, 36))
>>> m.kseq.exact, m.kseq.rho, m.kseq.rho_exact
(True, Fraction(3, 2), True)
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from fractions import Fraction
from typing import Sequence

from .. import exact
from ..rule import acceptance_probability
from ..rule import alpha as single_alpha
from ..schemes import Tree
from ..toy import ToyModel

MAX_K = 8
MAX_TUPLES = 50_000  # k-tuples of drafts an exactness check enumerates (V^k)
MAX_SUBSETS_VOCAB = 14  # ot_bound enumerates 2^V token sets
MAX_LP_VARIABLES = 20_000  # ot_bound_lp: V^k tuples x V outputs
RHO_TOLERANCE = Fraction(1, 10**12)
LP_TOLERANCE = 1e-7  # HiGHS's default primal and dual feasibility tolerance
FLOAT_TOLERANCE = 1e-12  # exactness of K-SEQ's output on float rows


def _rows(p, q, k):
    p, q = tuple(p), tuple(q)
    if not p or len(p) != len(q):
        raise ValueError(f"p and q must be rows of the same length, got {len(p)} and {len(q)}")
    for name, row in (("p", p), ("q", q)):
        if any(isinstance(v, (bool, str)) or not v >= 0 for v in row):
            raise ValueError(f"{name} must hold probabilities >= 0")
        total = sum(row)
        if total != 1 and not (any(isinstance(v, float) for v in row) and abs(total - 1) < 1e-9):
            raise ValueError(f"{name} must sum to 1, got {float(total):.6g}")
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
        raise ValueError(f"k (the number of drafts) must be an integer in 1..{MAX_K}, got {k!r}")
    return p, q


# -- SpecInfer: the exact engine's one-level tree -----------------------------------

def one_position_pair(p, q) -> ToyModel:
    """p and q as a model pair of order 0 (the same rows after every context), tokens t0, t1, ..."""
    vocab = tuple(f"t{i}" for i in range(len(p)))
    return ToyModel(vocab, 0, {(): tuple(p)}, {(): tuple(q)}, "one position")


def specinfer_acceptance(p: Sequence, q: Sequence, k: int):
    """P(one of k i.i.d. drafts is accepted) under SpecInfer's recursive rejection sampling: the
    exact engine's P(K = 1) for ``Tree((k,))`` (i.i.d. drafts) on the one-position pair.

    >>> from fractions import Fraction as F
    >>> specinfer_acceptance((F(1, 2), F(1, 2)), (F(1), F(0)), 2)
    Fraction(1, 2)
    """
    p, q = _rows(p, q, k)
    return exact.round_distribution(one_position_pair(p, q), (), Tree((k,))).accepted[1]


# -- K-SEQ ------------------------------------------------------------------------

@dataclass(frozen=True)
class KSeqResult:
    """SpecTr's K-SEQ on one position.

    acceptance: P(the output is one of the k drafts) = 1 - (1 - beta)^k at ``rho``;
    rho: the rho used; rho_exact: it is rho* exactly (else the rational just above rho*, within
    ``RHO_TOLERANCE``); beta: one draft's acceptance sum_x min(q(x), p(x)/rho); residual: the row
    drawn from when every draft is rejected (None when that cannot happen); output: the output
    distribution, enumerated over every k-tuple of drafts; exact: output == p (exactly for
    Fraction rows, within ``FLOAT_TOLERANCE`` for floats).
    """

    k: int
    rho: object
    rho_exact: bool
    beta: object
    acceptance: object
    residual: tuple | None
    output: tuple
    exact: bool


def kseq_beta(p, q, rho):
    """beta(rho) = sum_x min(q(x), p(x)/rho): one draft's chance of passing K-SEQ's test."""
    return sum((min(qx, px / rho) for px, qx in zip(p, q)), p[0] - p[0])


def kseq_phi(p, q, k, rho):
    """rho beta - 1 + (1 - beta)^k: >= 0 exactly when rho is valid (the residual is a distribution)."""
    b = kseq_beta(p, q, rho)
    return rho * b - 1 + (1 - b) ** k


def optimal_rho(p, q, k) -> tuple:
    """(rho, exact): rho* = the smallest rho in [1, k] with phi(rho) >= 0, by bisection.

    Exact when rho* is a rational with denominator <= 10^6 (checked: phi(rho*) == 0 exactly);
    otherwise the upper end of a bracket of width <= ``RHO_TOLERANCE`` (phi >= 0 there: valid).
    Float rows: the upper end, exact False.
    """
    one = p[0] - p[0] + 1
    lo, hi = one, one * k
    if kseq_phi(p, q, k, lo) >= 0:
        return lo, True
    floats = isinstance(lo, float)
    tol = float(RHO_TOLERANCE) if floats else RHO_TOLERANCE
    while hi - lo > tol:
        mid = (lo + hi) / 2
        if not floats:
            mid = Fraction(mid).limit_denominator(2**64)  # keep the numbers short; any point inside will do
            if not lo < mid < hi:
                mid = (lo + hi) / 2
        if kseq_phi(p, q, k, mid) >= 0:
            hi = mid
        else:
            lo = mid
    if not floats:
        guess = hi.limit_denominator(10**6)
        if lo < guess <= hi and kseq_phi(p, q, k, guess) == 0:
            return guess, True
    return hi, False


def kseq_output(p, q, k, rho) -> tuple:
    """(residual, output): the corrected residual at ``rho`` and the output distribution of
    K-SEQ, by enumerating every k-tuple of drafts with its probability prod q(x_i)."""
    zero = p[0] - p[0]
    b = kseq_beta(p, q, rho)
    none = (1 - b) ** k  # P(every draft rejected)
    residual = None
    if none > 0:
        c = (1 - (1 - b) ** k) / b if b > 0 else zero + k
        residual = tuple((px - c * min(qx, px / rho)) / none for px, qx in zip(p, q))
        if min(residual) < (-FLOAT_TOLERANCE if isinstance(none, float) else 0):
            raise ValueError(f"rho = {rho} is below rho*: the corrected residual has a negative entry")
    test = [acceptance_probability(px / rho, qx) if qx > 0 else zero for px, qx in zip(p, q)]
    support = [x for x, qx in enumerate(q) if qx > 0]
    if len(support) ** k > MAX_TUPLES:
        raise ValueError(f"{len(support)}^{k} tuples of drafts is over {MAX_TUPLES:,}: lower k or the vocabulary")
    output = [zero] * len(p)
    for drafts in itertools.product(support, repeat=k):
        mass = zero + 1
        for x in drafts:
            mass = mass * q[x]
        for x in drafts:  # the first accepted draft is the output
            output[x] += mass * test[x]
            mass = mass * (1 - test[x])
        if mass and residual is not None:
            for y, ry in enumerate(residual):
                output[y] += mass * ry
    return residual, tuple(output)


def kseq(p: Sequence, q: Sequence, k: int) -> KSeqResult:
    """K-SEQ with the best rho, its acceptance, and its output checked against p by enumeration.

    >>> from fractions import Fraction as F
    >>> r = kseq((F(3, 5), F(3, 10), F(1, 10)), (F(1, 2), F(2, 5), F(1, 10)), 2)
    >>> r.exact, r.rho_exact, round(float(r.rho), 9), round(float(r.acceptance), 9)
    (True, False, 1.153112887, 0.976556444)
    """
    p, q = _rows(p, q, k)
    rho, rho_exact = optimal_rho(p, q, k)
    residual, output = kseq_output(p, q, k, rho)
    if isinstance(rho, float) or any(isinstance(v, float) for v in p + q):
        same = all(abs(a - b) <= FLOAT_TOLERANCE for a, b in zip(output, p))
    else:
        same = output == p
    b = kseq_beta(p, q, rho)
    return KSeqResult(k, rho, rho_exact, b, 1 - (1 - b) ** k, residual, output, same)


# -- the optimal-transport bound ------------------------------------------------------

def ot_bound(p: Sequence, q: Sequence, k: int):
    """The most P(output in drafts) any valid selection of k i.i.d. drafts can reach, exactly:
    1 - max over token sets S of (q(S)^k - p(S)) (max-flow min-cut; see the module docstring).
    A Fraction for Fraction rows.

    >>> from fractions import Fraction as F
    >>> ot_bound((F(1, 2), F(1, 2)), (F(1), F(0)), 1), ot_bound((F(1, 2), F(1, 2)), (F(3, 4), F(1, 4)), 2)
    (Fraction(1, 2), Fraction(15, 16))
    """
    p, q = _rows(p, q, k)
    n = len(p)
    if n > MAX_SUBSETS_VOCAB:
        raise ValueError(f"the exact bound enumerates 2^{n} token sets; at most {MAX_SUBSETS_VOCAB} tokens")
    zero = p[0] - p[0]
    ps, qs = [zero] * (1 << n), [zero] * (1 << n)
    worst = zero  # S = {} gives 0
    for mask in range(1, 1 << n):
        low = (mask & -mask).bit_length() - 1
        rest = mask & (mask - 1)
        ps[mask], qs[mask] = ps[rest] + p[low], qs[rest] + q[low]
        gap = qs[mask] ** k - ps[mask]
        if gap > worst:
            worst = gap
    return 1 - worst


@dataclass(frozen=True)
class LPBound:
    """The optimal-transport linear program solved by scipy (HiGHS): value within ``tolerance``."""

    value: float
    tolerance: float
    variables: int
    status: str


def ot_bound_lp(p: Sequence, q: Sequence, k: int) -> LPBound:
    """The OT bound as the linear program itself: maximize sum over (tuple, y in tuple) of pi,
    pi >= 0, each tuple's row summing to prod q, each output's column to p(y).

    >>> from fractions import Fraction as F
    >>> round(ot_bound_lp((F(1, 2), F(1, 2)), (F(3, 4), F(1, 4)), 2).value, 6)
    0.9375
    """
    from scipy.optimize import linprog  # scipy only here
    from scipy.sparse import coo_matrix
    p, q = _rows(p, q, k)
    n = len(p)
    tuples = list(itertools.product(range(n), repeat=k))
    size = len(tuples) * n
    if size > MAX_LP_VARIABLES:
        raise ValueError(f"the linear program has {size:,} variables (V^k x V); at most {MAX_LP_VARIABLES:,}: "
                         "lower k or the vocabulary")
    rows, cols, cost = [], [], []
    for t, drafts in enumerate(tuples):
        for y in range(n):
            j = t * n + y
            rows += [t, len(tuples) + y]
            cols += [j, j]
            cost.append(-1.0 if y in drafts else 0.0)
    a_eq = coo_matrix(([1.0] * len(rows), (rows, cols)), shape=(len(tuples) + n, size)).tocsr()
    b_eq = [float(_product(q[x] for x in drafts)) for drafts in tuples] + [float(v) for v in p]
    res = linprog(cost, A_eq=a_eq, b_eq=b_eq, bounds=(0, None), method="highs")
    if res.status != 0:
        raise ValueError(f"the linear program was not solved: {res.message}")
    return LPBound(-res.fun, LP_TOLERANCE, size, res.message)


def _product(values):
    out = 1
    for v in values:
        out = out * v
    return out


# -- all three ---------------------------------------------------------------------

@dataclass(frozen=True)
class MultiDraft:
    """One position, k i.i.d. drafts: single-draft alpha, SpecInfer, K-SEQ and the OT bound."""

    k: int
    alpha: object
    specinfer: object
    kseq: KSeqResult
    ot: object

    @property
    def gaps(self) -> dict:
        """How far each method is below the OT bound."""
        return {"specinfer": self.ot - self.specinfer, "kseq": self.ot - self.kseq.acceptance}


def compare_multidraft(p: Sequence, q: Sequence, k: int) -> MultiDraft:
    """SpecInfer, K-SEQ and the OT bound for the same p, q and k (see the module docstring)."""
    p, q = _rows(p, q, k)
    return MultiDraft(k, single_alpha(p, q), specinfer_acceptance(p, q, k), kseq(p, q, k), ot_bound(p, q, k))
