"""Presenter mode, for a class in front of a projector: ``?presenter=1`` or the toggle at the top right.

On: larger type, every chart as tall as most of the screen and every text in it at least 20 px
(``specsim.plots.charts.presented``), the sidebar closed when a page is opened, step buttons big enough
to hit from the back of the room, and a clicker's keys step the stepper or the animation on screen
(``parts.viewbar``). The screen's height is the browser window's by default ("fit this window", told by
the browser), or one chosen beside the toggle. The mode is the session's: it stays on from page to page
until it is turned off (``?presenter=0`` turns it off too).

Pages draw their charts with ``chart`` (here) instead of ``st.plotly_chart``.
"""
from __future__ import annotations

import streamlit as st

from specsim.plots.charts import presented

KEY = "presenter"  # the toggle's key: True when on
SCREEN = "presenter-screen"  # the projector's height: WINDOW or px
WINDOW = "fit this window"
SCREENS = (WINDOW, 720, 768, 900, 1080, 1200, 1440)
FALLBACK = 720  # px, until the browser has told its window's height
REPORTED = "presenter-window"  # the window's height as the browser told it (px)
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
    if st.session_state.get(SCREEN) not in SCREENS:
        st.session_state[SCREEN] = WINDOW
    return on()


def reported() -> int | None:
    """The window's height the browser last told (px), or None."""
    return st.session_state.get(REPORTED)


def report(height) -> None:
    """Keep the window's height the browser told (``parts.viewbar``'s component), when it is a plausible
    screen: a whole number of px from 200 to 10,000 (anything else, as a forged message could send, is
    ignored)."""
    if isinstance(height, int) and not isinstance(height, bool) and 200 <= height <= 10_000:
        st.session_state[REPORTED] = height


def screen_px() -> int:
    """The screen height presenter charts are sized for."""
    chosen = st.session_state.get(SCREEN, WINDOW)
    return chosen if isinstance(chosen, int) else (reported() or FALLBACK)


def controls() -> None:
    """The toggle (and, when on, the screen height) where it is drawn (``parts.viewbar``), and the mode's
    style for this run."""
    st.toggle("Presenter", key=KEY, help="presenter mode, for a projector: larger type, charts as tall as the screen, "
                                              "every chart text at least 20 px, big step buttons, the sidebar "
                                              "closed on each page, and a clicker's → ← keys step "
                                              "(or open the app with ?presenter=1)")
    if on():
        st.selectbox("screen", SCREENS, key=SCREEN, label_visibility="collapsed", width=170,
                     format_func=lambda s: s if isinstance(s, str) else f"screen {s} px high",
                     help="the height charts are sized for: this browser window's, or a projector's")
        st.html(STYLE)


def chart(fig, key: str, where=None, **kwargs):
    """``st.plotly_chart`` (in ``where``, a column or container, when given), sized for the projector when
    presenter mode is on."""
    if on():
        fig = presented(fig, screen_px())
    return (where or st).plotly_chart(fig, key=key, **kwargs)
