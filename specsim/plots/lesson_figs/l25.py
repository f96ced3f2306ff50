"""Lesson 25's figures: the point mass as a q row, what it costs in tokens per round, and the law of K
beside i.i.d. acceptance at the pooled α.

All on the seed model after "a", with the lesson's own calls: ``transforms.greedy(q)`` for the point
mass, ``exact.round_distribution`` with the vLLM entry's rule (``implementations.get("vllm").rule``) and
without (the textbook rule), and ``acceptance.exact`` for the pooled α.
"""
from __future__ import annotations

from ... import acceptance, exact, formulas
from ...labs import implementations as impl
from ...schemes import Chain
from ...toy import load_model
from ...transforms import greedy
from .. import charts
from .figure import Control, LessonFigure

CONTEXT = ("a",)


def point_mass():
    """p after "a" beside the point mass on the drafter's favourite, a (outlined): a is kept with p(a)."""
    m = load_model("seed")
    return charts.pq_bars(m.vocab, m.p(CONTEXT), greedy(m.q(CONTEXT)), highlight=0,
                          title="After \"a\": p, and the draft a as a point mass (q = δ_a)")


def cost(max_gamma: int = 6):
    """E[tokens per round] from "a" for γ = 1..max_gamma: the textbook rule against the point mass."""
    m = load_model("seed")
    gammas = list(range(1, int(max_gamma) + 1))
    rule = impl.get("vllm").rule
    textbook = [exact.round_distribution(m, CONTEXT, Chain(g)).expected_tokens for g in gammas]
    points = [exact.round_distribution(m, CONTEXT, Chain(g), rule).expected_tokens for g in gammas]
    fig = charts.expected_tokens_curve(gammas, textbook, points,
                                       "Tokens per round from \"a\": the textbook rule against the point mass")
    for trace, name in zip(fig.data, ("textbook rule (draft sampled from q)", "point mass (q's favourite)")):
        trace.name = name
        trace.hovertemplate = "γ = %{x}: %{text}<extra>" + name + "</extra>"
    return fig


def pooled(gamma: int = 3):
    """P(K = k) of one round from "a": the exact law beside i.i.d. acceptance at the pooled α."""
    r = exact.round_distribution(load_model("seed"), CONTEXT, Chain(int(gamma)))
    alpha = acceptance.exact(r.accepted).alpha
    g = int(gamma)
    iid = [alpha ** k * (1 - alpha) for k in range(g)] + [alpha ** g]
    fig = charts.accepted_distribution(
        r.accepted, iid, f"One round from \"a\", γ = {g}: the exact P(K) beside i.i.d. acceptance at the pooled "
                         f"α = {charts.exact_dec(alpha)}")
    fig.data[1].name = "i.i.d. at the pooled α"
    return fig


FIGURES = [
    LessonFigure("25-point-mass", point_mass),
    LessonFigure("25-cost", cost),
    LessonFigure("25-pooled", pooled, (Control("gamma", "γ (draft length)", 1, 6, 1, 3),)),
]
