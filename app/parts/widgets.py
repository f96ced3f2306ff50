"""Widgets the pages share: the toy-model and context pickers, the work check, exact numbers.

A bad uploaded model or too large a computation is shown as one ``st.error``
line and the picker or check returns None / False; the page then stops.
"""
from __future__ import annotations

import json
import math

import streamlit as st

from parts import memory, model_dialog, model_editor, plain
from parts.text_input import (MAX_TEXT, QUERY_DIGITS, capped_text, one_line, query_int,  # noqa: F401  (re-exported)
                              shown_param)
from specsim import bounds, toy
from specsim.plots.charts import exact as fmt  # noqa: F401  (re-exported: Fractions as "3/5")

UPLOAD = "upload a JSON file…"
UPLOAD_MB = math.ceil(bounds.LIMITS.file_bytes / 2**20)  # the uploader's own limit, in Streamlit's MB (MiB)


def model_picker(key: str, default: str = "seed", label: str = "toy model") -> toy.ToyModel | None:
    """Choose a preset, upload a JSON model or edit one; returns None (after ``st.error``) when invalid.

    The choice is the session's (``parts.model_editor``): a model picked, uploaded or edited on one toy page
    is the model of every toy page until it is changed; the editor is folded under the picker.
    """
    _model_from_link()
    edited = model_editor.EDITED_JSON in st.session_state
    names = list(toy.PRESETS) + ([model_editor.EDITED] if edited else []) + [UPLOAD]
    current = model_editor.choice(default)
    st.session_state[f"{key}-model"] = current if current in names else default  # the session's, not the page's
    choice = st.selectbox(label, names, key=f"{key}-model", on_change=_picked, args=(f"{key}-model",),
                          help="presets ship with specsim; a JSON file follows the format below; "
                               "every toy page uses the model chosen here")
    if choice == UPLOAD:
        model = _uploaded(key)
    elif choice == model_editor.EDITED:
        model = loads_cached(st.session_state[model_editor.EDITED_JSON].encode(), "the edited model")
    else:
        model = toy.load_model(choice)
    if model is not None:
        model_dialog.show(model)
        _note_model(choice, model)
    return model


LINKED_JSON = 2_000  # characters: a model this short goes into a link to the view whole (``model-json``)
MODEL_SEEN = "model-link"


def _model_from_link() -> None:
    """``?model=<preset>`` or ``?model-json=<a model's JSON>`` (a link to a view, ``parts.links``) makes that
    model the session's, once per link; read strictly: a preset's exact name, or JSON of at most
    ``LINKED_JSON`` characters that ``toy.loads_model`` accepts (else one error line, and the model stays)."""
    q = st.query_params
    name, text = q.get("model"), q.get("model-json")
    seen = st.session_state.get(MODEL_SEEN)
    if isinstance(name, str) and name in toy.PRESETS and seen != ("model", name):
        st.session_state[MODEL_SEEN] = ("model", name)
        st.session_state[model_editor.CHOICE] = name
    elif isinstance(text, str) and seen != ("model-json", text):
        st.session_state[MODEL_SEEN] = ("model-json", text)
        if len(text) > LINKED_JSON:
            st.error(f"the link's model has {len(text):,} characters; the limit is {LINKED_JSON:,}")
            return
        try:
            model_editor.use(loads_cached(text.encode(), "the link's model"))
        except toy.ModelError as e:
            st.error(one_line(e))


def _note_model(choice: str, model: toy.ToyModel) -> None:
    """The model in this run's link to the view: a preset by name, another model whole when it is short."""
    if choice in toy.PRESETS:
        memory.note("model", choice)
        return
    text = json.dumps(json.loads(model.to_json()), separators=(",", ":"), ensure_ascii=False)
    if len(text) <= LINKED_JSON:
        memory.note("model-json", text)


def _picked(widget_key: str) -> None:
    st.session_state[model_editor.CHOICE] = st.session_state[widget_key]


