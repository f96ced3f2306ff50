"""Animated figures: the frames are the library's numbers, one frame per event or step, and the player is whole."""
from __future__ import annotations

import subprocess
import sys
from fractions import Fraction as F

import pytest

from specsim import bounds, formulas, rule, sampling, toy

from specsim.views import frames

from specsim.plots import anim as plots_anim
from specsim.views.replay import Player

SEED = toy.load_model("seed")
A = ("a",)


def test_frames_are_plain_data_without_plotly():
    code = "import sys, specsim.views.frames; print([m for m in ('plotly', 'streamlit', 'torch') if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def check_player(fig, n_frames: int, speed: float) -> None:
    """Frame count, every frame carrying every trace, one named slider step per frame, Play at ``speed``."""
    assert len(fig.frames) == n_frames
    names = [f.name for f in fig.frames]
    assert len(set(names)) == n_frames
    assert fig.data[-1].mode == "text"  # the caption, last
    for f in fig.frames:  # every trace, in the order of the figure, in every frame
        assert f.traces is None and len(f.data) == len(fig.data)
        assert [type(t).__name__ for t in f.data] == [type(t).__name__ for t in fig.data]
    steps = fig.layout.sliders[0].steps
    assert [list(s.args[0]) for s in steps] == [[n] for n in names] and [s.label for s in steps] == names
    play, pause = fig.layout.updatemenus[0].buttons
    assert play.args[0] is None and play.args[1]["frame"]["duration"] == plots_anim.frame_duration(speed)
    assert play.args[1]["mode"] == "immediate" and play.args[1]["transition"]["duration"] == 0
    assert list(pause.args[0]) == [None]


def caption(frame) -> str:
    return frame.data[-1].text[0]  # the caption is the last trace of every frame


# -- 1. a round, event by event ------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 1, 5, 7])
def test_round_has_one_frame_per_event(seed):
    t = sampling.trace_round(SEED, A, 3, seed)
    data = frames.round_frames(SEED, A, 3, seed=seed)
    assert data["traces"][0].events() == t.events()
    assert [f["kind"] for f in data["frames"]] == [e["kind"] for e in t.events()]
    fig = plots_anim.round_animation(data, speed=0.6)
    check_player(fig, len(t.events()), 0.6)


def test_round_frames_show_what_each_event_is_about():
    t = sampling.trace_round(SEED, A, 3, 0)  # draft b a a; accept b; reject a; correct b
    fr = frames.round_frames(SEED, A, 3, seed=0)["frames"]
    assert fr[0]["q"] == t.q_rows[0] and fr[0]["p"] is None and fr[0]["highlight"] == "b"
    test = fr[5]
    assert test["kind"] == "reject" and (test["p"], test["q"]) == (t.p_rows[1], t.q_rows[1])
    assert test["u"] == t.u[1]
    assert test["acceptance"] == t.acceptance[1] == rule.acceptance_probability(F(1, 5), F(2, 5))
    assert [s["status"] for s in test["strip"]] == ["accepted", "rejected", "discarded", "empty"]
    correct = fr[6]
    assert correct["r"] == t.replacement_row and correct["strip"][-1] == {"token": "b", "status": "correct"}
    assert "r(b) = 1" in correct["caption"]
    assert "u = " + f"{t.u[1]:.3f}" in test["caption"] and "rejected" in test["caption"]
    fig = plots_anim.round_animation(frames.round_frames(SEED, A, 3, seed=0), speed=0.5)
    assert caption(fig.frames[5]).replace("<br>", " ") == fr[5]["caption"]
    p_bars = fig.frames[5].data[2]
    assert list(p_bars.y) == [float(x) for x in t.p_rows[1]] and list(p_bars.text) == ["1/5", "1/2", "3/10"]


def test_the_acceptance_bar_is_red_only_at_a_rejection_so_its_legend_is_not_the_residuals_red():
    """min(1, p/q): green in the legend (the figure's own colour), and in every frame except a rejection,
    where the bar is red; events without a test draw no bar and stay green."""
    from specsim.plots.colors import OVERLAP_COLOR, RESIDUAL_COLOR
    data = frames.round_frames(SEED, A, 3, seed=0)  # draft b a a; accept b; reject a; correct b
    fig = plots_anim.round_animation(data, speed=0.5)
    i = next(k for k, t in enumerate(fig.data) if t.name == "min(1, p/q)")
    assert fig.data[i].marker.color == OVERLAP_COLOR
    colours = [f.data[i].marker.color for f in fig.frames]
    kinds = [f["kind"] for f in data["frames"]]
    assert "reject" in kinds and "accept" in kinds
    assert colours == [RESIDUAL_COLOR if k == "reject" else OVERLAP_COLOR for k in kinds]


