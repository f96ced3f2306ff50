"""specsim.rows: probability rows typed by a person."""
from fractions import Fraction as F

import pytest

from specsim import rows
from specsim.toy import ModelError


def test_parse_row_reads_fractions_and_decimals_exactly():
    assert rows.parse_row("3/5, 0.3 1/10", "p") == [F(3, 5), F(3, 10), F(1, 10)]
    assert rows.parse_row(" 1 ", "p") == [F(1)]


@pytest.mark.parametrize("text, message", [("", "p is empty"), (" , ", "p is empty"),
                                           ("1/2, x", "p[1]: 'x' is not a number"), ("1/0", "p[0]")])
def test_parse_row_names_the_bad_entry(text, message):
    with pytest.raises(ModelError, match=message.replace("[", r"\[").replace("]", r"\]")):
        rows.parse_row(text, "p")


def test_normalized_divides_by_the_sum_only_when_it_can():
    assert rows.normalized([F(1), F(1), F(2)]) == [F(1, 4), F(1, 4), F(1, 2)]
    assert rows.normalized([F(0), F(0)]) == [F(0), F(0)]
    assert rows.normalized([F(2), F(-1)]) == [F(2), F(-1)]


def test_parse_rows_reads_a_pair():
    assert rows.parse_rows("a b c", "3/5 3/10 1/10", "1/2, 2/5, 1/10") == (
        ["a", "b", "c"], [F(3, 5), F(3, 10), F(1, 10)], [F(1, 2), F(2, 5), F(1, 10)])
    vocab, p, q = rows.parse_rows("x y z", "1, 1, 1", "0 0 5", normalize=True)
    assert p == [F(1, 3)] * 3 and q == [0, 0, 1]


@pytest.mark.parametrize("tokens, p, q, normalize, message", [
    ("a b c d e f g", "1", "1", False, "between 1 and 6 tokens, got 7"),
    ("", "1", "1", False, "between 1 and 6 tokens, got 0"),
    ("a a", "1/2 1/2", "1/2 1/2", False, "distinct"),
    ("a b c", "3/5, 3/10", "1/3 1/3 1/3", False, "p has 2 entries but there are 3 tokens"),
    ("a b c", "1/3 1/3 1/3", "1/2 1/2 1/2", False, "q: row sums to 3/2"),
    ("a b", "2 -1", "1/2 1/2", True, "p: entry -1 is negative"),
    ("a b", "0 0", "1/2 1/2", True, "p: row sums to 0"),
])
def test_parse_rows_refuses_bad_input_with_one_line(tokens, p, q, normalize, message):
    with pytest.raises(ModelError, match=message):
        rows.parse_rows(tokens, p, q, normalize, max_tokens=6)
