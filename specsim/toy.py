"""Exact toy language models: a vocabulary, a context order, and p, q tables.

A toy model says, for every context of ``order`` previous tokens, what the
target (p) and the drafter (q) put on each vocabulary token, as exact
``Fraction`` rows. It is stored as JSON::

    {"name": "seed", "vocab": ["a", "b", "c"], "order": 1,
     "target": {"a": ["3/5", "3/10", "1/10"], ...},
     "draft":  {"a": ["1/2", "2/5", "1/10"], ...}}

A context key is the ``order`` previous tokens joined by single spaces.
Probabilities may be fraction strings ("3/5"), decimal strings ("0.25",
converted exactly) or integers; every row must be non-negative and sum to 1.

Example
-------
>>> m = load_model("seed")
>>> m.p(("a",))
(Fraction(3, 5), Fraction(3, 10), Fraction(1, 10))
>>> m.alpha(("a",))
Fraction(9, 10)
"""
from __future__ import annotations

import itertools
import json
import os
import re
import stat
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Mapping, Sequence

from . import rule
from .limits import LIMITS
from .parsing import parse_number

Context = tuple  # tuple[str, ...] of token strings
Row = tuple  # tuple[Fraction, ...] aligned with the vocabulary

MAX_VOCAB = 64
MAX_CONTEXTS = LIMITS.contexts
_KEYS = {"name", "vocab", "order", "target", "draft"}


class ModelError(ValueError):
    """A toy model (file, preset or table) that is not valid; the message says why."""


@dataclass(frozen=True)
class ToyModel:
    """Target and drafter tables over a small vocabulary (see module docstring)."""

    vocab: tuple
    order: int
    target: Mapping  # context tuple -> Row (p)
    draft: Mapping  # context tuple -> Row (q)
    name: str = "model"
    index: dict = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "index", {t: i for i, t in enumerate(self.vocab)})

    # -- distributions ---------------------------------------------------
    def p(self, context: Sequence[str]) -> Row:
        """Target distribution after ``context`` (only its last ``order`` tokens matter)."""
        return self.target[self.state(context)]

    def q(self, context: Sequence[str]) -> Row:
        """Drafter distribution after ``context``."""
        return self.draft[self.state(context)]

    def state(self, context: Sequence[str]) -> Context:
        """The part of a context the model looks at: its last ``order`` tokens."""
        context = tuple(context)
        if len(context) < self.order:
            raise ModelError(
                f"context {' '.join(context)!r} has {len(context)} tokens; "
                f"this model needs {self.order}"
            )
        return context[len(context) - self.order:]

    def contexts(self) -> list:
        """Every context of ``order`` tokens, in vocabulary order."""
        return [tuple(c) for c in itertools.product(self.vocab, repeat=self.order)]

    def alpha(self, context: Sequence[str]):
        """Acceptance rate sum min(p, q) after ``context``."""
        return rule.alpha(self.p(context), self.q(context))

    def residual(self, context: Sequence[str]):
        """Normalized residual after ``context`` (None where p == q)."""
        return rule.residual(self.p(context), self.q(context))

    # -- contexts as text ------------------------------------------------
    def parse_context(self, text: str) -> Context:
        """Turn ``"a"`` or ``"0 1"`` into a context tuple, checking every token.

        A context may be longer than ``order`` (only the last tokens count).
        For a vocabulary of single characters, ``"ab"`` is also accepted.
        """
        text = text.strip()
        tokens = text.split() if text else []
        if len(tokens) == 1 and tokens[0] not in self.index and all(len(t) == 1 for t in self.vocab):
            tokens = list(tokens[0])
        for t in tokens:
            if t not in self.index:
                raise ModelError(
                    f"token {t[:40]!r} in context {text[:60]!r} is not in the vocabulary {list(self.vocab)[:20]}"
                )
        if len(tokens) < self.order:
            raise ModelError(
                f"context {text[:60]!r} has {len(tokens)} token(s); this model's order is {self.order}"
            )
        return tuple(tokens)

    # -- JSON ------------------------------------------------------------
    def to_dict(self) -> dict:
        key = " ".join
        return {
            "name": self.name,
            "vocab": list(self.vocab),
            "order": self.order,
            "target": {key(c): [str(x) for x in self.target[c]] for c in self.contexts()},
            "draft": {key(c): [str(x) for x in self.draft[c]] for c in self.contexts()},
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1)


def parse_probability(value, where: str) -> Fraction:
    """Read "3/5", "0.25", 1 or 0.5 exactly as a Fraction (floats are taken at face value).

    Numbers are bounded on the way in (``specsim.parsing.parse_number``): at most
    ``LIMITS.digits`` digits, exponents within ``LIMITS.exponent``, no inf or nan.
    """
    try:
        return parse_number(value, where)
    except ValueError as e:
        raise ModelError(str(e)) from None


def check_row(row: Sequence[Fraction], where: str) -> None:
    """A row must be non-negative and sum to exactly 1."""
    for x in row:
        if x < 0:
            raise ModelError(f"{where}: entry {x} is negative")
    total = sum(row, Fraction(0))
    if total != 1:
        raise ModelError(f"{where}: row sums to {total}, not 1")


