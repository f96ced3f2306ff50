"""compare: every scheme within a drafting budget, exact expected tokens per round, best first."""
from fractions import Fraction

from specsim import exact

from specsim.labs import compare
from specsim.schemes.block import Block
from specsim.toy import load_model
from specsim.schemes.tree import Tree


def test_every_shape_within_the_budget_is_listed_once():
    listed = [(v, tuple(s.shape) if v == "tree" else getattr(s, "gamma", s), getattr(s, "drafts", None))
              for v, s in compare.schemes(4)]
    assert len(listed) == len(set(listed))
    trees = {(shape, d) for v, shape, d in listed if v == "tree"}
    # node counts W1 + W1*W2 + ... <= 4: 1, 2, 3, 4, (1,1), (1,2), (1,3), (2,1), (1,1,1), (1,1,2), (1,1,1,1)
    assert {shape for shape, _ in trees} == {(1,), (2,), (3,), (4,), (1, 1), (1, 2), (1, 3), (2, 1),
                                            (1, 1, 1), (1, 1, 2), (1, 1, 1, 1)}


def test_rows_are_the_engines_numbers_sorted_best_first():
    m = load_model("seed")
    rows = compare.compare(m, ("a",), 3)
    values = [r["expected_tokens"] for r in rows]
    assert values == sorted(values, reverse=True)
    by = {(r["verify"], tuple(r["tree"] or ()), r["drafts"], r["drafted_tokens"]): r["expected_tokens"] for r in rows}
    assert by[("block", (), None, 3)] == exact.round_distribution(m, ("a",), Block(3)).expected_tokens
    assert by[("token", (), None, 3)] == Fraction(1659, 500)
    # a tree of widths 1,1,1 is the chain of three drafts, whatever the drafting mode
    assert by[("tree", (1, 1, 1), "iid", 3)] == by[("tree", (1, 1, 1), "distinct", 3)] == by[("token", (), None, 3)]
    assert by[("tree", (2,), "distinct", 2)] == exact.round_distribution(m, ("a",), Tree((2,), "distinct")).expected_tokens
