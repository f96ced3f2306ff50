"""Lesson 24's figures: what 2,000 runs of the broken sampler emitted, and what an audit of N runs can detect.

Both use the lesson's own calls: the seed model after "a", the sampler with the rule that replaces a
rejected draft from p (``pitfalls.ResampleFromTarget``), its first two tokens judged by ``audit.judge_samples``.
"""
from __future__ import annotations

import math

from ... import exact, sampling
from ...labs import audit, pitfalls
from ...schemes import Chain
from ...toy import load_model
from .. import audit as audit_plots
from ..colors import DARK_GREY
from .figure import LessonFigure

CONTEXT, N_TOKENS, SCHEME = ("a",), 2, Chain(3)
RUNS = 2000


def _target():
    return exact.target_joint(load_model("seed"), CONTEXT, N_TOKENS)


def emitted():
    """The broken rule's 2,000 seeded runs: each sequence's emitted share beside its exact probability."""
    m = load_model("seed")
    p = {seq: float(v) for seq, v in _target().items()}
    runs = [sampling.generate(m, CONTEXT, SCHEME, N_TOKENS, seed=i, rule=pitfalls.ResampleFromTarget()).tokens[:2]
            for i in range(RUNS)]
    r = audit.judge_samples(runs, p)
    top = [{"text": " ".join(seq), "observed": o, "exact": e} for seq, o, e in r.top]
    return audit_plots.emitted_vs_exact(
        top, f"Replacing from p instead of the residual: {RUNS:,} runs' first two tokens after \"a\" "
             f"against the target (p-value {r.p_value:.1g})")


def detectable():
    """The TV an audit detects with probability 0.8 against its runs, for 7 and 9 cells (the lesson's audits),
    with the broken rule's exact distance drawn across."""
    m = load_model("seed")
    lossy = exact.speculative_joint(m, CONTEXT, SCHEME, N_TOKENS, pitfalls.ResampleFromTarget())
    tv = exact.joint_total_variation(_target(), lossy)
    fig = audit_plots.detectable_tv(audit.detectable_curves((100, 200, 300, 500, 1000, 2000, 5000), (7, 9)))
    fig.add_hline(y=float(tv), line_dash="dash", line_color=DARK_GREY)
    fig.add_annotation(text=f"the broken rule: TV {tv} ≈ {float(tv):.4f}", xref="paper", x=1, xanchor="right",
                       y=math.log10(float(tv)), yanchor="bottom", showarrow=False)  # a log axis takes log10(y)
    return fig


FIGURES = [
    LessonFigure("24-emitted", emitted),
    LessonFigure("24-detectable", detectable),
]
