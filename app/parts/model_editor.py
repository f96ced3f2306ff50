"""The session's toy model, in one place: which model every toy page uses, and an editor for it.

The current model is kept in ``st.session_state`` (``CHOICE``: a preset's name,
``EDITED`` or the upload; the edited and uploaded models' JSON beside it), so
the stepper, Residual explorer, Exactness, Speedup, Pitfalls, Workbench and
Trees pages all show the model chosen or edited on any of them, until it is
changed (``widgets.model_picker`` reads and writes it).

The editor is a table: one row per context for p (the target) and one for q
(the drafter), one column per token, each cell a fraction ("3/5") or a decimal
("0.25"), read exactly. Tokens and order change the table's shape (rows of new
contexts start uniform). "normalize" divides every row by its sum; "use this
model" makes the table the current model once every row is valid. A bad row is
one ``st.error`` line naming it ("row 3 (p after “b”): sums to 9/10, not 1").
Sizes are bounded: at most ``MAX_TOKENS`` tokens, ``MAX_CONTEXTS`` contexts and
``CELL_CHARS`` characters a cell (a larger model is edited as a JSON file and uploaded).
"""
from __future__ import annotations

from fractions import Fraction

import pandas as pd
import streamlit as st

from specsim import rows as prob_rows
from specsim import toy

CHOICE = "model-choice"  # the current model: a preset name, EDITED or UPLOAD (widgets.UPLOAD)
EDITED = "your edited model"
EDITED_JSON = "model-edited-json"
UPLOAD_JSON, UPLOAD_SOURCE = "model-upload-json", "model-upload-source"
DRAFT = "model-draft"  # the editor's table (see ``draft``), kept across pages

MAX_TOKENS = 8  # columns of the editor
MAX_CONTEXTS = 27  # contexts (two table rows each)
MAX_ORDER = 3
CELL_CHARS = 40
TOKENS_CHARS = 200


class TableError(toy.ModelError):
    """A table row that is not a probability row; the message names the row."""


# -- the current model ------------------------------------------------------------------------------
def choice(default: str = "seed") -> str:
    """The name of the session's current model (a preset, ``EDITED`` or the upload)."""
    return st.session_state.get(CHOICE, default)


def use(model: toy.ToyModel) -> None:
    """Make ``model`` the session's current model, as the edited model (every toy page shows it)."""
    st.session_state[EDITED_JSON] = model.to_json()
    st.session_state[CHOICE] = EDITED


# -- the table, as data ------------------------------------------------------------------------------
def draft(model: toy.ToyModel) -> dict:
    """The editor's table for ``model``: {"from", "name", "vocab", "order", "rows", "version"}.

    ``rows`` holds, per context, the p row then the q row, each a list of cell strings.

    >>> d = draft(toy.load_model("seed"))
    >>> d["vocab"], d["rows"][0], d["rows"][1]
    (['a', 'b', 'c'], ['3/5', '3/10', '1/10'], ['1/2', '2/5', '1/10'])
    """
    table = []
    for c in model.contexts():
        table += [[str(x) for x in model.p(c)], [str(x) for x in model.q(c)]]
    return {"from": model.to_json(), "name": model.name, "vocab": list(model.vocab), "order": model.order,
            "rows": table, "version": 0}


def contexts(d: dict) -> list:
    """The table's contexts, in the order of its rows (each has a p row and a q row)."""
    return toy.ToyModel(tuple(d["vocab"]), d["order"], {}, {}).contexts()


