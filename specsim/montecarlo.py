"""Monte-Carlo: many rounds from one context, vectorized with numpy.

``sample_rounds`` plays ``rounds`` independent rounds of the correct rule at
once: every array below has one row per round. ``sample_rounds_loop`` plays
them one at a time through ``specsim.sampling.play_round`` and any
``RoundRule``. Both use the same uniforms in the same layout (chunks of
rounds; per chunk, gamma draft uniforms, gamma acceptance uniforms and one
final uniform per round) and the same inverse-CDF draw, so with the correct
rule and the same seed they return the same counts; the loop is the
baseline the benchmark (``specsim bench-sample``) compares against.

Rows are converted to float64 once per reachable model state (a toy model
of order k only looks at its last k tokens, so a round from one context
visits few states).

Example
-------
>>> from specsim.toy import load_model
>>> m = load_model("seed")
>>> s = sample_rounds(m, ("a",), gamma=3, rounds=1000, seed=1)
>>> sum(s.accepted_counts), len(s.accepted_counts)
(1000, 4)
>>> s.outcomes == sample_rounds_loop(m, ("a",), 3, 1000, seed=1).outcomes
True
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .pair import state_of
from . import rule_np
from .rule import CORRECT, RoundRule
from .sampling import make_rng, play_round

CHUNK = 1 << 17  # rounds per block of uniforms (memory stays ~ tens of MB)


@dataclass
class SampleResult:
    """Counts of one round's emitted sequences and of K over ``rounds`` rounds."""

    context: tuple
    gamma: int
    rounds: int
    outcomes: dict  # tuple of tokens -> count
    accepted_counts: list  # n_0 .. n_gamma

    def to_dict(self) -> dict:
        """``{"rounds", "outcomes": [{"tokens", "count"}], "accepted_counts"}``, most frequent first."""
        items = sorted(self.outcomes.items(), key=lambda kv: (-kv[1], len(kv[0]), kv[0]))
        return {"rounds": self.rounds,
                "outcomes": [{"tokens": list(t), "count": c} for t, c in items],
                "accepted_counts": list(self.accepted_counts)}


class StateTables:
    """Float rows of every state a round from ``context`` can reach, as arrays.

    Arrays are indexed [state, token]: ``P``, ``Q``; ``acceptance`` =
    min(1, p/q) (0 where q = 0) and ``R`` the residual rows (p where p == q),
    both from ``specsim.rule_np``; ``cum_q``, ``cum_p``, ``cum_r``: cumulative rows for the
    inverse-CDF draw, with the entries from the last positive one on set to 2
    so a draw never lands on a zero or past the end; ``next`` the state after
    drafting a token. States are found breadth-first up to depth gamma.
    """

    def __init__(self, models, context, gamma: int):
        vocab = tuple(models.vocab)
        self.vocab = vocab
        contexts, index = [tuple(context)], {state_of(models, context): 0}
        nxt, frontier = {}, [0]
        for _ in range(gamma):
            new = []
            for s in frontier:
                q = models.q(contexts[s])
                for x, qx in enumerate(q):
                    if qx > 0:
                        child = contexts[s] + (vocab[x],)
                        key = state_of(models, child)
                        if key not in index:
                            index[key] = len(contexts)
                            contexts.append(child)
                            new.append(index[key])
                        nxt[s, x] = index[key]
            frontier = new
        v, n = len(vocab), len(contexts)
        self.p_rows = [tuple(float(x) for x in models.p(c)) for c in contexts]
        self.q_rows = [tuple(float(x) for x in models.q(c)) for c in contexts]
        self.P, self.Q = np.array(self.p_rows), np.array(self.q_rows)  # (S, V)
        self.acceptance = rule_np.acceptance_probabilities(self.P, self.Q)  # (S, V)
        # where p == q no rejection happens, so the residual row is never drawn from: p stands in
        self.R = rule_np.residual(self.P, self.Q, fallback=self.P)  # (S, V)
        self.cum_p, self.cum_q = _cumulative(self.P), _cumulative(self.Q)
        self.cum_r = _cumulative(self.R)
        self.next = np.zeros((n, v), dtype=np.intp)
        for (s, x), t in nxt.items():
            self.next[s, x] = t
        self.next_map = nxt


def _cumulative(rows):
    cum = np.cumsum(rows, axis=1)
    for i, row in enumerate(rows):
        cum[i, np.flatnonzero(row > 0)[-1]:] = 2.0
    return np.asfortranarray(cum)  # columns contiguous for _pick


def _pick(cum, rows, u):
    """Vectorized inverse-CDF draw from row ``rows[n]`` of ``cum`` with uniform ``u[n]``.

    The index is the number of cumulative entries <= u. Counting column by
    column (1-D gathers) is much faster than a 2-D gather and a row sum for a
    small vocabulary; the last column is always 2 and never counts.
    """
    x = np.zeros(len(u), dtype=np.intp)
    for j in range(cum.shape[1] - 1):
        x += cum[:, j][rows] <= u
    return x


def _uniform_chunks(rng, rounds: int, gamma: int, progress=None):
    """Blocks of at most CHUNK rounds' uniforms; ``progress(n)`` is called after each block is played."""
    done = 0
    while done < rounds:
        n = min(CHUNK, rounds - done)
        yield n, rng.random((n, gamma)), rng.random((n, gamma)), rng.random(n)
        done += n
        if progress is not None:
            progress(n)


