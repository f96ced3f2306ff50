"""The model-pair contract: who satisfies it, and what state_of returns."""
from fractions import Fraction as F

import pytest

from specsim import exact, transforms
from specsim.pair import ModelPair, state_of
from specsim.toy import load_model

SEED = load_model("seed")


def _rows_fit_the_vocab(pair, context):
    p, q = pair.p(context), pair.q(context)
    assert len(p) == len(q) == len(pair.vocab)
    assert sum(p) == pytest.approx(1, abs=1e-9) and sum(q) == pytest.approx(1, abs=1e-9)


def test_the_toy_model_is_a_model_pair():
    assert isinstance(SEED, ModelPair)
    _rows_fit_the_vocab(SEED, ("a",))
    assert sum(SEED.p(("a",))) == 1  # exact rows


def test_a_transformed_pair_is_a_model_pair_with_the_base_state():
    pair = transforms.transform_pair(SEED, temperature="1/2")
    assert isinstance(pair, transforms.TransformedPair) and isinstance(pair, ModelPair)
    _rows_fit_the_vocab(pair, ("b", "a"))
    assert state_of(pair, ("b", "a")) == state_of(SEED, ("b", "a")) == ("a",)


def test_something_without_p_or_vocab_is_not_a_model_pair():
    class OnlyP:
        vocab = ("a",)

        def p(self, context):
            return (1,)

    assert not isinstance(OnlyP(), ModelPair)
    assert not isinstance(object(), ModelPair)


def test_state_of_uses_state_when_present_and_the_whole_context_otherwise():
    class Stateless:
        vocab = ("a", "b")

        def p(self, context):
            return (F(1, 2), F(1, 2))

        def q(self, context):
            return (F(1, 4), F(3, 4))

    assert state_of(Stateless(), ["a", "b", "b"]) == ("a", "b", "b")
    assert state_of(SEED, ["a", "b", "c"]) == ("c",)
    assert state_of(load_model("order2"), ("0", "1", "0")) == ("1", "0")
    # the engines run on a pair without ``state``: memoized on whole contexts
    r = exact.round_distribution(Stateless(), ("a",), 2)
    assert sum(r.outcomes.values()) == 1
    assert exact.speculative_joint(Stateless(), ("a",), 2, 2) == exact.target_joint(Stateless(), ("a",), 2)


def test_the_tiny_gpt_float64_adapter_is_a_model_pair():
    from specsim.gpt.exact_adapter import GPTPair

    pair = GPTPair.from_shipped()
    assert isinstance(pair, ModelPair)
    ctx = tuple("def ")
    _rows_fit_the_vocab(pair, ctx)
    assert state_of(pair, ctx) == ctx
    long = tuple("x" * (pair.window + 3))
    assert state_of(pair, long) == long[-pair.window:]  # the context window