def test_bonus_round_marks_the_closing_token_as_bonus():
    seed = next(s for s in range(50) if sampling.trace_round(SEED, A, 2, s).accepted == 2)
    fr = frames.round_frames(SEED, A, 2, seed=seed)["frames"]
    bonus = next(f for f in fr if f["kind"] == "bonus")
    t = sampling.trace_round(SEED, A, 2, seed)
    assert bonus["p"] == t.p_rows[2] and bonus["strip"][-1] == {"token": t.bonus, "status": "bonus"}


def test_play_all_rounds_follows_the_player_chain():
    data = frames.round_frames(SEED, A, 3, seed=5, rounds=4)
    pl = Player(SEED, A, 3, seed=5)
    pl.advance_to(sum(len(t.events()) for t in data["traces"]))
    assert [t.emitted for t in pl.rounds[:4]] == [t.emitted for t in data["traces"]]
    assert len(data["frames"]) == sum(len(t.events()) for t in data["traces"]) == pl.offsets[4]
    check_player(plots_anim.round_animation(data, 0.3), pl.offsets[4], 0.3)


def test_round_sizes_are_refused_with_one_line():
    for bad in (dict(gamma=0), dict(gamma=17), dict(rounds=0), dict(rounds=10**6)):
        args = dict(gamma=3, rounds=1) | bad
        with pytest.raises(ValueError) as e:
            frames.round_frames(SEED, A, args["gamma"], rounds=args["rounds"])
        assert "\n" not in str(e.value)
    data = frames.round_frames(SEED, A, 3)
    for speed in (0, 0.01, 11):
        with pytest.raises(ValueError, match="speed"):
            plots_anim.round_animation(data, speed)


# -- 2. the residual morph ------------------------------------------------------------
def test_morph_ends_on_p_with_alpha_one_and_no_residual():
    p, q = SEED.p(A), SEED.q(("c",))
    data = frames.morph_frames(SEED.vocab, p, q, steps=10)
    fr = data["frames"]
    assert len(fr) == 11 and [f["t"] for f in fr] == [F(k, 10) for k in range(11)]
    assert fr[0]["q"] == list(q) and fr[-1]["q"] == list(p)
    assert fr[-1]["alpha"] == 1 and fr[-1]["residual"] is None and "no residual" in fr[-1]["caption"]
    for f in fr:  # every frame is the rule's own numbers
        assert f["alpha"] == rule.alpha(p, f["q"]) and f["residual"] == rule.residual(p, f["q"])
        assert [a + b for a, b in zip(f["overlap"], f["excess"])] == list(p)
    assert fr[5]["q"] == [(a + b) / 2 for a, b in zip(q, p)]
    fig = plots_anim.morph_animation(data, speed=0.2)
    check_player(fig, 11, 0.2)
    assert list(fig.frames[-1].data[1].y) == [float(x) for x in p] and list(fig.frames[-1].data[3].y) == [0, 0, 0]
    assert "α_t = Σ min(p, q_t) = 1;" in caption(fig.frames[-1]).replace("<br>", " ")


def test_morph_between_any_two_rows_and_bad_rows():
    p = [F(1, 2), F(1, 2)]
    fr = frames.morph_frames(["x", "y"], p, [F(1), F(0)], [F(0), F(1)], steps=2)["frames"]
    assert [f["alpha"] for f in fr] == [F(1, 2), F(1), F(1, 2)]
    for bad in ([F(1, 2), F(1, 3)], [F(1)]):
        with pytest.raises(ValueError) as e:
            frames.morph_frames(["x", "y"], p, bad)
        assert "\n" not in str(e.value)
    with pytest.raises(ValueError, match="steps"):
        frames.morph_frames(["x", "y"], p, p, steps=1000)


# -- 3. the visual proof -------------------------------------------------------------
@pytest.mark.parametrize("gamma", [1, 3])
def test_proof_final_counts_equal_an_independent_tally(gamma):
    data = frames.proof_frames(SEED, ("b",), gamma, rounds=400, seed=3)
    rng = sampling.make_rng(3)
    drafted, replaced = {t: 0 for t in SEED.vocab}, {t: 0 for t in SEED.vocab}
    for _ in range(400):
        t = sampling.trace_round(SEED, ("b",), gamma, rng)
        (drafted if t.kinds[0] == "draft" else replaced)[t.emitted[0]] += 1
    last = data["frames"][-1]
    assert last["n"] == 400
    assert last["drafted"] == list(drafted.values()) and last["replaced"] == list(replaced.values())
    p = SEED.p(("b",))
    assert last["tv"] == sum(abs(F(drafted[x] + replaced[x], 400) - px) for x, px in zip(SEED.vocab, p)) / 2
    assert data["overlap"] == rule.overlap(p, SEED.q(("b",))) and data["alpha"] == F(4, 5)
    # a token that p gives more than q can come from both sources, one that q gives more only from drafts
    assert replaced["a"] == replaced["c"] == 0 and replaced["b"] > 0
    counts = [f["n"] for f in data["frames"]]
    assert counts[:30] == list(range(1, 31)) and counts == sorted(set(counts)) and len(counts) <= 60
    fig = plots_anim.proof_animation(data, speed=0.2)
    check_player(fig, len(counts), 0.2)
    assert list(fig.frames[-1].data[0].y) == [c / 400 for c in drafted.values()]


