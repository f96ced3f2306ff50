"""Judging a rule: how far its output is from the target, and what it costs in tokens per round.

One definition, used by the pitfalls lab (``specsim.labs.pitfalls``), the rule
family (``specsim.labs.family``) and the checker (``specsim.labs.checker``):

- the **total variation** between the next-N-token joint the rule produces
  (``exact.speculative_joint``: rounds chained until N tokens) and the joint
  it should produce (``exact.target_joint`` of the target pair); 0 exactly
  when the rule is exact at this context;
- the **expected tokens per round** of the rule's round and of the correct
  rule's round on the same pair, scheme and context (computed when asked).

The speculative pair and the intended target pair may differ (a pitfall that
changes what the models are asked, e.g. a temperature on one side only).

>>> from specsim.toy import load_model
>>> from specsim.schemes import Chain
>>> from specsim.labs.pitfalls import AlwaysAccept
>>> j = judge(load_model("seed"), ("a",), Chain(1), AlwaysAccept(), 1)
>>> j.total_variation, j.exact, j.tokens_per_round, j.correct_tokens_per_round
(Fraction(1, 10), False, Fraction(2, 1), Fraction(19, 10))
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from .. import exact
from ..rule import CORRECT


def joints(pair, context, scheme, rule, n_tokens: int, target=None) -> tuple:
    """(produced, wanted): the next-``n_tokens`` joint of ``rule``'s rounds on ``pair``, and the
    target joint of ``target`` (default: ``pair``)."""
    context = tuple(context)
    produced = exact.speculative_joint(pair, context, scheme, n_tokens, rule)
    return produced, exact.target_joint(pair if target is None else target, context, n_tokens)


@dataclass
class Judgement:
    """A rule judged at one context: the joints, their TV, and (when read) the tokens per round."""

    pair: object
    context: tuple
    scheme: object
    rule: object
    produced: dict = field(repr=False)
    wanted: dict = field(repr=False)
    total_variation: object  # exact Fraction for toy models

    @property
    def exact(self) -> bool:
        return self.total_variation == 0

    @cached_property
    def tokens_per_round(self):
        """E[tokens emitted by one round] of this rule."""
        return exact.round_distribution(self.pair, self.context, self.scheme, self.rule).expected_tokens

    @cached_property
    def correct_tokens_per_round(self):
        """The same for the correct rule (on the same pair, scheme and context)."""
        if self.rule is CORRECT:
            return self.tokens_per_round
        return exact.round_distribution(self.pair, self.context, self.scheme, CORRECT).expected_tokens


def judge(pair, context, scheme, rule=CORRECT, n_tokens: int = 1, target=None) -> Judgement:
    """Judge ``rule`` on ``pair`` at ``context`` with ``scheme`` over the next ``n_tokens`` tokens
    (against the target joint of ``target``, default ``pair``)."""
    context = tuple(context)
    produced, wanted = joints(pair, context, scheme, rule, n_tokens, target)
    return Judgement(pair, context, scheme, rule, produced, wanted,
                     exact.joint_total_variation(produced, wanted))