def model_from_dict(data) -> ToyModel:
    """Validate a parsed JSON object and build a ToyModel; ModelError names the first problem."""
    if not isinstance(data, dict):
        raise ModelError("a model must be a JSON object with keys vocab, order, target, draft")
    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise ModelError(f"unknown key(s) {unknown}; allowed: {sorted(_KEYS)}")
    missing = [k for k in ("vocab", "order", "target", "draft") if k not in data]
    if missing:
        raise ModelError(f"missing key(s) {missing}")
    name = data.get("name", "model")
    if not isinstance(name, str):
        raise ModelError("name must be a string")
    vocab = data["vocab"]
    if not isinstance(vocab, list) or not vocab or not all(isinstance(t, str) for t in vocab):
        raise ModelError("vocab must be a non-empty list of strings")
    if any(not t or any(ch.isspace() for ch in t) for t in vocab):
        raise ModelError("vocab tokens must be non-empty and contain no spaces")
    bad = next((t for t in vocab if not t.isprintable()), None)
    if bad is not None:  # control characters and ANSI escapes would reach terminals raw
        raise ModelError(f"vocab token {bad[:40]!r} contains a control character")
    if len(set(vocab)) != len(vocab):
        dup = next(t for t in vocab if vocab.count(t) > 1)
        raise ModelError(f"vocab token {dup!r} appears more than once")
    if len(vocab) > MAX_VOCAB:
        raise ModelError(f"vocab has {len(vocab)} tokens; at most {MAX_VOCAB} are supported")
    order = data["order"]
    if isinstance(order, bool) or not isinstance(order, int) or order < 1:
        raise ModelError(f"order must be an integer >= 1, got {str(order)[:40]!r}")
    if order > LIMITS.order:  # checked before V^order is computed
        raise ModelError(f"order {str(order)[:40]} is too large (at most {LIMITS.order})")
    if len(vocab) ** order > MAX_CONTEXTS:
        raise ModelError(f"{len(vocab)}^{order} contexts is too many (at most {MAX_CONTEXTS}): "
                         "lower order or the vocabulary")
    contexts = [tuple(c) for c in itertools.product(vocab, repeat=order)]
    tables = {}
    for which in ("target", "draft"):
        table = data[which]
        if not isinstance(table, dict):
            raise ModelError(f"{which} must be an object mapping contexts to rows")
        wanted = {" ".join(c) for c in contexts}
        extra = sorted(set(table) - wanted)
        if extra:
            raise ModelError(f"{which}: context {extra[0]!r} is not {order} token(s) of the vocabulary")
        rows = {}
        for c in contexts:
            key = " ".join(c)
            if key not in table:
                raise ModelError(f"{which}: context {key!r} is missing")
            raw = table[key]
            where = f"{which}[{key!r}]"
            if not isinstance(raw, list) or len(raw) != len(vocab):
                got = len(raw) if isinstance(raw, list) else type(raw).__name__
                raise ModelError(f"{where}: expected a list of {len(vocab)} probabilities, got {got}")
            row = tuple(parse_probability(v, f"{where}[{i}]") for i, v in enumerate(raw))
            check_row(row, where)
            rows[c] = row
        tables[which] = rows
    return ToyModel(tuple(vocab), order, tables["target"], tables["draft"], name)


def _seed_model() -> ToyModel:
    """The worked {a, b, c} example the lessons use."""
    return model_from_dict({
        "name": "seed", "vocab": ["a", "b", "c"], "order": 1,
        "target": {"a": ["3/5", "3/10", "1/10"], "b": ["1/5", "1/2", "3/10"], "c": ["3/10", "1/5", "1/2"]},
        "draft": {"a": ["1/2", "2/5", "1/10"], "b": ["2/5", "3/10", "3/10"], "c": ["1/10", "1/5", "7/10"]},
    })


def _zeros_model() -> ToyModel:
    """A model with zeros on both sides: tokens with q = 0 < p and p = 0 < q."""
    return model_from_dict({
        "name": "zeros", "vocab": ["x", "y", "z"], "order": 1,
        "target": {"x": ["1/2", "1/2", "0"], "y": ["0", "1/3", "2/3"], "z": ["1/4", "0", "3/4"]},
        "draft": {"x": ["1/4", "1/4", "1/2"], "y": ["1/2", "1/2", "0"], "z": ["1/4", "0", "3/4"]},
    })


def _bigram_model() -> ToyModel:
    """An order-2 model over {0, 1}: the context is the last two tokens."""
    return model_from_dict({
        "name": "order2", "vocab": ["0", "1"], "order": 2,
        "target": {"0 0": ["1/3", "2/3"], "0 1": ["3/4", "1/4"], "1 0": ["1/2", "1/2"], "1 1": ["1/5", "4/5"]},
        "draft": {"0 0": ["1/2", "1/2"], "0 1": ["1/2", "1/2"], "1 0": ["9/10", "1/10"], "1 1": ["1/5", "4/5"]},
    })


PRESETS = {"seed": _seed_model, "zeros": _zeros_model, "order2": _bigram_model}