def test_proof_converges_and_is_deterministic():
    a = frames.proof_frames(SEED, A, 1, rounds=4000, seed=11)
    assert a == frames.proof_frames(SEED, A, 1, rounds=4000, seed=11)
    last = a["frames"][-1]
    # 4000 rounds: TV's standard deviation is well under 0.01; 0.04 is a false alarm far rarer than 1e-6
    assert last["tv"] < F(4, 100) and last["p_value"] > 1e-4
    with pytest.raises(bounds.WorkRefused):
        frames.proof_frames(SEED, A, 1, rounds=20_001)


# -- 4. acceptance -------------------------------------------------------------------
def test_acceptance_final_counts_equal_a_tally_of_the_same_rounds():
    data = frames.acceptance_frames(SEED, A, 3, rounds=300, seed=2)
    rng = sampling.make_rng(2)
    ts = [sampling.trace_round(SEED, A, 3, rng) for _ in range(300)]
    last = data["frames"][-1]
    assert last["counts"] == [sum(t.accepted == k for t in ts) for k in range(4)]
    assert last["reached"] == [sum(len(t.acceptance) > i for t in ts) for i in range(3)]
    assert last["kept"] == [sum(t.accepted > i for t in ts) for i in range(3)]
    # the design document's reference P(K) and the i.i.d. formula's, K = γ being α^γ
    assert data["exact"] == [F(1, 10), F(13, 100), F(61, 500), F(81, 125)]
    assert data["iid"] == [F(1, 10), F(9, 100), F(81, 1000), F(729, 1000)] and sum(data["iid"]) == 1
    assert data["exact_rates"][0] == F(9, 10)
    fig = plots_anim.acceptance_animation(data, speed=0.2)
    check_player(fig, len(data["frames"]), 0.2)
    assert list(fig.frames[-1].data[0].y) == [c / 300 for c in last["counts"]]
    assert "α^γ at K = γ" in fig.data[2].name


# -- 5. the speedup curves -------------------------------------------------------------
def test_speedup_frames_best_gamma_is_the_formula():
    data = frames.speedup_frames(F(1, 20))
    assert len(data["frames"]) == 100 and [f["alpha"] for f in data["frames"]] == list(frames.ALPHAS)
    for f in data["frames"]:
        assert (f["best_gamma"], f["best_speedup"]) == formulas.best_gamma(f["alpha"], F(1, 20))
    by_alpha = {f["alpha"]: f["best_gamma"] for f in data["frames"]}
    assert (by_alpha[F(3, 5)], by_alpha[F(4, 5)], by_alpha[F(9, 10)]) == (4, 8, 13)  # DESIGN.md
    fig = plots_anim.speedup_animation(data, speed=0.2)
    check_player(fig, 100, 0.2)
    assert not [t for t in fig.data if t.type == "heatmap"] and fig.layout.images  # the map is an image
    star, cursor = fig.frames[80].data[1], fig.frames[80].data[3]
    assert (star.x[0], star.y[0]) == (8, pytest.approx(float(formulas.best_gamma(0.8, 0.05)[1])))
    assert (cursor.x[0], cursor.y[0]) == (0.8, 0.05)


def test_cost_sweep_and_refusals():
    data = frames.cost_frames(F(4, 5))
    assert len(data["frames"]) == 61
    by_cost = {f["cost"]: f["best_gamma"] for f in data["frames"]}
    assert (by_cost[F(1, 20)], by_cost[F(1, 5)]) == (8, 4)
    check_player(plots_anim.speedup_animation(data, 0.1), 61, 0.1)
    with pytest.raises(ValueError):
        frames.speedup_frames(alphas=[F(k, 1000) for k in range(1000)])
    with pytest.raises(ValueError):
        frames.cost_frames(alpha=F(3, 2))


def test_same_seed_same_figure():
    a = plots_anim.round_animation(frames.round_frames(SEED, A, 3, seed=9, rounds=2), 0.4)
    b = plots_anim.round_animation(frames.round_frames(SEED, A, 3, seed=9, rounds=2), 0.4)
    assert a.to_json() == b.to_json()
    c = frames.acceptance_frames(SEED, A, 2, rounds=200, seed=4)
    assert c == frames.acceptance_frames(SEED, A, 2, rounds=200, seed=4)
