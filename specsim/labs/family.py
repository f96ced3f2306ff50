"""A family of rules to explore: the rule workbench's library (no user code runs here).

``RuleFamily(beta, lam, bonus, comparison)`` is a ``RoundRule`` with

- acceptance   a(x) = min(1, (p(x) / q(x))^β)       (β = 1: the real rule; β an integer, so a is exact)
- replacement  m = λ·r + (1 − λ)·p                   (λ = 1: the residual r; λ = 0: resample from p)
- bonus        p after full acceptance, or none
- comparison   keep x when u < a, or when u ≤ a, for u uniform on [0, 1)

P(u < a) = P(u ≤ a) = a for a continuous u, so the comparison never changes
a probability; dropping the bonus never changes the distribution either
(it only costs tokens). In (β, λ) the family has one exact point, (1, 1):
lesson 17 proves it and ``grid`` tabulates it (``specsim.plots.family`` draws it).

Example
-------
>>> from specsim.toy import load_model
>>> m = load_model("seed")
>>> from specsim.schemes import Chain
>>> evaluate(RuleFamily(), m, ("a",), Chain(3), 2)["total_variation"]
Fraction(0, 1)
>>> evaluate(RuleFamily(beta=2), m, ("a",), Chain(1), 1)["total_variation"]
Fraction(3, 40)
"""
from __future__ import annotations

from fractions import Fraction

from ..rule import RoundRule, residual
from ..schemes import as_scheme
from .judge import judge

BETAS = (0, 1, 2, 3)
LAMBDAS = tuple(Fraction(k, 4) for k in range(5))
COMPARISONS = ("<", "≤")
EXACT_POINT = (1, Fraction(1))


class RuleFamily(RoundRule):
    """One member of the family (see the module docstring)."""

    def __init__(self, beta: int = 1, lam=Fraction(1), bonus: bool = True, comparison: str = "<"):
        if isinstance(beta, bool) or not isinstance(beta, int) or beta < 0:
            raise ValueError(f"β must be an integer >= 0 (so (p/q)^β stays exact), got {beta!r}")
        lam = Fraction(lam)
        if not 0 <= lam <= 1:
            raise ValueError(f"λ must be in [0, 1], got {lam}")
        if comparison not in COMPARISONS and comparison != "<=":
            raise ValueError(f"the comparison must be one of {COMPARISONS}, got {comparison!r}")
        self.beta, self.lam, self.bonus_on = beta, lam, bool(bonus)
        self.comparison = "≤" if comparison == "<=" else comparison
        self.name = (f"β = {beta}, λ = {lam}, bonus {'on' if bonus else 'off'}, u {self.comparison} a")

    @property
    def is_correct(self) -> bool:
        """The real rule: β = 1, λ = 1 with the bonus (either comparison)."""
        return (self.beta, self.lam) == EXACT_POINT and self.bonus_on

    def accept(self, p, q, x):
        if q[x] <= 0:
            raise ValueError("the drafter proposed a token it gives probability 0 (q(x) = 0)")
        a = (Fraction(p[x]) / Fraction(q[x])) ** self.beta
        return min(a, Fraction(1))  # P(u < a) and P(u <= a) are both a

    def replacement(self, p, q):
        r = residual(p, q)
        r = p if r is None else r  # no residual where p == q; a rejection cannot happen there
        return [self.lam * ri + (1 - self.lam) * pi for ri, pi in zip(r, p)]

    def bonus(self, p):
        return p if self.bonus_on else None


def evaluate(rule: RoundRule, pair, context, scheme, n_tokens: int) -> dict:
    """Exact TV of the next ``n_tokens`` against the target, and E[tokens per round] of this rule and
    of the real one (``specsim.labs.judge``)."""
    j = judge(pair, context, as_scheme(scheme), rule, n_tokens)
    return {"total_variation": j.total_variation, "expected_tokens": j.tokens_per_round,
            "correct_tokens": j.correct_tokens_per_round}


def grid(pair, context, scheme, n_tokens: int, bonus: bool = True, comparison: str = "<",
         betas=BETAS, lambdas=LAMBDAS) -> list:
    """Every (β, λ) of the grid: dicts with beta, lam, total_variation, expected_tokens, exact."""
    scheme = as_scheme(scheme)
    rows = []
    for b in betas:
        for lam in lambdas:
            j = judge(pair, context, scheme, RuleFamily(b, lam, bonus, comparison), n_tokens)
            rows.append({"beta": b, "lam": lam, "total_variation": j.total_variation,
                         "expected_tokens": j.tokens_per_round, "exact": j.exact})
    return rows


def exact_points(rows) -> list:
    """The (β, λ) of a grid where the TV is 0."""
    return [(r["beta"], r["lam"]) for r in rows if r["exact"]]
