"""Burst sizes as a side channel: what a streamed round tells an observer, and what hiding it costs.

A server that streams each round's K + 1 tokens as one burst shows anyone who
sees its packets (sizes and times, even encrypted) the number K + 1 for every
round. The burst size is a function of the round's emitted text (its length),
so all it carries is information about that text: per round, the entropy of
K, in bits (``leak``). Under i.i.d. acceptance at α each judged draft is a
coin kept with probability α, so

    H(K) = h(α) · E[drafts judged] = h(α) · (1 − α^γ) / (1 − α),
    h(α) = −α log2 α − (1 − α) log2 (1 − α),

and per emitted token H(K) / E[K + 1] < h(α) (``leak_iid``). Exact laws of K
(``specsim.exact.round_distribution(...).accepted``) work the same way.

Two ways to hide it, priced here:

- **padding** (``pad``, ``paddings``): send each burst as the smallest allowed
  size that holds it (γ + 1 slots always: nothing leaks; a few sizes: a few
  bits), paying the empty slots per real token; no token waits;
- **pacing** (``stall_free``, ``delay_needed``): release one token every 1/ρ
  of a round from a buffer, the first one ``delay`` rounds late. The stream
  then shows nothing while the buffer never runs dry; ρ = 1 token per round
  never stalls and gives up the whole speedup, a faster pace needs a start-up
  delay to keep the risk of a visible stall small.

Entropies are floats (``math.log2``); probabilities, slots and tokens are
exact Fractions when the law of K is.

Example
-------
>>> from fractions import Fraction as F
>>> lk = leak_iid(F(1, 2), 1)            # one fair coin per round, 1 + 1/2 tokens per round
>>> lk.bits_per_round, lk.tokens_per_round, round(lk.bits_per_token, 4)
(1.0, Fraction(3, 2), 0.6667)
>>> pad(iid_law(F(1, 2), 1), (2,)).bits_per_round, pad(iid_law(F(1, 2), 1), (2,)).overhead
(0.0, Fraction(1, 3))
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from itertools import combinations

from .. import exact
from ..schemes import as_scheme
from ..serving.latency import tokens_distribution

MAX_GAMMA_PADDINGS = 12      # ``paddings`` lists 2^γ size sets
MAX_PACED_TOKENS = 5000      # ``stall_free`` walks O(n² γ) states


# -- entropy -----------------------------------------------------------------
def entropy_bits(probabilities) -> float:
    """−Σ p log2 p over a law (a dict's values or a sequence), zeros skipped; it must sum to 1."""
    values = list(probabilities.values()) if isinstance(probabilities, dict) else list(probabilities)
    if not values or any(v < 0 for v in values):
        raise ValueError("a law needs at least one probability, none negative")
    total = sum(values)
    if (total != 1) if all(isinstance(v, (int, Fraction)) for v in values) else abs(total - 1) > 1e-9:
        raise ValueError(f"the probabilities sum to {float(total):.6g}, not 1")
    bits = -sum(float(v) * math.log2(v) for v in values if v > 0)
    return bits + 0.0 if bits else 0.0  # -0.0 -> 0.0


def binary_entropy(a) -> float:
    """h(a) = −a log2 a − (1 − a) log2 (1 − a): the bits in one coin kept with probability a."""
    if not 0 <= a <= 1:
        raise ValueError(f"a probability must be in [0, 1], got {a}")
    return entropy_bits([a, 1 - a])


# -- the law of a burst ------------------------------------------------------
def bursts(accepted) -> dict:
    """{K + 1: P(K)}: the burst sizes of a round whose K has the law ``accepted`` (P(K = k), k = 0..γ)."""
    law = list(accepted)
    if len(law) < 2:
        raise ValueError("the law of K needs γ + 1 >= 2 entries (P(K = 0), ..., P(K = γ))")
    entropy_bits(law)  # checks it is a law
    return {k + 1: pk for k, pk in enumerate(law)}


def iid_law(alpha, gamma: int) -> list:
    """P(K = k), k = 0..γ, under i.i.d. acceptance (lesson 8): α^k (1 − α) for k < γ, α^γ for k = γ."""
    return list(tokens_distribution(alpha, gamma).values())


@dataclass(frozen=True)
class Leak:
    """What one round's burst size tells an observer."""

    gamma: int
    bursts: dict            # {n: P(a burst of n tokens)}, n = 1..γ + 1
    tokens_per_round: object  # E[K + 1]
    bits_per_round: float   # H(K + 1) = H(K)
    bits_per_token: float   # H(K) / E[K + 1]: the long-run rate when rounds are i.i.d.
    most_bits: float        # log2(γ + 1): the most a size of 1..γ + 1 can carry


def leak(accepted) -> Leak:
    """The leak of one round whose K has the law ``accepted`` (exact from the engine, or i.i.d.)."""
    b = bursts(accepted)
    gamma = len(b) - 1
    tokens = sum(n * pn for n, pn in b.items())
    bits = entropy_bits(b)
    return Leak(gamma, b, tokens, bits, bits / float(tokens), math.log2(gamma + 1))


def leak_iid(alpha, gamma: int) -> Leak:
    """``leak`` of the i.i.d. law at α and γ."""
    return leak(iid_law(alpha, gamma))


def closing_tokens(pair, context, scheme) -> dict:
    """{n: {token: P(the burst's last token is token | a burst of n tokens)}} for one round from ``context``.

    A burst shorter than γ + 1 ends with a token drawn from the residual after a rejection, one of γ + 1
    tokens with the bonus token from p: the size says which, and so narrows what the last token can be.
    """
    r = exact.round_distribution(pair, tuple(context), as_scheme(scheme))
    joint = {}
    for emitted, pr in r.outcomes.items():
        row = joint.setdefault(len(emitted), {})
        row[emitted[-1]] = row.get(emitted[-1], 0) + pr
    out = {}
    for n in sorted(joint):
        total = sum(joint[n].values())
        out[n] = {t: joint[n].get(t, 0 * total) / total for t in pair.vocab}
    return out


def text_information(pair, context, scheme, rounds: int) -> dict:
    """What ``rounds`` bursts tell about the text they carry, exactly enumerated (floats in bits).

    T is the concatenated text of the rounds, B the tuple of burst sizes. B is a function of the rounds'
    chunks (T with its cuts), not of T alone: ``bursts`` = H(B), ``about_text`` = I(T; B) = H(B) − H(B | T),
    ``cuts_given_text`` = H(B | T), the part of the sizes that is about the coins, not the text.
    """
    if isinstance(rounds, bool) or not isinstance(rounds, int) or not 1 <= rounds <= 3:
        raise ValueError(f"rounds must be 1, 2 or 3 (the chunks are enumerated), got {rounds!r}")
    scheme = as_scheme(scheme)
    paths = {(): Fraction(1)}  # tuple of chunks -> probability
    for _ in range(rounds):
        nxt = {}
        for chunks, pr in paths.items():
            ctx = tuple(context) + tuple(t for c in chunks for t in c)
            for emitted, pe in exact.round_distribution(pair, ctx, scheme).outcomes.items():
                nxt[chunks + (emitted,)] = pr * pe
        paths = nxt
    text, sizes = {}, {}
    for chunks, pr in paths.items():
        t = tuple(tok for c in chunks for tok in c)
        b = tuple(len(c) for c in chunks)
        text[t] = text.get(t, 0) + pr
        sizes[b] = sizes.get(b, 0) + pr
    h_chunks, h_text, h_sizes = entropy_bits(paths), entropy_bits(text), entropy_bits(sizes)
    return {"bursts": h_sizes, "about_text": h_sizes + h_text - h_chunks, "cuts_given_text": h_chunks - h_text}


# -- padding -----------------------------------------------------------------
@dataclass(frozen=True)
class Padding:
    """Bursts sent as the smallest size of ``sizes`` that holds them."""

    sizes: tuple
    sent: dict               # {size sent: probability}
    slots_per_round: object  # E[size sent]
    tokens_per_round: object  # E[K + 1]
    overhead: object         # empty slots per real token: slots / tokens − 1
    bits_per_round: float    # H(size sent)


def pad(accepted, sizes) -> Padding:
    """Pad each burst of the law ``accepted`` to the smallest of ``sizes`` that holds it (sizes must
    include γ + 1, the largest burst)."""
    b = bursts(accepted)
    top = max(b)
    try:
        chosen = tuple(sorted({int(s) for s in sizes if int(s) == s}))
    except (TypeError, ValueError):
        raise ValueError(f"sizes must be whole numbers from 1 to γ + 1 = {top}") from None
    if len(chosen) != len(list(sizes)) or not chosen or chosen[0] < 1 or chosen[-1] != top:
        raise ValueError(f"sizes must be distinct whole numbers from 1 to γ + 1 = {top}, "
                         f"including {top} (the largest burst), got {list(sizes)}")
    sent = {}
    for n, pn in b.items():
        s = next(s for s in chosen if s >= n)
        sent[s] = sent.get(s, 0) + pn
    slots = sum(s * ps for s, ps in sent.items())
    tokens = sum(n * pn for n, pn in b.items())
    return Padding(chosen, sent, slots, tokens, slots / tokens - 1, entropy_bits(sent))


def paddings(accepted) -> list:
    """``pad`` with every set of sizes that includes γ + 1 (2^γ sets), fewest sizes first."""
    top = len(list(accepted))  # γ + 1
    if top - 1 > MAX_GAMMA_PADDINGS:
        raise ValueError(f"γ = {top - 1} gives 2^{top - 1} size sets; at most γ = {MAX_GAMMA_PADDINGS} here")
    smaller = range(1, top)
    return [pad(accepted, chosen + (top,)) for k in range(top) for chosen in combinations(smaller, k)]


def frontier(pads) -> list:
    """The paddings no other beats: none leaks fewer bits with no more empty slots (by overhead)."""
    pads = sorted(pads, key=lambda x: (x.overhead, x.bits_per_round))
    out, best = [], math.inf
    for x in pads:
        if x.bits_per_round < best - 1e-12:
            out.append(x)
            best = x.bits_per_round
    return out


# -- pacing ------------------------------------------------------------------
def _pace(pace):
    pace = Fraction(pace) if isinstance(pace, (int, str)) else pace
    if isinstance(pace, bool) or not pace > 0:
        raise ValueError(f"the pace must be > 0 tokens per round, got {pace}")
    return pace


def stall_free(accepted, pace, delay, n_tokens: int):
    """P(a paced stream of ``n_tokens`` never waits for a round), rounds i.i.d. with the law ``accepted``.

    Round r ends at time r (in rounds). Unpaced, the first token shows at time 1; paced, token j (from 0)
    shows at 1 + ``delay`` + j / ``pace``. The first token of round r + 1 is token S_r (the tokens out after
    r rounds) and is ready at r + 1, so the stream never stalls while r <= delay + S_r / pace for every round
    that is still needed (S_r < n_tokens). Exact for Fraction inputs.
    """
    b = bursts(accepted)
    pace = _pace(pace)
    delay = Fraction(delay) if isinstance(delay, int) else delay
    if isinstance(delay, bool) or not delay >= 0:
        raise ValueError(f"the delay must be >= 0 rounds, got {delay}")
    if isinstance(n_tokens, bool) or not isinstance(n_tokens, int) or not 1 <= n_tokens <= MAX_PACED_TOKENS:
        raise ValueError(f"n_tokens must be a whole number from 1 to {MAX_PACED_TOKENS}, got {n_tokens!r}")
    zero = sum(b.values()) * 0
    alive, done, r = {0: zero + 1}, zero, 0
    while alive:
        alive = {s: ps for s, ps in alive.items() if r <= delay + s / pace}  # the rest stalled here
        nxt = {}
        for s, ps in alive.items():
            for n, pn in b.items():
                if s + n >= n_tokens:
                    done += ps * pn
                else:
                    nxt[s + n] = nxt.get(s + n, zero) + ps * pn
        alive, r = nxt, r + 1
    return done


def delay_needed(accepted, pace, n_tokens: int, risk) -> int:
    """The fewest whole rounds of start-up delay that keep P(a stall in ``n_tokens``) <= ``risk``."""
    if not 0 < risk < 1:
        raise ValueError(f"the risk must be in (0, 1), got {risk}")
    lo, hi = 0, n_tokens  # with n_tokens rounds of delay even one token per round arrives in time
    while lo < hi:
        mid = (lo + hi) // 2
        if 1 - stall_free(accepted, pace, mid, n_tokens) <= risk:
            hi = mid
        else:
            lo = mid + 1
    return lo
