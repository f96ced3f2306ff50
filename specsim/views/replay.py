"""Replaying sampled rounds: what a viewer knows after each event, and the running tokens per pass.

The Round stepper and the Home page play ``specsim.sampling`` traces of any
scheme (``specsim.schemes``) forward one event at a time; everything they
show is computed here, from the trace's ``events()`` (the documented trace
format, ``specsim/TRACE_FORMAT.md``) and its summary fields.

Example
-------
>>> from specsim.toy import load_model
>>> from specsim.sampling import make_rng, trace_round
>>> from specsim.schemes import Chain
>>> m = load_model("seed")
>>> t = trace_round(m, ("a",), Chain(3), seed=0)
>>> [e["kind"] for e in t.events()]
['draft', 'draft', 'draft', 'verify', 'accept', 'reject', 'correct', 'emit']
>>> draft_statuses(t, 2)  # after the third draft
(['pending', 'pending', 'pending'], None)
>>> draft_statuses(t, 6)  # after the correction
(['accepted', 'rejected', 'discarded'], ('correct', 'b'))
>>> rng = make_rng(0)
>>> rounds = [next_round(m, ("a",), [], Chain(3), rng)]
>>> rounds.append(next_round(m, ("a",), rounds, Chain(3), rng))
>>> [(r["tokens"], r["sampled"]) for r in running_tokens_per_pass(m, rounds)]
[(2, Fraction(2, 1)), (5, Fraction(5, 2))]
>>> first = running_tokens_per_pass(m, rounds[:1])
>>> running_tokens_per_pass(m, rounds, previous=first) == running_tokens_per_pass(m, rounds)
True
"""
from __future__ import annotations

from fractions import Fraction
from typing import Callable, Sequence

from ..exact import round_distribution
from ..rule import CORRECT, RoundRule
from ..sampling import make_rng, trace_round
from ..schemes import as_scheme
from .tree_view import node_statuses


def draft_statuses(trace, event_index: int) -> tuple:
    """What is known about one round once its events up to ``event_index`` have been shown.

    Returns ``(statuses, last)``: one status per draft made so far, "pending"
    (drafted, not yet tested), "accepted", "rejected" or "discarded" (never
    kept); ``last`` is ("correct" | "bonus", token) once the round's closing
    token is drawn, else None. Any scheme (``tree_view.node_statuses``).
    """
    at = node_statuses(trace, event_index)
    return at["statuses"], at["closing"]


def next_round(pair, context, rounds: Sequence, scheme, rng, rule: RoundRule = CORRECT):
    """The round of ``scheme`` after ``rounds``, played from ``context`` plus every token they emitted.

    Called again and again with one ``numpy.random.Generator``, it gives the
    rounds ``specsim.sampling.generate`` gives with that generator's seed.
    """
    start = tuple(context) + tuple(t for r in rounds for t in r.emitted)
    return trace_round(pair, start, scheme, rng, rule)


def running_tokens_per_pass(pair, rounds: Sequence, rule: RoundRule = CORRECT,
                            expected_tokens: Callable | None = None, previous: Sequence = ()) -> list:
    """After each round: sampled tokens per target pass so far, against the exact expectation.

    A toy model's rounds are not i.i.d. (the acceptance rate depends on the
    context), so the expectation after j rounds is the mean, over those j
    rounds, of the exact E[tokens per round] from the context each started
    from (one target pass per round).

    ``expected_tokens(context, scheme)`` gives that exact value; by default
    ``exact.round_distribution(models, context, scheme, rule).expected_tokens``
    (pass a memoized one to reuse work across calls). Returns one dict per
    round: "tokens" and "target_passes" so far, "sampled" (their ratio) and
    "expected" (exact Fractions for a toy model).
    """
    if expected_tokens is None:
        def expected_tokens(context, scheme):
            return round_distribution(pair, context, scheme, rule).expected_tokens

    out, tokens, passes, total = list(previous), 0, 0, Fraction(0)
    if out:
        last = out[-1]
        tokens, passes, total = last["tokens"], last["target_passes"], last["expected"] * len(out)
    for j, r in enumerate(rounds[len(out):], start=len(out) + 1):
        tokens, passes = tokens + len(r.emitted), passes + r.target_passes
        total += expected_tokens(r.context, r.scheme)
        out.append({"tokens": tokens, "target_passes": passes,
                    "sampled": Fraction(tokens, passes), "expected": total / j})
    return out


class Player:
    """A position (round, event) in a run of seeded rounds of one scheme, moved forward or back one event at a time.

    The chain is ``next_round`` on one ``numpy.random.Generator`` made from
    ``seed``, extended lazily, so it is the chain ``sampling.generate`` gives
    with that seed. ``offsets[j]`` counts the events before round j, so every
    move is constant work however long the chain is.

    >>> from specsim.toy import load_model
    >>> from specsim.schemes import Tree
    >>> pl = Player(load_model("seed"), ("a",), Tree((2, 1)), seed=0)
    >>> n = pl.events_in(0)
    >>> for _ in range(n):
    ...     pl.step()
    >>> n, (pl.round, pl.event, pl.step_number)
    (11, (1, 0, 12))
    >>> pl.back(); (pl.round, pl.event == n - 1)
    (0, True)
    >>> pl.advance_to(15); pl.step_number
    15
    >>> j, trace, e = pl.peek(); pl.step(); (j, e) == (pl.round, pl.event) and trace is pl.trace
    True
    """

    def __init__(self, pair, context, scheme, seed: int, rule: RoundRule = CORRECT):
        self.pair, self.context, self.scheme, self.rule = pair, tuple(context), as_scheme(scheme), rule
        self.rng, self.rounds, self.offsets, self.round, self.event = make_rng(seed), [], [0], 0, 0
        self._extend()

    def _extend(self, upto: int | None = None) -> None:
        """Draw the rounds up to ``upto`` (the current one by default), in order on the one generator."""
        while len(self.rounds) <= (self.round if upto is None else upto):
            self.rounds.append(next_round(self.pair, self.context, self.rounds, self.scheme, self.rng, self.rule))
            self.offsets.append(self.offsets[-1] + len(self.rounds[-1].events()))

    def events_in(self, j: int | None = None) -> int:
        j = self.round if j is None else j
        return self.offsets[j + 1] - self.offsets[j]

    @property
    def step_number(self) -> int:
        """1-based index of the current event over the whole chain."""
        return self.offsets[self.round] + self.event + 1

    @property
    def trace(self):
        return self.rounds[self.round]

    def step(self) -> None:
        if self.event + 1 < self.events_in():
            self.event += 1
        else:
            self.round, self.event = self.round + 1, 0
            self._extend()

    def peek(self) -> tuple:
        """(round, trace, event) of the position one step on, without moving there (a round not drawn yet is
        drawn: the rounds come off the one generator in order whenever they are drawn)."""
        if self.event + 1 < self.events_in():
            return self.round, self.trace, self.event + 1
        self._extend(self.round + 1)
        return self.round + 1, self.rounds[self.round + 1], 0

    def back(self) -> None:
        if self.event > 0:
            self.event -= 1
        elif self.round > 0:
            self.round -= 1
            self.event = self.events_in() - 1

    def round_end(self) -> None:
        """To the end of this round, or of the next one when already there."""
        if self.event == self.events_in() - 1:
            self.round += 1
            self._extend()
        self.event = self.events_in() - 1

    def advance_to(self, step_number: int) -> None:
        while self.step_number < step_number:
            self.step()

    def finished(self) -> list:
        """The rounds whose every event has been shown."""
        return self.rounds[:self.round + (1 if self.event == self.events_in() - 1 else 0)]
