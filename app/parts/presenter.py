"""Presenter mode, for a class in front of a projector: ``?presenter=1`` or the sidebar's toggle.

On: larger type, every chart as tall as most of the screen (``specsim.plots.charts.presented``, for the
screen height chosen beside the toggle), the sidebar closed when a page is opened, and step buttons
big enough to hit from the back of the room or with a presenter's remote. The mode is the session's:
it stays on from page to page until it is turned off (``?presenter=0`` turns it off too).

Pages draw their charts with ``chart`` (here) instead of ``st.plotly_chart``.
"""
from __future__ import annotations

import streamlit as st

from specsim.plots.charts import presented

KEY = "presenter"  # the toggle's key: True when on
SCREEN = "presenter-screen"  # the projector's height in px
SCREENS = (720, 768, 900, 1080)
SEEN = "presenter-link"  # the ?presenter= value already applied: a link wins once, then the toggle
STYLE = """<style>
html { font-size: 20px; }
[data-testid="stMainBlockContainer"] { max-width: 100%; padding: 2.5rem 2rem 2rem 2rem; }
[data-testid="stMain"] .stButton button { min-height: 3.4rem; min-width: 7rem; font-size: 1.25rem;
                                         padding: 0.6rem 1.4rem; }
[data-testid="stMain"] .stButton button p { font-size: 1.25rem; }
</style>"""


def on() -> bool:
    """Is presenter mode on in this session?"""
    return bool(st.session_state.get(KEY, False))


def from_link() -> bool:
    """Apply ``?presenter=1`` / ``?presenter=0`` once (a later toggle is not undone while the address still
    holds it); returns whether the mode is on. Call before ``st.set_page_config``."""
    raw = st.query_params.get("presenter")
    if raw in ("0", "1") and st.session_state.get(SEEN) != raw:
        st.session_state[SEEN] = raw
        st.session_state[KEY] = raw == "1"
    st.session_state.setdefault(KEY, False)
    st.session_state.setdefault(SCREEN, SCREENS[0])
    return on()


def controls() -> None:
    """The toggle (and, when on, the screen height) in the sidebar, and the mode's style for this run."""
    with st.sidebar:
        st.toggle("Presenter mode", key=KEY, help="for a projector: larger type, charts as tall as the screen, "
                                                  "big step buttons, the sidebar closed on each page "
                                                  "(or open the app with ?presenter=1)")
        if on():
            st.select_slider("screen height (px)", SCREENS, key=SCREEN,
                             help="the projector's height: each chart takes most of it")
    if on():
        st.html(STYLE)


def chart(fig, key: str, where=None, **kwargs):
    """``st.plotly_chart`` (in ``where``, a column or container, when given), sized for the projector when
    presenter mode is on."""
    if on():
        fig = presented(fig, int(st.session_state.get(SCREEN, SCREENS[0])))
    return (where or st).plotly_chart(fig, key=key, **kwargs)
