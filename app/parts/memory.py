"""Settings that survive navigation within a session, and links that still win.

Streamlit forgets a widget's value when its page is not drawn in a run (leave
the stepper for Exactness and its seed, γ and context are gone). A page keeps
them by calling ``remember(key, default)`` right before it creates the widget
with ``key=key`` and no ``value``/``index`` argument: the value lives on in
``st.session_state`` under a key no widget owns (``"memory:" + key``) and is
put back as the widget's value on the page's next run.

A link's setting (``?seed=5``, read by the page and passed as ``link``; or any
remembered key as a query parameter, ``?stepper-seed=5``, read strictly by
``parts.links``) wins once, on the run that first sees it: a later change made
with the widget is not undone on the next rerun while the address still holds
the link; a reload opens the page on what the address holds.

The pages do not write their settings into the address as they change: Streamlit
turns every change of ``st.query_params`` into a new browser history entry, so Back
would step through settings instead of returning to the lesson that linked the page.
Instead the keys a page remembers are collected run by run (``begin``, ``note``) and
``view_params`` makes the link to the view on demand ("Copy link to this view",
``parts.viewbar``).

A reload opens a new Streamlit session, with an empty ``st.session_state``. So the
remembered values are also kept on the server, per browser (``BROWSERS`` of them at
most, the least recently seen forgotten first), and ``restore`` puts them back once
when a new session starts. The browser is known by Streamlit's own XSRF cookie: its
token is the same for every request of one browser, and the cookie value masks it
differently each time (``browser_id`` unmasks it and keeps only a hash). Without that
cookie (XSRF protection off) settings last as long as the session.

A visitor controls both the cookie and every value (a hand-made websocket message is not
bound by the browser's widgets), so the store is bounded in bytes as well as in count:
``BYTES_PER_BROWSER`` per browser (a value that would pass it is not kept) and ``BYTES``
in all (the least recently seen browsers forgotten first). A value is kept, restored or
put back into a widget only when ``storable`` (a bool, a bounded int, a finite float, a
string of at most ``MAX_CHARS`` characters, a short tuple of short strings, None) and
of the default's kind (an int where the default is an int; a float for a float) and,
where the page gives one, ``valid`` (its range or its options); anything else is
replaced by the default.
"""
from __future__ import annotations

import hashlib
import math
import threading
from collections import OrderedDict
from fractions import Fraction

import streamlit as st

from parts import links

PREFIX = "memory:"
SEEN = "memory-link:"
RESTORED = "memory-restored"
PAGE, RUN, LAST = "memory-page", "memory-run", "memory-last"  # the links' bookkeeping (``begin``)
BROWSERS = 256  # browsers whose settings the server keeps
KEYS = 200  # remembered settings per browser
BYTES_PER_BROWSER = 32_768  # the size (``size``) of one browser's settings
BYTES = 2 * 2**20  # the size of every browser's settings together
MAX_CHARS = 1_000  # a remembered string (the longest text box: parts.text_input.MAX_TEXT)
MAX_ITEMS, MAX_ITEM_CHARS = 16, 64  # a remembered tuple (a context: a few tokens)
MAX_INT = 2**53  # a remembered int's magnitude (a seed is below 2**31)
XSRF_COOKIE = "_streamlit_xsrf"
_lock = threading.Lock()


@st.cache_resource(max_entries=1, show_spinner=False)
def _store() -> OrderedDict:
    """{browser id: {key: value}}, shared by every session of this server (its total size under
    ``_sizes()["total"]``)."""
    return OrderedDict()


@st.cache_resource(max_entries=1, show_spinner=False)
def _sizes() -> dict:
    """{browser id: the size of its settings, "total": their sum}, kept beside ``_store``."""
    return {"total": 0}


