"""What every verification scheme shares: the draw, the round's outcome record, the verdict.

A scheme (``Chain``, ``Block``, ``Tree``) is a value with

* ``name``: its grammar string (``chain:4``, ``block:4``, ``tree:2,2,1``,
  ``tree:2,2,1:distinct``), which ``specsim.schemes.parse`` reads back;
* ``drafted_tokens`` and ``depth`` (the most drafts a round can keep);
* ``parents()``: the draft layout, node i's parent or -1 for the root (a
  chain is a path), and ``mask(n)`` / ``positions(n)``, the verification
  mask and position ids over n cached keys;
* ``enumerate(pair, context, rule, limit)``: every outcome of one round
  with its exact probability (a ``RoundDistribution``);
* ``draft(rows, u_draft, rule)``: the drafted tokens, one per node, drawn
  with the given uniforms from the drafter's rows;
* ``verify(drafts, p_rows, q_rows, u_test, u_final, rule)``: the sampled
  decision over plain Python numbers (Fraction or float), a ``Verdict``;
* ``round_work(shape)``: how many outcomes ``enumerate`` touches, for the
  work bound of ``specsim.exact``;
* ``gpt_round``: which part of the tiny GPT's round drafts, lays out and
  keeps it (``specsim.gpt.rounds``: ``"chain"`` or ``"tree"``), and for a
  chain ``capped(g)``, the same scheme with at most g drafts;
* ``check_rule(rule)``: a one-line refusal of a rule it cannot run (a
  tree takes tree rules, a chain chain rules, a block only the correct one).

Row layout, the same for every scheme: ``p_rows[0]`` and ``q_rows[0]`` are
the rows at the root (after the context), ``p_rows[j + 1]`` and
``q_rows[j + 1]`` the rows after draft node j (the context plus the path to
node j). So p_rows has one row per node plus one, which is what the target's
single verification pass returns. A leaf's q row is never read.

Uniforms: ``u_draft[j]`` draws node j, ``u_test[j]`` is node j's test (its
acceptance coin, or for a block the stop coin of position j + 1), and
``u_final`` draws the closing token. A chain's layout is therefore the
historical one (gamma draft uniforms, gamma test uniforms, one final).
"""
from __future__ import annotations

from dataclasses import dataclass, field


def draw(row, u):
    """Inverse-CDF draw: the first token whose cumulative probability exceeds u.

    Zero entries are never chosen; if rounding leaves u above the total, the
    last token with positive probability is returned. Exact for Fraction rows
    (Python compares a float u with a Fraction exactly).
    """
    total, last = 0, None
    for j, v in enumerate(row):
        if v > 0:
            total = total + v
            last = j
            if u < total:
                return j
    if last is None:
        raise ValueError("cannot draw from a row with no positive entry")
    return last


@dataclass
class RoundDistribution:
    """All outcomes of one round from one context.

    outcomes: emitted sequence (tuple of tokens) -> probability, distinct sequences
    accepted: P(K = k) for k = 0..depth (K = drafts accepted)
    expected_tokens: E[number of tokens emitted by the round]
    """

    context: tuple
    gamma: int
    outcomes: dict
    accepted: list
    expected_tokens: object


@dataclass
class Verdict:
    """What verification decided in one sampled round.

    path: the accepted draft nodes, root to leaf (K = ``len(path)``)
    closing: the closing token's index (None when the rule gives no bonus)
    closing_kind: "correct" (after a rejection or a stop) or "bonus" (after the whole depth)
    closing_row: the row the closing token was drawn from
    tests: one dict per test made, in order (the node, the token, the
        numbers compared and whether it passed); see each scheme's ``verify``
    extra: scheme-specific numbers (a block's weights w and stop probabilities h)
    """

    path: list
    closing: int | None
    closing_kind: str
    closing_row: list | None
    tests: list = field(default_factory=list)
    extra: dict = field(default_factory=dict)

    @property
    def accepted(self) -> int:
        return len(self.path)


def nonempty(row, rule, what):
    """A rule's replacement, fallback or bonus row must hand out some probability."""
    if row is None or not any(v > 0 for v in row):
        raise ValueError(f"rule {getattr(rule, 'name', rule)!r}: the {what} row has no positive entry "
                         "(a round must emit a token)")
    return row


def expected_length(outcomes) -> object:
    return sum((len(t) * pr for t, pr in outcomes.items()), 0)
