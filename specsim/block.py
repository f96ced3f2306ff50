"""Block verification (Sun et al., ICLR 2025): keep the longest prefix the whole block allows.

Token-wise verification looks at one draft at a time and stops at the first
rejection. Block verification looks at the drafted chain X1..Xγ as a whole.
With p_i, q_i the target and drafter rows at draft position i (after the
prefix and X_<i), written 0-based below as ``p_rows[i-1]``, ``q_rows[i-1]``:

    w_0 = 1,  w_i = min(1, w_{i-1} · p_i(X_i) / q_i(X_i))              (weights)
    r_i = Σ_x max(w_i · p_{i+1}(x) − q_{i+1}(x), 0)                      (i < γ)
    h_i = r_i / (r_i + 1 − w_i)  (i < γ),   h_γ = w_γ                   (stop probabilities)

One independent coin η_i ~ Bernoulli(h_i) per position; τ is the largest i
with η_i = 1 (0 if none). The round emits X1..Xτ and one more token Y:
from p_{γ+1} (the bonus) when τ = γ, else from the *block residual*
normalize(max(w_τ · p_{τ+1} − q_{τ+1}, 0)).

The 0/0 case: h_i's denominator is 0 only when w_i = 1 and r_i = 0, i.e.
p_{i+1} = q_{i+1}; then w_{i+1} = 1 for every draft, and so on up to
h_γ = w_γ = 1, so τ = γ > i whatever h_i is. We set h_i = 0 there
(``ZERO_OVER_ZERO``); the tests check that h_i = 1 gives the same round,
exactly. The same chain shows the block residual is never empty where it is
used: τ = i ≥ 1 needs h_i > 0, hence r_i > 0; τ = 0 with p_1 = q_1 has
probability 0. ``block_residual`` raises if an empty row is ever reached.

Example (the paper's two-token example, γ = 2)
----------------------------------------------
>>> from specsim import exact
>>> m = constant_model(["1/3", "2/3"], ["2/3", "1/3"])
>>> token = exact.round_distribution(m, ("a",), 2)
>>> block = exact.round_distribution(m, ("a",), Block(2))
>>> mean_accepted(token.accepted), mean_accepted(block.accepted)
(Fraction(10, 9), Fraction(11, 9))
>>> token.expected_tokens, block.expected_tokens
(Fraction(19, 9), Fraction(20, 9))
"""
from __future__ import annotations

from collections import defaultdict
from fractions import Fraction

from .exact import RoundDistribution
from .pair import state_of
from .rule import CORRECT

ZERO_OVER_ZERO = 0  # h_i when r_i = 0 and w_i = 1 (never decides τ; see the module docstring)


# -- the rule, once ------------------------------------------------------------

def next_weight(w, p, q, x):
    """w_i = min(1, w_{i-1} · p_i(x) / q_i(x)) for the draft x at position i."""
    return min(1, w * p[x] / q[x])


def weights(p_rows, q_rows, drafts) -> list:
    """[w_0, ..., w_γ] for the drafted indices ``drafts`` (w_0 = 1)."""
    w = [1]
    for p, q, x in zip(p_rows, q_rows, drafts):
        w.append(next_weight(w[-1], p, q, x))
    return w


def residual_mass(w, p, q):
    """r = Σ_x max(w · p(x) − q(x), 0)."""
    return sum((max(w * px - qx, 0) for px, qx in zip(p, q)), 0)


def stop_probability(w, p_next, q_next, zero_over_zero=ZERO_OVER_ZERO):
    """h_i = r_i / (r_i + 1 − w_i) for i < γ, from w_i and the rows at position i + 1."""
    r = residual_mass(w, p_next, q_next)
    den = r + 1 - w
    return r / den if den else zero_over_zero


def stop_probabilities(w, p_rows, q_rows, zero_over_zero=ZERO_OVER_ZERO) -> list:
    """[h_1, ..., h_γ] for a whole chain (h_γ = w_γ).

    ``p_rows``/``q_rows`` hold the rows at positions 1..γ(+1); only rows 2..γ
    are read.
    """
    gamma = len(w) - 1
    return [stop_probability(w[i], p_rows[i], q_rows[i], zero_over_zero)
            for i in range(1, gamma)] + [w[gamma]]


def stop_distribution(h) -> list:
    """[P(τ = 0), ..., P(τ = γ)]: τ is the largest i with η_i = 1, η_i ~ Bernoulli(h_i)."""
    out, none_later = [0] * (len(h) + 1), 1
    for i in range(len(h), 0, -1):
        out[i] = h[i - 1] * none_later
        none_later = none_later * (1 - h[i - 1])
    out[0] = none_later
    return out


def block_residual(w, p, q) -> list:
    """normalize(max(w · p − q, 0)): the row of the closing token after stopping at τ < γ."""
    excess = [max(w * px - qx, 0) for px, qx in zip(p, q)]
    total = sum(excess, 0)
    if not total > 0:
        raise ValueError("block residual is empty (w · p <= q everywhere)")
    return [e / total for e in excess]


def mean_accepted(accepted):
    """E[K] from [P(K = 0), ..., P(K = γ)]."""
    return sum((k * a for k, a in enumerate(accepted)), 0)


