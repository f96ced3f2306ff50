"""Lesson 4's figures: the two paths to each token adding up to p (p and q on sliders), every outcome of a
round, and the joint distribution of two tokens beside the target's.

The numbers are the lesson's: the seed model's rows after "a" (the sliders
start there), ``round_distribution(m, ("a",), Chain(3))`` and
``speculative_joint`` / ``target_joint`` of two tokens after "a".

>>> [f.name for f in FIGURES]
['04-two-paths', '04-outcomes', '04-joint']
"""
from __future__ import annotations

from ...exact import round_distribution, speculative_joint, target_joint
from ...rule import alpha
from ...schemes import Chain
from ...toy import load_model
from ..charts import exact_dec, outcome_sunburst
from ..rounds import distribution_vs_target
from .figure import Control, LessonFigure
from .l01 import exact_stack
from .l03 import rows


def draw_two_paths(p_a=0.6, p_b=0.3, q_a=0.5, q_b=0.4):
    """min(p, q) (drafted and kept) stacked with (1 − α)·r (rejected, then drawn from r): p, for any rows."""
    vocab = load_model("seed").vocab
    p, q = rows(p_a, p_b), rows(q_a, q_b)
    fig = exact_stack(vocab, p, q)
    return fig.update_layout(title_text="kept drafts + replacements = p for every token<br>"
                                        f"(α = {exact_dec(alpha(p, q))}; q as diamonds)", margin_t=84)


def draw_outcomes():
    r = round_distribution(load_model("seed"), ("a",), Chain(3))
    return outcome_sunburst(r.outcomes, ("a",))


def draw_joint():
    m = load_model("seed")
    spec = speculative_joint(m, ("a",), Chain(3), n_tokens=2)
    target = target_joint(m, ("a",), n_tokens=2)
    fig = distribution_vs_target(sorted(target), spec, target, None,
                                 names=("speculative decoding, γ = 3", "target, token by token"))
    fig.update_layout(title=dict(text="the next two tokens after \"a\": speculative decoding (γ = 3)<br>"
                                      "and the target give equal fractions", x=0, xanchor="left", pad=dict(l=12), font_size=15),
                      margin_t=84)
    fig.update_traces(text=[exact_dec(spec[s]) for s in sorted(target)], textposition="outside",
                      textfont_size=11, cliponaxis=False, selector=dict(name="speculative decoding, γ = 3"))
    return fig


FIGURES = [
    LessonFigure("04-two-paths", draw_two_paths,
                 (Control("p_a", "p(a)", 0.0, 1.0, 0.05, 0.6), Control("p_b", "p(b)", 0.0, 1.0, 0.05, 0.3),
                  Control("q_a", "q(a)", 0.0, 1.0, 0.05, 0.5), Control("q_b", "q(b)", 0.0, 1.0, 0.05, 0.4)),
                 height=380),
    LessonFigure("04-outcomes", draw_outcomes, height=620),
    LessonFigure("04-joint", draw_joint, height=400),
]
