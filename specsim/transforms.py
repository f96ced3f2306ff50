"""Sampling transforms (temperature, top-k, top-p, greedy), applied to p and q alike.

The acceptance rule reproduces exactly the p it is given. A deployment that
samples at temperature 0.7 with top-p 0.9 wants the *transformed* target, so
the transform is applied to the target's row and to the drafter's row before
the rule sees them. ``TransformedPair`` does that: it wraps a model pair (a
``ToyModel`` or any ``specsim.pair.ModelPair``) and is itself a model
pair, so the exact engine and the sampler run on it unchanged.

Each transform maps one row to another row of the same length:

* ``temperature(row, tau)``: row^(1/tau), normalized. Exact (Fractions in,
  Fractions out) when 1/tau is an integer k, i.e. tau = 1/k: the row is
  p^k / sum p^k. Any other tau > 0 gives floats. tau = 0 is ``greedy``.
* ``top_k(row, k)``: keep the k most probable tokens, renormalize.
* ``top_p(row, top_p)``: keep the fewest most probable tokens whose mass
  reaches ``top_p`` (0 < top_p <= 1), renormalize.
* ``greedy(row)``: all mass on the argmax.

Ties are broken by vocabulary order everywhere: among tokens of equal
probability the one listed first in ``vocab`` ranks higher (so it is the
greedy token, and it survives a top-k cut first).

Example
-------
>>> from fractions import Fraction as F
>>> temperature([F(3, 5), F(3, 10), F(1, 10)], F(1, 2))
[Fraction(18, 23), Fraction(9, 46), Fraction(1, 46)]
>>> top_k([F(3, 5), F(3, 10), F(1, 10)], 2)
[Fraction(2, 3), Fraction(1, 3), Fraction(0, 1)]
>>> greedy([F(2, 5), F(2, 5), F(1, 5)])
[Fraction(1, 1), Fraction(0, 1), Fraction(0, 1)]
>>> from specsim.toy import load_model
>>> pair = transform_pair(load_model("seed"), temperature="1/2")
>>> pair.p(("a",))
(Fraction(18, 23), Fraction(9, 46), Fraction(1, 46))
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Callable, Sequence

from .pair import state_of

Row = Sequence


# -- parameters --------------------------------------------------------------
def parse_temperature(tau) -> Fraction | float:
    """A temperature as an exact Fraction when it can be one ("1/2", 0.25, 1), else a float.

    Raises ValueError for a negative, infinite or non-numeric value, and for
    0 < tau < 1/``LIMITS.temperature_power`` (100): tau = 1/k needs exact powers
    p^k, so k is bounded; 0 (greedy) is the way to go colder.
    """
    from .limits import LIMITS
    from .parsing import parse_number
    k = LIMITS.temperature_power
    below = f"is below 1/{k}: exact temperatures 1/k need p^k, so k is at most {k}; use 0 for greedy or a " \
            "larger temperature"
    try:
        rough = float(tau) if not isinstance(tau, (bool, Fraction)) else None
    except (TypeError, ValueError, OverflowError):
        rough = None
    if rough is not None and 0 < rough < 1 / k:  # 1e-300: the bound it breaks is this one, not the digits
        raise ValueError(f"temperature {str(tau)[:40]} {below}")
    try:
        value = parse_number(tau, "temperature", LIMITS.option_digits)
    except ValueError as e:
        raise ValueError(f"temperature must be a number >= 0 ({e})") from None
    if value < 0:
        raise ValueError(f"temperature must be >= 0, got {str(tau)[:40]}")
    if 0 < value < Fraction(1, k):
        raise ValueError(f"temperature {str(tau)[:40]} {below}")
    return value


def check_top_k(k) -> int:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"top-k must be an integer >= 1, got {k!r}")
    return k


def parse_top_p(top_p) -> Fraction:
    """top-p as an exact Fraction in (0, 1]; ValueError otherwise."""
    try:
        value = Fraction(top_p.strip()) if isinstance(top_p, str) else Fraction(top_p)
    except (ValueError, TypeError, ZeroDivisionError, OverflowError):
        raise ValueError(f"top-p must be a number in (0, 1], got {top_p!r}") from None
    if isinstance(top_p, bool) or not 0 < value <= 1:
        raise ValueError(f"top-p must be in (0, 1], got {top_p}")
    return value


# -- row transforms ----------------------------------------------------------
def _ranking(row: Row) -> list:
    """Token indices from most to least probable; ties in vocabulary order."""
    return sorted(range(len(row)), key=lambda i: (-row[i], i))


def _keep(row: Row, kept) -> list:
    total = sum((row[i] for i in kept), row[0] - row[0])
    zero = row[0] - row[0]
    return [row[i] / total if i in kept else zero / total for i in range(len(row))]


def greedy(row: Row) -> list:
    """All mass on the most probable token (the first one in vocabulary order on a tie)."""
    best = _ranking(row)[0]
    return _keep(row, {best})


def temperature(row: Row, tau) -> list:
    """row^(1/tau) normalized; exact for tau = 1/k, floats otherwise, greedy for tau = 0."""
    tau = parse_temperature(tau)
    if tau == 0:
        return greedy(row)
    inverse = 1 / tau
    if inverse.denominator == 1:  # tau = 1/k: p^k / sum p^k keeps the row's number type
        k = inverse.numerator
        powered = [x ** k for x in row]
    else:
        powered = [float(x) ** float(inverse) for x in row]
    total = sum(powered[1:], powered[0])
    return [x / total for x in powered]


def top_k(row: Row, k: int) -> list:
    """Keep the k most probable tokens (ties in vocabulary order) and renormalize."""
    k = check_top_k(k)
    return _keep(row, set(_ranking(row)[:k]))


def top_p(row: Row, top_p) -> list:
    """Keep the fewest most probable tokens whose mass reaches top_p, renormalize."""
    threshold = parse_top_p(top_p)
    kept, mass = set(), 0
    for i in _ranking(row):
        kept.add(i)
        mass = mass + row[i]
        if mass >= threshold:
            break
    return _keep(row, kept)


def identity(row: Row):
    return row


def chain(temperature_value=None, top_k_value=None, top_p_value=None) -> Callable:
    """One row transform: temperature, then top-k, then top-p (the usual order).

    Parameters are checked here, so a bad value fails before any row is seen.
    """
    steps = []
    if temperature_value is not None:
        tau = parse_temperature(temperature_value)
        steps.append(lambda row: temperature(row, tau))
    if top_k_value is not None:
        k = check_top_k(top_k_value)
        steps.append(lambda row: top_k(row, k))
    if top_p_value is not None:
        pp = parse_top_p(top_p_value)
        steps.append(lambda row: top_p(row, pp))

    def apply(row):
        for step in steps:
            row = step(row)
        return row
    return apply if steps else identity


def describe(temperature_value=None, top_k_value=None, top_p_value=None) -> str:
    parts = []
    if temperature_value is not None:
        tau = parse_temperature(temperature_value)
        parts.append("greedy" if tau == 0 else f"temperature {tau if isinstance(tau, Fraction) and tau.denominator < 1000 else float(tau)}")
    if top_k_value is not None:
        parts.append(f"top-k {top_k_value}")
    if top_p_value is not None:
        parts.append(f"top-p {parse_top_p(top_p_value)}")
    return ", ".join(parts)


# -- model pairs -------------------------------------------------------------
class TransformedPair:
    """A model pair whose p and q rows pass through row transforms.

    ``target`` transforms p, ``draft`` transforms q (both default to the
    identity). Rows come back as tuples and are memoized on the base model's
    state, so the exact engine stays fast.
    """

    def __init__(self, base, target: Callable = identity, draft: Callable = identity, label: str = ""):
        self.base = base
        self.vocab = base.vocab
        self._target, self._draft = target, draft
        self.name = f"{getattr(base, 'name', 'model')} ({label})" if label else getattr(base, "name", "model")
        self._p, self._q = {}, {}

    def state(self, context):
        return state_of(self.base, context)

    def p(self, context):
        key = self.state(context)
        if key not in self._p:
            self._p[key] = tuple(self._target(self.base.p(context)))
        return self._p[key]

    def q(self, context):
        key = self.state(context)
        if key not in self._q:
            self._q[key] = tuple(self._draft(self.base.q(context)))
        return self._q[key]

    def contexts(self):
        return self.base.contexts()

    def parse_context(self, text):
        return self.base.parse_context(text)

    def __repr__(self):
        return f"<TransformedPair {self.name}>"


def transform_pair(pair, temperature=None, top_k=None, top_p=None):
    """The same transform on p and q; the pair itself when no transform is given."""
    if temperature is None and top_k is None and top_p is None:
        return pair
    fn = chain(temperature, top_k, top_p)
    return TransformedPair(pair, fn, fn, describe(temperature, top_k, top_p))


def greedy_pair(pair):
    """Temperature 0 on both models: the greedy case."""
    return TransformedPair(pair, greedy, greedy, "greedy")
