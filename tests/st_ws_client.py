"""A Streamlit session without a browser: the app's websocket protocol spoken directly (for
``tests/bench_load.py``; not collected by pytest).

A browser tab talks to ``streamlit run`` over one websocket, ``/_stcore/stream``, in
protobuf messages: it sends a ``BackMsg`` whose ``rerun_script`` (a ``ClientState``) names the
page and carries the widgets' values (a pressed button is a ``WidgetState`` with
``trigger_value``), and it receives ``ForwardMsg``s: ``new_session`` (the page's script
hash), ``navigation`` (every page's hash and url path), ``delta`` (each element drawn; a
spinner comes as a ``new_transient`` delta) and ``script_finished`` (the run is over).
``Session`` does the same and renders nothing, so a load made of many sessions costs the
client almost no CPU.

The connection, as the server (Streamlit 1.67, on Starlette) checks it: the subprotocol
``streamlit``; an ``Origin`` equal to the server's own address (same-origin, as a browser on
that page sends; the server refuses an origin it does not allow); no XSRF token: the server
checks it only to read a signed-in user's cookie, and these sessions are anonymous.

Bounded: every wait has a timeout; a run that does not finish in time raises ``TimeoutError``.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.sync.client import connect


@dataclass
class Run:
    """One script run as the client saw it: seconds from the request to ``script_finished``, the
    elements drawn (``(seconds, type, element)``, in order of arrival) and the run's end status."""
    seconds: float = 0.0
    elements: list = field(default_factory=list)
    status: int = -1

    def find(self, kind: str, **attrs):
        """(seconds, element) of the first element of type ``kind`` whose attributes contain the given
        substrings (``find("markdown", body="held-out")``), or None."""
        for t, k, e in self.elements:
            if k == kind and all(v in str(getattr(getattr(e, k), a)) for a, v in attrs.items()):
                return t, getattr(e, k)
        return None


class Session:
    """One anonymous app session over ``ws://HOST:PORT/_stcore/stream``; ``url`` is ``http://HOST:PORT``."""

    def __init__(self, url: str, timeout: float = 60.0):
        if not url.startswith("http://127.0.0.1:"):
            raise ValueError(f"only the loopback address is allowed, got {url}")
        self.ws = connect(url.replace("http://", "ws://", 1) + "/_stcore/stream", subprotocols=["streamlit"],
                          origin=url, max_size=None, open_timeout=timeout)
        self.pages: dict = {}  # url path ("" for the home page) -> page script hash
        self.page_hash = ""

    def close(self) -> None:
        self.ws.close()

    def run(self, page: str, triggers: tuple = (), timeout: float = 60.0, on_element=None,
            values: dict | None = None) -> Run:
        """Rerun the script on ``page`` (its url path) with the buttons whose widget ids are in
        ``triggers`` pressed; returns when ``script_finished`` arrives. ``on_element(type, element)``
        is called as each element arrives (to act while the run goes on). ``values``: {widget id:
        (field, value)}, widget values sent as they are, in any field of ``WidgetState`` (a forged
        message: ``{id: ("int_value", 3)}`` for a selectbox, whose browser sends a ``string_value``).
        """
        msg = BackMsg()
        state = msg.rerun_script
        state.page_name = page
        state.page_script_hash = self.pages.get(page, "")
        for wid in triggers:
            w = state.widget_states.widgets.add()
            w.id = wid
            w.trigger_value = True
        for wid, (name, value) in (values or {}).items():
            w = state.widget_states.widgets.add()
            w.id = wid
            if isinstance(value, (list, tuple)):
                getattr(w, name).data.extend(value)
            else:
                setattr(w, name, value)
        start = time.perf_counter()
        deadline = start + timeout
        self.ws.send(msg.SerializeToString())
        run = Run()
        while True:
            left = deadline - time.perf_counter()
            try:
                if left <= 0:
                    raise TimeoutError
                data = self.ws.recv(timeout=left)
            except TimeoutError:
                raise TimeoutError(f"the run of page {page!r} did not finish within {timeout} s") from None
            fwd = ForwardMsg()
            fwd.ParseFromString(data)
            kind = fwd.WhichOneof("type")
            if kind == "new_session":
                self.page_hash = fwd.new_session.page_script_hash
            elif kind == "navigation":
                self.pages = {p.url_pathname: p.page_script_hash for p in fwd.navigation.app_pages}
            elif kind == "delta" and fwd.delta.WhichOneof("type") in ("new_element", "new_transient"):
                delta = fwd.delta  # a transient (st.spinner's) carries its elements in a list
                for element in [delta.new_element] if delta.HasField("new_element") else delta.new_transient.elements:
                    run.elements.append((time.perf_counter() - start, element.WhichOneof("type"), element))
                    if on_element is not None:
                        on_element(*run.elements[-1][1:])
            elif kind == "script_finished":
                run.status = fwd.script_finished
                if run.status == ForwardMsg.FINISHED_EARLY_FOR_RERUN:  # another rerun replaced this one
                    continue
                run.seconds = time.perf_counter() - start
                return run
