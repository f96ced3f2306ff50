"""Play's clock for the round stepper: kept by the server, one fragment run per event.

A browser timer (``st.fragment(run_every=...)``) fires late whenever the
page is busy drawing, and its ticks queue behind slow runs: paced that way,
some events were shown for a tenth of the chosen time and others for twice
it. Here the run that draws an event holds it (sleeps) until the event's time
is up and then reruns the fragment for the next one, so events reach the
browser at the chosen pace. Streamlit queues a click inside the fragment
behind a running fragment, so the hold looks at the session's request queue
every ``POLL`` seconds and ends at once when a click, a page change or Stop
is waiting; the run that click starts then decides (Pause, a step, a new page).
"""
from __future__ import annotations

import time

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

try:  # where the queue's state lives in this Streamlit; without it a hold simply runs its whole time
    from streamlit.runtime.scriptrunner_utils.script_requests import ScriptRequestType
    CONTINUE = ScriptRequestType.CONTINUE
except ImportError:  # pragma: no cover - older or newer Streamlit
    CONTINUE = None

LATE = 0.1  # an event shown later than this fraction of the pace after its due time starts its time anew
POLL = 0.05  # seconds between looks for a click or a page change while an event is on show


def start_event(s: dict, speed: float, now: float) -> None:
    """At the start of a run while playing: step if the last run asked to, and say when this event's time
    started. Each event is drawn once and then held for ``speed`` seconds by the run that drew it, so no
    event is skipped and none is cut short by a late or early tick of a browser timer."""
    advance = s.pop("advance", False)
    if advance:
        s["player"].step()
    if s["clock"] is None or s["clock"][1] != speed or (advance and now - s["clock"][0] > LATE * speed):
        s["clock"] = (now, speed)


def pending() -> bool:
    """Is a click, a page change or a Stop waiting for this run to end? (Read from the session's request
    queue; where this Streamlit does not have one, False: the event is then held its whole time.)"""
    ctx = get_script_run_ctx()
    requests = getattr(ctx, "script_requests", None)
    state = getattr(requests, "_state", None)
    return CONTINUE is not None and state is not None and state != CONTINUE


def hold_then_next(s: dict, meanwhile=None) -> None:
    """End of a fragment run while playing: hold the event until its time is up, then rerun the fragment for
    the next one. A click or a page change that comes meanwhile ends the run at once, without a step.
    ``meanwhile()``, if given, runs first, while the event is on show (build what the next run will draw, so
    that run draws at once)."""
    if meanwhile is not None and not pending():
        meanwhile()
    due = s["clock"][0] + s["clock"][1]
    while (left := due - time.monotonic()) > 0:
        if pending():
            return
        time.sleep(min(POLL, left))
    if pending():
        return
    s["clock"], s["advance"] = (due, s["clock"][1]), True
    st.rerun(scope="fragment")
