"""Settings that survive navigation within a session, and links that still win.

Streamlit forgets a widget's value when its page is not drawn in a run (leave
the stepper for Exactness and its seed, γ and context are gone). A page keeps
them by calling ``remember(key, default)`` right before it creates the widget
with ``key=key`` and no ``value``/``index`` argument: the value lives on in
``st.session_state`` under a key no widget owns (``"memory:" + key``) and is
put back as the widget's value on the page's next run.

A link's setting (``?seed=5``, read by the page and passed as ``link``) wins
once, on the run that first sees it: a later change made with the widget is
not undone on the next rerun while the address still holds the link; a reload
opens the page on what the address holds.

The pages do not write their settings into the address: Streamlit turns every
change of ``st.query_params`` into a new browser history entry, so Back would
step through settings instead of returning to the lesson that linked the page.
"""
from __future__ import annotations

import streamlit as st

PREFIX = "memory:"
SEEN = "memory-link:"


def remember(key: str, default, link=None, valid=None):
    """Make ``st.session_state[key]`` this run's value of the widget ``key``; returns it.

    In order: ``link`` when it is not None and not yet seen, the widget's live value, the
    remembered value, ``default``. A value that fails ``valid`` (say, a context the model
    no longer has, a γ over the page's maximum) is replaced by ``default``.
    """
    state = st.session_state
    if link is not None and state.get(SEEN + key) != link:
        state[key] = link
        state[SEEN + key] = link
    elif key not in state:
        state[key] = state.get(PREFIX + key, default)
    if valid is not None and not valid(state[key]):
        state[key] = default
    state[PREFIX + key] = state[key]
    return state[key]
