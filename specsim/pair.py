"""The model-pair contract: what the exact engine, the sampler and the transforms need.

A *model pair* is any object with

* ``vocab``: the tokens, a sequence (a token is named by its index in it);
* ``p(context)``: the target's next-token row, aligned with ``vocab``;
* ``q(context)``: the drafter's next-token row, aligned with ``vocab``;
* optionally ``state(context)``: the hashable part of a context that the two
  rows depend on (a toy model of order k looks at its last k tokens, the
  tiny GPT at its context window). Engines memoize on it.

A context is a tuple of tokens. Rows are Fractions for exact answers
(``specsim.toy.ToyModel``) or floats for a real model
(``specsim.gpt.exact_adapter.GPTPair``); ``specsim.transforms.TransformedPair``
wraps a pair and is one. Nothing needs to inherit from ``ModelPair``: it is a
``typing.Protocol``, checked by shape.

``state`` is optional, so it is not a member of the protocol; ask for it
through ``state_of``, which falls back to the whole context.

Example
-------
>>> class Coin:
...     vocab = ("h", "t")
...     def p(self, context): return (0.5, 0.5)
...     def q(self, context): return (0.7, 0.3)
>>> isinstance(Coin(), ModelPair)
True
>>> state_of(Coin(), ["h", "t"])  # no state method: the whole context, as a tuple
('h', 't')
>>> from specsim.toy import load_model
>>> state_of(load_model("seed"), ("a", "b", "c"))  # order 1: the last token only
('c',)
"""
from __future__ import annotations

from typing import Hashable, Protocol, Sequence, runtime_checkable


@runtime_checkable
class ModelPair(Protocol):
    """A target p and a drafter q over one vocabulary (see the module docstring)."""

    vocab: Sequence

    def p(self, context: tuple) -> Sequence:
        """The target's next-token row after ``context``."""

    def q(self, context: tuple) -> Sequence:
        """The drafter's next-token row after ``context``."""


def state_of(pair: ModelPair, context) -> Hashable:
    """``pair.state(context)`` when the pair has a ``state`` method, else ``tuple(context)``.

    Two contexts with the same state have the same p and q rows, so results
    may be memoized on it.
    """
    state = getattr(pair, "state", None)
    return state(context) if state is not None else tuple(context)