def load_model(spec: str | Path) -> ToyModel:
    """A preset name (``seed``, ``zeros``, ``order2``) or a path to a JSON file."""
    spec = str(spec)
    if not spec.strip():
        raise ModelError("the model path is empty: give a preset name (seed, zeros, order2) or a JSON file")
    if spec in PRESETS:
        return PRESETS[spec]()
    try:  # os.stat before opening: a FIFO or a device would block or never end
        info = os.stat(spec)
    except FileNotFoundError:
        if not spec.endswith(".json") and "/" not in spec:
            raise ModelError(f"unknown preset {spec[:200]!r} (presets: {', '.join(PRESETS)}) and no such file") from None
        raise ModelError(f"model file {spec[:200]!r} does not exist") from None
    except OSError as e:  # a name too long, a loop of links
        raise ModelError(f"model file {spec[:200]!r} cannot be read: {e.strerror}") from None
    if stat.S_ISDIR(info.st_mode):
        raise ModelError(f"model file {spec!r} is a directory")
    if not stat.S_ISREG(info.st_mode):
        raise ModelError(f"model file {spec!r} is not a regular file (a FIFO, device or socket is refused)")
    if info.st_size > LIMITS.file_bytes:
        raise ModelError(f"model file {spec!r} has {info.st_size:,} bytes; the limit is {LIMITS.file_bytes:,}")
    try:
        with open(spec, "rb") as f:
            raw = f.read(LIMITS.file_bytes + 1)
    except OSError as e:
        raise ModelError(f"model file {spec!r} cannot be read: {e.strerror}") from None
    if len(raw) > LIMITS.file_bytes:
        raise ModelError(f"model file {spec!r} is over {LIMITS.file_bytes:,} bytes")
    return loads_model(raw.decode("utf-8", errors="replace"), source=f"model file {spec!r}")


_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"')
_BRACKETS = re.compile(r"[\[\]{}]")


def json_depth(text: str) -> int:
    """Deepest nesting of arrays and objects in JSON text (strings skipped), without parsing it."""
    depth = deepest = 0
    for ch in _BRACKETS.findall(_STRINGS.sub("", text)):
        depth += 1 if ch in "[{" else -1
        deepest = max(deepest, depth)
    return deepest


def _json_int(text: str) -> int:
    if len(text.lstrip("-")) > LIMITS.digits:
        raise ModelError(f"an integer of {len(text.lstrip('-')):,} digits is refused (at most {LIMITS.digits})")
    return int(text)


def _json_float(text: str):
    parse_number(text, "a number in the file")  # bounds digits and exponent, raises ValueError
    return Decimal(text)  # exact: parse_probability turns it into a Fraction


def _json_constant(name: str):
    raise ModelError(f"{name} is refused (numbers must be finite)")


def loads_model(text: str, source: str = "model") -> ToyModel:
    """Parse JSON text into a ToyModel; any problem is a one-line ModelError.

    The text is bounded before parsing: size, nesting depth, digits of every number.
    """
    if len(text) > LIMITS.file_bytes:
        raise ModelError(f"{source} has {len(text):,} characters; the limit is {LIMITS.file_bytes:,}")
    depth = json_depth(text)
    if depth > LIMITS.json_depth:
        raise ModelError(f"{source} nests {depth:,} levels deep; the limit is {LIMITS.json_depth}")
    try:
        data = json.loads(text, parse_int=_json_int, parse_float=_json_float, parse_constant=_json_constant)
    except json.JSONDecodeError as e:
        raise ModelError(f"{source} is not valid JSON: {e.msg} (line {e.lineno}, column {e.colno})") from None
    except ModelError as e:
        raise ModelError(f"{source}: {e}") from None
    except ValueError as e:
        raise ModelError(f"{source}: {e}") from None
    return model_from_dict(data)


def random_row(rng, size: int, denominator: int, zeros: bool = True) -> tuple:
    """A random probability row of Fractions with the given denominator."""
    if denominator < size and not zeros:
        raise ValueError("denominator must be >= size when zeros are not allowed")
    while True:
        cuts = sorted(rng.randint(0, denominator) for _ in range(size - 1))
        counts = [b - a for a, b in zip([0] + cuts, cuts + [denominator])]
        if zeros or all(counts):
            return tuple(Fraction(c, denominator) for c in counts)


def random_model(vocab_size: int = 3, order: int = 1, seed: int = 0,
                 denominator: int = 60, zeros: bool = True) -> ToyModel:
    """A random toy model with exact rational rows (for tests and benchmarks).

    >>> random_model(4, seed=1).vocab
    ('t0', 't1', 't2', 't3')
    """
    import random

    rng = random.Random(seed)
    vocab = tuple(f"t{i}" for i in range(vocab_size))
    contexts = [tuple(c) for c in itertools.product(vocab, repeat=order)]
    target = {c: random_row(rng, vocab_size, denominator, zeros) for c in contexts}
    draft = {c: random_row(rng, vocab_size, denominator, zeros) for c in contexts}
    return ToyModel(vocab, order, target, draft, f"random-v{vocab_size}-o{order}-s{seed}")
