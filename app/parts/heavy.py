"""Heavy work shared by every session of the app: computed once per request, a few at a time.

Two pieces, no Streamlit in them (the unit tests drive them with threads):

- ``slot(on_wait)``: at most ``HEAVY_SLOTS`` heavy computations run at once in
  the whole server; a caller over the cap waits (``on_wait`` is called once
  first, so a page can say "queued"). Re-entrant per thread, so a heavy step
  that calls another heavy step does not wait on itself.
- ``Store(max_entries)``: finished results shared by every session, at most
  ``max_entries`` of them (least recently used evicted first).
  ``get_or_compute(key, compute)`` is single-flight: when several sessions ask
  for the same key at once, one computes and the others wait for its result.

The exact engine's ``st.cache_data`` wrappers are already single-flight
(Streamlit >= 1.5x holds a lock per cache key while computing); they take a
slot through ``exact_slot(work)`` only when the estimated work is large, so
light pages never queue behind heavy ones.
"""
from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict

from parts.child import CHILD_NICE, in_child, target  # noqa: F401  (heavy work in a worker process)

HEAVY_SLOTS = 1  # heavy computations at once: the server has 2 CPU cores, one stays free for light pages
EXACT_HEAVY = 20_000  # an exact computation over this many steps (a tenth of the interactive limit) is heavy

_slots = threading.BoundedSemaphore(HEAVY_SLOTS)
_held = threading.local()  # how many slots this thread holds (re-entrance)
_state_lock = threading.Lock()
_running = 0  # heavy computations running now, for the queue message and the tests


def running() -> int:
    """Heavy computations running now, in the whole server."""
    return _running


@contextlib.contextmanager
def slot(on_wait=None):
    """Hold one of the ``HEAVY_SLOTS`` heavy-work slots; ``on_wait()`` is called once if we must queue."""
    global _running
    depth = getattr(_held, "depth", 0)
    if depth:  # this thread already holds a slot
        _held.depth = depth + 1
        try:
            yield
        finally:
            _held.depth -= 1
        return
    if not _slots.acquire(blocking=False):
        if on_wait is not None:
            on_wait()
        _slots.acquire()
    _held.depth = 1
    with _state_lock:
        _running += 1
    try:
        yield
    finally:
        with _state_lock:
            _running -= 1
        _held.depth = 0
        _slots.release()


def exact_slot(work: float):
    """A heavy slot for an exact computation of ``work`` steps (``bounds.exact_work``), or nothing if it is light."""
    return slot() if work > EXACT_HEAVY else contextlib.nullcontext()


class Store:
    """At most ``max_entries`` finished results shared by every session, each computed once.

    >>> s = Store(2)
    >>> [s.get_or_compute(k, lambda: k * 10) for k in (1, 2, 3)], s.get(1), s.get(3)
    ([10, 20, 30], None, 30)
    """

    def __init__(self, max_entries: int):
        self.max_entries = max_entries
        self._data: OrderedDict = OrderedDict()
        self._lock = threading.Lock()  # guards _data and _flights
        self._flights: dict = {}  # key -> the lock its one computation holds

    def __len__(self) -> int:
        return len(self._data)

    def get(self, key, default=None):
        """The finished result for ``key`` (marked as recently used), or ``default``."""
        with self._lock:
            if key not in self._data:
                return default
            self._data.move_to_end(key)
            return self._data[key]

    def __contains__(self, key) -> bool:
        with self._lock:
            return key in self._data

    def put(self, key, value) -> None:
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.max_entries:  # evict the least recently used
                self._data.popitem(last=False)

    def get_or_compute(self, key, compute, heavy: bool = False, on_wait=None):
        """The result for ``key``, computing it with ``compute()`` unless it is stored or being computed.

        Concurrent callers with the same key: the first computes, the others
        wait for it and return its result (``on_wait()`` is called once by a
        caller that has to wait, for a session's "queued" message). ``heavy``
        computations also take a ``slot``. ``compute`` must not call
        ``get_or_compute`` itself (two flights taken in opposite orders could
        wait on each other): fetch what it needs first. A failed computation stores
        nothing; the next waiter tries again (and usually fails the same way,
        fast: a bad prompt).
        """
        with self._lock:
            if key in self._data:
                self._data.move_to_end(key)
                return self._data[key]
            flight = self._flights.setdefault(key, threading.Lock())
        if not flight.acquire(blocking=False):  # someone else computes this key: wait for them
            if on_wait is not None:
                on_wait()
                on_wait = None
            flight.acquire()
        try:
            with self._lock:
                if key in self._data:  # computed while we waited
                    self._data.move_to_end(key)
                    return self._data[key]
            with slot(on_wait) if heavy else contextlib.nullcontext():
                value = compute()
            self.put(key, value)
            return value
        finally:
            with self._lock:
                if self._flights.get(key) is flight:
                    del self._flights[key]
            flight.release()
