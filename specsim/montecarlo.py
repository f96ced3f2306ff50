"""Monte-Carlo: many rounds of one scheme from one context.

``sample_rounds(pair, context, scheme, rounds, seed)`` counts the emitted
sequences and K. With the correct rule, a chain and a block run vectorized
numpy kernels that play a whole chunk of rounds per call (every array has
one row per round); any other scheme or rule runs ``sample_rounds_loop``,
one round at a time through ``specsim.sampling.play`` (the scheme's own
``draft`` and ``verify``). Both use the same uniforms in the same layout
(chunks of rounds; per chunk, n draft uniforms, n test uniforms and one
final uniform per round, n = drafted tokens) and the same inverse-CDF draw,
so with the same seed a kernel and the loop return the same counts
(``tests/test_montecarlo_kernels.py``); the loop is the baseline the
benchmark (``specsim bench-sample``) compares against.

Rows are converted to float64 once per reachable model state (a toy model
of order k only looks at its last k tokens, so a round from one context
visits few states).

Example
-------
>>> from specsim.toy import load_model
>>> from specsim.schemes import Block, Chain
>>> m = load_model("seed")
>>> s = sample_rounds(m, ("a",), Chain(3), rounds=1000, seed=1)
>>> sum(s.accepted_counts), len(s.accepted_counts)
(1000, 4)
>>> s.outcomes == sample_rounds_loop(m, ("a",), Chain(3), 1000, seed=1).outcomes
True
>>> sample_rounds(m, ("a",), Block(3), 2000, seed=1) == sample_rounds_loop(m, ("a",), Block(3), 2000, seed=1)
True
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import rule_np
from .pair import state_of
from .rule import CORRECT, RoundRule
from .sampling import make_rng, play, uniforms
from .schemes import as_scheme

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

    def __init__(self, pair, context, gamma: int):
        vocab = tuple(pair.vocab)
        self.vocab = vocab
        contexts, index = [tuple(context)], {state_of(pair, context): 0}
        nxt, frontier = {}, [0]
        for _ in range(gamma):
            new = []
            for s in frontier:
                q = pair.q(contexts[s])
                for x, qx in enumerate(q):
                    if qx > 0:
                        child = contexts[s] + (vocab[x],)
                        key = state_of(pair, child)
                        if key not in index:
                            index[key] = len(contexts)
                            contexts.append(child)
                            new.append(index[key])
                        nxt[s, x] = index[key]
            frontier = new
        v, n = len(vocab), len(contexts)
        self.p_rows = [tuple(float(x) for x in pair.p(c)) for c in contexts]
        self.q_rows = [tuple(float(x) for x in pair.q(c)) for c in contexts]
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


def _uniform_chunks(rng, rounds: int, drafted: int, progress=None):
    """Blocks of at most CHUNK rounds' uniforms: (n, draw (n, drafted), test (n, drafted), final (n,)).

    ``progress(n)`` is called after each block is played.
    """
    done = 0
    while done < rounds:
        n = min(CHUNK, rounds - done)
        yield n, rng.random((n, drafted)), rng.random((n, drafted)), rng.random(n)
        done += n
        if progress is not None:
            progress(n)


def _check(rounds):
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
        raise ValueError(f"rounds must be an integer >= 1, got {rounds!r}")


def sample_rounds(pair, context, scheme, rounds: int, seed=None, progress=None,
                  rule: RoundRule = CORRECT) -> SampleResult:
    """Play ``rounds`` rounds of ``scheme`` from ``context`` and count the outcomes.

    The correct rule on a chain or a block runs a vectorized kernel; anything
    else the per-round loop, with the same uniforms. Memory stays constant in
    ``rounds``: each block of CHUNK rounds is counted and dropped.
    ``progress(n)``, if given, is called after each block.
    """
    scheme = as_scheme(scheme)
    _check(rounds)
    kernel = scheme.kernel(rule)  # the scheme names its kernel (None: the per-round loop)
    if kernel is not None:
        return KERNELS[kernel.name](pair, context, scheme.depth, rounds, seed, progress)
    return sample_rounds_loop(pair, context, scheme, rounds, seed, rule, progress)


def _chain_kernel(pair, context, gamma: int, rounds: int, seed=None, progress=None) -> SampleResult:
    """The correct rule on a chain, a chunk of rounds per numpy call (``sampling.play``'s twin)."""
    t = StateTables(pair, context, gamma)
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


def sample_rounds_loop(pair, context, scheme, rounds: int, seed=None,
                       rule: RoundRule = CORRECT, progress=None) -> SampleResult:
    """The same experiment, one Python round at a time through ``sampling.play``, for any scheme and rule."""
    scheme = as_scheme(scheme)
    _check(rounds)
    context, vocab, memo, by_path = tuple(context), tuple(pair.vocab), {}, {}

    def rows(path):  # float rows, once per model state (and looked up once per drafted path)
        hit = by_path.get(path)
        if hit is None:
            ctx = context + tuple(vocab[x] for x in path)
            key = state_of(pair, ctx)
            if key not in memo:
                memo[key] = ([float(x) for x in pair.p(ctx)], [float(x) for x in pair.q(ctx)])
            hit = by_path[path] = memo[key]
        return hit

    outcomes, k_counts = {}, [0] * (scheme.depth + 1)
    for n, u_draft, u_test, u_final in _uniform_chunks(make_rng(seed), rounds, scheme.drafted_tokens, progress):
        for ud, ut, uf in zip(u_draft.tolist(), u_test.tolist(), u_final.tolist()):
            played = play(rows, scheme, rule, ud, ut, uf)
            key = played.emitted
            outcomes[key] = outcomes.get(key, 0) + 1
            k_counts[played.verdict.accepted] += 1
    named = {tuple(vocab[i] for i in key): c for key, c in outcomes.items()}
    return SampleResult(context, scheme.depth, rounds, named, k_counts)




# -- block verification, vectorized -------------------------------------------
def _draw_rows(rows, u):
    """Inverse-CDF draw of one index per row of ``rows`` (N, V), rows normalized here.

    As ``sampling.draw``: the first positive entry whose running total exceeds
    u; entries from the last positive one on count as 2 so rounding never
    lands past it.
    """
    total = rows.sum(axis=1, keepdims=True)
    cum = np.cumsum(rows / total, axis=1)  # (N, V)
    last = rows.shape[1] - 1 - np.argmax((rows > 0)[:, ::-1], axis=1)  # (N,) last positive entry
    cum[np.arange(rows.shape[1])[None, :] >= last[:, None]] = 2.0
    return (cum <= u[:, None]).sum(axis=1)


def _block_kernel(pair, context, gamma: int, rounds: int, seed=None, progress=None) -> SampleResult:
    """Block verification (``specsim.schemes.block``), a chunk of rounds per numpy call.

    Per round: draft X_1..X_γ from q; weights w_i = min(1, w_{i-1} p_i(X_i) / q_i(X_i));
    stop coins η_i = [u_i < h_i], h_i = r_i / (r_i + 1 − w_i) for i < γ, h_γ = w_γ;
    τ = the last i with η_i = 1; the closing token from p (τ = γ) or from the
    block residual normalize(max(w_τ p − q, 0)) at position τ + 1.
    """
    t = StateTables(pair, context, gamma)
    v = len(t.vocab)
    base = v + 1  # an outcome is a number in base V+1, digit j = token j + 1
    if base ** (gamma + 1) >= 1 << 62:
        raise ValueError(f"γ = {gamma} over {v} tokens: outcomes do not fit a 64-bit code; lower γ")
    powers = base ** np.arange(gamma + 1, dtype=np.int64)
    totals, k_counts = {}, np.zeros(gamma + 1, dtype=np.int64)
    for n, u_draft, u_stop, u_final in _uniform_chunks(make_rng(seed), rounds, gamma, progress):
        states = np.zeros((n, gamma + 1), dtype=np.intp)  # (N, γ+1) state after i drafts
        drafts = np.zeros((n, gamma), dtype=np.intp)  # (N, γ)
        w = np.ones((n, gamma + 1))  # (N, γ+1) w_0 .. w_γ
        for i in range(gamma):  # steps 1-2: draft X_{i+1} ~ q, then its weight
            s = states[:, i]
            x = drafts[:, i] = _pick(t.cum_q, s, u_draft[:, i])
            states[:, i + 1] = t.next[s, x]
            w[:, i + 1] = np.minimum(1.0, w[:, i] * t.P[s, x] / t.Q[s, x])
        tau = np.where(u_stop[:, gamma - 1] < w[:, gamma], gamma, 0)  # step 3: h_γ = w_γ
        for i in range(gamma - 1, 0, -1):  # the last i with η_i = 1 wins
            s = states[:, i]
            r = np.maximum(w[:, i, None] * t.P[s] - t.Q[s], 0.0).sum(axis=1)  # (N,)
            den = r + 1.0 - w[:, i]
            h = np.divide(r, den, out=np.zeros(n), where=den != 0)
            tau = np.where((tau == 0) & (u_stop[:, i - 1] < h), i, tau)
        at = states[np.arange(n), tau]  # (N,) state at position τ + 1
        wt = w[np.arange(n), tau, None]  # (N, 1)
        full = (tau == gamma)[:, None]
        rows = np.where(full, t.P[at], np.maximum(wt * t.P[at] - t.Q[at], 0.0))  # step 4 (or 5: bonus)
        closing = _draw_rows(rows, u_final)
        kept = np.arange(gamma)[None, :] < tau[:, None]  # (N, γ) drafts kept
        code = ((drafts + 1) * kept * powers[None, :gamma]).sum(axis=1) + (closing + 1) * powers[tau]
        values, counts = np.unique(code, return_counts=True)
        for key, c in zip(values.tolist(), counts.tolist()):
            totals[key] = totals.get(key, 0) + c
        k_counts += np.bincount(tau, minlength=gamma + 1)
    outcomes = {_decode(c, base, t.vocab): n for c, n in totals.items()}
    return SampleResult(tuple(context), gamma, rounds, outcomes, [int(c) for c in k_counts])


KERNELS = {"chain": _chain_kernel, "block": _block_kernel}  # a scheme's ``kernel().name`` -> its numpy kernel