def storable(value) -> bool:
    """Is ``value`` of a kind and size a remembered setting may have: None, a bool, a number (an int or a
    Fraction's terms of at most ``MAX_INT``, a finite float), a string of at most ``MAX_CHARS``, a tuple of at
    most ``MAX_ITEMS`` numbers or strings of at most ``MAX_ITEM_CHARS`` (a context, a range)?

    >>> storable(3), storable(0.5), storable("chain:3"), storable(("a", "b")), storable((1, 4)), storable(None)
    (True, True, True, True, True, True)
    >>> storable(10**401), storable(float("nan")), storable("x" * 1001), storable(["a"]), storable({"k": 1})
    (False, False, False, False, False)
    """
    return value is None or isinstance(value, (bool, str)) and len(str(value)) <= MAX_CHARS or _number(value) or (
        isinstance(value, tuple) and len(value) <= MAX_ITEMS
        and all(_number(v) or isinstance(v, str) and len(v) <= MAX_ITEM_CHARS for v in value))


def _number(value) -> bool:
    if isinstance(value, bool):
        return True
    if isinstance(value, int):
        return abs(value) <= MAX_INT
    if isinstance(value, Fraction):
        return abs(value.numerator) <= MAX_INT and value.denominator <= MAX_INT
    return isinstance(value, float) and math.isfinite(value)


def same_kind(value, default) -> bool:
    """Is ``value`` of ``default``'s kind (an int for an int, an int or a float for a float, a string for a
    string, a tuple for a tuple; anything storable for a default of None)?

    >>> same_kind(3, 0), same_kind(3, 0.5), same_kind(True, 0), same_kind(3, "normal"), same_kind("x", None)
    (True, True, False, False, True)
    """
    if default is None:
        return True
    if isinstance(default, bool) or isinstance(value, bool):
        return isinstance(value, bool) and isinstance(default, bool)
    if isinstance(default, float):
        return isinstance(value, (int, float))
    return isinstance(value, type(default))


def size(key: str, value) -> int:
    """The bytes a setting is counted for: its key and its value's repr as UTF-8 text, plus 64 for the entry.

    >>> size("k", "héllo"), size("k", 12)
    (73, 67)
    """
    return 64 + len(key.encode("utf-8", "replace")) + len(repr(value).encode("utf-8", "replace"))


def _fits(key: str, value, default, valid, live: bool = False) -> bool:
    """``storable``, of ``default``'s kind (None only where ``valid`` takes it) and ``valid`` (which may not
    raise: a range check handed a string is simply False). A ``live`` widget's text may be longer than a
    stored one: the page refuses it by its length, in one error line (it is never stored)."""
    if not (storable(value) or live and isinstance(value, str)):
        return False
    if value is None and default is not None and valid is None:
        return False
    if value is not None and not same_kind(value, default):
        return False
    try:
        return valid is None or bool(valid(value))
    except Exception:  # noqa: BLE001  a check written for the right kind, handed another
        return False


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
        if isinstance(key, str) and storable(value):  # checked again on the way out (and by ``remember``)
            state.setdefault(PREFIX + key, value)


def _save(key: str, value) -> None:
    bid = _browser()
    if bid is None or not storable(value):
        return
    with _lock:
        store, sizes = _store(), _sizes()
        saved = store.pop(bid, {})
        used = sizes.pop(bid, 0)
        grown = used + size(key, value) - (size(key, saved[key]) if key in saved else 0)
        if (key in saved or len(saved) < KEYS) and grown <= BYTES_PER_BROWSER:
            saved[key] = value
            sizes["total"] += grown - used
            used = grown
        store[bid], sizes[bid] = saved, used  # the most recently seen last
        while len(store) > BROWSERS or (sizes["total"] > BYTES and len(store) > 1):
            old, _ = store.popitem(last=False)
            sizes["total"] -= sizes.pop(old, 0)


def stored_bytes(bid: str | None = None) -> int:
    """The size of one browser's remembered settings (``bid``), or of all of them."""
    with _lock:
        sizes = _sizes()
        return sizes["total"] if bid is None else sizes.get(bid, 0)


