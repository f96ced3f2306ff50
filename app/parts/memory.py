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

A reload opens a new Streamlit session, with an empty ``st.session_state``. So the
remembered values are also kept on the server, per browser (``BROWSERS`` of them at
most, the least recently seen forgotten first), and ``restore`` puts them back once
when a new session starts. The browser is known by Streamlit's own XSRF cookie: its
token is the same for every request of one browser, and the cookie value masks it
differently each time (``browser_id`` unmasks it and keeps only a hash). Without that
cookie (XSRF protection off) settings last as long as the session.
"""
from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict

import streamlit as st

PREFIX = "memory:"
SEEN = "memory-link:"
RESTORED = "memory-restored"
BROWSERS = 256  # browsers whose settings the server keeps
KEYS = 200  # remembered settings per browser
XSRF_COOKIE = "_streamlit_xsrf"
_lock = threading.Lock()


@st.cache_resource(max_entries=1, show_spinner=False)
def _store() -> OrderedDict:
    """{browser id: {key: value}}, shared by every session of this server."""
    return OrderedDict()


def browser_id(cookie: str | None) -> str | None:
    """A stable id of the browser from Tornado's masked XSRF cookie ("2|mask|masked token|time"): the
    token unmasked and hashed; None for a missing or malformed cookie.

    >>> def cookie(mask_hex):                  # the token b"tok!" masked with a 4-byte mask
    ...     mask = bytes.fromhex(mask_hex)
    ...     return "2|" + mask_hex + "|" + bytes(b ^ m for b, m in zip(b"tok!", mask)).hex() + "|0"
    >>> browser_id(cookie("01020304")) == browser_id(cookie("0a0b0c0d")) != None
    True
    >>> browser_id("junk"), browser_id(None)
    (None, None)
    """
    parts = (cookie or "").split("|")
    try:
        if len(parts) != 4 or parts[0] != "2":
            return None
        mask, masked = bytes.fromhex(parts[1]), bytes.fromhex(parts[2])
    except ValueError:
        return None
    if not mask or not masked:
        return None
    token = bytes(b ^ mask[i % len(mask)] for i, b in enumerate(masked))
    return hashlib.sha256(token).hexdigest()


def _browser() -> str | None:
    try:
        return browser_id(st.context.cookies.get(XSRF_COOKIE))
    except Exception:  # noqa: BLE001  no request context (AppTest, a bare run): settings last for the session
        return None


def restore() -> None:
    """Once per session: put back this browser's remembered settings (a reload starts a new session)."""
    state = st.session_state
    if state.get(RESTORED):
        return
    state[RESTORED] = True
    bid = _browser()
    if bid is None:
        return
    with _lock:
        saved = dict(_store().get(bid, {}))
    for key, value in saved.items():
        state.setdefault(PREFIX + key, value)


def _save(key: str, value) -> None:
    bid = _browser()
    if bid is None:
        return
    with _lock:
        store = _store()
        saved = store.pop(bid, {})
        if key in saved or len(saved) < KEYS:
            saved[key] = value
        store[bid] = saved  # the most recently seen last
        while len(store) > BROWSERS:
            store.popitem(last=False)


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
    if state.get(PREFIX + key, _MISSING) != state[key]:
        _save(key, state[key])
    state[PREFIX + key] = state[key]
    return state[key]


_MISSING = object()
