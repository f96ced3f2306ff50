"""Tokens per round, speedup and the best draft length.

Under the i.i.d. assumption (every position accepted with the same rate
alpha) the number of accepted drafts K has P(K >= k) = alpha^k for k <= gamma
and a round emits K + 1 tokens::

    E[tokens per round] = sum_{k=0..gamma} alpha^k = (1 - alpha^(gamma+1)) / (1 - alpha)

A round costs gamma drafter steps (``cost`` each, relative to one target
step) plus one target pass, so against plain decoding::

    speedup = (1 - alpha^(gamma+1)) / ((1 - alpha) (gamma * cost + 1))

All functions work on Fractions (exact) and floats.

Example
-------
>>> from fractions import Fraction as F
>>> expected_tokens(F(9, 10), 3)
Fraction(3439, 1000)
>>> best_gamma(0.8, 1/20)
(8, 3.092...)
>>> round(speedup(0.6, 8, 1/5), 2)
0.95
"""
from __future__ import annotations

from fractions import Fraction

# Two reference speedup tables (the worked example the lessons use).
TABLE_COSTS = (Fraction(1, 20), Fraction(1, 5))
TABLE_ALPHAS = (Fraction(3, 5), Fraction(4, 5), Fraction(9, 10))
TABLE_GAMMAS = (1, 2, 4, 6, 8, 12)
DEFAULT_MAX_GAMMA = 32
# The (alpha, cost) grid of the best-gamma maps: alpha 0.02..0.98, cost 0.01..0.60.
GRID_ALPHAS = tuple(Fraction(k, 50) for k in range(1, 50))
GRID_COSTS = tuple(Fraction(k, 100) for k in range(1, 61))


def _exact(x):
    """Plain integers become Fractions, so integer inputs stay exact (0 -> Fraction(0))."""
    return Fraction(x) if isinstance(x, int) and not isinstance(x, bool) else x


def _check(alpha=None, gamma=None, cost=None):
    if alpha is not None and not 0 <= alpha <= 1:
        raise ValueError(f"alpha must be in [0, 1], got {alpha}")
    if gamma is not None and (int(gamma) != gamma or gamma < 0):
        raise ValueError(f"gamma must be an integer >= 0, got {gamma}")
    if cost is not None and not cost >= 0:
        raise ValueError(f"cost must be >= 0, got {cost}")


def expected_tokens(alpha, gamma: int):
    """(1 - alpha^(gamma+1)) / (1 - alpha); gamma + 1 when alpha = 1.

    >>> expected_tokens(1, 4)
    Fraction(5, 1)
    """
    _check(alpha=alpha, gamma=gamma)
    alpha = _exact(alpha)
    if alpha == 1:
        return alpha * (gamma + 1)
    return (1 - alpha ** (gamma + 1)) / (1 - alpha)


def round_cost(gamma: int, cost):
    """Cost of one round in target-step units: gamma * cost + 1."""
    return gamma * _exact(cost) + 1


def speedup(alpha, gamma: int, cost):
    """Expected tokens per round divided by the round's cost in target steps."""
    _check(alpha=alpha, gamma=gamma, cost=cost)
    return expected_tokens(alpha, gamma) / round_cost(gamma, cost)


def best_gamma(alpha, cost, max_gamma: int = DEFAULT_MAX_GAMMA):
    """(gamma, speedup) maximizing the speedup over gamma = 1..max_gamma.

    Ties go to the smaller gamma (cheaper, fewer wasted drafts).
    """
    _check(alpha=alpha, cost=cost)
    if max_gamma < 1:
        raise ValueError(f"max_gamma must be >= 1, got {max_gamma}")
    best = (1, speedup(alpha, 1, cost))
    for g in range(2, max_gamma + 1):
        s = speedup(alpha, g, cost)
        if s > best[1]:
            best = (g, s)
    return best


