"""Helpers shared by the CLI modules: argument types, the --gammas grammar, numbers as text, output.

Everything a command parses or prints the same way as another command lives
here once: the γ check (its maximum is ``specsim.bounds.LIMITS.gamma``), the
``--gammas`` grammar, the temperature convention and the number formatter.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import sys
from fractions import Fraction

from .. import transforms
from ..bounds import LIMITS

GAMMAS_HELP = "draft lengths: a range 1-4, a list 2,4,8, or both, 1-3,8"
TEMPERATURE_HELP = "temperature τ >= 0 on p and q alike; 0 means greedy (argmax)"


class UsageError(ValueError):
    """Bad input from the command line; printed as one line, exit code 2."""


# -- numbers as text ----------------------------------------------------------

def num(x, form: str = "exact", digits: int = 4) -> str:
    """The one number formatter of the CLI.

    ``exact``: a rational as a fraction ("1659/500", "1", "0"), a float to
    ``digits`` significant digits; ``decimal``: ``digits`` decimals ("3.3180");
    ``both``: "1659/500 (3.3180)"; ``short``: the shortest decimal ("0.8").
    A string is returned as it is.

    >>> num(Fraction(1659, 500)), num(Fraction(1659, 500), "decimal"), num(Fraction(1659, 500), "both")
    ('1659/500', '3.3180', '1659/500 (3.3180)')
    >>> num(3), num(0.123456), num(Fraction(4, 5), "short"), num(2.5, "decimal", 2)
    ('3', '0.1235', '0.8', '2.50')
    """
    if isinstance(x, str):
        return x
    if form == "exact":
        return f"{x:.{digits}g}" if isinstance(x, float) else str(Fraction(x))
    if form == "decimal":
        return f"{float(x):.{digits}f}"
    if form == "both":
        return f"{num(x)} ({num(x, 'decimal', digits)})"
    if form == "short":
        return f"{float(x):g}"
    raise ValueError(f"unknown number form {form!r}")


# -- argument types -----------------------------------------------------------

def _argtype(name: str, parse):
    """An argparse type from ``parse``; its ValueError becomes argparse's one-line error."""
    def check(text):
        try:
            return parse(text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
    check.__name__ = name
    return check


def int_in_range(name: str, lo: int, hi: int):
    """argparse type: an integer in [lo, hi] with a message naming the option."""
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be an integer, got {text!r}") from None
        if not lo <= value <= hi:
            raise argparse.ArgumentTypeError(f"{name} must be between {lo} and {hi}, got {value}")
        return value
    parse.__name__ = name
    return parse


def number(name: str, lo=None, hi=None, exact: bool = False):
    """argparse type: a number (exact Fraction when ``exact``) with optional bounds."""
    def parse(text):
        from ..bounds import LIMITS, parse_number
        try:  # bounded: no inf/nan, at most LIMITS.option_digits digits, exponent within LIMITS.exponent
            value = parse_number(text, name, LIMITS.option_digits)
        except ValueError as e:
            why = f"{name} must be a number, got {text[:40]!r}" if "not a number" in str(e) else str(e)
            raise argparse.ArgumentTypeError(why) from None
        value = value if exact else float(value)
        if lo is not None and value < lo:
            raise argparse.ArgumentTypeError(f"{name} must be >= {lo}, got {text}")
        if hi is not None and value > hi:
            raise argparse.ArgumentTypeError(f"{name} must be <= {hi}, got {text}")
        return value
    parse.__name__ = name
    return parse


def check_gamma(value: int, name: str = "gamma") -> int:
    """The one γ check: an integer in 1..LIMITS.gamma, else ValueError naming ``name``."""
    if not 1 <= value <= LIMITS.gamma:
        raise ValueError(f"{name} must be between 1 and {LIMITS.gamma}, got {value}")
    return value


def gamma_type(name: str = "gamma"):
    """argparse type: one draft length, checked by ``check_gamma``."""
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise ValueError(f"{name} must be an integer, got {text!r}") from None
        return check_gamma(value, name)
    return _argtype(name, parse)


gamma_arg = gamma_type("gamma")

SEED_LIMIT = 2**63  # every --seed: 0 <= seed < 2^63 (fits numpy's and torch's seeding alike)


def parse_seed(text: str) -> int:
    """The one seed rule: an integer in [0, 2^63), else ValueError naming --seed.

    >>> parse_seed("7")
    7
    >>> parse_seed("-1")
    Traceback (most recent call last):
    ...
    ValueError: seed must be an integer from 0 to 2^63 - 1, got '-1'
    """
    text = text.strip()
    if not (text.isascii() and text.isdigit() and len(text) <= 19 and int(text) < SEED_LIMIT):
        raise ValueError(f"seed must be an integer from 0 to 2^63 - 1, got {text[:40]!r}")
    return int(text)


seed_arg = _argtype("seed", parse_seed)


def parse_gammas(text: str) -> list[int]:
    """The one --gammas grammar: comma-separated items, each a γ or a range A-B (A <= B).

    The result is sorted, without repeats; every γ passes ``check_gamma``.

    >>> parse_gammas("1-4"), parse_gammas("2,4,8"), parse_gammas("1-3,8"), parse_gammas(" 3 ")
    ([1, 2, 3, 4], [2, 4, 8], [1, 2, 3, 8], [3])
    >>> parse_gammas("4-1")
    Traceback (most recent call last):
    ...
    ValueError: gammas must be ranges A-B with A <= B: write 1-4, not '4-1'
    """
    values = set()
    for item in text.split(","):
        a, dash, b = item.strip().partition("-")
        try:
            lo, hi = int(a), int(b if dash else a)
        except ValueError:
            raise ValueError(f"gammas must look like 1-4, 2,4,8 or 1-3,8, got {text!r}") from None
        if lo > hi:
            raise ValueError(f"gammas must be ranges A-B with A <= B: write {hi}-{lo}, not {item.strip()!r}")
        for g in (lo, hi):
            check_gamma(g, "gammas")
        values.update(range(lo, hi + 1))
    return sorted(values)


gammas_arg = _argtype("gammas", parse_gammas)


# The temperature convention, the same on the toy and the torch path: a number
# >= 0 (a Fraction when the text is exact, e.g. "1/2"), where 0 means greedy.
temperature_arg = _argtype("temperature", transforms.parse_temperature)
top_p_arg = _argtype("top-p", transforms.parse_top_p)  # (0, 1], as a Fraction


# -- models and contexts ----------------------------------------------------------

def load_model_arg(spec: str):
    """Load MODEL (a preset name or a JSON path); errors become UsageError."""
    from ..toy import ModelError, load_model
    try:
        return load_model(spec)
    except ModelError as e:
        raise UsageError(str(e)) from None


def parse_context(model, text):
    """The --context option, or the model's first context when absent."""
    from ..toy import ModelError
    if text is None:
        return model.contexts()[0]
    try:
        return model.parse_context(text)
    except ModelError as e:
        raise UsageError(str(e)) from None


# -- output ----------------------------------------------------------------

def print_json(obj) -> None:
    json.dump(obj, sys.stdout, indent=2)
    sys.stdout.write("\n")


def shown(text) -> str:
    """``text`` with control characters (ANSI escapes included) written as escapes, safe for a terminal.

    >>> print(shown(chr(27) + "[31mred" + chr(9)))
    \\x1b[31mred\\t
    """
    text = str(text)
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)


def table(rows, headers) -> str:
    """A plain text table: first column left-aligned, the others right-aligned; cells pass ``shown``."""
    cells = [[shown(h) for h in headers]] + [[shown(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    def fmt(row):
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                         for i, (c, w) in enumerate(zip(row, widths))).rstrip()
    lines = [fmt(r) for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths).rstrip())
    return "\n".join(lines)


@contextlib.contextmanager
def progress_bar(total: int, unit: str, threshold: int = 10**6):
    """``update(n)`` that keeps a one-line progress count on stderr, when it is a terminal and the
    work is long (``total`` >= ``threshold``); else None. The line is erased at the end."""
    if total < threshold or not sys.stderr.isatty():
        yield None
        return
    done = 0

    def update(n: int) -> None:
        nonlocal done
        done += n
        sys.stderr.write(f"\r{done:,} / {total:,} {unit} ({100 * done // total}%)")
        sys.stderr.flush()

    try:
        yield update
    finally:
        sys.stderr.write("\r" + " " * (2 * len(f"{total:,}") + len(unit) + 12) + "\r")
        sys.stderr.flush()
