"""Animations that play in the browser: the library computes every frame once, plotly plays them.

Each ``show_*`` draws one figure of ``specsim.plots.anim`` from frames of
``specsim.views.frames``. Play, Pause and the frame slider live inside the
figure: no frame reruns the page, none is skipped. A refusal of the library
(too many rounds or frames) is one ``st.error`` line.

Both the frames (``st.cache_data``, per settings: a rerun does not sample
again) and the built figure (``_figure``) are cached. Building a figure
validates every trace of every frame, 0.1-0.4 s an animation on one of this
machine's cores, and it depends only on its settings, so it is built once
per server and every session after draws that same object, read-only:
``st.plotly_chart`` serialises a copy, presenter mode sizes a copy.
"""
from __future__ import annotations

import streamlit as st

from parts import memory, presenter

from specsim import toy

from specsim.views import frames

from specsim.plots import anim as plots_anim
from specsim.bounds import WorkRefused

SPEEDS = {"slow": 2.0, "normal": 1.0, "fast": 0.5}  # multiples of each animation's own pace


class _OneRow:
    """The explorer's rows as a one-context model pair (the context is empty)."""

    def __init__(self, vocab, p, q):
        self.vocab, self._p, self._q = tuple(vocab), tuple(p), tuple(q)

    def p(self, context):
        return self._p

    def q(self, context):
        return self._q


@st.cache_data(max_entries=32, show_spinner=False)
def _round(model_json: str, context: tuple, gamma: int, seed: int, rounds: int) -> dict:
    return frames.round_frames(toy.loads_model(model_json), context, gamma, seed, rounds)


@st.cache_data(max_entries=32, show_spinner=False)
def _acceptance(model_json: str, context: tuple, gamma: int, rounds: int, seed: int) -> dict:
    return frames.acceptance_frames(toy.loads_model(model_json), context, gamma, rounds, seed)


@st.cache_data(max_entries=32, show_spinner=False)
def _morph(vocab: tuple, p: tuple, q: tuple) -> dict:
    return frames.morph_frames(vocab, p, q)


@st.cache_data(max_entries=32, show_spinner=False)
def _proof(vocab: tuple, p: tuple, q: tuple, rounds: int, seed: int) -> dict:
    return frames.proof_frames(_OneRow(vocab, p, q), (), 1, rounds, seed)


@st.cache_data(max_entries=8, show_spinner=False)
def _speedup(cost) -> dict:
    return frames.speedup_frames(cost)


@st.cache_data(max_entries=8, show_spinner=False)
def _cost(alpha) -> dict:
    return frames.cost_frames(alpha)


FIGURES = {"round": (_round, plots_anim.round_animation), "acceptance": (_acceptance, plots_anim.acceptance_animation),
           "morph": (_morph, plots_anim.morph_animation), "proof": (_proof, plots_anim.proof_animation),
           "speedup": (_speedup, plots_anim.speedup_animation), "cost": (_cost, plots_anim.speedup_animation)}


@st.cache_resource(max_entries=48, show_spinner=False)
def _figure(kind: str, args: tuple, speed: float):
    """The animation ``kind`` of the frames ``FIGURES[kind][0](*args)`` at ``speed`` seconds a frame (shared:
    never changed after it is built)."""
    frames_of, build = FIGURES[kind]
    return build(frames_of(*args), speed)


def _pace(key: str) -> float:
    """The speed chosen beside a figure, as a multiple of its own pace."""
    memory.remember(f"{key}-speed", "normal", valid=lambda v: v in SPEEDS or v is None)  # kept across pages
    return SPEEDS[st.segmented_control("play speed", list(SPEEDS), key=f"{key}-speed",
                                       selection_mode="single") or "normal"]


def _draw(kind: str, args: tuple, key: str, pace: float, base: float) -> None:
    try:
        fig = _figure(kind, args, base * pace)
    except (WorkRefused, ValueError) as e:
        st.error(str(e).splitlines()[0])
        return
    presenter.chart(fig, key=key, config={"displayModeBar": False})


def show_round(model, context, gamma: int, seed: int, key: str = "anim-round") -> None:
    """Every event of the chosen round (or of the next few rounds), played at an even pace."""
    c1, c2 = st.columns(2)
    with c1:
        pace = _pace(key)
    memory.remember(f"{key}-rounds", 1, valid=memory.within(1, 5))
    rounds = c2.number_input("rounds to play", 1, 5, key=f"{key}-rounds",
                             help="1: this round, stopping at its end; more: the rounds that follow it too")
    _draw("round", (model.to_json(), tuple(context), gamma, seed, int(rounds)), key, pace, 0.8)


def show_acceptance(model, context, gamma: int, key: str = "anim-acceptance") -> None:
    """The K histogram filling round by round toward the exact P(K), and the per-position rates."""
    c1, c2 = st.columns(2)
    with c1:
        pace = _pace(key)
    memory.remember(f"{key}-seed", 0, valid=memory.within(0, 2**31 - 1))
    seed = int(c2.number_input("seed", 0, 2**31 - 1, key=f"{key}-seed"))
    _draw("acceptance", (model.to_json(), tuple(context), gamma, 1000, seed), key, pace, 0.2)


def show_residual(vocab, p, q, key: str = "anim-residual") -> None:
    """The morph of q into p, then the visual proof that the emitted token follows p."""
    vocab, p, q = tuple(vocab), tuple(p), tuple(q)
    c1, c2 = st.columns(2)
    with c1:
        pace = _pace(key)
    memory.remember(f"{key}-seed", 0, valid=memory.within(0, 2**31 - 1))
    seed = int(c2.number_input("seed of the rounds", 0, 2**31 - 1, key=f"{key}-seed"))
    _draw("morph", (vocab, p, q), f"{key}-morph", pace, 0.3)
    _draw("proof", (vocab, p, q, 2000, seed), f"{key}-proof", pace, 0.2)


def show_speedup(alpha, cost, key: str = "anim-speedup") -> None:
    """Play sweeps α at the chosen c, then c at the chosen α: the curve, the best γ and the map's cursor."""
    pace = _pace(key)
    _draw("speedup", (cost,), f"{key}-alpha", pace, 0.2)
    _draw("cost", (alpha,), f"{key}-cost", pace, 0.2)
