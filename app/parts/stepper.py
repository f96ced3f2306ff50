"""The one round stepper: seeded rounds of any scheme played an event at a time.

The Round stepper and the Trees page both call ``show``. The rounds are a
``specsim.views.replay.Player``: ``specsim.sampling.trace_round`` on one
``numpy.random.default_rng(seed)``, round after round, so the same seed gives
the rounds ``sampling.generate`` gives (and the CLI). What a round shows at
each event (the drafts, the verify pass, each test, the closing token) is
read from the same record, ``RoundTrace.events()``, for a chain, a block and
a tree: a tree is drafted whole before it is verified, as real verifiers do.

Controls: Previous / Next step / Next round / Play / Reset, and a slider over
the current round's events. Play is paced by the server: each fragment run
draws one event, holds it for the chosen time and reruns the fragment for the
next, so every event is shown for that time whatever the browser's timers do;
a click or a page change ends the hold at once (leaving the page stops Play).
The state lives in ``st.session_state[key]`` and is rebuilt when the settings
change; the button callbacks read and change only that.
"""
from __future__ import annotations

import time

import streamlit as st

from parts import event_text, event_view, play_clock, presenter, tokens
from specsim.views import replay, tree_view

HISTORY = 12  # finished rounds drawn in the token stream (work per step stays constant)
LEGEND = ["context", "draft", "rejected", "discarded", "correct", "bonus", "pending"]


def state(key: str, model, context, scheme, seed: int) -> dict:
    """{"player", "playing", "clock", "totals", "args"} for these settings; new when they change."""
    settings = (model.to_json(), tuple(context), scheme.name, seed)
    s = st.session_state.get(key)
    if s is None or s["settings"] != settings:
        args = (model, tuple(context), scheme, seed)
        s = st.session_state[key] = {"settings": settings, "args": args, "playing": False, "clock": None,
                                     "totals": [], "player": replay.Player(*args)}
    return s


def stop(key: str) -> None:
    """An old stepper never plays on by itself (call when the page cannot show it)."""
    if key in st.session_state:
        st.session_state[key]["playing"] = False


# -- the button callbacks: they change only the state ----------------------------------------------
def _move(key: str, how: str) -> None:
    """Previous / Next step / Next round; while playing, the event moved to gets its whole time."""
    s = st.session_state[key]
    getattr(s["player"], how)()
    s["clock"], s["advance"] = None, False


def _reset(key: str) -> None:
    """The same rounds again from the first event, paused."""
    s = st.session_state[key]
    s["player"] = replay.Player(*s["args"])
    s["playing"], s["clock"], s["advance"], s["totals"] = False, None, False, []


def _play_pause(key: str) -> None:
    s = st.session_state[key]
    s["playing"], s["clock"], s["advance"] = not s["playing"], None, False
    s["asked"] = True  # a full run that comes from this button (not the usual fragment run) keeps playing


def _slide(key: str, slider_key: str) -> None:
    """The slider moved. Ignored: a change for a round Play has left (its key is gone), and any change while
    the slider was shown locked (playing): the user cannot move a disabled slider, so such a value is the
    browser's stale copy carried by a click (seen in Chromium as Pause stepping back an event)."""
    s, value = st.session_state[key], st.session_state.get(slider_key)
    if value is not None and slider_key == f"{key}-slider-{s['player'].round}" and not s.get("locked"):
        s["player"].event = value - 1


def _view(key: str, model, context, scheme, seed: int, speed: float, aside, chained: bool) -> None:
    s = state(key, model, context, scheme, seed)
    s.pop("asked", None)
    if s["playing"]:
        play_clock.start_event(s, speed, time.monotonic())
    pl = s["player"]
    # one row that wraps on a phone, not five stacked rows; "-clicker": a clicker's keys press its Next step and
    # Previous in presenter mode (parts.viewbar)
    bar = st.container(horizontal=True, wrap=True, key=f"{key}-clicker")
    bar.button("Previous", on_click=_move, args=(key, "back"), icon=":material/skip_previous:",
               key=f"{key}-prev", disabled=pl.step_number == 1)
    bar.button("Next step", on_click=_move, args=(key, "step"), icon=":material/skip_next:", key=f"{key}-next",
               type="primary")
    bar.button("Next round", on_click=_move, args=(key, "round_end"), icon=":material/fast_forward:",
               key=f"{key}-round")
    bar.button("Pause" if s["playing"] else "Play", on_click=_play_pause, args=(key,), key=f"{key}-play",
               icon=":material/pause:" if s["playing"] else ":material/play_arrow:")
    bar.button("Reset", on_click=_reset, args=(key,), icon=":material/restart_alt:", key=f"{key}-reset")

    j, e, n, trace = pl.round, pl.event, pl.events_in(), pl.trace
    figure = event_view.figure(s, j, trace, e, f"{scheme.name}, seed {seed}")  # before the caption: both go together
    slider_key = f"{key}-slider-{j}"
    for other in (j - 1, j + 1):
        st.session_state.pop(f"{key}-slider-{other}", None)
    st.session_state[slider_key] = e + 1
    s["locked"] = s["playing"]
    st.slider(f"event in round {j + 1}", 1, n, key=slider_key, on_change=_slide, args=(key, slider_key),
              disabled=s["playing"], help="Pause to move through the round by hand." if s["playing"] else None)
    names = tree_view.sibling_paths(trace.parents)
    st.markdown(f"round {j + 1} · event {e + 1} of {n} · step {pl.step_number} · "
                + event_text.describe_event(trace.events()[e], scheme, names))
    first = max(0, j - HISTORY)
    left, right = st.columns([3, 2])  # the chart right under the controls: at 1280×720 it starts above the fold
    with left:
        presenter.chart(figure, key=f"{key}-event")
        if not tree_view.node_by_node(scheme):
            st.caption(event_text.EVENT_MARKS)
    with right:
        st.markdown(tokens.stream_html(context, pl.rounds[first:j], trace, e, first=first + 1, hidden=first),
                    unsafe_allow_html=True)
        st.markdown(tokens.legend_html(LEGEND, boundary=True), unsafe_allow_html=True)
        if scheme.drawn_as == "tree":  # a rejection leaves p', q' for the next sibling (a chain: none)
            event_view.tree_rows(model, trace, e, key)
        if aside is not None:
            aside(s)
    if s["playing"] and chained:
        play_clock.hold_then_next(s, meanwhile=lambda: event_view.figure(s, *pl.peek(), f"{scheme.name}, seed {seed}"))


def show(key: str, model, context, scheme, seed: int, speed: float, aside=None) -> dict:
    """The stepper as a fragment that reruns on the clock while playing; returns its state.

    ``aside(state)``, if given, draws more in the right-hand column (the Round
    stepper's tokens per target pass).
    """
    s = state(key, model, context, scheme, seed)
    if not s.pop("asked", False):  # the page was (re)opened or a setting changed: Play stops, it never jumps on
        s["playing"], s["clock"], s["advance"] = False, None, False
    s["full_run"] = True  # the fragment's own reruns (Play's events, its buttons) come without this call

    # A full run cannot rerun the fragment by itself: if it keeps Play going (a click that reached the server
    # as a full run), the browser's timer starts the fragment's runs, which then pace themselves.
    @st.fragment(run_every=speed if s["playing"] else None)
    def stepper():
        _view(key, model, context, scheme, seed, speed, aside, chained=not s.pop("full_run", False))

    stepper()
    return state(key, model, context, scheme, seed)
