"""Lesson 12's figures: many experiments' intervals around the exact truth, and clustered against
round-level standard errors over repeated experiments.

The numbers are the lesson's: 400 rounds from "a" of the seed model with γ = 3 per experiment (seeds 100 to
299, ``montecarlo.sample_rounds``), each mean of K + 1 with its standard error (``stats.mean_se``) against
the exact engine's E[K + 1] (``formulas.exact_vs_iid``); and the 24 repeats (seeds 1 to 24) of the sticky
model's experiment, 16 generations of 60 tokens each (``sampling.generate``), whose α̂ = accepted / checked
gets a round-level and a clustered standard error (``stats.ratio_se``).

No chart of intervals exists in ``specsim.plots``; ``intervals`` below composes one from plotly with the
shared style and colours.

>>> means, truth = experiments(4)
>>> [m.n for m in means], truth
([400, 400, 400, 400], Fraction(1659, 500))
"""
from __future__ import annotations

from functools import lru_cache

import plotly.graph_objects as go

from ...formulas import exact_vs_iid
from ...montecarlo import sample_rounds
from ...sampling import generate
from ...stats import mean_se, ratio_se
from ...toy import load_model, model_from_dict
from ..charts import GREY, P_COLOR, RESIDUAL_COLOR, style
from .figure import LessonFigure

STICKY = {"name": "sticky", "vocab": ["a", "b"], "order": 1,
          "target": {"a": ["19/20", "1/20"], "b": ["1/20", "19/20"]},
          "draft": {"a": ["19/20", "1/20"], "b": ["1/2", "1/2"]}}


def rounds_of(n: int, seed: int) -> list:
    """K of n independent rounds from "a" of the seed model, γ = 3 (the lesson's ``rounds_of``)."""
    counts = sample_rounds(load_model("seed"), ("a",), 3, n, seed=seed).accepted_counts
    return [k for k, c in enumerate(counts) for _ in range(c)]


@lru_cache(maxsize=4)
def experiments(count: int = 200, n: int = 400, first_seed: int = 100) -> tuple:
    """The means of K + 1 (with their standard errors) of ``count`` experiments, and the exact E[K + 1]."""
    truth = exact_vs_iid(load_model("seed"), ("a",), 3)["expected_tokens"]
    return [mean_se([k + 1 for k in rounds_of(n, first_seed + s)]) for s in range(count)], truth


def sticky_experiment(seed: int, generations: int = 16, n_tokens: int = 60, gamma: int = 3) -> tuple:
    """(accepted, checked, generation) of every round of one experiment on the sticky model (the lesson's)."""
    model = model_from_dict(STICKY)
    ks, cs, gens = [], [], []
    for g in range(generations):
        for r in generate(model, ("a",), gamma, n_tokens, seed=1000 * seed + g).rounds:
            ks, cs, gens = ks + [r.accepted], cs + [len(r.acceptance)], gens + [g]
    return ks, cs, gens


SYMBOLS = ("circle", "diamond")


def intervals(centres, half_widths, truth, truth_label, names, colours, title, y_title):
    """Estimates as points with ±half-width bars, one x per experiment, the truth as a dashed line; each
    series (``names``, ``colours``, a marker symbol each) its own traces; a bar that misses the line is red."""
    fig = go.Figure()
    line = dict(color="black", width=1.5, dash="dash")
    fig.add_hline(y=float(truth), line=line)
    fig.add_scatter(x=[None], y=[None], mode="lines", line=line, name=truth_label)  # the line's legend entry
    for s, (name, colour) in enumerate(zip(names, colours)):
        xs = [i + 1 + (s - (len(names) - 1) / 2) * 0.28 for i in range(len(centres))]
        for hit in (True, False):
            pick = [i for i, (c, h) in enumerate(zip(centres, half_widths[s]))
                    if (abs(c - float(truth)) <= h) == hit]
            if not pick:
                continue
            fig.add_scatter(
                x=[xs[i] for i in pick], y=[centres[i] for i in pick], mode="markers",
                name=f"{name}: {'covers' if hit else 'misses'} the line ({len(pick)} of {len(centres)})",
                marker=dict(color=colour if hit else RESIDUAL_COLOR, size=6, symbol=SYMBOLS[s]),
                error_y=dict(type="data", array=[half_widths[s][i] for i in pick], visible=True, width=0,
                             thickness=1.5 if len(names) > 1 else 1, color=colour if hit else RESIDUAL_COLOR),
                hovertemplate="experiment %{customdata}: %{y:.3f}<extra></extra>", customdata=[i + 1 for i in pick])
    fig.update_xaxes(title_text="experiment", showgrid=False)
    return style(fig, title, None, y_title, height=420)


def mean_intervals():
    """200 experiments of 400 rounds: each mean ± 2 SE against the exact E[K + 1]."""
    means, truth = experiments()
    return intervals([m.value for m in means], [[2 * m.se for m in means]], truth,
                     f"exact E[K + 1] = {float(truth):.3f}", ["mean ± 2 SE"], [P_COLOR],
                     f"{len(means)} experiments of 400 rounds each: the mean ± 2 standard errors",
                     "tokens per round")


@lru_cache(maxsize=1)
def sticky_repeats(count: int = 24) -> list:
    """The lesson's 24 repeats of the sticky experiment: α̂ with its round-level and clustered SE."""
    out = []
    for seed in range(1, count + 1):
        ks, cs, gens = sticky_experiment(seed)
        out.append((ratio_se(ks, cs), ratio_se(ks, cs, clusters=gens)))
    return out


def cluster_intervals():
    """24 repeats: α̂ ± 2 round-level SE beside α̂ ± 2 clustered SE, around the repeats' mean."""
    runs = sticky_repeats()
    values = [r.value for r, _ in runs]
    centre = sum(values) / len(values)
    return intervals(values, [[2 * r.se for r, _ in runs], [2 * c.se for _, c in runs]], centre,
                     f"the mean of the {len(runs)} α̂", ["α̂ ± 2 round-level SE", "α̂ ± 2 clustered SE"],
                     [GREY, P_COLOR], f"{len(runs)} repeats of one experiment: the same α̂, two standard errors",
                     "α̂ = accepted / checked")


FIGURES = [
    LessonFigure("12-intervals", mean_intervals),
    LessonFigure("12-clusters", cluster_intervals),
]
