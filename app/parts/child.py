"""Heavy work off the server's interpreter: one call in a fresh worker process, its result returned.

``in_child(fn, *args)`` (re-exported by ``parts.heavy``) runs a bench in a spawned, daemonic process that
sits ``CHILD_NICE`` below the server in the scheduler's order, so the server's light pages stay quick.
No Streamlit here (the unit tests drive it directly).
"""
from __future__ import annotations

import importlib
import os

CHILD_NICE = 10  # a heavy child process runs this much below the server (nice), from its start


def target(fn):
    """``fn`` itself, or the function a ``"package.module:function"`` string names (its module imported now).

    >>> target("math:factorial")(5), target(abs)(-2)
    (120, 2)
    """
    if not isinstance(fn, str):
        return fn
    module, _, name = fn.partition(":")
    return getattr(importlib.import_module(module), name)


def _child(conn) -> None:
    """The child's side of ``in_child``: one call, its result or its error's first line, sent back.

    The call comes through ``conn`` once the server has put this process below it, so everything
    the call imports (unpickling it, ``target``) and computes runs there.
    """
    try:
        fn, args, kwargs = conn.recv()
        try:
            import torch
            torch.set_num_threads(1)  # one core for the job, the other for the server's light pages
        except ImportError:
            pass
        conn.send(("ok", target(fn)(*args, **kwargs)))
    except BaseException as e:  # noqa: BLE001  anything, as one line for the page
        conn.send(("error", f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"))
    finally:
        conn.close()


def _below_server(pid: int) -> None:
    """Put process ``pid`` ``CHILD_NICE`` below this thread in the scheduler's order (light pages first).

    Done by the server as soon as the child exists, before it is sent its call, so that the child's
    imports (torch alone takes seconds) and work run below the server; its later threads inherit it.
    """
    try:
        os.setpriority(os.PRIO_PROCESS, pid, min(19, os.getpriority(os.PRIO_PROCESS, 0) + CHILD_NICE))
    except (AttributeError, OSError):  # no priorities on this platform, or the child is already gone
        pass


def in_child(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` in a fresh process (spawned, daemonic), its result returned here.

    For the benches (a minute of torch work): in the server's own process they hold Python's
    global lock, and every light page of every session waits on it. ``fn`` is a top-level
    library function or, for one whose module imports torch, its name ``"package.module:function"``
    (``target``): then only the child imports it. Importing torch and the model code holds the
    server's interpreter for seconds, and every light page of every session would wait that long.
    The result must be picklable. The child runs ``CHILD_NICE`` below the server before it is
    sent the call (``_below_server``). A child that dies without an answer, or an error inside it,
    raises ``RuntimeError`` with one line. Daemonic: the child ends with the server.
    """
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=_child, args=(child,), daemon=True)
    proc.start()
    _below_server(proc.pid)
    child.close()
    try:
        parent.send((fn, args, kwargs))
        while not parent.poll(0.5):
            if not proc.is_alive() and not parent.poll(0):
                raise RuntimeError(f"the worker process ended without an answer (exit code {proc.exitcode})")
        kind, value = parent.recv()
    except (EOFError, BrokenPipeError):  # the pipe closed with nothing in it: the child is gone or going
        proc.join(timeout=5)
        raise RuntimeError(f"the worker process ended without an answer (exit code {proc.exitcode})") from None
    finally:
        parent.close()
        proc.join(timeout=5)
        if proc.is_alive():
            proc.kill()
    if kind == "error":
        raise RuntimeError(value)
    return value
