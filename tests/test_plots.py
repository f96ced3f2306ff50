"""Figure builders: the numbers they draw are the library's, axes are labelled."""
from __future__ import annotations

import subprocess
import sys
from fractions import Fraction as F

import numpy as np
import pytest

from specsim import exact, formulas, rule, sampling, toy

from specsim.plots import charts as plots

from specsim.plots import gpt as plots_gpt

from specsim.plots import rounds as plots_rounds
from specsim.schemes import Block, Chain, Tree, masks

SEED = toy.load_model("seed")
P, Q = SEED.p(("a",)), SEED.q(("a",))


def cartesian_axes_labelled(fig) -> None:
    layout = fig.to_plotly_json()["layout"]
    for name, axis in layout.items():
        if name.startswith("xaxis") and axis.get("visible", True) is not False:
            assert axis.get("title", {}).get("text"), f"{name} has no title"


def test_plots_import_neither_streamlit_nor_torch():
    code = ("import sys, specsim.plots.charts, specsim.plots.rounds, specsim.plots.gpt, specsim.schemes.masks;"
            "print(sorted(m for m in ('streamlit', 'torch') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_residual_stack_adds_up_to_p():
    fig = plots.residual_stack(SEED.vocab, P, Q)
    overlap, rest, p, q = fig.data
    assert list(q.y) == [float(x) for x in Q] and q.name == "q (drafter)"
    assert [a + b for a, b in zip(overlap.y, rest.y)] == pytest.approx([float(x) for x in P])
    assert list(overlap.text) == [str(x) for x in rule.overlap(P, Q)]
    assert "α = 9/10" in fig.layout.title.text
    cartesian_axes_labelled(fig)


def test_residual_stack_when_p_equals_q():
    row = [F(1, 2), F(1, 2)]
    fig = plots.residual_stack(["x", "y"], row, row)
    assert list(fig.data[1].y) == [0, 0]


def test_residual_panels_show_the_normalized_residual():
    fig = plots.residual_panels(SEED.vocab, P, Q)
    assert list(fig.data[-1].y) == [1.0, 0.0, 0.0]
    assert fig.layout.annotations[3].text.startswith("r = max(0, p − q)")
    cartesian_axes_labelled(fig)


def test_outcome_sunburst_has_every_outcome_with_its_probability():
    rd = exact.round_distribution(SEED, ("a",), 3)
    fig = plots.outcome_sunburst(rd.outcomes, ("a",))
    sb = fig.data[0]
    leaves = [v for v in sb.values if v > 0]
    assert len(leaves) == len(rd.outcomes) == 94
    assert sum(leaves) == pytest.approx(1.0)
    assert len(set(sb.ids)) == len(sb.ids)
    assert set(sb.parents) - {""} <= set(sb.ids)


def test_accepted_distribution_exact_against_iid():
    info = formulas.exact_vs_iid(SEED, ("a",), 3)
    fig = plots.accepted_distribution(info["accepted"], info["iid_accepted"])
    assert list(fig.data[0].text) == ["1/10", "0.13", "0.122", "0.648"]  # long fractions as decimals
    assert list(fig.data[0].customdata) == ["1/10", "13/100 ≈ 0.13", "61/500 ≈ 0.122", "81/125 ≈ 0.648"]
    assert sum(fig.data[1].y) == pytest.approx(1.0)
    cartesian_axes_labelled(fig)


def test_speedup_curve_marks_the_best_gamma():
    gammas = list(range(1, 33))
    best = formulas.best_gamma(0.8, 0.05)
    fig = plots.speedup_curve(gammas, [formulas.speedup(0.8, g, 0.05) for g in gammas], best)
    assert fig.data[-1].x[0] == best[0] == 8
    cartesian_axes_labelled(fig)


def test_heatmaps_grey_out_where_speculation_is_slower():
    alphas, costs = [0.1, 0.5, 0.9], [0.05, 0.5]
    grid = [[formulas.best_gamma(a, c) for a in alphas] for c in costs]
    fig = plots.best_gamma_heatmaps(alphas, costs, [[g for g, _ in r] for r in grid],
                                    [[s for _, s in r] for r in grid], mark=(0.9, 0.05))
    grey = fig.data[0].z
    slower = [[s <= 1 for _, s in r] for r in grid]
    assert [[v == 1 for v in row] for row in grey] == slower
    assert slower[1][0] and not slower[0][2]  # alpha 0.1 with c 0.5 loses; alpha 0.9 with c 0.05 wins
    cartesian_axes_labelled(fig)


def test_expected_tokens_curve():
    rows = [formulas.exact_vs_iid(SEED, ("a",), g) for g in (1, 2, 3)]
    fig = plots.expected_tokens_curve([1, 2, 3], [r["expected_tokens"] for r in rows],
                                      [r["iid_expected_tokens"] for r in rows])
    assert fig.data[0].text[2] == "1659/500 ≈ 3.318" and fig.data[1].text[2] == "3439/1000 ≈ 3.439"


@pytest.mark.parametrize("seed", range(6))
def test_event_figures_follow_the_trace(seed):
    trace = sampling.trace_round(SEED, ("a",), Chain(3), seed=seed)
    kinds = [plots_rounds.event_figure(trace, i).layout.meta for i in range(len(trace.events()))]
    assert kinds == [e["kind"] for e in trace.events()]


@pytest.mark.parametrize("seed", range(6))
def test_block_event_figures_follow_the_trace(seed):
    """A block's weights are shown with the verify pass; each stop coin gets its own figure, u against h."""
    trace = sampling.trace_round(SEED, ("b",), Block(3), seed=seed)
    kinds = [plots_rounds.event_figure(trace, i).layout.meta for i in range(len(trace.events()))]
    assert kinds == [{"weights": "verify"}.get(e["kind"], e["kind"]) for e in trace.events()]
    for i in range(3):
        fig = plots_rounds.acceptance_figure(trace, i)
        bars, us = fig.data[2], fig.data[3]
        assert bars.name == "h (stop here)" and list(bars.text) == [str(h) for h in trace.verdict.extra["h"][:i + 1]]
        assert list(us.y) == trace.u[:i + 1]
    with pytest.raises(ValueError, match="tree_figure"):
        plots_rounds.event_figure(sampling.trace_round(SEED, ("b",), Tree((2,)), seed=seed), 0)


def test_acceptance_figure_shows_u_and_the_rule():
    trace = sampling.trace_round(SEED, ("a",), 3, seed=0)
    fig = plots_rounds.acceptance_figure(trace, 1)
    bars, us = fig.data[2], fig.data[3]
    assert list(bars.text) == [str(a) for a in trace.acceptance[:2]]
    assert list(us.y) == trace.u[:2]


def test_tokens_per_pass_and_distribution_vs_target():
    fig = plots_rounds.tokens_per_pass([F(2), F(5, 2)], [F(3), F(3)], 3)
    assert list(fig.data[0].y) == [2.0, 2.5]
    cartesian_axes_labelled(fig)
    joint = exact.target_joint(SEED, ("a",), 2)
    fig = plots_rounds.distribution_vs_target(sorted(joint), joint, joint, "t")
    assert list(fig.data[0].y) == list(fig.data[1].y)


def test_mask_pair_counts_visible_keys():
    fig = plots_gpt.mask_pair(masks.lower_right_grid(5, 3), masks.upper_left_grid(5, 3), n=5)
    lower, upper = (np.array(t.z) for t in fig.data if t.type == "heatmap")
    assert [t.name for t in fig.data if t.type == "scatter"] == ["may attend", "hidden", "end of the cached keys"]
    assert lower.sum(axis=1).tolist() == [6, 7, 8, 9]
    assert upper.sum(axis=1).tolist() == [1, 2, 3, 4]
    big = plots_gpt.mask_pair(masks.lower_right_grid(200, 4), masks.upper_left_grid(200, 4), n=200, max_keys=64)
    assert len(big.data[0].x) == 64


def test_cache_slots_keep_n_plus_k_plus_one():
    cache = {"target": {"start": 5, "before_verify": 5, "after_verify": 9, "after_crop": 7},
             "draft": {"start": 5, "before_verify": 8, "after_verify": 8, "after_crop": 7}}
    fig = plots_gpt.cache_slots(cache, gamma=3, k=1)
    z = np.array(fig.data[0].z)
    empty = 4
    filled = (z != empty).sum(axis=1).tolist()
    assert filled == [5, 9, 7, 5, 8, 7]
    assert "= 7 after the rollback" in fig.layout.title.text.replace("<br>", " ")


def test_draft_rows_outline_the_draft():
    vocab = "abcdefgh"
    p = [[0.3, 0.2, 0.1, 0.1, 0.1, 0.1, 0.05, 0.05]] * 3
    q = [[0.1, 0.1, 0.2, 0.2, 0.1, 0.1, 0.1, 0.1]] * 2
    fig = plots_gpt.draft_rows(vocab, p, q, [7, 0], [0.5, 1.0], [0.7, 0.2], [False], top=4)
    assert "h" in fig.data[0].x  # the drafted token is always drawn
    assert "rejected" in fig.layout.annotations[0].text and "not checked" in fig.layout.annotations[1].text
    fig = plots_gpt.tokens_per_round([5, 2], [4, 1], 4)
    assert list(fig.data[0].y) == [4, 1]


def test_colours_are_defined_once_and_mixed_exactly():
    from specsim.plots import colors
    assert plots.P_COLOR is colors.P_COLOR and plots_rounds.RESIDUAL_COLOR is colors.RESIDUAL_COLOR
    assert plots_gpt.HIDDEN == colors.PANEL
    assert colors.mix("#204060", "#ffffff", 0) == "#204060" and colors.mix("#204060", "#ffffff", 1) == "#ffffff"
    assert colors.tint("#000000", 0.5) == "#808080" and colors.shade("#ffffff", 0.5) == "#808080"
    rgb = [int(colors.RESIDUAL_COLOR[i:i + 2], 16) for i in (1, 3, 5)]
    light = [int(colors.tint(colors.RESIDUAL_COLOR)[i:i + 2], 16) for i in (1, 3, 5)]
    assert all(c < x < 255 for c, x in zip(rgb, light))  # lighter than the colour, not white
    with pytest.raises(ValueError, match="t must be in"):
        colors.mix("#000000", "#ffffff", 1.5)


# -- layout that reads at 420 px: categories, legends below, wrapped titles, labels that fit ----------

def legend_below(fig) -> None:
    legend = fig.layout.legend
    assert legend.yref == "container" and legend.y == 0 and legend.yanchor == "bottom"


def test_token_axes_are_categorical_even_for_digit_tokens():
    model = toy.load_model("order2")
    ctx = (model.vocab[0], model.vocab[0])
    p, q = model.p(ctx), model.q(ctx)
    assert set(model.vocab) <= {"0", "1"}  # the tokens that used to turn into a numeric axis
    figs = [plots.pq_bars(model.vocab, p, q), plots.residual_stack(model.vocab, p, q),
            plots.residual_panels(model.vocab, p, q)]
    trace = sampling.trace_round(model, ctx, 2, seed=1)
    figs += [plots_rounds.event_figure(trace, i) for i in range(len(trace.events()))]
    for fig in figs:
        assert fig.layout.xaxis.type == "category", fig.layout.meta
        legend_below(fig)


def test_long_titles_wrap_and_contexts_shorten():
    assert plots.wrap("a " * 40, 20).count("<br>") >= 3
    assert all(len(line) <= 20 for line in plots.wrap("word " * 30, 20).split("<br>"))
    assert plots.wrap("short", 20) == "short"
    assert plots.shorten("x" * 100, 24) == "…" + "x" * 23
    trace = sampling.trace_round(SEED, tuple("abc" * 10), 3, seed=0)
    title = plots_rounds.draft_figure(trace, 2).layout.title.text
    assert "…" in title and all(len(line) <= 46 for line in title.split("<br>"))


def test_long_fractions_get_decimals_and_labels_hide_rather_than_collide():
    assert plots.label(F(3, 5)) == "3/5" and plots.label(F(729, 1000)) == "0.729"
    assert plots.exact_dec(F(18211183, 6747300)) == "18211183/6747300 ≈ 2.699"
    assert plots.exact_dec(F(1, 10)) == "1/10" and plots.exact_dec(F(3)) == "3"
    fig = plots.pq_bars(SEED.vocab, P, Q)
    assert fig.layout.uniformtext.mode == "hide" and fig.layout.uniformtext.minsize == 10


def test_gamma_colour_scale_is_discrete_by_doubling_bins():
    assert plots.gamma_bins(32) == [(1, 1), (2, 2), (3, 4), (5, 8), (9, 16), (17, 32)]
    fig = plots.best_gamma_heatmaps([0.5, 0.9], [0.05], [[2, 8]], [[1.4, 3.0]], max_gamma=32)
    gamma_map = fig.data[2]
    assert list(gamma_map.z[0]) == [1, 3] and list(gamma_map.customdata[0]) == [2, 8]
    assert list(gamma_map.colorbar.ticktext) == ["1", "2", "3-4", "5-8", "9-16", "17-32"]
    assert "searched up to 32" in fig.layout.annotations[0].text


def test_tokens_per_round_legend_matches_bar_colours():
    fig = plots_gpt.tokens_per_round([5, 2, 3], [4, 1, 2], 4)
    colours = {t.name: t.marker.color for t in fig.data}
    assert colours["bonus (all accepted)"] == plots.BONUS_COLOR
    assert colours["replacement (residual)"] == plots.RESIDUAL_COLOR
    assert list(fig.data[2].y) == [1, 0, 0] and list(fig.data[1].y) == [0, 1, 1]


def test_draft_rows_title_names_the_number_of_tokens_shown():
    p = [[0.3, 0.2, 0.1, 0.1, 0.1, 0.1, 0.05, 0.05]] * 3
    q = [[0.1, 0.1, 0.2, 0.2, 0.1, 0.1, 0.1, 0.1]] * 2
    fig = plots_gpt.draft_rows("abcdefgh", p, q, [7, 0], [0.5, 1.0], [0.7, 0.2], [False], top=4)
    assert "top 4 tokens" in fig.layout.title.text.replace("<br>", " ")
    legend_below(fig)


def test_cache_slots_without_a_drafter_cache_draw_the_target_only():
    """Prompt lookup has no model and no cache: its rows are left out, not drawn from None."""
    cache = {"target": {"start": 5, "before_verify": 5, "after_verify": 8, "after_crop": 6},
             "draft": {"start": None, "before_verify": None, "after_verify": None, "after_crop": None}}
    fig = plots_gpt.cache_slots(cache, gamma=2, k=0)
    assert len(fig.data[0].y) == 3 and all(y.startswith("target") for y in fig.data[0].y)


def test_draft_rows_with_no_drafts_says_so_instead_of_raising():
    """A round with no drafts (prompt lookup found no match) has no per-draft panel: the figure
    says so in words, where make_subplots with zero columns used to raise."""
    fig = plots_gpt.draft_rows("ab", [[0.5, 0.5]], [], [], [], [], [])
    assert not fig.data
    assert "no drafts" in fig.layout.annotations[0].text