def among(options):
    """``valid`` for a choice: one of ``options``."""
    options = tuple(options)
    return lambda v: v in options


def within(lo, hi):
    """``valid`` for a number box or a slider: a number from ``lo`` to ``hi`` (a range slider's tuple: both
    ends, in order)."""
    def check(v):
        ends = v if isinstance(v, tuple) else (v,)
        return 1 <= len(ends) <= 2 and all(lo <= x <= hi for x in ends) and tuple(sorted(ends)) == tuple(ends)
    return check


def _from_address(key: str, default, valid):
    """The value of the query parameter named ``key`` (a link to a view, ``parts.links``), read strictly:
    None when absent or not a value this setting may take."""
    try:
        text = st.query_params.get(key)
    except Exception:  # noqa: BLE001  no request (a bare run)
        return None
    value = links.parse(text, default) if text is not None else links.BAD
    return None if value is links.BAD or not _fits(key, value, default, valid) else value


def begin(page: str) -> None:
    """At the start of a full run of ``page``: the keys remembered in the run before become that page's
    last keys (``last_keys``), and this run's keys are collected anew."""
    state = st.session_state
    done, run = state.get(PAGE), state.get(RUN)
    if done is not None and run:
        last = state.setdefault(LAST, {})
        last[done] = dict(run)
        while len(last) > 64:  # pages, in fact (13)
            last.pop(next(iter(last)))
    state[PAGE], state[RUN] = page, {}


def note(name: str, text: str | None = None) -> None:
    """Put ``name`` in this run's link: a remembered key (its value read when the link is made), or a
    parameter with its own ``text`` (the toy model's name, read by ``parts.widgets.model_picker``)."""
    run = st.session_state.get(RUN)
    if run is not None and (name in run or len(run) < KEYS):
        run[name] = text


def run_keys() -> dict:
    """The link's names collected in this run so far."""
    return dict(st.session_state.get(RUN) or {})


def last_keys(page: str) -> dict:
    """The link's names of ``page``'s last run in this session (empty before its first)."""
    return dict((st.session_state.get(LAST) or {}).get(page, {}))


def view_params(names: dict) -> dict:
    """{query name: text}: the link to this view, from ``names`` (``run_keys`` or ``last_keys``): each
    remembered key with the value its widget holds now, each noted parameter with its text."""
    state, out = st.session_state, {}
    for name, text in names.items():
        if text is None:
            value = state[name] if name in state else state.get(PREFIX + name)
            text = links.text_of(value) if storable(value) else None
        if text is not None and len(text) <= links.MAX_CHARS:
            out[name] = text
    return out


def remember(key: str, default, link=None, valid=None):
    """Make ``st.session_state[key]`` this run's value of the widget ``key``; returns it.

    In order: ``link`` when it is not None and not yet seen, the widget's live value, the
    remembered value, ``default``. A value that is not ``storable``, not of ``default``'s kind or
    fails ``valid`` (say, a context the model no longer has, a γ over the page's maximum) is
    replaced by ``default``.
    """
    state = st.session_state
    note(key)
    if link is None:
        link = _from_address(key, default, valid)
    if link is not None and state.get(SEEN + key) != link:
        state[key] = link
        state[SEEN + key] = link
    elif key not in state:
        state[key] = state.get(PREFIX + key, default)
    try:
        value = state[key]
    except Exception:  # noqa: BLE001  a widget value Streamlit itself cannot read back (parts.guard)
        value = _MISSING
    if value is _MISSING or not _fits(key, value, default, valid, live=True):
        state[key] = default
    else:  # set anew, so the widget is sent with its value: a rerun whose message lacked the widget's state (one
        state[key] = value  # a component started) drew a slider at its minimum while the page used this value
    if storable(state[key]):  # a text over MAX_CHARS stays in its box (the page refuses it), never kept
        if state.get(PREFIX + key, _MISSING) != state[key]:
            _save(key, state[key])
        state[PREFIX + key] = state[key]
    return state[key]


_MISSING = object()
