"""One cache for every library call a page makes: ``compute(fn, *args)``, keyed by what the arguments are.

A page calls a library function through ``compute`` (``cached.compute(exact.round_distribution, model,
context, scheme)``), never directly when the call is exact work, so that moving a widget does not enumerate
the same rounds again. There is nothing to add here for a new page or a new function: each function gets a
cache of its own the first time it is asked for (named by its module, qualified name and file), bounded like
every app cache (``max_entries``; ``ttl``, default ``TTL``: a toy model's result is dropped when unused for an
hour, uploaded models come and go; ``ttl=None`` for results that depend on no model).

The key is the arguments' value, not their identity: a toy model by its JSON text (an edited model with the
same rows is the same key), a scheme by its type and grammar string (``Scheme.__eq__``), a named registry
entry (a frozen dataclass with a ``name``: a pitfall, an implementation) by its type and name, a tuple item
by item, anything else as ``st.cache_data`` hashes it. The live objects are handed to ``fn`` unhashed.

Streamlit computes one key once even when several sessions ask at the same time (a lock per key). An exact
computation whose estimated work is large takes a heavy slot while it runs (on a miss only): ``work`` is a
function of no argument that returns ``bounds.exact_work(...)`` (``heavy.exact_slot``), ``guard`` the
computation's own work check with its arguments bound (``functools.partial(pitfalls.check_lab, model, scheme,
n)``: ``slot_for``), the guard the page and the CLI ask, so a few heavy ones run at once and light pages stay
quick.
"""
from __future__ import annotations

import contextlib
import dataclasses
import functools
import threading

import streamlit as st

from parts import heavy
from specsim import bounds, schemes, toy

TTL = 3600  # seconds a toy model's result is kept unused (uploaded models come and go)


def slot_for(check, *args, **kwargs):
    """A heavy slot when ``check(*args, limit=heavy.EXACT_HEAVY)`` refuses: the computation's own work guard
    (``bounds.check_round``, ``pitfalls.check_lab``, ...) says it is heavy; nothing when it is light."""
    try:
        check(*args, limit=heavy.EXACT_HEAVY, **kwargs)
    except bounds.WorkRefused:
        return heavy.slot()
    return contextlib.nullcontext()


def key_of(value):
    """The part of a cache key that stands for ``value`` (see the module's docstring).

    >>> seed = toy.load_model("seed")
    >>> key_of(seed) == key_of(toy.loads_model(seed.to_json()))
    True
    >>> key_of((schemes.as_scheme("tree:2,1"), 3))
    (('specsim.schemes.tree.Tree', 'tree:2,1'), 3)
    """
    if isinstance(value, toy.ToyModel):
        return ("specsim.toy.ToyModel", value.to_json())
    if isinstance(value, schemes.Scheme) or (dataclasses.is_dataclass(value) and not isinstance(value, type)
                                            and isinstance(getattr(value, "name", None), str)):
        kind = type(value)
        return (f"{kind.__module__}.{kind.__qualname__}", value.name)
    if isinstance(value, (tuple, list)):
        return type(value)(key_of(v) for v in value)
    return value


def _name(fn) -> str:
    """A function's cache name: module, qualified name and file (two pages' functions of one name differ:
    Streamlit runs every page as ``__main__``)."""
    code = getattr(fn, "__code__", None)
    return f"{fn.__module__}.{fn.__qualname__}@{code.co_filename if code else ''}"


_caches: dict = {}
_caches_lock = threading.Lock()


def _cache_for(name: str, max_entries: int, ttl):
    """The ``st.cache_data`` function of ``name`` with these bounds, made once per server."""
    with _caches_lock:
        if (name, max_entries, ttl) not in _caches:
            def run(key: tuple, _fn, _args: tuple, _kwargs: dict, _slot):
                with _slot():
                    return _fn(*_args, **_kwargs)
            run.__qualname__ = f"compute[{name}|{max_entries}|{ttl}]"  # Streamlit keys a cache by this name
            _caches[name, max_entries, ttl] = st.cache_data(max_entries=max_entries, ttl=ttl,
                                                            show_spinner=False)(run)
        return _caches[name, max_entries, ttl]


def compute(fn, *args, work=None, guard=None, max_entries: int = 64, ttl=TTL, **kwargs):
    """``fn(*args, **kwargs)``, computed once per key and shared by every session (see the module's docstring).

    ``work``: a function of no argument returning the computation's estimated exact work (a heavy slot over
    ``heavy.EXACT_HEAVY``); ``guard``: the computation's work check, arguments bound, called with ``limit=``
    (a heavy slot when it refuses). Both are asked on a miss only.
    """
    if work is not None:
        slot = lambda: heavy.exact_slot(work())  # noqa: E731
    elif guard is not None:
        slot = functools.partial(slot_for, guard)
    else:
        slot = contextlib.nullcontext
    key = (key_of(args), key_of(tuple(sorted(kwargs.items()))))
    return _cache_for(_name(fn), max_entries, ttl)(key, fn, args, kwargs, slot)


# -- calls a page and parts.warmup share (the warm-up fills the page's cache; tests read it) -------------
def best_gamma_grid(max_gamma: int) -> dict:
    """The Speedup page's grid, in the page's own cache."""
    from specsim import formulas
    return compute(formulas.best_gamma_grid, max_gamma=max_gamma, max_entries=16, ttl=None)


def implementation_proof(name: str, n_tokens: int):
    """A gallery entry proved on the presets and the checker's random family (the Implementations page's cache)."""
    from specsim.labs import implementations as impl
    return compute(impl.prove, impl.get(name), n_tokens, ttl=None)


def pitfall_lab(model_json: str, context: tuple, scheme, n_tokens: int) -> list:
    """The Pitfalls page's lab (``scheme``: a grammar string), in the page's own cache."""
    from specsim.labs import pitfalls
    model, scheme = toy.loads_model(model_json), schemes.as_scheme(scheme)
    return compute(pitfalls.run_lab, model, tuple(context), scheme, n_tokens,
                   guard=functools.partial(pitfalls.check_lab, model, scheme, n_tokens))
