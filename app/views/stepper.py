"""Round stepper: play seeded rounds forward (or back) one event at a time.

The rounds are ``specsim.views.replay.next_round`` calls on one
``numpy.random.default_rng(seed)`` from the chosen context, which chains them
exactly as ``specsim.sampling.generate`` does, so the same seed gives the
same rounds as the library (and the CLI). Work per step is constant: the
running totals are extended, not recomputed, and the token stream shows the
last ``HISTORY`` finished rounds. Play advances by the clock, so it keeps
time even when a rerun is slow.
"""
import time

import streamlit as st

from parts import animations
from parts import cached
from parts import tokens
from sections import tryit
from parts import widgets
from specsim import bounds, sampling
from specsim.plots import rounds as plots_rounds
from specsim.views import replay

KEY = "stepper"
HISTORY = 12  # finished rounds drawn in the token stream
MAX_GAMMA = 8

st.title("Round stepper")
tryit.back_to_lesson()
st.markdown("Each round: the drafter proposes γ tokens from **q**, one target pass computes **p**, "
            "drafts are kept left to right while **u < min(1, p/q)**, the first rejected one is replaced "
            "by a draw from the **residual**, and a full acceptance earns a **bonus** token.")

with st.sidebar:
    model = widgets.model_picker(KEY)
    if model is not None:
        wanted = tryit.choice("context", [" ".join(c) for c in model.contexts()])  # ?context=a&gamma=3&seed=7
        context = widgets.context_picker(model, f"{KEY}-ctx", label="start context",
                                         default=tuple(wanted.split(" ")) if wanted else None)
        top = widgets.largest_within(bounds.check_round, model, MAX_GAMMA)
        g0 = tryit.integer("gamma", 1, top)
        gamma = int(st.number_input("γ: draft length", 1, top, g0 if g0 is not None else min(3, top),
                                    key=f"{KEY}-gamma",
                                    help=f"up to {top}: the largest γ whose exact expectation is in the work limit"))
        s0 = tryit.integer("seed", 0, 2**31 - 1)
        seed = int(st.number_input("seed", 0, 2**31 - 1, s0 if s0 is not None else 0, key=f"{KEY}-seed"))
        speed = st.select_slider("play speed (seconds per event)", [0.3, 0.6, 1.0, 2.0], 0.6, key=f"{KEY}-speed")
if model is None:
    if KEY in st.session_state:
        st.session_state[KEY]["playing"] = False  # an old stepper never plays on by itself
    st.stop()

settings = (model.to_json(), context, gamma, seed)


def state() -> dict:
    """{"player": replay.Player, "playing", "clock", "totals"}, new when the settings change."""
    s = st.session_state.get(KEY)
    if s is None or s["settings"] != settings:
        s = st.session_state[KEY] = {"settings": settings, "player": replay.Player(model, context, gamma, seed),
                                     "playing": False, "totals": []}
    return s


def reset():
    st.session_state.pop(KEY, None)
    state()


def play_pause():
    s = state()
    s["playing"], s["clock"], s["rerun_app"] = not s["playing"], None, True


def slide(key):
    """The slider moved. Its key names its round; a change that arrives after Play has moved on to
    the next round (and dropped that key) is stale and ignored."""
    value = st.session_state.get(key)
    pl = state()["player"]
    if value is not None and key == f"{KEY}-slider-{pl.round}":
        pl.event = value - 1


def keep_time(s):
    """While playing, go to the event the clock says is due (at most 10 ahead at once)."""
    now, pl = time.monotonic(), s["player"]
    if s.get("clock") is None or s["clock"][1] != speed:
        s["clock"] = (now, speed, pl.step_number)
    start, _, first = s["clock"]
    pl.advance_to(min(first + int((now - start) / speed), pl.step_number + 10))


def expected_tokens(ctx, g):
    """The exact engine's E[tokens per round] from ``ctx``, cached by the model's state of it."""
    return cached.expected_tokens(settings[0], model.state(ctx), g)


@st.fragment(run_every=speed if state()["playing"] else None)
def stepper():
    s = state()
    if s.pop("rerun_app", False):
        st.rerun(scope="app")  # play/pause changes the fragment's timer
    if s["playing"]:
        keep_time(s)
    pl = s["player"]
    act = {name: (lambda f=getattr(pl, name): f()) for name in ("step", "back", "round_end")}
    bar = st.container(horizontal=True, wrap=True)  # one row that wraps on a phone, not five stacked rows
    bar.button("Previous", on_click=act["back"], icon=":material/skip_previous:", key=f"{KEY}-prev",
               disabled=pl.step_number == 1)
    bar.button("Next step", on_click=act["step"], icon=":material/skip_next:", key=f"{KEY}-next", type="primary")
    bar.button("Next round", on_click=act["round_end"], icon=":material/fast_forward:", key=f"{KEY}-round")
    bar.button("Pause" if s["playing"] else "Play", on_click=play_pause, key=f"{KEY}-play",
               icon=":material/pause:" if s["playing"] else ":material/play_arrow:")
    bar.button("Reset", on_click=reset, icon=":material/restart_alt:", key=f"{KEY}-reset")

    j, e, n, trace = pl.round, pl.event, pl.events_in(), pl.trace
    slider_key = f"{KEY}-slider-{j}"
    for k in (j - 1, j + 1):
        st.session_state.pop(f"{KEY}-slider-{k}", None)
    st.session_state[slider_key] = e + 1
    st.slider(f"event in round {j + 1}", 1, n, key=slider_key, on_change=slide, args=(slider_key,))
    st.markdown(f"round {j + 1} · event {e + 1} of {n} · step {pl.step_number} · "
                + tokens.describe_event(trace.events()[e], gamma))
    first = max(0, j - HISTORY)
    st.markdown(tokens.stream_html(context, pl.rounds[first:j], trace, e, first=first + 1, hidden=first),
                unsafe_allow_html=True)
    st.markdown(tokens.legend_html(["context", "draft", "rejected", "discarded", "correct", "bonus", "pending"],
                                   boundary=True), unsafe_allow_html=True)
    left, right = st.columns([3, 2])
    with left:
        st.plotly_chart(plots_rounds.event_figure(trace, e), key=f"{KEY}-event")
        st.caption(tokens.EVENT_MARKS)
    finished = pl.finished()
    with right:
        if finished and widgets.within_bounds(bounds.check_round, model, gamma):
            s["totals"] = replay.running_tokens_per_pass(model, finished, expected_tokens=expected_tokens,
                                                         previous=s["totals"][:len(finished)])
            totals = s["totals"]
            st.plotly_chart(plots_rounds.tokens_per_pass([t["sampled"] for t in totals],
                                                         [t["expected"] for t in totals], gamma), key=f"{KEY}-tpp")
            st.caption(f"{len(finished)} round(s): {totals[-1]['tokens']} tokens for "
                       f"{totals[-1]['target_passes']} target passes. Exact expectation from the exact engine, "
                       "averaged over the contexts the rounds started from.")
        elif not finished:
            st.info("Tokens per target pass appear here once the first round is finished.")


stepper()

st.subheader("The whole round, played in your browser")
st.markdown("The same seeded rounds as above, from the start: every event at an even pace, stopping at the "
            "end of the first round (or of the last one chosen); scrub with the chart's own slider.")
animations.show_round(model, context, gamma, seed)