# -- the scheme for the exact engine ------------------------------------------

class Block:
    """Block verification of a chain of ``gamma`` drafts, as an ``exact.Scheme``."""

    name = "block"

    def __init__(self, gamma: int, zero_over_zero=ZERO_OVER_ZERO):
        if isinstance(gamma, bool) or not isinstance(gamma, int) or gamma < 1:
            raise ValueError(f"gamma must be an integer >= 1, got {gamma!r}")
        self.gamma = gamma
        self.drafted_tokens = gamma
        self.depth = gamma
        self.zero_over_zero = zero_over_zero
        self._memo = {}  # (models, state, limit) -> RoundDistribution

    def __repr__(self):
        return f"Block({self.gamma})"

    def round_distribution(self, models, context, rule=CORRECT, limit=None) -> RoundDistribution:
        """Every chain of drafts (probability Π q_i(X_i)) times every τ (from the h's).

        With ``limit`` only the first ``limit`` emitted tokens are kept, as in
        ``exact.round_distribution``. Rounds are memoized per model state.
        """
        if rule is not CORRECT:
            raise ValueError(f"block verification has its own rule; got rule {rule.name!r} "
                             "(only the correct rule is supported)")
        context = tuple(context)
        key = (id(models), state_of(models, context), limit)
        hit = self._memo.get(key)
        if hit is not None and hit[0] is models:
            r = hit[1]
            return RoundDistribution(context, self.gamma, r.outcomes, r.accepted, r.expected_tokens)
        r = self._enumerate(models, context, limit)
        self._memo[key] = (models, r)
        return r

    def _enumerate(self, models, context, limit):
        """Walk the tree of draft prefixes once.

        At a prefix of length i, with G_i = E[Π_{j>i} (1 − h_j) | X_≤i] (no
        later coin comes up heads), P(τ = i, X_≤i) = P(X_≤i) · h_i · G_i
        (h_0 = 1). Each node returns (1 − h_i) · G_i to its parent, so a chain
        costs O(1) beyond its rows instead of recomputing every h.
        """
        vocab, gamma = models.vocab, self.gamma
        outcomes = defaultdict(int)
        accepted = [0] * (gamma + 1)

        def emit(tokens, prob):
            if limit is not None:
                tokens = tokens[:limit]
            outcomes[tokens] += prob

        def node(words, w, prob):  # returns (1 - h_i) * G_i for this prefix
            i = len(words)
            if i == gamma:  # h_γ = w_γ; step 5: bonus from p after the whole chain
                stop = prob * w
                if stop:
                    accepted[gamma] += stop
                    if limit is not None and limit <= gamma:
                        emit(words, stop)
                    else:
                        for y, py in enumerate(models.p(context + words)):
                            if py:
                                emit(words + (vocab[y],), stop * py)
                return 1 - w
            ctx = context + words
            p, q = models.p(ctx), models.q(ctx)
            g = 0
            for x, qx in enumerate(q):  # step 1: draft X_{i+1} ~ q_{i+1}
                if qx:
                    g += qx * node(words + (vocab[x],), next_weight(w, p, q, x), prob * qx)
            h = 1 if i == 0 else stop_probability(w, p, q, self.zero_over_zero)
            stop = prob * h * g  # step 3: τ = i, keep X_1..X_i
            if stop:
                accepted[i] += stop
                for y, ry in enumerate(block_residual(w, p, q)):  # step 4: the block residual
                    if ry:
                        emit(words + (vocab[y],), stop * ry)
            return (1 - h) * g

        node((), 1, 1)
        expected = sum((len(t) * pr for t, pr in outcomes.items()), 0)
        return RoundDistribution(context, gamma, dict(outcomes), accepted, expected)


def constant_model(p, q, vocab=("a", "b"), name="constant"):
    """An order-1 toy model with the same rows ``p`` and ``q`` after every token."""
    from .toy import model_from_dict
    vocab = list(vocab)
    return model_from_dict({"name": name, "vocab": vocab, "order": 1,
                            "target": {v: list(p) for v in vocab},
                            "draft": {v: list(q) for v in vocab}})


# -- sampled rounds ------------------------------------------------------------

def play_block_round(rows, gamma: int, u_draft, u_stop, u_final):
    """One block-verified round on pre-drawn uniforms, through the functions above.

    ``rows(prefix) -> (p, q)`` gives the rows after the drafted indices
    ``prefix`` (a tuple). Layout, as for a token-wise round (2γ + 1 uniforms):
    ``u_draft[i]`` draws X_{i+1}, ``u_stop[i]`` is the coin η_{i+1} = [u < h_{i+1}],
    ``u_final`` draws the closing token. Returns (drafts, tau, closing index).
    """
    from .sampling import draw
    drafts, p_rows, q_rows = [], [], []
    for i in range(gamma):  # step 1: draft the chain
        p, q = rows(tuple(drafts))
        p_rows.append(p)
        q_rows.append(q)
        drafts.append(draw(q, u_draft[i]))
    p_rows.append(rows(tuple(drafts))[0])  # step 2: one target pass gives every p_i
    w = weights(p_rows, q_rows, drafts)
    h = stop_probabilities(w, p_rows, q_rows)
    tau = max((i + 1 for i in range(gamma) if u_stop[i] < h[i]), default=0)  # step 3
    if tau == gamma:  # step 5: bonus
        return drafts, tau, draw(p_rows[gamma], u_final)
    return drafts, tau, draw(block_residual(w[tau], p_rows[tau], q_rows[tau]), u_final)  # step 4


