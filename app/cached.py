"""``st.cache_data`` wrappers around the exact engine, keyed by the model's JSON text.

Each wrapper only calls one library function; the pages call these so that
moving a widget does not enumerate the same rounds again.
"""
from __future__ import annotations

import streamlit as st

from specsim import exact, formulas, pitfalls, toy


@st.cache_data(max_entries=64, show_spinner=False)
def round_distribution(model_json: str, context: tuple, gamma: int):
    return exact.round_distribution(toy.loads_model(model_json), context, gamma)


@st.cache_data(max_entries=256, show_spinner=False)
def expected_tokens(model_json: str, state: tuple, gamma: int):
    """Exact E[tokens per round] from a context; cached by the model's state of that context."""
    return round_distribution(model_json, state, gamma).expected_tokens


@st.cache_data(max_entries=64, show_spinner=False)
def check_exactness(model_json: str, n_tokens: int, gammas: tuple):
    return exact.check_exactness(toy.loads_model(model_json), n_tokens, gammas)


@st.cache_data(max_entries=64, show_spinner=False)
def exact_vs_iid(model_json: str, context: tuple, gammas: tuple) -> list:
    model = toy.loads_model(model_json)
    return [formulas.exact_vs_iid(model, context, g) for g in gammas]


@st.cache_data(max_entries=64, show_spinner=False)
def pitfall_lab(model_json: str, context: tuple, gamma: int, n_tokens: int) -> list:
    return pitfalls.run_lab(toy.loads_model(model_json), context, gamma, n_tokens)


@st.cache_data(max_entries=64, show_spinner=False)
def pitfall_joints(model_json: str, context: tuple, gamma: int, n_tokens: int, name: str):
    """(produced, wanted): the rule's next-N-token joint and the one it should produce."""
    return pitfalls.joints(pitfalls.get(name), toy.loads_model(model_json), context, gamma, n_tokens)


@st.cache_data(show_spinner=False)
def best_gamma_grid(max_gamma: int) -> dict:
    return formulas.best_gamma_grid(max_gamma=max_gamma)


@st.cache_data(show_spinner=False)
def speedup_curve(alpha, cost, max_gamma: int) -> dict:
    return formulas.speedup_curve(alpha, cost, max_gamma)
