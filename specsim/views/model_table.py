"""The model editor's table, as data: a toy model as rows of cell strings and back, exactly.

One row per context for p (the target) and one for q (the drafter), one column per token, each cell a
fraction ("3/5") or a decimal ("0.25"), read exactly. ``model_of`` checks every row and names the first
bad one ("row 3 (p after “b”): sums to 9/10, not 1"); ``normalized`` divides each row by its sum;
``reshaped`` changes the tokens or the order (new contexts start uniform). Sizes are bounded: at most
``MAX_TOKENS`` tokens, ``MAX_CONTEXTS`` contexts and ``CELL_CHARS`` characters a cell. The app's editor
(``app/parts/model_editor.py``) draws the table and calls these.
"""
from __future__ import annotations

from fractions import Fraction

from .. import rows as prob_rows
from .. import toy

MAX_TOKENS = 8  # columns of the editor
MAX_CONTEXTS = 27  # contexts (two table rows each)
MAX_ORDER = 3
CELL_CHARS = 40
TOKENS_CHARS = 200


class TableError(toy.ModelError):
    """A table row that is not a probability row; the message names the row."""


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
