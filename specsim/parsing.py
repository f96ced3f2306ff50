"""Numbers and lists typed on the way in: read exactly, bounded, refused in one line naming the field.

>>> parse_number("1e-3", "alpha"), parse_whole(" 12 ", "gamma"), parse_ranges("1-3,8", "gammas", 1, 64)
(Fraction(1, 1000), 12, [1, 2, 3, 8])
"""
from __future__ import annotations

import math
import re
from decimal import Decimal
from fractions import Fraction

from .limits import LIMITS, digits_of

_DECIMAL = re.compile(r"[+-]?(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?")
_INTEGER = re.compile(r"[+-]?\d+")
_WHOLE = re.compile(r"[+-]?[0-9]+")  # ASCII digits only: str.isdigit() and int() also take '４' or '٣'


def parse_whole(text, field: str, digits: int = 30, noun: str = "an integer") -> int:
    """An integer written in ASCII digits (an optional sign), at most ``digits`` of them.

    Anything else is a one-line ValueError naming ``field`` (and a character that is not ASCII).

    >>> parse_whole(" 12 ", "gamma")
    12
    >>> parse_whole("\uff14", "gamma")
    Traceback (most recent call last):
    ...
    ValueError: gamma '４' is not an integer (U+FF14 FULLWIDTH DIGIT FOUR is not an ASCII digit)
    """
    import unicodedata
    t = str(text).strip()
    if not _WHOLE.fullmatch(t):
        odd = next((c for c in t if not c.isascii()), None)
        why = f" (U+{ord(odd):04X} {unicodedata.name(odd, 'a character')} is not an ASCII digit)" if odd else ""
        raise ValueError(f"{field} {t[:40]!r} is not {noun}{why}")
    if len(t.lstrip("+-")) > digits:
        raise ValueError(f"{field} has {len(t.lstrip('+-')):,} digits; at most {digits} are read")
    return int(t)


ECHO = 60  # characters of an input an error message repeats


def echo(text, limit: int = ECHO) -> str:
    """An input as an error message repeats it: its repr, cut to ``limit`` characters with its length said.

    >>> echo("2,2,1"), echo("x" * 100, 5)
    ("'2,2,1'", "'xxxxx...' (100 characters)")
    """
    text = str(text)
    return repr(text) if len(text) <= limit else f"{repr(text[:limit])[:-1]}...{repr(text)[-1]} ({len(text):,} characters)"


def parse_number(value, field: str, digits: int | None = None) -> Fraction:
    """An exact Fraction from "3/5", "0.25", "1e-3", an int, a float or a Decimal, bounded.

    Refuses (ValueError naming ``field``) inf, nan, more than ``digits`` digits
    (default ``LIMITS.digits``) and exponents beyond +-``LIMITS.exponent``,
    before any big number is built.
    """
    digits = LIMITS.digits if digits is None else digits
    bad = f"{field}: {str(value)[:40]!r} is not a number (use \"3/5\", \"0.25\" or 1)"
    if isinstance(value, bool):
        raise ValueError(bad)
    if isinstance(value, int):
        if digits_of(value) > digits:
            raise ValueError(f"{field}: an integer over {digits} digits is refused")
        return Fraction(value)
    if isinstance(value, Fraction):
        if digits_of(value) > digits:
            raise ValueError(f"{field}: a numerator or denominator over {digits} digits is refused")
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{field}: {value} is refused (numbers must be finite)")
        value = repr(value)
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise ValueError(f"{field}: {value} is refused (numbers must be finite)")
        value = str(value)
    if not isinstance(value, str):
        raise ValueError(bad)
    text = value.strip()
    if text.lower().lstrip("+-") in ("inf", "infinity", "nan", "snan"):
        raise ValueError(f"{field}: {text} is refused (numbers must be finite)")
    if "/" in text:
        parts = [t.strip() for t in text.split("/")]
        if len(parts) != 2 or not all(_INTEGER.fullmatch(t) for t in parts):
            raise ValueError(bad)
        if max(len(t.lstrip("+-")) for t in parts) > digits:
            raise ValueError(f"{field}: a numerator or denominator over {digits} digits is refused")
        if int(parts[1]) == 0:
            raise ValueError(f"{field}: {text} divides by zero")
        return Fraction(int(parts[0]), int(parts[1]))
    m = _DECIMAL.fullmatch(text)
    if not m or not (m.group(1) or m.group(2)):
        raise ValueError(bad)
    if len(m.group(1)) + len(m.group(2) or "") > digits:
        raise ValueError(f"{field}: a number over {digits} digits is refused")
    exp = m.group(3)
    if exp is not None and (len(exp.lstrip("+-")) > 6 or abs(int(exp)) > LIMITS.exponent):
        raise ValueError(f"{field}: exponent {exp} is outside ±{LIMITS.exponent} "
                         f"(numbers are read exactly; write a fraction or a smaller exponent)")
    return Fraction(text)


def parse_ranges(text, name: str, lo: int, hi: int) -> list:
    """The one grammar of a list of integers (``--gammas``, ``--batch``): comma-separated items, each a
    value or a range A-B (A <= B), every value in lo .. hi; sorted, without repeats.

    >>> parse_ranges("1-4", "gammas", 1, 64), parse_ranges("0-3,6", "gammas", 0, 16), parse_ranges(" 3 ", "g", 1, 9)
    ([1, 2, 3, 4], [0, 1, 2, 3, 6], [3])
    >>> parse_ranges("4-1", "gammas", 1, 64)
    Traceback (most recent call last):
    ...
    ValueError: gammas must be ranges A-B with A <= B: write 1-4, not '4-1'
    >>> parse_ranges("1,99", "batch", 1, 64)
    Traceback (most recent call last):
    ...
    ValueError: batch must be between 1 and 64, got 99
    """
    text, values = str(text), set()
    for item in text.split(","):
        a, dash, b = item.strip().partition("-")
        try:
            first, last = parse_whole(a, name), parse_whole(b if dash else a, name)
        except ValueError as e:
            if "ASCII" in str(e) or "digits" in str(e):  # a character or a length to name
                raise
            raise ValueError(f"{name} must look like 1-4, 2,4,8 or 1-3,8, got {text[:40]!r}") from None
        for v in (first, last):
            if not lo <= v <= hi:
                raise ValueError(f"{name} must be between {lo} and {hi}, got {v}")
        if first > last:
            raise ValueError(f"{name} must be ranges A-B with A <= B: write {last}-{first}, not {item.strip()!r}")
        values.update(range(first, last + 1))
    return sorted(values)
