"""A link to this view: a page's settings written into its address and read back strictly.

A page's settings are the values it keeps with ``memory.remember``. ``text_of`` writes one as a query
parameter named by its key (``?stepper-seed=7&stepper-kind=block``) and ``parse`` reads it back, as
strictly as ``?lesson=`` is read: the text must have the form of the default's kind (at most
``MAX_DIGITS`` digits for an int, a plain decimal for a float, ``p/q`` for a Fraction, ``0``/``1``
for a bool, tokens separated by spaces for a context, numbers separated by commas for a range) and at
most ``memory.MAX_CHARS`` characters; ``memory.remember`` then applies the setting's own check (its
range or its options). Anything else is ignored: the page opens on the remembered value or the
default, never on an error.

>>> from fractions import Fraction
>>> [text_of(v) for v in (True, 7, 0.05, Fraction(3, 4), "chain:3", ("a", "b"), (1, 4))]
['1', '7', '0.05', '3/4', 'chain:3', 'a b', '1,4']
>>> [parse(t, d) for t, d in (("1", False), ("7", 0), ("0.05", 0.8), ("3/4", Fraction(1)), ("a b", ("a",)),
...                           ("1,4", (1, 4)))]
[True, 7, 0.05, Fraction(3, 4), ('a', 'b'), (1, 4)]
>>> [parse(t, 0) is BAD for t in ("1e3", "9" * 400, " 7", "0x10", "", "7.0")]
[True, True, True, True, True, True]
"""
from __future__ import annotations

import re
from fractions import Fraction
from urllib.parse import urlencode

BAD = object()  # ``parse``'s answer for a text that is not a value of the kind asked
MAX_DIGITS = 12
MAX_CHARS = 1_000
_INT = re.compile(r"-?[0-9]{1,%d}" % MAX_DIGITS)
_FLOAT = re.compile(r"-?[0-9]{1,%d}(\.[0-9]{1,%d})?" % (MAX_DIGITS, MAX_DIGITS))
_FRACTION = re.compile(r"-?[0-9]{1,%d}(/[0-9]{1,%d})?" % (MAX_DIGITS, MAX_DIGITS))


def text_of(value) -> str | None:
    """``value`` as a query parameter's text; None for a value a link does not carry (None, a kind the
    settings never have)."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (int, Fraction)):
        return str(value)
    if isinstance(value, float):
        text = repr(value)
        return text if _FLOAT.fullmatch(text) else None  # no 1e-05, inf or nan in a link
    if isinstance(value, str):
        return value
    if isinstance(value, tuple) and value:
        if all(isinstance(v, str) and v and " " not in v for v in value):
            return " ".join(value)
        items = [text_of(v) for v in value]
        if all(isinstance(v, (int, float, Fraction)) and not isinstance(v, bool) for v in value) and None not in items:
            return ",".join(items)
    return None


def _number(text: str, kind):
    if kind is bool:
        return {"0": False, "1": True}.get(text, BAD)
    if kind is int:
        return int(text) if _INT.fullmatch(text) else BAD
    if kind is float:
        return float(text) if _FLOAT.fullmatch(text) else BAD
    if kind is Fraction and _FRACTION.fullmatch(text):
        try:
            return Fraction(text)
        except ZeroDivisionError:  # "1/0"
            return BAD
    return BAD


def parse(text, default):
    """The value ``text`` names, of ``default``'s kind; ``BAD`` when it is not one (see the module's
    docstring). A default of None takes a string (a choice whose "none" is no parameter at all)."""
    if not isinstance(text, str) or not 0 < len(text) <= MAX_CHARS:
        return BAD
    if default is None or isinstance(default, str):
        return text
    if isinstance(default, tuple):
        if not default:
            return BAD
        if isinstance(default[0], str):
            items = text.split(" ")
            return tuple(items) if all(items) else BAD
        items = [_number(t, type(default[0])) for t in text.split(",")]
        return BAD if BAD in items or len(items) != len(default) else tuple(items)
    return _number(text, bool if isinstance(default, bool) else type(default))


def query(params: dict) -> str:
    """The query string of ``params`` ({name: text}), names sorted: one view, one address.

    >>> query({"stepper-seed": "7", "model": "seed", "stepper-ctx": "a b"})
    '?model=seed&stepper-ctx=a+b&stepper-seed=7'
    """
    return "?" + urlencode(sorted(params.items())) if params else ""
