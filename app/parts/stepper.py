"""The one round stepper: seeded rounds of any scheme played an event at a time.

The Round stepper and the Trees page both call ``show``. The rounds are a
``specsim.views.replay.Player``: ``specsim.sampling.trace_round`` on one
``numpy.random.default_rng(seed)``, round after round, so the same seed gives
the rounds ``sampling.generate`` gives (and the CLI). What a round shows at
each event (the drafts, the verify pass, each test, the closing token) is
read from the same record, ``RoundTrace.events()``, for a chain, a block and
a tree: a tree is drafted whole before it is verified, as real verifiers do.

Controls: Previous / Next step / Next round / Play (one event per tick of the clock, never two,
stopped when the page is left) / Reset, and a slider over the current
round's events. The state lives in ``st.session_state[key]`` and is rebuilt
when the settings change; the button callbacks read and change only that.
"""
from __future__ import annotations

import time

import streamlit as st

from parts import event_text, event_view, presenter, tokens
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
    getattr(st.session_state[key]["player"], how)()


def _reset(key: str) -> None:
    """The same rounds again from the first event, paused (the fragment's clock stops with it)."""
    s = st.session_state[key]
    s["player"] = replay.Player(*s["args"])
    s["playing"], s["clock"], s["totals"], s["rerun_app"] = False, None, [], True


def _play_pause(key: str) -> None:
    s = st.session_state[key]
    s["playing"], s["clock"], s["rerun_app"] = not s["playing"], None, True
    s["asked"] = True  # the page's next full run comes from this button: it keeps playing


def _slide(key: str, slider_key: str) -> None:
    """The slider moved. Stale changes are ignored: one for a round Play has left (its key is gone), and,
    while playing, one back to an event Play showed last (the browser's clock tick can carry the slider's
    value from before the newest event reached it: taken, it would step Play back)."""
    s, value = st.session_state[key], st.session_state.get(slider_key)
    if value is not None and slider_key == f"{key}-slider-{s['player'].round}":
        if not (s["playing"] and (slider_key, value) in s.get("shown", ())):
            s["player"].event = value - 1


EARLY = 0.8  # a tick that comes sooner than this fraction of the pace after the last event does not advance


def _keep_time(s: dict, speed: float) -> None:
    """While playing, one event per tick of the fragment's clock and never two: every event is shown, each
    for about ``speed`` seconds (a slow rerun shows an event longer; ticks that pile up behind it are
    dropped, not turned into skipped events)."""
    now = time.monotonic()
    if s["clock"] is None or s["clock"][1] != speed:  # Play was just pressed: the current event starts its time
        s["clock"] = (now, speed)
    elif now - s["clock"][0] >= EARLY * speed:
        s["player"].step()
        s["clock"] = (now, speed)


def _view(key: str, model, context, scheme, seed: int, speed: float, aside) -> None:
    s = state(key, model, context, scheme, seed)
    if s.pop("rerun_app", False):
        s["asked"] = True  # this full run is the button's: Play goes on
        st.rerun(scope="app")  # play/pause changes the fragment's timer
    if s["playing"]:
        _keep_time(s, speed)
    pl = s["player"]
    bar = st.container(horizontal=True, wrap=True)  # one row that wraps on a phone, not five stacked rows
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
    slider_key = f"{key}-slider-{j}"
    for other in (j - 1, j + 1):
        st.session_state.pop(f"{key}-slider-{other}", None)
    st.session_state[slider_key] = e + 1
    s["shown"] = list(dict.fromkeys(s.get("shown", []) + [(slider_key, e + 1)]))[-3:]  # its last values (_slide)
    st.slider(f"event in round {j + 1}", 1, n, key=slider_key, on_change=_slide, args=(key, slider_key))
    names = tree_view.sibling_paths(trace.parents)
    st.markdown(f"round {j + 1} · event {e + 1} of {n} · step {pl.step_number} · "
                + event_text.describe_event(trace.events()[e], scheme, names))
    first = max(0, j - HISTORY)
    left, right = st.columns([3, 2])  # the chart right under the controls: at 1280×720 it starts above the fold
    with left:
        presenter.chart(event_view.round_figure(trace, e, f"{scheme.name}, seed {seed}, round {j + 1}"), key=f"{key}-event")
        if not tree_view.drawn_as_tree(scheme):
            st.caption(event_text.EVENT_MARKS)
    with right:
        st.markdown(tokens.stream_html(context, pl.rounds[first:j], trace, e, first=first + 1, hidden=first),
                    unsafe_allow_html=True)
        st.markdown(tokens.legend_html(LEGEND, boundary=True), unsafe_allow_html=True)
        if scheme.branches:  # a confidence chain closes at its first rejection: no p', q'
            event_view.tree_rows(model, trace, e, key)
        if aside is not None:
            aside(s)


def show(key: str, model, context, scheme, seed: int, speed: float, aside=None) -> dict:
    """The stepper as a fragment that reruns on the clock while playing; returns its state.

    ``aside(state)``, if given, draws more in the right-hand column (the Round
    stepper's tokens per target pass).
    """
    s = state(key, model, context, scheme, seed)
    if not s.pop("asked", False):  # the page was (re)opened or a setting changed: Play stops, it never jumps on
        s["playing"], s["clock"] = False, None

    @st.fragment(run_every=speed if s["playing"] else None)
    def stepper():
        _view(key, model, context, scheme, seed, speed, aside)

    stepper()
    return state(key, model, context, scheme, seed)
