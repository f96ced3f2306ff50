"""A family of rules to explore: the rule workbench's library (no user code runs here).

``RuleFamily(beta, lam, bonus, comparison)`` is a ``RoundRule`` with

- acceptance   a(x) = min(1, (p(x) / q(x))^β)       (β = 1: the real rule; β an integer, so a is exact)
- replacement  m = λ·r + (1 − λ)·p                   (λ = 1: the residual r; λ = 0: resample from p)
- bonus        p after full acceptance, or none
- comparison   keep x when u < a, or when u ≤ a, for u uniform on [0, 1)

P(u < a) = P(u ≤ a) = a for a continuous u, so the comparison never changes
a probability; dropping the bonus never changes the distribution either
(it only costs tokens). In (β, λ) the family has one exact point, (1, 1):
lesson 14 proves it and ``grid`` shows it.

Example
-------
>>> from specsim.toy import load_model
>>> m = load_model("seed")
>>> evaluate(RuleFamily(), m, ("a",), 3, 2)["total_variation"]
Fraction(0, 1)
>>> evaluate(RuleFamily(beta=2), m, ("a",), 1, 1)["total_variation"]
Fraction(3, 40)
"""
from __future__ import annotations

from fractions import Fraction

import plotly.graph_objects as go

from .. import exact
from ..plots.colors import OVERLAP_COLOR, RESIDUAL_COLOR
from ..rule import RoundRule, residual

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


def evaluate(rule: RoundRule, models, context, gamma: int, n_tokens: int) -> dict:
    """Exact TV of the next ``n_tokens`` against the target, and E[tokens per round] (this rule, the real one)."""
    context = tuple(context)
    produced = exact.speculative_joint(models, context, gamma, n_tokens, rule)
    wanted = exact.target_joint(models, context, n_tokens)
    return {"total_variation": exact.joint_total_variation(produced, wanted),
            "expected_tokens": exact.round_distribution(models, context, gamma, rule).expected_tokens,
            "correct_tokens": exact.round_distribution(models, context, gamma).expected_tokens}


def grid(models, context, gamma: int, n_tokens: int, bonus: bool = True, comparison: str = "<",
         betas=BETAS, lambdas=LAMBDAS) -> list:
    """Every (β, λ) of the grid: dicts with beta, lam, total_variation, expected_tokens, exact."""
    rows = []
    for b in betas:
        for lam in lambdas:
            r = evaluate(RuleFamily(b, lam, bonus, comparison), models, context, gamma, n_tokens)
            rows.append({"beta": b, "lam": lam, "total_variation": r["total_variation"],
                         "expected_tokens": r["expected_tokens"], "exact": r["total_variation"] == 0})
    return rows


def exact_points(rows) -> list:
    """The (β, λ) of a grid where the TV is 0."""
    return [(r["beta"], r["lam"]) for r in rows if r["exact"]]


def grid_figure(rows, current=None) -> go.Figure:
    """Heatmap of the TV over (λ, β), the exact point ringed in green, the current choice in red."""
    betas = sorted({r["beta"] for r in rows})
    lambdas = sorted({r["lam"] for r in rows})
    tv = {(r["beta"], r["lam"]): r["total_variation"] for r in rows}
    z = [[float(tv[b, lam]) for lam in lambdas] for b in betas]
    text = [[str(tv[b, lam]) for lam in lambdas] for b in betas]
    xs = [str(lam) for lam in lambdas]
    fig = go.Figure(go.Heatmap(z=z, x=xs, y=[str(b) for b in betas], text=text, texttemplate="%{text}",
                               colorscale="Greys", zmin=0, colorbar=dict(title="TV"),
                               hovertemplate="β = %{y}, λ = %{x}: TV = %{text}<extra></extra>"))
    marks = [(EXACT_POINT, "exact point (β = 1, λ = 1)", OVERLAP_COLOR, 34)]
    if current is not None:
        marks.append((current, "your rule", RESIDUAL_COLOR, 24))
    for (b, lam), label, colour, size in marks:
        if b in betas and Fraction(lam) in lambdas:
            fig.add_trace(go.Scatter(x=[str(Fraction(lam))], y=[str(b)], mode="markers", name=label,
                                     marker=dict(symbol="square-open", size=size, color=colour, line=dict(width=3))))
    fig.update_xaxes(type="category")  # "1/4" and "1" on one axis: never let plotly read them as numbers
    fig.update_yaxes(type="category")
    fig.update_layout(xaxis_title="λ (weight of the residual in the replacement)",
                      yaxis_title="β (acceptance min(1, (p/q)^β))", legend=dict(orientation="h", y=-0.25),
                      margin=dict(t=30))
    return fig