def speedup_curve(alpha, cost, max_gamma: int = DEFAULT_MAX_GAMMA) -> dict:
    """The speedup at every gamma = 1..max_gamma, and the best one (as ``best_gamma`` picks it).

    Returns {"gammas": [1..max_gamma], "speedups": [...], "best_gamma": g, "best_speedup": s}.

    >>> c = speedup_curve(Fraction(3, 5), Fraction(1, 5), 4)
    >>> c["best_gamma"], [round(float(s), 3) for s in c["speedups"]]
    (2, [1.333, 1.4, 1.36, 1.281])
    """
    g, s = best_gamma(alpha, cost, max_gamma)
    gammas = list(range(1, max_gamma + 1))
    return {"gammas": gammas, "speedups": [speedup(alpha, k, cost) for k in gammas],
            "best_gamma": g, "best_speedup": s}


def best_gamma_grid(alphas=GRID_ALPHAS, costs=GRID_COSTS, max_gamma: int = DEFAULT_MAX_GAMMA) -> dict:
    """``best_gamma`` at every (cost, alpha) of a grid, in floats (thousands of cells).

    Returns {"alphas", "costs" (floats), "best_gamma", "best_speedup"}: the
    last two are lists of rows, one row per cost, one entry per alpha.

    >>> grid = best_gamma_grid([0.6, 0.9], [Fraction(1, 20)])
    >>> grid["best_gamma"]
    [[4, 13]]
    """
    alphas, costs = [float(a) for a in alphas], [float(c) for c in costs]
    cells = [[best_gamma(a, c, max_gamma) for a in alphas] for c in costs]
    return {"alphas": alphas, "costs": costs,
            "best_gamma": [[g for g, _ in row] for row in cells],
            "best_speedup": [[s for _, s in row] for row in cells]}


def speedup_tables(costs=TABLE_COSTS, alphas=TABLE_ALPHAS, gammas=TABLE_GAMMAS,
                   max_gamma: int = DEFAULT_MAX_GAMMA) -> list:
    """The two reference speedup tables as data (exact Fractions).

    Returns [{"cost", "rows": [{"alpha", "speedups": {gamma: s}, "best_gamma", "best_speedup"}]}].
    """
    tables = []
    for c in costs:
        rows = []
        for a in alphas:
            g, s = best_gamma(a, c, max_gamma)
            rows.append({"alpha": a, "speedups": {k: speedup(a, k, c) for k in gammas},
                         "best_gamma": g, "best_speedup": s})
        tables.append({"cost": c, "rows": rows})
    return tables


def refined_speedup(tokens_per_round, gamma: int, cost, verify_ratio):
    """Speedup allowed by measured acceptance and measured costs.

    ``verify_ratio`` is the cost of one target pass over gamma + 1 positions
    relative to one single-position target step (1 in the simple formula).
    """
    _check(gamma=gamma, cost=cost)
    return tokens_per_round / (gamma * cost + verify_ratio)


def alpha_needed(target_speedup, gamma: int, cost, verify_ratio=1, tol: float = 1e-9):
    """The least alpha at which i.i.d. rounds of ``gamma`` drafts, with these costs, reach ``target_speedup``
    (``refined_speedup`` of ``expected_tokens(alpha, gamma)``); None when even alpha = 1 falls short,
    0.0 when alpha = 0 already reaches it. A float, by bisection to ``tol`` (tokens per round rise with alpha).

    >>> round(alpha_needed(2, 3, 0.1, 1.2), 4)  # 2 x (3 c + v) = 3 tokens per round
    0.8105
    >>> round(float(expected_tokens(0.8105, 3)) / (3 * 0.1 + 1.2), 3)
    2.0
    >>> alpha_needed(3, 1, 0.1) is None  # at most 2 tokens per round for 1.1 target steps
    True
    """
    _check(gamma=gamma, cost=cost)
    reach = lambda a: float(refined_speedup(expected_tokens(a, gamma), gamma, cost, verify_ratio))  # noqa: E731
    if reach(1.0) < target_speedup:
        return None
    if reach(0.0) >= target_speedup:
        return 0.0
    lo, hi = 0.0, 1.0
    while hi - lo > tol:
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if reach(mid) >= target_speedup else (mid, hi)
    return hi