def _check(gamma, rounds):
    if gamma < 1:
        raise ValueError(f"gamma must be >= 1, got {gamma}")
    if rounds < 1:
        raise ValueError(f"rounds must be >= 1, got {rounds}")


def sample_rounds(models, context, gamma: int, rounds: int, seed=None, progress=None) -> SampleResult:
    """Play ``rounds`` rounds of the correct rule at once and count the outcomes.

    Memory stays constant in ``rounds``: each block of CHUNK rounds is counted
    and dropped. ``progress(n)``, if given, is called after each block.
    """
    _check(gamma, rounds)
    t = StateTables(models, context, gamma)
    v = len(t.vocab)
    base = v + 1  # an outcome is a number in base v+1, digit j = token j + 1
    wide = base ** (gamma + 1) >= 1 << 62  # outcome numbers would overflow int64
    powers = np.array([0 if wide else base ** j for j in range(gamma + 1)], dtype=np.int64)
    flat_a, flat_next = t.acceptance.ravel(), t.next.ravel()  # indexed by state * V + token
    final_rows = np.asfortranarray(np.concatenate([t.cum_r, t.cum_p]))  # rows 0..S-1 residual, S..2S-1 bonus
    totals, k_counts = {}, np.zeros(gamma + 1, dtype=np.int64)  # outcome code -> count, merged per chunk
    for n, u_draft, u_accept, u_final in _uniform_chunks(make_rng(seed), rounds, gamma, progress):
        state = np.zeros(n, dtype=np.intp)  # (N,) state 0 is the context
        stop = state.copy()  # (N,) state at position K, where the round stops
        k = np.zeros(n, dtype=np.intp)  # (N,) accepted drafts so far
        alive = np.ones(n, dtype=bool)  # (N,) no rejection yet
        code = np.zeros(n, dtype=np.int64)  # (N,) accepted drafts as base-(V+1) digits
        digits = np.zeros((n, gamma + 1), dtype=np.int16) if wide else None  # (N, gamma+1)
        for i in range(gamma):
            x = _pick(t.cum_q, state, u_draft[:, i])  # step 1: draft x ~ q
            at = state * v + x
            alive &= u_accept[:, i] < flat_a[at]  # step 3: keep x while u < min(1, p/q)
            state = flat_next[at]
            code += (x + 1) * powers[i] * alive
            if wide:
                digits[:, i] = (x + 1) * alive
            k += alive
            stop = np.where(alive, state, stop)
        rows = stop + len(t.cum_p) * (k == gamma)  # step 4 (residual) or step 5 (bonus)
        closing = _pick(final_rows, rows, u_final)
        if wide:
            digits[np.arange(n), k] = closing + 1
            values, counts = np.unique(digits, axis=0, return_counts=True)
            keys = map(tuple, values.tolist())
        else:
            code = code + (closing + 1) * powers[k]
            if base ** (gamma + 1) <= 1 << 22:
                counts = np.bincount(code)
                values = np.flatnonzero(counts)
                counts = counts[values]
            else:
                values, counts = np.unique(code, return_counts=True)
            keys = values.tolist()
        for key, c in zip(keys, counts.tolist()):  # constant memory: counts, not every round's code
            totals[key] = totals.get(key, 0) + c
        k_counts += np.bincount(k, minlength=gamma + 1)
    if wide:
        outcomes = {tuple(t.vocab[d - 1] for d in row if d): c for row, c in totals.items()}
    else:
        outcomes = {_decode(c, base, t.vocab): n for c, n in totals.items()}
    return SampleResult(tuple(context), gamma, rounds, outcomes, [int(c) for c in k_counts])


def _decode(code: int, base: int, vocab) -> tuple:
    out = []
    while code:
        code, digit = divmod(code, base)
        out.append(vocab[digit - 1])
    return tuple(out)


def sample_rounds_loop(models, context, gamma: int, rounds: int, seed=None,
                       rule: RoundRule = CORRECT, progress=None) -> SampleResult:
    """The same experiment, one Python round at a time, for any ``RoundRule``."""
    _check(gamma, rounds)
    t = StateTables(models, context, gamma)
    rows = list(zip(t.p_rows, t.q_rows))
    nxt = t.next_map
    outcomes, k_counts = {}, [0] * (gamma + 1)
    vocab = t.vocab
    for n, u_draft, u_accept, u_final in _uniform_chunks(make_rng(seed), rounds, gamma, progress):
        for ud, ua, uf in zip(u_draft.tolist(), u_accept.tolist(), u_final.tolist()):
            _, drafts, k, closing = play_round(rows.__getitem__, lambda s, x: nxt[s, x], 0,
                                             gamma, rule, ud, ua, uf)
            key = tuple(drafts[:k]) if closing is None else tuple(drafts[:k]) + (closing,)
            outcomes[key] = outcomes.get(key, 0) + 1
            k_counts[k] += 1
    named = {tuple(vocab[i] for i in key): c for key, c in outcomes.items()}
    return SampleResult(tuple(context), gamma, rounds, named, k_counts)
