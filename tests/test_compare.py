"""compare: every scheme within a drafting budget, exact expected tokens per round, best first; its work check."""
from fractions import Fraction

import pytest

from specsim import bounds, exact
from specsim.labs import compare
from specsim.schemes import Block, Chain, Tree, parse
from specsim.toy import load_model, model_from_dict

SEED = load_model("seed")


def test_every_shape_within_the_budget_is_listed_once_as_a_scheme_value():
    listed = compare.schemes(4)
    assert len({s.name for s in listed}) == len(listed)
    assert all(parse(s.name) == s and s.drafted_tokens <= 4 for s in listed)  # names read back
    assert [s for s in listed if s.kind != "tree"] == [x for g in range(1, 5) for x in (Chain(g), Block(g))]
    trees = [s for s in listed if s.kind == "tree"]
    # node counts W1 + W1*W2 + ... <= 4: 1, 2, 3, 4, (1,1), (1,2), (1,3), (2,1), (1,1,1), (1,1,2), (1,1,1,1)
    shapes = {(1,), (2,), (3,), (4,), (1, 1), (1, 2), (1, 3), (2, 1), (1, 1, 1), (1, 1, 2), (1, 1, 1, 1)}
    assert {(s.shape, s.drafts) for s in trees} == {(w, d) for w in shapes for d in ("iid", "distinct")}


def test_rows_are_the_engines_numbers_sorted_best_first():
    rows = compare.compare(SEED, ("a",), 3)
    values = [r["expected_tokens"] for r in rows]
    assert values == sorted(values, reverse=True)
    by = {r["scheme"]: r for r in rows}
    assert by["block:3"]["expected_tokens"] == exact.round_distribution(SEED, ("a",), Block(3)).expected_tokens
    assert by["chain:3"]["expected_tokens"] == Fraction(1659, 500)
    # a tree of widths 1,1,1 is the chain of three drafts, whatever the drafting mode
    assert by["tree:1,1,1"]["expected_tokens"] == by["tree:1,1,1:distinct"]["expected_tokens"] == Fraction(1659, 500)
    assert by["tree:2:distinct"]["expected_tokens"] == \
        exact.round_distribution(SEED, ("a",), Tree((2,), "distinct")).expected_tokens
    assert {k: by["tree:1,2:distinct"][k] for k in ("kind", "gamma", "drafted_tokens", "tree", "drafts")} == \
        {"kind": "tree", "gamma": 2, "drafted_tokens": 3, "tree": [1, 2], "drafts": "distinct"}
    assert {k: by["block:2"][k] for k in ("kind", "gamma", "drafted_tokens")} == {"kind": "block", "gamma": 2,
                                                                                   "drafted_tokens": 2}


def test_named_schemes_are_compared_in_the_same_rows():
    rows = compare.compare(SEED, ("b",), named=["tree:2,1", "chain:3", Block(2)])
    assert [r["scheme"] for r in rows] == sorted(["tree:2,1", "chain:3", "block:2"],
                                                 key=lambda n: -exact.round_distribution(SEED, ("b",), parse(n)).expected_tokens)
    with pytest.raises(ValueError, match="one of the two"):
        compare.compare(SEED, ("b",), 3, named=["chain:1"])


def test_check_is_the_one_work_bound_of_a_comparison():
    # what it adds up is each scheme's own round estimate, the same one bounds.check_round uses
    total = sum(bounds.exact_work(SEED, s, rounds=1) for s in compare.schemes(5))
    assert total <= compare.BUDGET_WORK < sum(bounds.exact_work(SEED, s, rounds=1) for s in compare.schemes(6))
    compare.check(SEED, 5)
    with pytest.raises(bounds.WorkRefused) as e:
        compare.check(SEED, 6)
    assert "\n" not in str(e.value) and "lower the budget" in str(e.value)
    compare.check(SEED, 6, limit=bounds.cli_budget())  # the CLI's budget lets it through


def test_check_applies_the_tree_work_to_a_named_tree():
    vocab = [f"t{i}" for i in range(12)]
    big = model_from_dict({"vocab": vocab, "order": 1, "target": {v: [Fraction(1, 12)] * 12 for v in vocab},
                           "draft": {v: [Fraction(1, 12)] * 12 for v in vocab}})
    with pytest.raises(bounds.WorkRefused, match="tree:2,1,1,1,1,1,1.*lower the widths or the depth"):
        compare.check(big, named=["chain:1", "tree:2,1,1,1,1,1,1"], limit=bounds.cli_budget())
    compare.check(big, named=["chain:1", "tree:2"], limit=bounds.cli_budget())
