"""The model editor on the page: a button under the model picker opens a dialog with the model's tokens,
order and p/q table (``parts.model_editor`` keeps the session's model and the table as data)."""
from __future__ import annotations

import streamlit as st

from parts.model_editor import (CELL_CHARS, DRAFT, MAX_CONTEXTS, MAX_ORDER, MAX_TOKENS, OPEN, TOKENS_CHARS, TableError,
                                draft, editable, frame, model_of, normalized, reshaped, use)
from specsim import toy


def _table_key(d: dict) -> str:
    return f"model-editor-table-{d['version']}"


def _with_edits(d: dict) -> dict:
    """The draft with the table widget's pending edits applied (a callback runs before the table is drawn)."""
    edits = st.session_state.get(_table_key(d))
    if not isinstance(edits, dict) or not edits.get("edited_rows"):
        return d
    table = [list(r) for r in d["rows"]]
    for i, cells in edits["edited_rows"].items():
        for col, value in cells.items():
            i, j = int(i), int(str(col).lstrip("t") or -1) if str(col).startswith("t") else -1
            if 0 <= i < len(table) and 0 <= j < len(table[i]):
                table[i][j] = "" if value is None else str(value)
    return {**d, "rows": table}


def _current_draft(model: toy.ToyModel) -> dict:
    """The session's draft, started again from ``model`` when the current model changed elsewhere."""
    d = st.session_state.get(DRAFT)
    if d is None or d["base"] != model.to_json():
        d = {**draft(model), "base": model.to_json(), "version": (d["version"] + 1) if d else 0, "error": None}
        st.session_state[DRAFT] = d
    return d


def _store(d: dict) -> None:
    st.session_state[DRAFT] = d


def _reshape() -> None:
    d = _with_edits(st.session_state[DRAFT])
    text = st.session_state.get("model-editor-tokens", "")
    try:
        if len(text) > TOKENS_CHARS:
            raise TableError(f"the tokens have {len(text):,} characters; the limit is {TOKENS_CHARS}")
        _store({**reshaped(d, text.split(), int(st.session_state.get("model-editor-order", d["order"]))),
                "error": None})
    except TableError as e:
        _store({**d, "error": str(e)})


def _normalize() -> None:
    _store({**normalized(_with_edits(st.session_state[DRAFT])), "error": None})


def _apply() -> None:
    d = _with_edits(st.session_state[DRAFT])
    try:
        model = model_of({**d, "name": "edited"})
    except toy.ModelError:
        _store(d)  # the page shows the first bad row
        return
    use(model)
    _store({**d, "base": model.to_json(), "name": "edited", "error": None})
    st.session_state[OPEN], st.session_state["model-editor-used"] = False, True


def _restart() -> None:
    d = st.session_state[DRAFT]
    _store({**draft(toy.loads_model(d["base"])), "base": d["base"], "version": d["version"] + 1, "error": None})


def _open() -> None:
    st.session_state[OPEN] = True


def _close() -> None:
    st.session_state[OPEN] = False


def show(model: toy.ToyModel) -> None:
    """A button under the picker; it opens the editor of the current model in a dialog (up to 1280 px wide on
    a laptop, the whole width of a phone: a sidebar is too narrow for the table)."""
    st.button("edit this model", icon=":material/edit:", key="model-editor-button", on_click=_open, width="stretch",
              help="tokens, order and the p and q rows, as a table; every toy page then uses the model")
    st.session_state.pop("model-editor-used", None)  # a whole run draws the new model already
    if st.session_state.get(OPEN):
        _dialog(model)


@st.dialog("Edit the model", width="large", on_dismiss=_close)
def _dialog(model: toy.ToyModel) -> None:
    if st.session_state.pop("model-editor-used", False):
        st.rerun()  # the whole page, on the new model (the dialog closes: OPEN is False)
    _editor(model)


def _editor(model: toy.ToyModel) -> None:
    """Tokens, order, the p/q table, its buttons and the first problem as one error line."""
    if not editable(model):
        st.caption(f"This model has {len(model.vocab)} tokens and {len(model.contexts())} contexts; the editor "
                   f"takes up to {MAX_TOKENS} tokens and {MAX_CONTEXTS} contexts: edit its JSON and upload it.")
        return
    d = _current_draft(model)
    st.session_state["model-editor-tokens"] = " ".join(d["vocab"])
    st.session_state["model-editor-order"] = d["order"]
    t1, t2 = st.columns([3, 1])
    t1.text_input("tokens", key="model-editor-tokens", on_change=_reshape,
                  help="separated by spaces; a new token's rows start uniform")
    t2.number_input("order", 1, MAX_ORDER, key="model-editor-order", on_change=_reshape,
                    help="how many previous tokens a context holds")
    st.caption("One row per context for p (the target) and one for q (the drafter); write fractions (3/5) or "
               "decimals (0.25). Every row must sum to 1: **normalize** rescales them.")
    config = {"context": st.column_config.TextColumn("context", disabled=True, pinned=True),
              "row": st.column_config.TextColumn("row", disabled=True),
              **{f"t{j}": st.column_config.TextColumn(t, max_chars=CELL_CHARS) for j, t in enumerate(d["vocab"])}}
    st.data_editor(frame(d), key=_table_key(d), column_config=config, hide_index=True, num_rows="fixed",
                   width="stretch")
    d = _with_edits(d)
    st.session_state[DRAFT] = {**d, "error": None}  # a tokens/order error is shown once, below
    b = st.container(horizontal=True, wrap=True)
    b.button("normalize", on_click=_normalize, key="model-editor-normalize", icon=":material/balance:",
             help="divide every row by its sum (exactly)")
    b.button("use this model", on_click=_apply, key="model-editor-use", type="primary",
             icon=":material/check:", help="every toy page uses it until you pick another model")
    b.button("start again", on_click=_restart, key="model-editor-restart", icon=":material/undo:",
             help="discard the edits: the current model's rows")
    try:
        model_of(d)
    except toy.ModelError as e:
        st.error(d.get("error") or str(e))
    else:
        if d.get("error"):
            st.error(d["error"])
        elif d["rows"] != draft(model)["rows"] or d["vocab"] != list(model.vocab) or d["order"] != model.order:
            st.caption("Every row is valid: press **use this model** to show it on every toy page.")
