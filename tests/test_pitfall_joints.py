"""The pitfalls lab's numbers against values worked out by hand on a two-token model.

The model: p = (3/4, 1/4) and q = (1/4, 3/4) over (a, b), the same rows after
every token (``specsim.schemes.block.constant_model``). Then α = Σ min(p, q) =
1/2, min(1, p/q) = 1 for a and 1/3 for b, and the residual max(0, p - q) is
(1/2, 0), normalized (1, 0). Each expected value below is derived in its
comment from these numbers, not computed by the code under test.
"""
from fractions import Fraction as F

import pytest

from specsim import exact
from specsim.labs import pitfalls
from specsim.schemes import Chain
from specsim.schemes.block import constant_model
from specsim.toy import load_model

P, Q = (F(3, 4), F(1, 4)), (F(1, 4), F(3, 4))
MODEL = constant_model(P, Q)

# (rule, TV of the first token against p with γ = 1, E[tokens per round] with γ = 1)
BY_HAND = [
    # correct: the first token follows p; a round keeps its draft with probability α = 1/2, so 1/2·2 + 1/2·1
    ("correct", F(0), F(3, 2)),
    # always-accept: the first token is the draft, from q: TV(q, p) = |1/4 - 3/4| = 1/2; every round emits 2
    ("always-accept", F(1, 2), F(2)),
    # resample-from-target: P(a) = q(a)·1 + q(b)·(2/3)·p(a) = 1/4 + 3/8 = 5/8, against 3/4: TV 1/8;
    # acceptance is the real one, so tokens per round as the correct rule
    ("resample-from-target", F(1, 8), F(3, 2)),
    # accept-if-p-above-q: a (3/4 > 1/4) always kept, b never, replaced from the residual (1, 0): the first
    # token is a surely, TV |1 - 3/4| = 1/4; a round keeps its draft with probability q(a) = 1/4: 5/4 tokens
    ("accept-if-p-above-q", F(1, 4), F(5, 4)),
    # accept-if-u-below-p: keep x with probability p(x): P(keep) = 1/4·3/4 + 3/4·1/4 = 3/8; P(first = b) =
    # q(b)·p(b) = 3/16 (a rejection gives a), TV |3/16 - 1/4| = 1/16; tokens 3/8·2 + 5/8·1 = 11/8
    ("accept-if-u-below-p", F(1, 16), F(11, 8)),
    # no-bonus-token: the first token is unchanged (TV 0), but a kept draft ends the round: 1 token always
    ("no-bonus-token", F(0), F(1)),
]


@pytest.mark.parametrize("name, tv, tokens", BY_HAND)
def test_the_lab_gives_the_values_worked_out_by_hand(name, tv, tokens):
    r = pitfalls.evaluate(pitfalls.get(name), MODEL, ("a",), Chain(1), 1)
    assert (r.total_variation, r.expected_tokens, r.exact) == (tv, tokens, tv == 0)


def test_always_accept_over_two_tokens_by_hand():
    # γ = 1: the draft x ~ q is kept, then the bonus y ~ p(. | x) = p: the pair is q ⊗ p, the target p ⊗ p,
    # so the TV is Σ_x |q(x) - p(x)| / 2 · Σ_y p(y) = 1/2
    produced, wanted = pitfalls.joints(pitfalls.get("always-accept"), MODEL, ("b",), Chain(1), 2)
    a, b = "a", "b"
    assert produced == {(a, a): F(3, 16), (a, b): F(1, 16), (b, a): F(9, 16), (b, b): F(3, 16)}
    assert wanted == {(a, a): F(9, 16), (a, b): F(3, 16), (b, a): F(3, 16), (b, b): F(1, 16)}
    assert pitfalls.evaluate(pitfalls.get("always-accept"), MODEL, ("b",), Chain(1), 2).total_variation == F(1, 2)


@pytest.mark.parametrize("name", list(pitfalls.PITFALLS))
def test_every_joint_is_a_distribution_over_the_same_words(name):
    produced, wanted = pitfalls.joints(pitfalls.get(name), MODEL, ("a",), Chain(2), 2)
    assert sum(produced.values()) == sum(wanted.values()) == 1
    assert set(produced) <= {(x, y) for x in "ab" for y in "ab"} and all(v >= 0 for v in produced.values())


def test_correct_rule_joints_are_the_target_joint():
    zeros = load_model("zeros")
    produced, wanted = pitfalls.joints(pitfalls.get("correct"), zeros, zeros.contexts()[0], Chain(3), 2)
    assert produced == wanted == exact.target_joint(zeros, zeros.contexts()[0], 2)
