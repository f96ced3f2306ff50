"""Latency of a served model pair: time to first token, inter-token latency and its tail, throughput.

Built on the roofline of ``specsim.serving.roofline``. The model, and what
it assumes:

- **Continuous batching, in lockstep.** ``batch`` sequences decode together,
  every one at the same ``context``; each iteration is one plain target
  step, or with speculation one round of a chain: γ drafter steps and one
  target pass over γ + 1 positions, every sequence drafting γ tokens.
  Nothing but the roofline sets a pass's time, so every iteration of a
  batch takes the same time (no noise, no stragglers).
- **Inter-token latency (ITL).** Plain decoding emits one token per
  sequence per step: every gap is one step. A round emits K + 1 tokens per
  sequence at once, at the end of its verify pass, with K ~ the truncated
  geometric of the i.i.d. formula (P(K = k) = α^k (1 - α) for k < γ,
  α^γ for k = γ). So a sequence's tokens arrive in bursts: the first
  token of a round comes one whole round after the previous burst, the
  other K come with it (a gap of 0). Over many rounds the share of gaps
  that are a whole round is rounds / tokens = 1 / E[K + 1]
  (``gap_distribution``), and the mean gap is round time / E[K + 1].
- **Time to first token (TTFT).** A request arrives at a uniformly random
  moment while the batch decodes; the server finishes the iteration under
  way (half an iteration on average) and then runs the prompt's prefill
  alone: one target pass over ``prompt`` positions with nothing cached,
  whose logits give the first token. With speculation the drafter prefills
  the same prompt in its own pass before that token is returned. No other
  request is waiting (arrivals are rare next to an iteration), and the
  stall the prefill causes to the sequences already decoding is not counted
  in their ITL.
- **Throughput** is tokens per second over the whole batch: batch / step,
  or batch x E[K + 1] / round. At one batch its ratio speculative / plain
  is the roofline's speedup, the same ratio as the mean ITL's, plain /
  speculative: both cross 1 at the same batch.

A quantile here is the smallest gap g with P(gap <= g) >= q. Exact
inputs (Fractions, integers) give exact distributions and quantiles.

>>> from fractions import Fraction as F
>>> tokens_distribution(F(1, 2), 2)
{1: Fraction(1, 2), 2: Fraction(1, 4), 3: Fraction(1, 4)}
>>> gap_distribution(F(1, 2), 2)  # 7 tokens per 4 rounds: 3 gaps of 0, 4 of a whole round
{0: Fraction(3, 7), 1: Fraction(4, 7)}
>>> [gap_quantile(F(1, 2), 2, q) for q in (F(1, 4), F(3, 7), F(1, 2))]
[0, 0, 1]
>>> r = latency_point("llama-3-8b", "llama-3.2-1b", "h100-sxm", 1, 1024, F(4, 5), 4)
>>> round(r.itl_plain_ms, 3), round(r.itl_spec_ms, 3), r.gap_p99_ms == r.round_ms
(4.541, 2.264, True)
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from .. import formulas
from ..limits import LIMITS
from ..schemes import Chain
from .hardware import hardware_named as hardware_preset
from .models import model_named as model_preset
from .roofline import MAX_BATCHES, serving_point, step_cost

QUANTILES = (Fraction(1, 2), Fraction(9, 10), Fraction(99, 100))  # p50, p90, p99


def _exact(x):
    """Integers become Fractions, so integer inputs stay exact."""
    return Fraction(x) if isinstance(x, int) and not isinstance(x, bool) else x


def _gamma(gamma) -> int:
    """γ of a chain: an integer from 1 to the draft length limit, else a one-line ValueError."""
    gamma = Chain(gamma).gamma  # the check every chain makes: an integer >= 1
    if gamma > LIMITS.gamma:
        raise ValueError(f"gamma must be between 1 and {LIMITS.gamma}, got {gamma}")
    return gamma


def tokens_distribution(alpha, gamma: int) -> dict:
    """P(a round emits n tokens) for n = 1..γ + 1 under i.i.d. acceptance: n = K + 1, K truncated geometric.

    >>> tokens_distribution(0, 2)
    {1: Fraction(1, 1), 2: Fraction(0, 1), 3: Fraction(0, 1)}
    >>> tokens_distribution(1, 2)
    {1: Fraction(0, 1), 2: Fraction(0, 1), 3: Fraction(1, 1)}
    """
    gamma = _gamma(gamma)
    formulas.expected_tokens(alpha, gamma)  # checks alpha
    alpha = _exact(alpha)
    if isinstance(alpha, Fraction):  # α^γ has about γ times α's digits: refuse what would take long to build
        digits = (gamma + 1) * max(len(str(alpha.numerator)), len(str(alpha.denominator)))
        if digits > LIMITS.result_digits:
            raise ValueError(f"alpha = {str(alpha)[:40]} at γ = {gamma} gives probabilities of ~{digits:,} digits; "
                             f"the limit is {LIMITS.result_digits:,}: use a shorter fraction, or a float")
    out = {k + 1: alpha ** k * (1 - alpha) for k in range(gamma)}
    out[gamma + 1] = alpha ** gamma
    return out


def gap_distribution(alpha, gamma: int) -> dict:
    """The gap before a token, in rounds, over all tokens: {0: within a burst, 1: a whole round}.

    A round of n tokens brings one gap of a round and n - 1 gaps of 0, so
    P(gap = 1 round) = Σ P(n) / Σ n P(n) = 1 / E[tokens per round].
    """
    zero, whole = _gap_shares(alpha, gamma, type(alpha))
    return {0: zero, 1: whole}


@lru_cache(maxsize=64)  # a table asks once per batch for the same α and γ; the type keeps 1 apart from 1.0
def _gap_shares(alpha, gamma: int, kind) -> tuple:
    dist = tokens_distribution(alpha, gamma)
    tokens = sum(n * p for n, p in dist.items())
    rounds = sum(dist.values())
    return (tokens - rounds) / tokens, rounds / tokens


def gap_quantile(alpha, gamma: int, q) -> int:
    """The q-quantile of the gap, in rounds (0 or 1): the smallest gap g with P(gap <= g) >= q, q in (0, 1]."""
    return _quantile(gap_distribution(alpha, gamma), q)


def _quantile(gaps: dict, q) -> int:
    if isinstance(q, bool) or not 0 < q <= 1:
        raise ValueError(f"a quantile must be in (0, 1], got {q!r}")
    return 0 if gaps[0] >= q else 1


@dataclass(frozen=True)
class LatencyRow:
    """One batch size: TTFT, ITL (mean, plain and speculative), the speculative gap's p50/p90/p99 and
    throughput, plain and speculative. Times in ms, throughput in tokens per second over the batch."""

    batch: int
    gamma: int
    prompt: int
    prefill_ms: float  # the target's pass over the prompt
    draft_prefill_ms: float  # the drafter's
    ttft_plain_ms: float  # half a step + the prefill
    ttft_spec_ms: float  # half a round + both prefills
    round_ms: float  # γ drafter steps + the verify pass over γ + 1 positions
    tokens_per_round: float  # E[K + 1]
    round_gap_share: float  # P(gap = a whole round) = 1 / E[K + 1]
    itl_plain_ms: float  # one step
    itl_spec_ms: float  # round / E[K + 1]
    gap_p50_ms: float
    gap_p90_ms: float
    gap_p99_ms: float
    throughput_plain: float
    throughput_spec: float
    target_bound: str  # "memory" or "compute": the plain step
    verify_bound: str


def latency_point(target, draft, hw, batch: int, context: int, alpha, gamma: int, prompt: int | None = None,
                  dtype: str = "bf16", draft_kv_window: int | None = None) -> LatencyRow:
    """Latency and throughput of ``batch`` sequences at ``context``, plain and with a chain of ``gamma``
    drafts at acceptance ``alpha``; ``prompt`` (default: ``context``) tokens are prefilled for TTFT."""
    gamma = _gamma(gamma)
    prompt = context if prompt is None else prompt
    if isinstance(prompt, bool) or not isinstance(prompt, int) or prompt < 1:
        raise ValueError(f"prompt must be an integer >= 1, got {prompt!r}")
    target, draft, hw = model_preset(target), model_preset(draft), hardware_preset(hw)
    for model in (target, draft):
        if model.max_context is not None and prompt > model.max_context:
            raise ValueError(f"a prompt of {prompt:,} tokens exceeds {model.name}'s window of {model.max_context:,} "
                             "positions")
    point = serving_point(target, draft, hw, batch, context, alpha, gamma, dtype, draft_kv_window)
    prefill = step_cost(target, hw, 1, 0, prompt, dtype).seconds
    draft_prefill = step_cost(draft, hw, 1, 0, prompt, dtype).seconds
    step, round_s, tokens = point.target.seconds, point.draft_s + point.verify.seconds, point.tokens
    gaps = gap_distribution(alpha, gamma)
    share = gaps[1]
    p50, p90, p99 = (_quantile(gaps, q) * round_s * 1e3 for q in QUANTILES)
    return LatencyRow(batch, gamma, prompt, prefill * 1e3, draft_prefill * 1e3, (step / 2 + prefill) * 1e3,
                      (round_s / 2 + prefill + draft_prefill) * 1e3, round_s * 1e3, float(tokens), float(share),
                      step * 1e3, float(round_s / tokens) * 1e3, p50, p90, p99, batch / step,
                      float(batch * tokens / round_s), point.target.bound, point.verify.bound)


def latency_table(target, draft, hw, batches, context: int, alpha, gamma: int, prompt: int | None = None,
                  dtype: str = "bf16", draft_kv_window: int | None = None) -> list:
    """One ``LatencyRow`` per batch size (``latency_point`` at each).

    >>> rows = latency_table("llama-3-8b", "llama-3.2-1b", "h100-sxm", [1, 512], 128, 0.8, 4)
    >>> [(r.batch, r.itl_spec_ms < r.itl_plain_ms, r.throughput_spec > r.throughput_plain) for r in rows]
    [(1, True, True), (512, False, False)]
    """
    batches = list(batches)
    if not 1 <= len(batches) <= MAX_BATCHES:
        raise ValueError(f"give from 1 to {MAX_BATCHES} batch sizes, got {len(batches)}")
    return [latency_point(target, draft, hw, b, context, alpha, gamma, prompt, dtype, draft_kv_window)
            for b in batches]
