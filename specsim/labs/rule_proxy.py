"""The validating proxy around a user's rule: plain numbers in, one-line ``RuleError`` out.

``ValidatedRule(rule)`` is a ``RoundRule`` that calls the user's four methods
(``draft_row``, ``accept``, ``replacement``, ``bonus``) and trusts nothing
they return. Each result is first *read* into plain numbers, then checked:

1. read: an iterable row is read at most V + 1 items deep (an endless
   iterator is refused, never listed); every entry must be an ``int`` or a
   ``Fraction`` (a subclass is read through its numerator and denominator,
   which must be plain ints, so a subclass whose comparisons lie is never
   compared); bool, float (NaN and inf included), Decimal and strings are
   refused (the check is exact); numbers over ``LIMITS.digits`` digits too;
2. check: a row has V entries, none negative, summing to 1; an acceptance
   lies in [0, 1].

Anything the rule raises, ``BaseException`` included (``SystemExit`` from
``sys.exit``, ``KeyboardInterrupt``, ``GeneratorExit``), and a ``name``
property that raises, becomes one ``RuleError`` line naming the method.

Example
-------
>>> plain_number(Fraction(2, 4), "accept")
Fraction(1, 2)
>>> plain_row(iter(int, 1), 2, "bonus")  # an endless iterator: read 3 items, refused
Traceback (most recent call last):
...
specsim.labs.rule_proxy.RuleError: bonus returned more than 2 entries; the vocabulary has 2
"""
from __future__ import annotations

import itertools
from fractions import Fraction

from ..limits import LIMITS
from ..rule import RoundRule
from .reaper import Stopped

MAX_BITS = int(LIMITS.digits / 0.30103) + 1  # a numerator or denominator of LIMITS.digits digits at most


class RuleError(ValueError):
    """A user's rule misbehaved (raised, or returned a bad row or probability); one line."""


def first_line(e: BaseException) -> str:
    """``TypeName: first line of the message`` of an exception the user's code raised (its str may raise too)."""
    try:
        text = str(e)
        text = text.splitlines()[0][:120] if isinstance(text, str) and text else ""
    except BaseException:  # a user's __str__ that raises
        text = ""
    return type(e).__name__ + (f": {text}" if text else "")


def _shown(x) -> str:
    """A returned value in a message: plain numbers by value, anything else by its type only."""
    if type(x) in (int, float, Fraction):
        return f"{str(x)[:40]} ({type(x).__name__})"
    return f"a {type(x).__name__}"


def plain_number(x, what: str) -> Fraction:
    """``x`` as a plain ``Fraction``, read without calling its comparisons or arithmetic."""
    if type(x) is int:
        n, d = x, 1
    elif type(x) is Fraction:
        n, d = x.numerator, x.denominator
    elif isinstance(x, (int, Fraction)) and not isinstance(x, bool):  # a subclass: read its two ints
        try:
            n, d = x.numerator, x.denominator
        except BaseException as e:
            raise RuleError(f"{what} returned a {type(x).__name__} whose numerator raised {first_line(e)}") from None
        if type(n) is not int or type(d) is not int or d <= 0:
            raise RuleError(f"{what} returned a {type(x).__name__} whose numerator or denominator "
                            "is not a plain int")
    else:
        raise RuleError(f"{what} returned {_shown(x)}; return Fractions or ints (the check is exact)")
    if max(abs(n), d).bit_length() > MAX_BITS:
        raise RuleError(f"{what} returned a number over {LIMITS.digits} digits")
    return Fraction(n, d)


def plain_row(row, size: int, what: str) -> tuple:
    """The first ``size`` items of ``row`` as plain Fractions; exactly ``size`` items or RuleError."""
    try:
        items = list(itertools.islice(iter(row), size + 1))  # bounded: an endless iterator stops here
    except TypeError:
        raise RuleError(f"{what} returned {_shown(row)}, not a row") from None
    except BaseException as e:
        raise RuleError(f"{what}: reading the returned row raised {first_line(e)}") from None
    if len(items) > size:
        raise RuleError(f"{what} returned more than {size} entries; the vocabulary has {size}")
    if len(items) != size:
        raise RuleError(f"{what} returned {len(items)} entries; the vocabulary has {size}")
    return tuple(plain_number(x, what) for x in items)


def _row_text(row) -> str:
    return "(" + ", ".join(str(x) for x in row) + ")"


def rule_name(inner) -> str:
    """The rule's ``name`` (a string, at most 80 characters), or its class name when it has none of its own."""
    cls = type(inner).__name__
    try:
        name = getattr(inner, "name", None)
    except BaseException as e:  # a name property that raises
        raise RuleError(f"rule {cls!r}: reading its name raised {first_line(e)}") from None
    if name is None:
        return cls
    if not isinstance(name, str):
        raise RuleError(f"rule {cls!r}: its name is a {type(name).__name__}, not a string")
    name = str.__str__(name)[:80]  # a plain str, whatever the subclass
    try:
        own = "name" in vars(inner)  # set on the instance (a proxy that carries the name it was given)
    except TypeError:
        own = False
    inherited = name == RoundRule.name and type(inner) is not RoundRule and not own  # "correct" from the base
    return cls if inherited else name


class ValidatedRule(RoundRule):
    """Calls the wrapped rule's methods and checks what they return (see the module docstring)."""

    def __init__(self, inner):
        self.inner = inner
        self.name = rule_name(inner)

    def _call(self, method, *args):
        try:
            return getattr(self.inner, method)(*args)
        except (RuleError, Stopped):  # Stopped: a signal to this process, not the rule's doing
            raise
        except BaseException as e:  # the user's code: any exception, sys.exit included, becomes one line
            raise RuleError(f"rule {self.name!r}: {method}() raised {first_line(e)}") from None

    def _row(self, row, size, what):
        row = plain_row(row, size, f"rule {self.name!r}: {what}")
        for x in row:
            if x < 0:
                raise RuleError(f"rule {self.name!r}: {what} returned a negative entry {x} in {_row_text(row)}")
        if sum(row) != 1:
            raise RuleError(f"rule {self.name!r}: {what} returned {_row_text(row)}, "
                            f"which sums to {sum(row)}, not 1")
        return row

    def draft_row(self, q):
        return self._row(self._call("draft_row", q), len(q), f"draft_row(q = {_row_text(q)})")

    def accept(self, p, q, x):
        a = plain_number(self._call("accept", p, q, x), f"rule {self.name!r}: accept")
        if not 0 <= a <= 1:
            raise RuleError(f"rule {self.name!r}: accept(p = {_row_text(p)}, q = {_row_text(q)}, x = {x}) "
                            f"returned {a}, outside [0, 1]")
        return a

    def replacement(self, p, q):
        return self._row(self._call("replacement", p, q), len(p),
                         f"replacement(p = {_row_text(p)}, q = {_row_text(q)})")

    def bonus(self, p):
        row = self._call("bonus", p)
        return None if row is None else self._row(row, len(p), f"bonus(p = {_row_text(p)})")
