"""Mixture-of-experts routing: how many distinct experts a pass over n tokens reads.

An MoE layer holds E experts (small MLPs); a router sends each token to k of
them. A pass over n tokens (the γ + 1 positions of a verify pass, times the
batch) must read every expert that at least one token chose: the **union**.

**Uniform routing** (``"uniform"``): each expert is in a token's k with
probability k/E, and tokens choose independently of each other. Expert j is
then missed by all n tokens with probability (1 - k/E)^n, and linearity of
expectation sums the E indicator variables::

    E[distinct experts] = E (1 - (1 - k/E)^n)

Only the marginal k/E and the independence between tokens are used: how a
token picks its k (any k of E alike, or DeepSeek-V3's limit of 4 groups of
experts out of 8) does not change the expectation, as long as every expert
is equally likely. Real routers are not this: neighbouring tokens share
experts more often than chance, and some experts are busier than others;
both lower the union (the second provably: ``expected_experts_with``).

**Same routing** (``"same"``): every token of the pass picks the same k
experts, the fewest any routing can read: what a dense roofline assumes
when it says a verify pass reads what one token reads.

The exact value, in fractions (DeepSeek-V3: E = 256, k = 8; 4 positions):

>>> u = expected_experts(256, 8, 4)
>>> u, round(float(u), 2), round(float(u / 8), 2)
(Fraction(125055, 4096), 30.53, 3.82)
>>> union_bounds(256, 8, 4)
(8, 32)
>>> abs(experts_read(256, 8, 4) - u) < 1e-12, experts_read(256, 8, 4, "same")
(True, 8)
"""
from __future__ import annotations

import math
from fractions import Fraction

from ..limits import LIMITS

MAX_EXPERTS = 1_000_000
ROUTINGS = {  # name -> what it assumes (help text; ``experts_read`` computes each)
    "uniform": "each token picks its k of E experts uniformly, independently of the other tokens",
    "same": "every token of a pass picks the same k experts (what a dense roofline assumes)",
}


def check_routing(experts, per_token) -> None:
    """A one-line ValueError unless 1 <= per_token <= experts <= MAX_EXPERTS, both integers."""
    for value, name in ((experts, "experts"), (per_token, "experts per token")):
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_EXPERTS:
            raise ValueError(f"{name} must be an integer from 1 to {MAX_EXPERTS:,}, got {value!r}")
    if per_token > experts:
        raise ValueError(f"experts per token ({per_token}) must be at most the experts ({experts})")


def _tokens(tokens) -> int:
    if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 1:
        raise ValueError(f"tokens must be an integer >= 1, got {tokens!r}")
    return tokens


def expected_experts(experts: int, per_token: int, tokens: int) -> Fraction:
    """E (1 - (1 - k/E)^n), exactly: the expected distinct experts ``tokens`` tokens read under uniform routing.

    The result has about n x (digits of E) digits: refused beyond ``LIMITS.result_digits``
    (``experts_read`` gives the float for any n).

    >>> expected_experts(8, 2, 1), expected_experts(8, 2, 2), expected_experts(8, 8, 3)
    (Fraction(2, 1), Fraction(7, 2), Fraction(8, 1))
    """
    check_routing(experts, per_token)
    tokens = _tokens(tokens)
    digits = tokens * len(str(experts))
    if digits > LIMITS.result_digits:
        raise ValueError(f"{tokens:,} tokens over {experts:,} experts give a fraction of ~{digits:,} digits; the "
                         f"limit is {LIMITS.result_digits:,}: use experts_read (a float)")
    return experts * (1 - (1 - Fraction(per_token, experts)) ** tokens)


def experts_read(experts: int, per_token: int, tokens: int, routing: str = "uniform") -> float:
    """The expected distinct experts a pass over ``tokens`` tokens reads, as a float, for any n.

    "uniform": E (1 - (1 - k/E)^n), computed as -E expm1(n log1p(-k/E)) so that it
    stays accurate when few of the experts are read; "same": k.
    """
    check_routing(experts, per_token)
    tokens = _tokens(tokens)
    if routing not in ROUTINGS:
        raise ValueError(f"unknown routing {str(routing)[:20]!r}: known {', '.join(ROUTINGS)}")
    if routing == "same" or per_token == experts:
        return per_token
    return -experts * math.expm1(tokens * math.log1p(-per_token / experts))


def union_bounds(experts: int, per_token: int, tokens: int) -> tuple:
    """(fewest, most) distinct experts n tokens can read, whatever the routing: k (all agree) and min(E, n k)."""
    check_routing(experts, per_token)
    return per_token, min(experts, _tokens(tokens) * per_token)


def expected_experts_with(shares, tokens: int) -> Fraction:
    """Σ_j (1 - (1 - π_j)^n): the expected union when expert j is in a token's set with probability π_j
    (``shares``, each in [0, 1], summing to k), tokens independent. Each term is concave in π_j, so for
    a fixed k the sum is largest when every π_j is k/E: uneven expert loads lower the union.

    >>> from fractions import Fraction as F
    >>> expected_experts_with([F(1, 2)] * 4, 2), expected_experts_with([F(9, 10), F(9, 10), F(1, 10), F(1, 10)], 2)
    (Fraction(3, 1), Fraction(59, 25))
    """
    tokens = _tokens(tokens)
    shares = [Fraction(s) for s in shares]
    if not shares or len(shares) > MAX_EXPERTS or any(not 0 <= s <= 1 for s in shares):
        raise ValueError(f"shares must be 1 to {MAX_EXPERTS:,} probabilities in [0, 1]")
    digits = tokens * max(len(str(s.denominator)) for s in shares)
    if digits > LIMITS.result_digits:
        raise ValueError(f"the union has ~{digits:,} digits; the limit is {LIMITS.result_digits:,}")
    return sum((1 - (1 - s) ** tokens for s in shares), Fraction(0))
