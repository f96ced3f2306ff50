"""``st.cache_data`` wrappers around the exact engine, keyed by the model's JSON text.

Each wrapper only calls one library function; the pages call these so that
moving a widget does not enumerate the same rounds again. Every cache is bounded
(``max_entries``; ``TTL`` for the toy-model results). Streamlit computes one key
once even when several sessions ask at the same time (a lock per key), and an
exact computation whose estimated work is large takes a heavy slot (``slot_for``
asks the computation's own guard, the one the page and the CLI ask), so a few heavy
ones run at once and light pages stay quick.
"""
from __future__ import annotations

import contextlib

import streamlit as st

from parts import heavy
from specsim import bounds, exact, formulas, schemes, toy
from specsim.labs import pitfalls

TTL = 3600  # seconds a toy model's result is kept unused (uploaded models come and go)


def slot_for(check, *args, **kwargs):
    """A heavy slot when ``check(*args, limit=heavy.EXACT_HEAVY)`` refuses: the computation's own work guard
    (``bounds.check_round``, ``pitfalls.check_lab``, ...) says it is heavy; nothing when it is light."""
    try:
        check(*args, limit=heavy.EXACT_HEAVY, **kwargs)
    except bounds.WorkRefused:
        return heavy.slot()
    return contextlib.nullcontext()


@st.cache_data(max_entries=64, ttl=TTL, show_spinner=False)
def round_distribution(model_json: str, context: tuple, scheme):
    """One exact round of ``scheme`` (a grammar string such as "tree:2,1", or an int γ for a chain)."""
    model, scheme = toy.loads_model(model_json), schemes.as_scheme(scheme)
    with heavy.exact_slot(bounds.exact_work(model, scheme, rounds=1)):
        return exact.round_distribution(model, context, scheme)


@st.cache_data(max_entries=256, ttl=TTL, show_spinner=False)
def expected_tokens(model_json: str, state: tuple, scheme):
    """Exact E[tokens per round] from a context; cached by the model's state of that context."""
    return round_distribution(model_json, state, scheme).expected_tokens


@st.cache_data(max_entries=64, ttl=TTL, show_spinner=False)
def check_exactness(model_json: str, n_tokens: int, gammas: tuple):
    model = toy.loads_model(model_json)
    with heavy.exact_slot(bounds.exact_work(model, n_tokens=n_tokens, schemes=gammas, contexts=len(model.contexts()))):
        return exact.check_exactness(model, n_tokens, gammas)


@st.cache_data(max_entries=64, ttl=TTL, show_spinner=False)
def exact_vs_iid(model_json: str, context: tuple, gammas: tuple) -> list:
    model = toy.loads_model(model_json)
    with heavy.exact_slot(sum(bounds.exact_work(model, g, rounds=1) for g in gammas)):
        return [formulas.exact_vs_iid(model, context, g) for g in gammas]


@st.cache_data(max_entries=64, ttl=TTL, show_spinner=False)
def pitfall_lab(model_json: str, context: tuple, scheme, n_tokens: int) -> list:
    """Every pitfall that applies to ``scheme`` (a grammar string, or an int γ for a chain), judged exactly."""
    model, scheme = toy.loads_model(model_json), schemes.as_scheme(scheme)
    with slot_for(pitfalls.check_lab, model, scheme, n_tokens):
        return pitfalls.run_lab(model, context, scheme, n_tokens)


@st.cache_data(max_entries=64, ttl=TTL, show_spinner=False)
def pitfall_joints(model_json: str, context: tuple, scheme, n_tokens: int, name: str):
    """(produced, wanted): the rule's next-N-token joint and the one it should produce (the rule's own
    drafting mode where it has one, as the lab runs it)."""
    model = toy.loads_model(model_json)
    pit, scheme = pitfalls.cases(schemes.as_scheme(scheme), [name])[0]
    with slot_for(pitfalls.check_lab, model, scheme, n_tokens, [name]):
        return pitfalls.joints(pit, model, context, scheme, n_tokens)


@st.cache_data(max_entries=16, show_spinner=False)
def best_gamma_grid(max_gamma: int) -> dict:
    return formulas.best_gamma_grid(max_gamma=max_gamma)


@st.cache_data(max_entries=256, show_spinner=False)
def speedup_curve(alpha, cost, max_gamma: int) -> dict:
    return formulas.speedup_curve(alpha, cost, max_gamma)


@st.cache_data(max_entries=64, show_spinner=False)
def implementation_proof(name: str, n_tokens: int):
    """A gallery entry proved on the presets and the checker's random family (the same for every model shown)."""
    from specsim.labs import implementations as impl

    return impl.prove(impl.get(name), n_tokens)