def exact_speedup(expected_tokens, gamma: int, cost):
    """Speedup of rounds whose exact expected tokens per round are known (not the i.i.d. formula).

    The round costs gamma drafter steps and one target pass, as in ``speedup``.

    >>> exact_speedup(Fraction(1659, 500), 3, Fraction(1, 20))
    Fraction(1659, 575)
    """
    return refined_speedup(expected_tokens, gamma, cost, 1)


def exact_vs_iid(pair, context, gamma: int) -> dict:
    """Exact (non-i.i.d.) expected tokens per round of a model pair beside the formula.

    The formula uses the acceptance rate alpha of the first position only.

    >>> from specsim.toy import load_model
    >>> r = exact_vs_iid(load_model("seed"), ("a",), 3)
    >>> r["expected_tokens"], r["iid_expected_tokens"]
    (Fraction(1659, 500), Fraction(3439, 1000))
    """
    from .exact import round_distribution
    from .rule import alpha as alpha_of
    from .schemes import Chain

    ctx = tuple(context)
    a = alpha_of(pair.p(ctx), pair.q(ctx))
    r = round_distribution(pair, ctx, Chain(gamma))  # the formula is a chain's
    return {"context": ctx, "gamma": gamma, "alpha": a, "accepted": r.accepted,
            "expected_tokens": r.expected_tokens,
            "iid_expected_tokens": expected_tokens(a, gamma),
            "iid_accepted": [a ** k * (1 - a) for k in range(gamma)] + [a ** gamma]}


# -- formulas in circulation, beside the right ones ----------------------------
def alpha_free_speedup(gamma: int, verify_ratio=1):
    """A formula in circulation: "speedup ~ gamma / (1 + C_verification / C_autoregressive)".

    It has no alpha and no drafter cost: it promises the same gain whatever
    the drafter proposes. ``verify_ratio`` = C_verification / C_autoregressive.

    >>> alpha_free_speedup(4)
    Fraction(2, 1)
    """
    _check(gamma=gamma)
    return Fraction(gamma) / (1 + _exact(verify_ratio))


def speedup_formula_gap(costs=TABLE_COSTS, alphas=TABLE_ALPHAS, gammas=TABLE_GAMMAS) -> list:
    """That formula beside the right one on the reference tables' grid.

    Returns [{"cost", "alpha", "gamma", "right", "alpha_free"}] (exact Fractions).
    """
    return [{"cost": c, "alpha": a, "gamma": g, "right": speedup(a, g, c),
             "alpha_free": alpha_free_speedup(g)} for c in costs for a in alphas for g in gammas]


def expected_accepted(alpha, gamma: int):
    """E[K] = alpha + alpha^2 + ... + alpha^gamma under i.i.d. acceptance."""
    return expected_tokens(alpha, gamma) - 1


def expected_checked(alpha, gamma: int):
    """Expected drafts judged per round: K + 1 if a draft is rejected, gamma if none is.

    Drafts after the first rejection are never judged, so this is
    1 + alpha + ... + alpha^(gamma-1).
    """
    return expected_tokens(alpha, gamma - 1)


def accepted_over_proposed(alpha, gamma: int):
    """Accepted / proposed (vLLM's logged draft acceptance rate) in the long run: E[K] / gamma.

    Below alpha for gamma > 1: drafts after the first rejection count as
    proposed although they were never judged, so it is not the alpha the
    speedup formula takes. accepted / checked = E[K] / E[checked] is alpha.

    >>> from fractions import Fraction as F
    >>> accepted_over_proposed(F(4, 5), 4), expected_accepted(F(4, 5), 4) / expected_checked(F(4, 5), 4)
    (Fraction(369, 625), Fraction(4, 5))
    """
    return expected_accepted(alpha, gamma) / gamma


