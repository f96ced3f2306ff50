"""Lesson 20's figures: what two lossy shortcuts emit against what the target would.

Both are the pitfalls lab's own joints (``pitfalls.joints``), drawn by the lab's chart
(``rounds.distribution_vs_target``): typical acceptance on the ``zeros`` model after "z" with one draft per
round, and top-k children verified as if sampled on the seed model after "a".
"""
from __future__ import annotations

from ...labs import pitfalls
from ...schemes import Chain, Tree
from ...toy import load_model
from .. import rounds
from ..charts import exact_dec
from .figure import LessonFigure


def _figure(pit, model, context, scheme, n_tokens, title):
    produced, wanted = pitfalls.joints(pit, model, context, scheme, n_tokens)
    tv = pitfalls.evaluate(pit, model, context, scheme, n_tokens).total_variation
    return rounds.distribution_vs_target(sorted(set(produced) | set(wanted)), produced, wanted,
                                         f"{title}: TV = {exact_dec(tv)}")


def typical_zeros():
    """Typical acceptance, zeros after "z", γ = 1, the next two tokens: q = p, yet the argmax closes the round."""
    return _figure(pitfalls.PITFALLS["typical-acceptance"], load_model("zeros"), ("z",), Chain(1), 2,
                   "Typical acceptance on zeros after \"z\" (q = p), γ = 1, next two tokens")


def top_k_as_sampled():
    """Top-k children verified as if sampled, seed after "a", two distinct children: the first token."""
    return _figure(pitfalls.TREE_PITFALLS["top-k-tree-as-if-sampled"], load_model("seed"), ("a",),
                   Tree((2,), "distinct"), 1, "Top-k children verified as if sampled, after \"a\", next token")


FIGURES = [
    LessonFigure("20-typical-zeros", typical_zeros),
    LessonFigure("20-top-k", top_k_as_sampled),
]
