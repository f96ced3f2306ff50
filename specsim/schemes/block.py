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
>>> from specsim.schemes import Chain
>>> m = constant_model(["1/3", "2/3"], ["2/3", "1/3"])
>>> token = Chain(2).enumerate(m, ("a",))
>>> block = Block(2).enumerate(m, ("a",))
>>> mean_accepted(token.accepted), mean_accepted(block.accepted)
(Fraction(10, 9), Fraction(11, 9))
>>> token.expected_tokens, block.expected_tokens
(Fraction(19, 9), Fraction(20, 9))
"""
from __future__ import annotations

from collections import defaultdict
from fractions import Fraction

from ..pair import state_of
from ..rule import CORRECT
from .base import RoundDistribution, Verdict, draw, register
from .chain import Chain

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
    """r = Σ_x max(w · p(x) − q(x), 0) (the positive terms summed in order: the same value, 3x faster)."""
    return sum((d for d in (w * px - qx for px, qx in zip(p, q)) if d > 0), 0)


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


# -- the scheme ----------------------------------------------------------------

class Block(Chain):
    """Block verification of a chain of ``gamma`` drafts.

    The layout and the drafting are a chain's; ``enumerate`` and ``verify``
    apply the block rule. Block verification has its own accept/stop rule,
    so only the correct rule applies: any other ``RoundRule`` is refused.
    """

    kind = "block"
    summary = "the drafted chain as a whole"
    _token_wise = False
    _stop_coins = True  # one stop coin per position; K = the last position whose coin says stop
    _kernel = ("block", 3)  # its vectorized kernel's draw against a chain's: measured 0.4-1.2 vs 0.1-0.6 us at V 3-32
    step_words = "block: one stop coin per position, u < h; K = the last position whose coin says stop:"

    def __init__(self, gamma: int, zero_over_zero=ZERO_OVER_ZERO):
        super().__init__(gamma)
        self.zero_over_zero = zero_over_zero
        self._memo = {}  # (pair, state, limit) -> RoundDistribution

    def capped(self, gamma: int) -> "Block":
        return Block(gamma, self.zero_over_zero)

    def check_rule(self, rule) -> None:
        """Block verification has its own accept/stop rule: only the correct rule runs."""
        self._only_correct(rule)

    @staticmethod
    def _only_correct(rule):
        if rule is not CORRECT and rule is not None:
            raise ValueError(f"block verification has its own rule; got rule {rule.name!r} "
                             "(only the correct rule is supported)")

    def enumerate(self, pair, context, rule=CORRECT, limit=None) -> RoundDistribution:
        """Every chain of drafts (probability Π q_i(X_i)) times every τ (from the h's).

        With ``limit`` only the first ``limit`` emitted tokens are kept, as for
        a chain. Rounds are memoized per model state.
        """
        self._only_correct(rule)
        context = tuple(context)
        key = (id(pair), state_of(pair, context), limit)
        hit = self._memo.get(key)
        if hit is not None and hit[0] is pair:
            r = hit[1]
            return RoundDistribution(context, self.gamma, r.outcomes, r.accepted, r.expected_tokens)
        r = self._enumerate(pair, context, limit)
        self._memo[key] = (pair, r)
        return r

    def _enumerate(self, pair, context, limit):
        """Walk the tree of draft prefixes once.

        At a prefix of length i, with G_i = E[Π_{j>i} (1 − h_j) | X_≤i] (no
        later coin comes up heads), P(τ = i, X_≤i) = P(X_≤i) · h_i · G_i
        (h_0 = 1). Each node returns (1 − h_i) · G_i to its parent, so a chain
        costs O(1) beyond its rows instead of recomputing every h.
        """
        vocab, gamma = pair.vocab, self.gamma
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
                        for y, py in enumerate(pair.p(context + words)):
                            if py:
                                emit(words + (vocab[y],), stop * py)
                return 1 - w
            ctx = context + words
            p, q = pair.p(ctx), pair.q(ctx)
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

    def verify(self, drafts, p_rows, q_rows, u_test, u_final, rule=CORRECT, parents=None) -> Verdict:
        """Steps 3-5 of a block round: weights, one stop coin per position, τ, the closing token.

        ``u_test[i]`` is the coin η_{i+1} = [u < h_{i+1}]. Each test records
        ``{"node", "token", "h", "u", "stop"}``; ``extra`` holds ``w`` and ``h``.
        """
        self._only_correct(rule)
        drafts = list(getattr(drafts, "tokens", drafts))
        gamma = len(drafts)
        w = weights(p_rows, q_rows, drafts)
        h = stop_probabilities(w, p_rows, q_rows, self.zero_over_zero)
        tests = [{"node": i, "token": drafts[i], "h": h[i], "u": u_test[i], "stop": u_test[i] < h[i]}
                 for i in range(gamma)]
        tau = max((i + 1 for i in range(gamma) if u_test[i] < h[i]), default=0)  # step 3
        if tau == gamma:  # step 5: bonus
            row, kind = p_rows[gamma], "bonus"
        else:  # step 4: the block residual at position τ + 1
            row, kind = block_residual(w[tau], p_rows[tau], q_rows[tau]), "correct"
        return Verdict(list(range(tau)), draw(row, u_final), kind, row, tests, {"w": w, "h": h})

    def round_work(self, s) -> int:
        """Chain steps one enumerated round takes: b^γ chains of γ steps (``s``: a ``limits.Shape``)."""
        return s.branch ** self.gamma * self.gamma

    def prefix_work(self, s, depth: int) -> int:
        """A block still walks all its chains when fewer tokens are kept."""
        return self.round_work(s)

    def label(self) -> str:
        return f"γ = {self.gamma}, block verification"

    def json_keys(self) -> dict:
        return {"verify": "block"}

    def closed_words(self, k: int) -> str:
        return f"the block stops after {k} draft{'s' * (k != 1)}"


register(Block)


def constant_model(p, q, vocab=("a", "b"), name="constant"):
    """An order-1 toy model with the same rows ``p`` and ``q`` after every token."""
    from ..toy import model_from_dict
    vocab = list(vocab)
    return model_from_dict({"name": name, "vocab": vocab, "order": 1,
                            "target": {v: list(p) for v in vocab},
                            "draft": {v: list(q) for v in vocab}})