def extra_pass_speedup(alpha, gamma: int, cost):
    """Speedup if every rejection paid one more target pass (a common rollback claim).

    A round rejects with probability 1 - alpha^gamma, so it costs
    gamma * cost + 1 + (1 - alpha^gamma) target steps for the same tokens.
    """
    _check(alpha=alpha, gamma=gamma, cost=cost)
    alpha = _exact(alpha)
    return expected_tokens(alpha, gamma) / (round_cost(gamma, cost) + 1 - alpha ** gamma)


VERDICTS = ("speculate", "limit-reached", "don't speculate", "tie")


def best_gamma_verdict(alpha, cost, max_gamma: int = DEFAULT_MAX_GAMMA) -> dict:
    """The best gamma searched, its speedup, and what it means for the reader.

    ``kind`` is one of ``VERDICTS``:

    - "speculate": the best gamma beats plain decoding and is a true peak;
    - "limit-reached": it beats plain decoding but gamma = max_gamma + 1 would
      be faster still, so the search limit, not the curve, chose it;
    - "don't speculate": every gamma is slower than plain decoding;
    - "tie": the best speedup is exactly 1 (e.g. alpha = 0 with a free drafter):
      speculation neither gains nor loses.

    Returns {"gamma", "speedup", "kind", "message"}.

    >>> v = best_gamma_verdict(Fraction(99, 100), 0, 32)
    >>> v["gamma"], v["kind"]
    (32, 'limit-reached')
    >>> best_gamma_verdict(0, 0)["kind"], best_gamma_verdict(Fraction(1, 10), Fraction(1, 2))["kind"]
    ('tie', "don't speculate")
    >>> best_gamma_verdict(Fraction(4, 5), Fraction(1, 20))["gamma"]
    8
    """
    g, s = best_gamma(alpha, cost, max_gamma)
    if s < 1:
        kind = "don't speculate"
        message = (f"Don't speculate: with this α and c every γ up to {max_gamma} is slower than plain "
                   f"decoding (the best, γ = {g}, reaches only {float(s):.2f}×).")
    elif s == 1:
        kind = "tie"
        message = ("A tie: the best speedup is exactly 1×. The drafts are never accepted or the drafter "
                   "costs exactly what it saves, so speculating neither gains nor loses time.")
    elif g == max_gamma and speedup(alpha, g + 1, cost) > s:
        kind = "limit-reached"
        message = (f"γ = {g} is the search limit, not a peak: the speedup still grows beyond it "
                   f"(γ = {g + 1} gives {float(speedup(alpha, g + 1, cost)):.3f}×). Raise the largest γ searched.")
    else:
        kind = "speculate"
        message = f"Speculate with γ = {g}: {float(s):.2f}× plain decoding, the peak of the curve."
    return {"gamma": g, "speedup": s, "kind": kind, "message": message}


def tokens_slope(alpha, gamma: int):
    """d/d alpha of expected_tokens: 1 + 2 alpha + ... + gamma alpha^(gamma-1) (for the delta method).

    >>> from fractions import Fraction as F
    >>> tokens_slope(F(1, 2), 3)
    Fraction(11, 4)
    """
    return sum(j * alpha ** (j - 1) for j in range(1, gamma + 1))


def _checked(accepted, gamma: int, checked=None) -> list:
    """Drafts judged per round: given, or min(K + 1, gamma) when every round drafted gamma."""
    ks = list(accepted)
    if checked is None:
        return [min(x + 1, gamma) for x in ks]
    cs = list(checked)
    if len(cs) != len(ks) or any(not 0 <= x <= c for x, c in zip(ks, cs)):
        raise ValueError("checked must give one count per round, each at least that round's accepted drafts")
    return cs