def row_name(d: dict, i: int) -> str:
    """How the page names table row ``i`` (from 0) in an error: 'row 3 (p after “b”)'."""
    ctx = " ".join(contexts(d)[i // 2])
    return f"row {i + 1} ({'pq'[i % 2]} after “{ctx}”)"


def parsed(d: dict, i: int) -> list:
    """Row ``i`` as exact Fractions; a bad cell is a ``TableError`` naming the row and the token."""
    out = []
    for token, cell in zip(d["vocab"], d["rows"][i]):
        text = "" if cell is None else str(cell).strip()
        where = f"{row_name(d, i)}, token {token!r}"
        if len(text) > CELL_CHARS:
            raise TableError(f"{where}: {len(text):,} characters; the limit is {CELL_CHARS}")
        if not text:
            raise TableError(f"{where}: the cell is empty (write 3/5 or 0.25)")
        try:
            out.append(toy.parse_probability(text, where))
        except toy.ModelError as e:
            raise TableError(str(e)) from None
    return out


def model_of(d: dict) -> toy.ToyModel:
    """The table as a checked ``ToyModel``; the first bad row raises a ``TableError`` naming it.

    >>> d = draft(toy.load_model("seed"))
    >>> d["rows"][2][0] = "1/10"
    >>> try:
    ...     model_of(d)
    ... except TableError as e:
    ...     print(e)
    row 3 (p after “b”): sums to 9/10, not 1 (press normalize to rescale it)
    """
    tables = {"target": {}, "draft": {}}
    for i, ctx in enumerate(c for c in contexts(d) for _ in "pq"):
        row = parsed(d, i)
        try:
            toy.check_row(row, row_name(d, i))
        except toy.ModelError as e:
            hint = " (press normalize to rescale it)" if "sums to" in str(e) and all(x >= 0 for x in row) else ""
            raise TableError(f"{str(e).replace(': row sums', ': sums')}{hint}") from None
        tables["target" if i % 2 == 0 else "draft"][" ".join(ctx)] = [str(x) for x in row]
    return toy.model_from_dict({"name": d["name"], "vocab": d["vocab"], "order": d["order"], **tables})


def normalized(d: dict) -> dict:
    """Every row divided by its sum (exactly); rows with a bad cell, a negative entry or no mass stay.

    >>> d = draft(toy.load_model("seed"))
    >>> d["rows"][0] = ["1", "1", "2"]
    >>> normalized(d)["rows"][0]
    ['1/4', '1/4', '1/2']
    """
    out = []
    for i, row in enumerate(d["rows"]):
        try:
            out.append([str(x) for x in prob_rows.normalized(parsed(d, i))])
        except toy.ModelError:
            out.append(list(row))
    return {**d, "rows": out, "version": d["version"] + 1}


def reshaped(d: dict, vocab: list, order: int) -> dict:
    """The table for new tokens or a new order: a context keeps its rows when the tokens are the same,
    a new one starts uniform. Raises ``TableError`` for tokens or an order the editor does not take.

    >>> d = reshaped(draft(toy.load_model("seed")), ["a", "b"], 1)
    >>> d["rows"][0], len(d["rows"])
    (['1/2', '1/2'], 4)
    """
    if not 1 <= len(vocab) <= MAX_TOKENS:
        raise TableError(f"give between 1 and {MAX_TOKENS} tokens, got {len(vocab)}")
    if len(set(vocab)) != len(vocab):
        raise TableError(f"token {next(t for t in vocab if vocab.count(t) > 1)[:40]!r} appears more than once")
    bad = next((t for t in vocab if not t.isprintable() or len(t) > 20), None)
    if bad is not None:
        raise TableError(f"token {bad[:40]!r} is not a short printable token")
    if not 1 <= order <= MAX_ORDER or len(vocab) ** order > MAX_CONTEXTS:
        raise TableError(f"{len(vocab)} tokens at order {order} make {len(vocab) ** order} contexts; "
                         f"the editor takes up to {MAX_CONTEXTS} (order at most {MAX_ORDER})")
    same = vocab == d["vocab"]
    old = {(c, k): d["rows"][2 * i + k] for i, c in enumerate(contexts(d)) for k in (0, 1)} if same else {}
    new = {**d, "vocab": list(vocab), "order": order, "version": d["version"] + 1}
    uniform = [str(Fraction(1, len(vocab)))] * len(vocab)
    new["rows"] = [list(old.get((c, k), uniform)) for c in contexts(new) for k in (0, 1)]
    return new


def with_rows(model: toy.ToyModel, vocab, p, q, context=None) -> toy.ToyModel:
    """``model`` with its p and q rows after ``context`` replaced by ``p`` and ``q`` (same tokens); for other
    tokens, a new order-1 model with these rows after every token. Named "edited".

    >>> from fractions import Fraction as F
    >>> m = with_rows(toy.load_model("seed"), ["a", "b", "c"], [F(1, 3)] * 3, [F(1, 3)] * 3, ("b",))
    >>> m.p(("b",)), m.p(("a",)) == toy.load_model("seed").p(("a",))
    ((Fraction(1, 3), Fraction(1, 3), Fraction(1, 3)), True)
    >>> with_rows(m, ["x", "y"], [F(1, 2)] * 2, [1, 0]).contexts()
    [('x',), ('y',)]
    """
    row = [str(x) for x in p], [str(x) for x in q]
    if context is not None and list(vocab) == list(model.vocab):
        data = model.to_dict()
        data["target"][" ".join(context)], data["draft"][" ".join(context)] = row
    else:
        data = {"vocab": list(vocab), "order": 1, "target": {t: row[0] for t in vocab},
                "draft": {t: row[1] for t in vocab}}
    return toy.model_from_dict({**data, "name": "edited"})


def editable(model: toy.ToyModel) -> bool:
    """Whether the editor's table takes this model (its size)."""
    return len(model.vocab) <= MAX_TOKENS and model.order <= MAX_ORDER and len(model.contexts()) <= MAX_CONTEXTS


def frame(d: dict) -> pd.DataFrame:
    """The table as the editor shows it: context, row (p or q), one column per token (t0, t1, ...)."""
    records = []
    for i, ctx in enumerate(c for c in contexts(d) for _ in "pq"):
        records.append({"context": " ".join(ctx), "row": "p (target)" if i % 2 == 0 else "q (drafter)",
                        **{f"t{j}": cell for j, cell in enumerate(d["rows"][i])}})
    return pd.DataFrame.from_records(records, columns=["context", "row"] + [f"t{j}" for j in range(len(d["vocab"]))])


# -- the editor on the page --------------------------------------------------------------------------
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


OPEN = "model-editor-open"  # the editor's dialog is open (until "use this model" or a dismiss)


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