def _uploaded(key: str) -> toy.ToyModel | None:
    """The uploaded model: the file in this page's uploader, else the one uploaded earlier in the session."""
    uploaded = st.file_uploader("model JSON", type=["json"], key=f"{key}-upload", max_upload_size=UPLOAD_MB,
                                help=f"at most {bounds.LIMITS.file_bytes:,} bytes")
    with st.expander("JSON format (the seed model)"):
        plain.code(toy.load_model("seed").to_json())
    if uploaded is None:
        if model_editor.UPLOAD_JSON in st.session_state:
            st.caption(f"The model of {st.session_state[model_editor.UPLOAD_SOURCE]} (upload another to replace it).")
            return loads_cached(st.session_state[model_editor.UPLOAD_JSON].encode(), "the uploaded model")
        st.info("Upload a model file to continue (see the format above).")
        return None
    source = f"uploaded file {uploaded.name[:80]!r}"  # the CLI says "model file 'x.json'"
    if uploaded.size > bounds.LIMITS.file_bytes:  # read before parsing, like the CLI's os.stat
        st.error(f"{source} has {uploaded.size:,} bytes; the limit is {bounds.LIMITS.file_bytes:,}")
        return None
    try:
        model = loads_cached(uploaded.getvalue(), source)
    except toy.ModelError as e:
        st.error(str(e) if source in str(e) else f"{source}: {e}")
        return None
    st.session_state[model_editor.UPLOAD_JSON], st.session_state[model_editor.UPLOAD_SOURCE] = model.to_json(), source
    return model


@st.cache_data(max_entries=32, ttl=3600, show_spinner=False)
def loads_cached(data: bytes, source: str) -> toy.ToyModel:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise toy.ModelError(f"{source} is not UTF-8 text") from None
    return toy.loads_model(text, source=source)


def context_picker(model: toy.ToyModel, key: str, label: str = "context", link=None) -> tuple:
    """Select one of the model's contexts (its last ``order`` tokens); remembered across pages
    (``memory.remember``), a ``link`` (a context from the address) wins on load."""
    contexts = model.contexts()
    memory.remember(key, contexts[0], link if link in contexts else None, valid=lambda c: c in contexts)
    return st.selectbox(label, contexts, key=key, format_func=" ".join,
                        help="the previous token(s) the model looks at")


CHART_FIRST = "chart-first-"  # a container's key prefix: its columns stack in reverse on a phone (streamlit_app)


def chart_first_on_phone(key: str):
    """A container for a row of controls and a chart (``with chart_first_on_phone("sp"): controls, chart =
    st.columns([1, 2])``): on a wide screen side by side, on a phone stacked with the chart first, so it is
    on the first screen (stacked in order, the controls pushed it below)."""
    return st.container(key=CHART_FIRST + key)


def within_bounds(check, *args, **kwargs) -> bool:
    """Ask ``specsim.bounds`` first (``check`` is ``bounds.check_round`` or ``bounds.check_joint``, the checks
    the CLI makes for the same computation).

    Returns False, after one ``st.error`` line naming the limit and what to
    lower, when the work is over the interactive limit.
    """
    try:
        check(*args, limit=bounds.LIMITS.interactive_work, **kwargs)
    except bounds.WorkRefused as e:
        st.error(str(e))
        return False
    return True


def largest_within(check, model, hi: int, *args, lo: int = 1) -> int:
    """The largest γ in [lo, hi] that ``check(model, γ, *args)`` accepts at the interactive limit (lo if none).

    A γ widget's maximum comes from here, so its range matches the work estimator.
    """
    for g in range(hi, lo, -1):
        try:
            check(model, g, *args, limit=bounds.LIMITS.interactive_work)
            return g
        except bounds.WorkRefused:
            pass
    return lo


def int_slider(label: str, lo: int, hi: int, value: int, key: str, link=None, **kwargs) -> int:
    """``st.slider`` over [lo, hi], remembered across pages (``link``: a value from the address, wins on
    load); when the range holds one value (a slider needs lo < hi, e.g. a budget of 1 for a 64-token
    model) a caption names that value instead."""
    if hi <= lo:
        st.caption(f"{label}: {lo} (the only value allowed for this model)")
        return lo
    memory.remember(key, min(max(value, lo), hi), link, valid=lambda v: isinstance(v, int) and lo <= v <= hi)
    return st.slider(label, lo, hi, key=key, **kwargs)


def exact_decimal(value: float, name: str):
    """A slider's decimal (0.8) as the exact Fraction it shows (4/5), not the float's binary value."""
    return toy.parse_probability(value, name)
