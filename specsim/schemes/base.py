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


class Scheme:
    """What every scheme answers, so that no caller asks which kind it holds (``DESIGN.md``: "ask the
    value, not its kind"). A subclass sets ``kind`` (its grammar keyword) and overrides what differs;
    ``specsim.schemes.register`` adds it to the grammar in one line.

    The questions callers ask, with a chain's answers as the defaults:

    * ``fixed_gamma``: it drafts γ tokens every round (set beside the i.i.d. formula for its γ,
      a γ a search may vary); ``plain``: it is shown by its γ alone (``γ = 3``);
    * ``token_wise``: a rejection discards every later draft; ``stop_coins``: the round is decided
      by a stop coin per position over the whole block; ``branches``: its drafts may branch (their
      parents are shown); ``drawn_as_tree``: a round is drawn node by node from its drafted layout;
      ``ordered``: a fixed tree, laid out in a chosen order (``--order``); ``adaptive``: the drafter
      decides the round's layout (its length or its tree) from its own rows; ``chosen``: its drafts
      are chosen (top-k), not sampled, so each is verified as a point mass and a rejected one is
      removed from p';
    * ``lower``: the sizes a person lowers to make its exact work smaller (words, joined by
      ``specsim.bounds``); ``size``: the same for the tiny GPT's work and the sampled work (``γ`` or
      ``the tree``); ``flag``: the historical option that sizes it (``--gamma``, ``--tree``);
      ``kernel_draw``: the cost of one draw of its vectorized Monte-Carlo kernel relative to a chain's,
      None when it has none;
    * ``label()``, ``json_keys()``, ``settings()``, ``step_words``, ``closed_words(k)``, ``round_note``:
      its parts in a command's text and JSON and on a page.
    """

    kind = "chain"
    gpt_round = "chain"
    fixed_gamma = plain = token_wise = True
    stop_coins = branches = drawn_as_tree = ordered = adaptive = chosen = False
    lower, size, flag = ("γ",), "γ", "--gamma"
    kernel_draw = None
    step_words = "accept left to right while u < min(1, p(x)/q(x)):"
    round_note = ""  # what a page adds when it steps through a round of this scheme

    def __eq__(self, other):  # a value: the same type with the same grammar string
        return type(other) is type(self) and other.name == self.name

    def __hash__(self):
        return hash(self.name)

    @property
    def tested(self) -> int:
        """Drafts one round's path may test (the positions whose numbers multiply along it)."""
        return self.depth

    def label(self) -> str:
        """How a command's text names it: "γ = 3" for a chain, "scheme tree:2,2 (6 drafted tokens)"."""
        n = self.drafted_tokens
        return f"scheme {self.name} ({n} drafted token{'s' * (n != 1)})"

    def json_keys(self) -> dict:
        """The keys a command's JSON adds for it beyond its name, depth and drafted tokens."""
        return {}

    def settings(self) -> dict:
        """The options it was written with beyond its size (a confidence chain's stop, a dynamic tree's topk)."""
        return {}

    def closed_words(self, k: int) -> str:
        """Why a round closed with a correction after ``k`` kept drafts."""
        return f"draft {k + 1} rejected"

    def drafter_passes(self) -> list | None:
        """Positions fed by each drafter pass of a round, one pass per level of its layout feeding the
        level above (None when that depends on the drafter's rows)."""
        level = []
        for parent in self.parents():  # a parent comes before its children
            level.append(0 if parent < 0 else level[parent] + 1)
        return [1] + [level.count(k) for k in range(max(level) + 1)][:-1]

    def prefix_work(self, s, depth: int) -> int:
        """Work of a round cut after ``depth`` kept drafts (``enumerate``'s ``limit``): the whole round by default."""
        return self.round_work(s)


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