def gap_bootstrap_se(accepted_per_round, gamma: int, clusters, checked=None, n_boot: int = 2000,
                     seed: int = 0) -> float:
    """Bootstrap SE of tokens per round - formula(alpha), resampling whole clusters (prompts, generations).

    On the scale of the delta method's clustered SE (``stats.cluster_bootstrap_se``
    scales the bootstrap by sqrt(G / (G - 1))), so both are read against
    ``stats.t_threshold(G)``:

    >>> ks, by = [4, 0, 2, 4, 1, 3], [0, 0, 1, 1, 2, 2]
    >>> round(gap_bootstrap_se(ks, 4, clusters=by, seed=0), 3)
    0.236
    >>> round(measured_vs_formula(ks, 4, clusters=by)["gap_se"], 3)      # the delta method, same clusters
    0.238
    """
    from .stats import cluster_bootstrap_se

    ks, cs = list(accepted_per_round), _checked(accepted_per_round, gamma, checked)
    if len(clusters) != len(ks):
        raise ValueError(f"need one cluster label per round, got {len(clusters)} for {len(ks)} rounds")
    totals = {}
    for x, c, g in zip(ks, cs, clusters):  # per cluster: rounds, accepted, checked
        t = totals.setdefault(g, [0, 0, 0])
        t[0], t[1], t[2] = t[0] + 1, t[1] + x, t[2] + c

    def gap(sums):  # (n_boot, 3) -> (n_boot,); sum of powers, so alpha = 1 needs no special case
        alpha = sums[:, 1] / sums[:, 2]
        return 1 + sums[:, 1] / sums[:, 0] - sum(alpha ** j for j in range(gamma + 1))

    return cluster_bootstrap_se(list(totals.values()), gap, n_boot, seed)


def measured_vs_formula(accepted_per_round, gamma: int, k: float = 2, checked=None, clusters=None) -> dict:
    """Measured tokens per round against the i.i.d. formula at the measured α, with standard errors.

    Round i accepted ``k_i`` drafts, checked ``checked[i]`` of them (by default
    min(k_i + 1, gamma)) and emitted k_i + 1 tokens. α is their ratio
    (``stats.ratio_se``), tokens per round their mean (``stats.mean_se``).
    α comes from the same rounds as the mean, so the gap
    D = tokens − (1 − α^(γ+1)) / (1 − α) is judged against its own standard
    error (``stats.gap_se``, the delta method), which is several times smaller
    than the mean's: "within noise" when |D| ≤ ``k`` SE(D), else "beyond
    noise". ``clusters`` (a label per round, e.g. its generation) makes every
    SE cluster-robust. ``positions`` is the per-position conditional
    acceptance (``stats.position_acceptance``), the direct look at i.i.d.

    >>> m = measured_vs_formula([4, 0, 2, 4, 1, 3], 4)
    >>> round(m["alpha"].value, 3), round(m["tokens"].value, 3), m["verdict"]
    (0.778, 3.333, 'within noise')
    >>> round(m["gap"], 3), round(m["gap_se"], 3), round(m["tokens"].se, 3)
    (0.114, 0.227, 0.667)
    >>> [round(e.value, 2) for e in m["positions"]]
    [0.83, 0.8, 0.75, 0.67]
    """
    from .stats import gap_se, mean_se, position_acceptance, ratio_se

    _check(gamma=gamma)
    ks = list(accepted_per_round)
    if len(ks) < 2:
        raise ValueError(f"a standard error needs at least 2 rounds, got {len(ks)}")
    cs = _checked(ks, gamma, checked)
    alpha = ratio_se(ks, cs, clusters)
    tokens = mean_se([x + 1 for x in ks], clusters)
    d = gap_se(ks, cs, lambda a: float(expected_tokens(a, gamma)), lambda a: float(tokens_slope(a, gamma)),
               clusters)
    formula = tokens.value - d.value
    tiny = 1e-9 * max(1.0, tokens.value)  # gamma = 1: D and its SE are 0 up to rounding
    if d.se > tiny:
        in_se = d.value / d.se
    else:
        in_se = 0.0 if abs(d.value) <= tiny else float("inf")
    return {"alpha": alpha, "tokens": tokens, "formula_tokens": formula, "gap": d.value, "gap_se": d.se,
            "gap_in_se": in_se, "rounds": len(ks), "positions": position_acceptance(ks, cs, clusters),
            "verdict": "within noise" if abs(in_se) <= k else "beyond noise"}
