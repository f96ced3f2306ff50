"""specsim.labs.judge: one definition of "judge a rule" (TV to the target, tokens per round beside the
correct rule's), used by the pitfalls lab, the rule family and the checker."""
from fractions import Fraction as F

import pytest

from specsim import exact
from specsim.labs import checker, family, pitfalls
from specsim.labs.judge import judge
from specsim.rule import CORRECT
from specsim.schemes import Block, Chain, Tree
from specsim.schemes.block import constant_model
from specsim.toy import load_model

# p = (3/4, 1/4), q = (1/4, 3/4) after every token: α = 1/2, min(1, p/q) = (1, 1/3), residual (1, 0)
MODEL = constant_model((F(3, 4), F(1, 4)), (F(1, 4), F(3, 4)))
SEED = load_model("seed")


def test_a_judgement_by_hand():
    # resample-from-target, γ = 1: P(first = a) = 1/4 + 3/4 · 2/3 · 3/4 = 5/8 against p(a) = 3/4: TV 1/8;
    # the acceptance is the real one, so both rules emit 1/2 · 2 + 1/2 · 1 = 3/2 tokens a round
    j = judge(MODEL, ("a",), Chain(1), pitfalls.ResampleFromTarget(), 1)
    assert (j.total_variation, j.exact, j.tokens_per_round, j.correct_tokens_per_round) == (F(1, 8), False,
                                                                                             F(3, 2), F(3, 2))
    # β = 0 keeps every draft: the first token follows q (TV 1/2) and every round emits 2 tokens
    j = judge(MODEL, ("b",), Chain(1), family.RuleFamily(beta=0), 1)
    assert (j.total_variation, j.tokens_per_round, j.correct_tokens_per_round) == (F(1, 2), F(2), F(3, 2))
    assert sum(j.produced.values()) == sum(j.wanted.values()) == 1


@pytest.mark.parametrize("scheme", [Chain(2), Block(2), Tree((2, 1)), Tree((2,), "distinct")])
def test_the_correct_rule_is_exact_on_every_scheme(scheme):
    j = judge(SEED, ("c",), scheme, CORRECT, 2)
    assert j.exact and j.produced == j.wanted == exact.target_joint(SEED, ("c",), 2)
    assert j.tokens_per_round == j.correct_tokens_per_round == \
        exact.round_distribution(SEED, ("c",), scheme).expected_tokens


def test_the_lab_the_family_and_the_checker_report_the_same_judgement():
    rule = family.RuleFamily(beta=2, lam=F(1, 2))
    j = judge(SEED, ("a",), Chain(2), rule, 2)
    lab = pitfalls.evaluate(pitfalls.Pitfall("mine", None, "", rule), SEED, ("a",), Chain(2), 2)
    fam = family.evaluate(rule, SEED, ("a",), Chain(2), 2)
    chk = checker.Setup(rule).judge(SEED, ("a",), 2, 2)
    assert not j.exact and j.total_variation > 0
    assert lab.total_variation == fam["total_variation"] == chk.total_variation == j.total_variation
    assert lab.expected_tokens == fam["expected_tokens"] == chk.tokens_per_round == j.tokens_per_round
    assert fam["correct_tokens"] == chk.correct_tokens_per_round == \
        exact.round_distribution(SEED, ("a",), Chain(2)).expected_tokens


def test_a_pitfall_is_judged_against_its_own_target():
    # temperature on the draft only: the round is run on (p, q at 1/2) and judged against p at 1/2, so the
    # intended joint is not the model's; temperature on both sides is exact against the tempered target
    for name, exact_ in (("temperature-on-draft-only", False), ("temperature-on-target-only", True)):
        pit = pitfalls.get(name)
        j = judge(pit.speculative(SEED), ("a",), Chain(2), pit.rule, 2, pit.target(SEED))
        assert j.wanted == exact.target_joint(pit.target(SEED), ("a",), 2) != exact.target_joint(SEED, ("a",), 2)
        assert j.exact is exact_


def test_tokens_per_round_are_computed_only_when_read(monkeypatch):
    calls = []
    real = exact.round_distribution
    monkeypatch.setattr(exact, "round_distribution", lambda *a, **k: calls.append(a[3]) or real(*a, **k))
    j = judge(SEED, ("a",), Chain(2), pitfalls.AlwaysAccept(), 2)
    assert calls == []  # the joints only
    j.tokens_per_round, j.tokens_per_round, j.correct_tokens_per_round
    assert len(calls) == 2 and calls[1] is CORRECT
    calls.clear()
    j = judge(SEED, ("a",), Chain(2), CORRECT, 2)
    assert j.tokens_per_round == j.correct_tokens_per_round and len(calls) == 1  # one round serves both
