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

import pandas as pd
import streamlit as st

from specsim import toy
from specsim.views.model_table import (  # noqa: F401  (the table as data; re-exported for the pages)
    CELL_CHARS, MAX_CONTEXTS, MAX_ORDER, MAX_TOKENS, TOKENS_CHARS, TableError, contexts, draft, editable, model_of,
    normalized, parsed, reshaped, row_name, with_rows)

CHOICE = "model-choice"  # the current model: a preset name, EDITED or UPLOAD (widgets.UPLOAD)
EDITED = "your edited model"
EDITED_JSON = "model-edited-json"
UPLOAD_JSON, UPLOAD_SOURCE = "model-upload-json", "model-upload-source"
DRAFT = "model-draft"  # the editor's table (see ``draft``), kept across pages
OPEN = "model-editor-open"  # the editor's dialog is open (until "use this model" or a dismiss)

# -- the current model ------------------------------------------------------------------------------
def choice(default: str = "seed") -> str:
    """The name of the session's current model (a preset, ``EDITED`` or the upload)."""
    return st.session_state.get(CHOICE, default)


def use(model: toy.ToyModel) -> None:
    """Make ``model`` the session's current model, as the edited model (every toy page shows it)."""
    st.session_state[EDITED_JSON] = model.to_json()
    st.session_state[CHOICE] = EDITED


def frame(d: dict) -> pd.DataFrame:
    """The table as the editor shows it: context, row (p or q), one column per token (t0, t1, ...)."""
    records = []
    for i, ctx in enumerate(c for c in contexts(d) for _ in "pq"):
        records.append({"context": " ".join(ctx), "row": "p (target)" if i % 2 == 0 else "q (drafter)",
                        **{f"t{j}": cell for j, cell in enumerate(d["rows"][i])}})
    return pd.DataFrame.from_records(records, columns=["context", "row"] + [f"t{j}" for j in range(len(d["vocab"]))])
