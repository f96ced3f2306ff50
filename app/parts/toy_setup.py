"""The toy setup a toy page opens with: the model, its context and γ (or a scheme), drawn by one function.

Every toy page starts from the same three choices; ``pick`` draws them in that order, with the keys, defaults,
remembered values and links every page had when it drew them itself, so links to a view keep working:

- the model: ``widgets.model_picker(key)`` (widget ``<key>-model``; the session's model, ``?model=``);
- the context: ``widgets.context_picker`` (``<key>-ctx``; remembered, ``?<key>-ctx=``, ``context_link`` wins
  on load); ``context=None`` draws none (a page whose context sits elsewhere);
- γ: ``gamma=Gamma(...)`` a number input (``<key>-<name>``, remembered, within its range), or ``scheme={...}``
  the scheme picker (``parts.scheme_picker``, its keyword arguments), or neither.

``where`` puts the three in one container or in three (``(model, context, gamma)``: the Speedup page's
columns); by default they go where ``pick`` is called (``with st.sidebar:``). When the model is invalid (one
``st.error`` line from the picker) nothing else is drawn and the ``Setup``'s other fields are None.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import NamedTuple

import streamlit as st

from parts import memory, scheme_picker, widgets
from specsim import toy


@dataclass(frozen=True)
class Gamma:
    """A γ number input: ``label`` over [``lo``, ``hi``], ``default``, key ``<page key>-<name>``."""
    label: str = "γ: draft length"
    lo: int = 1
    hi: int = 4
    default: int = 2
    name: str = "gamma"
    help: str | None = None


class Setup(NamedTuple):
    model: toy.ToyModel | None
    context: tuple | None = None
    gamma: object = None  # an int (``Gamma``), a scheme (``scheme``; None when its text is invalid), or None


def _places(where) -> tuple:
    if where is None:
        return (contextlib.nullcontext(),) * 3
    if isinstance(where, (tuple, list)):
        return tuple(where)
    return (where,) * 3


def pick(key: str, *, context: str | None = "context", context_link=None, gamma: Gamma | None = None,
         scheme: dict | None = None, where=None) -> Setup:
    """The page's model, context and γ or scheme (see the module's docstring); ``context`` is the context
    picker's label."""
    at_model, at_context, at_gamma = _places(where)
    with at_model:
        model = widgets.model_picker(key)
    if model is None:
        return Setup(None)
    chosen = None
    if context is not None:
        with at_context:
            chosen = widgets.context_picker(model, f"{key}-ctx", label=context, link=context_link)
    value = None
    with at_gamma:
        if gamma is not None:
            name = f"{key}-{gamma.name}"
            memory.remember(name, gamma.default, valid=memory.within(gamma.lo, gamma.hi))
            value = int(st.number_input(gamma.label, gamma.lo, gamma.hi, key=name, help=gamma.help))
        elif scheme is not None:
            value = scheme_picker.scheme_picker(key, model, **scheme)
    return Setup(model, chosen, value)
