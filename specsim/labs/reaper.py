"""Nothing judged code starts survives the judging: a child subreaper that kills every descendant at the end.

``Reaper`` is a context manager for the process that judges (the CLI's
``check-rule`` and ``audit``). Inside it:

* this process is a *child subreaper* (Linux ``prctl(PR_SET_CHILD_SUBREAPER)``):
  a process the judged code starts and then abandons -- a double fork, a
  ``setsid()``, a daemon -- is re-parented to this process instead of to
  init, so it stays a descendant we can find;
* ``spawn`` starts the judged child in a session of its own, with
  ``PR_SET_PDEATHSIG(SIGKILL)`` so that it dies if this process is killed;
* SIGTERM and SIGHUP (what ``timeout``, systemd and a closing terminal send)
  and SIGINT raise ``Stopped`` (a ``KeyboardInterrupt``) in the main thread,
  so the ``finally`` that cleans up runs and no layer mistakes the signal for
  the judged code's own exception;
* this process is non-dumpable inside the block (``isolation.judge_guard``):
  no process without CAP_SYS_PTRACE over it can ptrace it or open its
  ``/proc/<pid>/mem`` or ``fd``, even one of the same user;
* on leaving -- a normal end, an exception, the clock, no memory, a signal --
  every descendant found under this process (the child's tree, and any
  process re-parented to us since the reaper opened) is sent SIGKILL,
  repeatedly until none is left (a process forking as fast as it can is
  outrun within a bounded number of sweeps), and reaped.

What it covers: on Linux, every process started inside, however it detaches,
as long as this process lives to leave the block (normal end, exceptions,
SIGINT, SIGTERM, SIGHUP). What it does not: a SIGKILL of this process itself
(nothing runs after it: the direct child dies by its death signal, but its
descendants go to init); elsewhere than Linux there is no subreaper and no
/proc, so only the child's process group is killed and a process that
called ``setsid()`` escapes.
"""
from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time

PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER, PR_GET_CHILD_SUBREAPER = 1, 36, 37
LINUX = sys.platform.startswith("linux")
SWEEPS = 50  # rounds of finding and killing descendants before giving up on a runaway fork loop


class Stopped(KeyboardInterrupt):
    """SIGTERM, SIGHUP or SIGINT arrived while judged code ran; everything it started is being killed."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _prctl(option: int, value: int = 0) -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.prctl(option, value, 0, 0, 0)


def _is_subreaper() -> int:
    flag = ctypes.c_int(0)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_GET_CHILD_SUBREAPER, ctypes.byref(flag), 0, 0, 0)
    return flag.value


def parents() -> dict:
    """pid -> parent pid of every process this machine's /proc lists (Linux)."""
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
            out[int(name)] = int(stat.rsplit(b")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile
    return out


def descendants(root: int, table: dict | None = None) -> set:
    """Every process below ``root`` (not ``root`` itself)."""
    table = parents() if table is None else table
    kids: dict = {}
    for pid, ppid in table.items():
        kids.setdefault(ppid, []).append(pid)
    found, todo = set(), [root]
    while todo:
        for pid in kids.get(todo.pop(), ()):
            if pid not in found:
                found.add(pid)
                todo.append(pid)
    return found


def _child_setup() -> None:  # runs in the child between fork and exec
    if LINUX:
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


class Reaper:
    """See the module docstring. ``with Reaper() as r: child = r.spawn([...], ...)``."""

    def __init__(self):
        self.me = os.getpid()
        self.before: set = set()
        self.children: list = []
        self._old_flag, self._handlers = 0, {}

    def __enter__(self) -> "Reaper":
        from .isolation import judge_guard
        self._guard = judge_guard().__enter__()  # non-dumpable while judged code runs: no ptrace, no /proc/<pid>/mem
        if LINUX:
            self.before = descendants(self.me)  # spared: what this process had started already
            self._old_flag = _is_subreaper()
            _prctl(PR_SET_CHILD_SUBREAPER, 1)
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
                self._handlers[sig] = signal.signal(sig, self._stop)
        return self

    @staticmethod
    def _stop(signum, frame):
        raise Stopped(signum)

    def spawn(self, argv: list, **kwargs):
        """``subprocess.Popen(argv, **kwargs)`` in a new session, dying with this process."""
        import subprocess
        child = subprocess.Popen(argv, start_new_session=True, preexec_fn=_child_setup, **kwargs)
        self.children.append(child)
        return child

    def judged(self) -> set:
        """The processes to kill now: the children's trees and whatever was re-parented to us since."""
        if not LINUX:
            return {c.pid for c in self.children if c.poll() is None}
        table = parents()
        found = {c.pid for c in self.children if c.pid in table}
        for pid in set(found):
            found |= descendants(pid, table)
        for pid, ppid in table.items():  # orphans of the judged code, re-parented to this subreaper
            if ppid == self.me and pid not in self.before:
                found.add(pid)
                found |= descendants(pid, table)
        return found - self.before - {self.me}

    def kill_all(self) -> None:
        """SIGKILL every judged process until none is left, then reap our own children among them."""
        for child in self.children:
            if not LINUX:
                try:
                    os.killpg(child.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
        for _ in range(SWEEPS):
            alive = self.judged()
            for pid in alive:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            self._reap()
            if not alive:
                break
            time.sleep(0.01)
        for child in self.children:
            try:
                child.wait(timeout=5)
            except Exception:  # noqa: BLE001 (a wait that cannot finish must not hide the real ending)
                pass

    def _reap(self) -> None:
        """Collect the exit status of every dead child of ours that is not spared (zombies left by kills)."""
        if not LINUX:
            return
        table = parents()
        for pid, ppid in table.items():
            if ppid == self.me and pid not in self.before and pid not in {c.pid for c in self.children}:
                try:
                    os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:
                    pass

    def __exit__(self, *exc) -> None:
        try:
            self.kill_all()
        finally:
            if LINUX and not self._old_flag:
                _prctl(PR_SET_CHILD_SUBREAPER, 0)
            for sig, old in self._handlers.items():
                signal.signal(sig, old)
            self._guard.__exit__()