def sample_block_rounds(models, context, gamma: int, rounds: int, seed=None):
    """``rounds`` seeded block-verified rounds from ``context`` (a per-round Python loop).

    Uniforms come from ``numpy.random.default_rng(seed)`` in the token-wise
    sampler's chunks (γ draft uniforms, γ coin uniforms, one final uniform
    per round), on float64 rows. Returns a ``montecarlo.SampleResult``.
    """
    from .montecarlo import SampleResult, _check, _uniform_chunks
    from .sampling import make_rng
    _check(gamma, rounds)
    context, vocab, memo = tuple(context), models.vocab, {}

    def rows(prefix):
        ctx = context + tuple(vocab[x] for x in prefix)
        key = state_of(models, ctx)
        if key not in memo:
            memo[key] = ([float(x) for x in models.p(ctx)], [float(x) for x in models.q(ctx)])
        return memo[key]

    outcomes, k_counts = {}, [0] * (gamma + 1)
    for _, u_draft, u_stop, u_final in _uniform_chunks(make_rng(seed), rounds, gamma):
        for ud, us, uf in zip(u_draft.tolist(), u_stop.tolist(), u_final.tolist()):
            drafts, tau, y = play_block_round(rows, gamma, ud, us, uf)
            key = tuple(vocab[x] for x in drafts[:tau]) + (vocab[y],)
            outcomes[key] = outcomes.get(key, 0) + 1
            k_counts[tau] += 1
    return SampleResult(context, gamma, rounds, outcomes, k_counts)


def trace_block_round(models, context, gamma: int, seed=None) -> dict:
    """A seeded trace of one block-verified round, every step recorded; same seed, same trace.

    Uniforms in the layout of ``play_block_round``. Returns ``{"context",
    "gamma", "drafts", "accepted" (τ), "emitted", "events"}``; the events are
    described in ``specsim/TRACE_FORMAT.md``. Rows are the model's own, so
    probabilities are exact fraction strings for a toy model.

    >>> from specsim.toy import load_model
    >>> t = trace_block_round(load_model("seed"), ("a",), 3, seed=0)
    >>> [e["kind"] for e in t["events"]]
    ['draft', 'draft', 'draft', 'verify', 'weights', 'stop', 'stop', 'stop', 'correct', 'emit']
    >>> t["drafts"], t["accepted"], t["emitted"]
    (['b', 'a', 'a'], 1, ['b', 'b'])
    """
    from .sampling import _num, _row, draw, make_rng
    rng = make_rng(seed)
    context, vocab = tuple(context), models.vocab
    u_draft, u_stop, u_final = rng.random(gamma), rng.random(gamma), rng.random()
    events, drafts, p_rows, q_rows = [], [], [], []
    for i in range(gamma):  # step 1: draft the chain from q
        ctx = context + tuple(vocab[x] for x in drafts)
        p_rows.append(models.p(ctx))
        q_rows.append(models.q(ctx))
        drafts.append(draw(q_rows[i], u_draft[i]))
        events.append({"kind": "draft", "position": i, "context": list(ctx), "token": vocab[drafts[i]],
                       "q": _row(q_rows[i])})
    p_rows.append(models.p(context + tuple(vocab[x] for x in drafts)))  # step 2: one target pass
    events.append({"kind": "verify", "p": [_row(r) for r in p_rows]})
    w = weights(p_rows, q_rows, drafts)
    events.append({"kind": "weights", "w": _row(w)})
    h = stop_probabilities(w, p_rows, q_rows)
    for i in range(gamma):  # step 3: one coin per position; τ is the last that comes up
        events.append({"kind": "stop", "position": i + 1, "h": _num(h[i]), "u": float(u_stop[i]),
                       "stop": bool(u_stop[i] < h[i])})
    tau = max((i + 1 for i in range(gamma) if u_stop[i] < h[i]), default=0)
    if tau == gamma:  # step 5: bonus from p after the whole chain
        row, kind = p_rows[gamma], "bonus"
    else:  # step 4: the block residual at position τ + 1
        row, kind = block_residual(w[tau], p_rows[tau], q_rows[tau]), "correct"
    y = vocab[draw(row, u_final)]
    kept = [vocab[x] for x in drafts[:tau]]
    events.append({"kind": kind, "position": tau, "row": _row(row), "token": y,
                   "discarded": [vocab[x] for x in drafts[tau:]]})
    events.append({"kind": "emit", "tokens": kept + [y], "accepted": tau, "target_passes": 1})
    return {"context": list(context), "gamma": gamma, "drafts": [vocab[x] for x in drafts],
            "accepted": tau, "emitted": kept + [y], "events": events}
