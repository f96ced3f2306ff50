"""Helpers shared by the CLI modules: argument types, fractions as text, output."""
from __future__ import annotations

import argparse
import json
import sys
from fractions import Fraction

MAX_GAMMA = 64


class UsageError(ValueError):
    """Bad input from the command line; printed as one line, exit code 2."""


def fraction_str(x) -> str:
    """Exact fraction as text: "1659/500", integers as "1" and "0"."""
    return str(Fraction(x))


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


def gamma_arg(text):
    return int_in_range("gamma", 1, MAX_GAMMA)(text)


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


def print_json(obj) -> None:
    json.dump(obj, sys.stdout, indent=2)
    sys.stdout.write("\n")


def table(rows, headers) -> str:
    """A plain text table: first column left-aligned, the others right-aligned."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    def fmt(row):
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                         for i, (c, w) in enumerate(zip(row, widths))).rstrip()
    lines = [fmt(r) for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths).rstrip())
    return "\n".join(lines)
