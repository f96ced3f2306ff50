"""Lesson 18's figures: block verification on the two-token example and on the seed model.

The lesson's own calls: the two-token model ``constant_model(["1/3", "2/3"],
["2/3", "1/3"])`` with γ = 2 after "a"; its seeded block round
``trace_round(two, ("a",), Block(2), seed=1)``; the seed model's exact tokens
per round from "a", chain against block, for γ = 1..5.

>>> [f.name for f in FIGURES]
['18-chains', '18-coins', '18-gain']
>>> kept_whole(Chain(2))[("a", "b")], kept_whole(Block(2))[("a", "b")]
(Fraction(1, 2), Fraction(1, 1))
"""
from __future__ import annotations

from functools import lru_cache
from itertools import product

from ... import exact
from ...sampling import trace_round
from ...schemes import Block, Chain
from ...schemes.block import constant_model
from ...toy import load_model
from ..rounds import acceptance_figure, distribution_vs_target
from ..tree import budget_figure
from .figure import LessonFigure

CONTEXT = ("a",)


@lru_cache(maxsize=1)
def two_tokens():
    """The paper's two-token example: p = (1/3, 2/3), q = (2/3, 1/3) in every context."""
    return constant_model(["1/3", "2/3"], ["2/3", "1/3"])


def kept_whole(scheme) -> dict:
    """chain (x1, x2) -> P(both drafts kept | the drafter drafted that chain), from the exact round."""
    two = two_tokens()
    d = exact.round_distribution(two, CONTEXT, scheme)
    q = dict(zip(two.vocab, two.q(CONTEXT)))
    out = {}
    for chain in product(two.vocab, repeat=2):
        whole = sum((pr for t, pr in d.outcomes.items() if t[:2] == chain and len(t) == 3), 0)
        out[chain] = whole / (q[chain[0]] * q[chain[1]])
    return out


def chains():
    """Each drafted chain of the two-token example: how often token-wise and block verification keep it whole."""
    chain_list = list(product(two_tokens().vocab, repeat=2))
    fig = distribution_vs_target(chain_list, kept_whole(Chain(2)), kept_whole(Block(2)),
                                 "Two drafts after \"a\" (p = (1/3, 2/3), q = (2/3, 1/3)): how often each chain "
                                 "is kept whole", names=("token-wise", "block"))
    fig.update_traces(textposition="outside", texttemplate="%{text}")
    fig.update_xaxes(title_text="drafted chain X1 X2")
    fig.update_yaxes(title_text="P(both kept | chain)", range=[0, 1.15])
    return fig


def coins():
    """The seeded block round that drafts "a b": the stop coins h_1 = 0 and h_2 = 1, and the uniforms."""
    t = trace_round(two_tokens(), CONTEXT, Block(2), seed=1)
    return acceptance_figure(t, len(t.drafts) - 1)


def gain(max_gamma: int = 5):
    """Exact tokens per round from "a" on the seed model: token-wise (chain) against block, γ = 1..max_gamma."""
    m = load_model("seed")
    gammas = list(range(1, int(max_gamma) + 1))
    curve = {"budgets": gammas}
    for kind, scheme in (("chain", Chain), ("block", Block)):
        curve[kind] = [exact.round_distribution(m, CONTEXT, scheme(g)).expected_tokens for g in gammas]
        curve[kind + " scheme"] = [f"{kind}:{g}" for g in gammas]
    fig = budget_figure(curve, "Seed model after \"a\": block verification above token-wise from γ = 2 on")
    fig.update_xaxes(title_text="γ (drafts per round)")
    return fig


FIGURES = [
    LessonFigure("18-chains", chains),
    LessonFigure("18-coins", coins),
    LessonFigure("18-gain", gain),
]
