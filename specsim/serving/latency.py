"""Latency of a served model pair, as serving benchmarks report it: TTFT, TPOT, ITL, throughput, goodput.

Built on the roofline of ``specsim.serving.roofline``. The model, and what
it assumes:

- **Continuous batching, in lockstep.** ``batch`` sequences decode together,
  every one at the same ``context``; each iteration is one plain target
  step, or with speculation one round of a chain: γ drafter steps and one
  target pass over γ + 1 positions, every sequence drafting γ tokens.
  Nothing but the roofline sets a pass's time, so every iteration of a
  batch takes the same time (no noise, no stragglers).
- **The gaps between tokens.** Plain decoding emits one token per
  sequence per step: every gap is one step. A round emits K + 1 tokens per
  sequence at once, at the end of its verify pass, with K ~ the truncated
  geometric of the i.i.d. formula (P(K = k) = α^k (1 - α) for k < γ,
  α^γ for k = γ). So a sequence's tokens arrive in bursts: the first
  token of a round comes one whole round after the previous burst, the
  other K come with it (a gap of 0). Over many rounds the share of gaps
  that are a whole round is rounds / tokens = 1 / E[K + 1]
  (``gap_distribution``), and the mean gap is round time / E[K + 1].
- **TPOT and ITL, as a serving benchmark counts them.** The time per
  output token (TPOT) of a request is (end-to-end latency - TTFT) /
  (output tokens - 1): over a long request, the mean gap above (one step
  plain, round / E[K + 1] speculative). The inter-token latency (ITL) is
  timed per streamed *chunk*, the time since the previous chunk: a server
  that streams what each iteration produced sends a round's K + 1 tokens
  as one chunk, so every speculative ITL is a whole round (and every plain
  one a step). Speculation lowers the TPOT (while it pays) and raises the ITL.
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
  is the roofline's speedup, the same ratio as the TPOT's, plain /
  speculative: both cross 1 at the same batch.
- **Requests per second and goodput.** Every request asks for
  ``output_tokens`` tokens: the first from the prefill, the other
  ``output_tokens - 1`` from decoding, which keeps it in one of the batch's
  slots for (output_tokens - 1) x TPOT. With every slot busy, Little's law
  (requests in service = arrival rate x time in service) gives
  batch / ((output_tokens - 1) x TPOT) requests per second; prefill time is
  not counted (as above). **Goodput** is the requests per second served
  *within* latency targets (a TPOT and, optionally, a TTFT at most so
  many ms): every request of a lockstep batch has the same TPOT, so all
  meet a TPOT target or none do (a TTFT target is held against the mean
  TTFT above: a request's own wait runs from 0 to a whole iteration), and
  the server runs the largest batch that meets the targets (``goodput``).

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
>>> round(r.tpot_plain_ms, 3), round(r.tpot_spec_ms, 3), r.gap_p99_ms == r.round_ms == r.itl_chunk_spec_ms
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
from .roofline import CROSSOVER_LIMIT, MAX_BATCH, MAX_BATCHES, max_batch, serving_point, step_cost

QUANTILES = (Fraction(1, 2), Fraction(9, 10), Fraction(99, 100))  # p50, p90, p99
OUTPUT_TOKENS = 256  # tokens a request asks for, by default (its requests per second)
MAX_OUTPUT = 10_000_000


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
    """One batch size, plain and speculative: TTFT, TPOT, ITL per streamed chunk, the speculative gap's
    p50/p90/p99 (per token), throughput and requests per second. Times in ms, throughput in tokens per
    second over the batch, requests per second by Little's law (prefill time not counted)."""

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
    tpot_plain_ms: float  # the mean gap: one step
    tpot_spec_ms: float  # the mean gap: round / E[K + 1]
    gap_p50_ms: float
    gap_p90_ms: float
    gap_p99_ms: float
    throughput_plain: float
    throughput_spec: float
    target_bound: str  # "memory" or "compute": the plain step
    verify_bound: str
    itl_chunk_plain_ms: float  # ITL per streamed chunk: plain decoding streams a token a step
    itl_chunk_spec_ms: float  # ITL per streamed chunk: a round's K + 1 tokens are one chunk, a round apart
    output_tokens: int  # tokens a request asks for
    requests_plain: float  # requests per second: batch / ((output_tokens - 1) x TPOT)
    requests_spec: float


def _output_tokens(output_tokens) -> int:
    if isinstance(output_tokens, bool) or not isinstance(output_tokens, int) or not 2 <= output_tokens <= MAX_OUTPUT:
        raise ValueError(f"output tokens must be an integer from 2 to {MAX_OUTPUT:,} (the first comes from the "
                         f"prefill, TPOT is timed over the rest), got {output_tokens!r}")
    return output_tokens


def latency_point(target, draft, hw, batch: int, context: int, alpha, gamma: int, prompt: int | None = None,
                  dtype: str = "bf16", draft_kv_window: int | None = None,
                  output_tokens: int = OUTPUT_TOKENS) -> LatencyRow:
    """Latency and throughput of ``batch`` sequences at ``context``, plain and with a chain of ``gamma``
    drafts at acceptance ``alpha``; ``prompt`` (default: ``context``) tokens are prefilled for TTFT, and
    each request asks for ``output_tokens`` tokens (its requests per second)."""
    gamma = _gamma(gamma)
    output_tokens = _output_tokens(output_tokens)
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
    tpot_plain, tpot_spec = step, float(round_s / tokens)
    decoding = output_tokens - 1  # tokens a request spends in a slot for (the first comes from its prefill)
    return LatencyRow(batch, gamma, prompt, prefill * 1e3, draft_prefill * 1e3, (step / 2 + prefill) * 1e3,
                      (round_s / 2 + prefill + draft_prefill) * 1e3, round_s * 1e3, float(tokens), float(share),
                      tpot_plain * 1e3, tpot_spec * 1e3, p50, p90, p99, batch / step,
                      float(batch * tokens / round_s), point.target.bound, point.verify.bound,
                      step * 1e3, round_s * 1e3, output_tokens, batch / (decoding * tpot_plain),
                      batch / (decoding * tpot_spec))


def latency_table(target, draft, hw, batches, context: int, alpha, gamma: int, prompt: int | None = None,
                  dtype: str = "bf16", draft_kv_window: int | None = None,
                  output_tokens: int = OUTPUT_TOKENS) -> list:
    """One ``LatencyRow`` per batch size (``latency_point`` at each).

    >>> rows = latency_table("llama-3-8b", "llama-3.2-1b", "h100-sxm", [1, 512], 128, 0.8, 4)
    >>> [(r.batch, r.tpot_spec_ms < r.tpot_plain_ms, r.itl_chunk_spec_ms > r.itl_chunk_plain_ms) for r in rows]
    [(1, True, True), (512, False, True)]
    """
    batches = list(batches)
    if not 1 <= len(batches) <= MAX_BATCHES:
        raise ValueError(f"give from 1 to {MAX_BATCHES} batch sizes, got {len(batches)}")
    return [latency_point(target, draft, hw, b, context, alpha, gamma, prompt, dtype, draft_kv_window, output_tokens)
            for b in batches]


# -- goodput ---------------------------------------------------------------------------------------

def within(row: LatencyRow, tpot_slo_ms=None, ttft_slo_ms=None) -> tuple:
    """(plain meets the targets, speculation meets them) at ``row``'s batch: TPOT <= ``tpot_slo_ms`` and
    the mean TTFT <= ``ttft_slo_ms``, each when given. Every request of a lockstep batch has the same TPOT."""
    def ok(tpot, ttft):
        return ((tpot_slo_ms is None or tpot <= tpot_slo_ms) and (ttft_slo_ms is None or ttft <= ttft_slo_ms))
    return ok(row.tpot_plain_ms, row.ttft_plain_ms), ok(row.tpot_spec_ms, row.ttft_spec_ms)


@dataclass(frozen=True)
class Goodput:
    """Requests per second served within latency targets, plain and speculative: each at the largest
    batch (up to ``searched_to``) whose TPOT and TTFT meet them; batch 0 and 0 requests/s when none does.
    ``row_plain`` / ``row_spec``: the ``LatencyRow`` of that batch (None when none)."""

    tpot_slo_ms: float | None
    ttft_slo_ms: float | None
    gamma: int
    output_tokens: int
    searched_to: int  # the largest batch that fits in memory, or the limit when memory is not known
    batch_plain: int
    batch_spec: int
    requests_plain: float
    requests_spec: float
    row_plain: LatencyRow | None
    row_spec: LatencyRow | None


def goodput(target, draft, hw, context: int, alpha, gamma: int, tpot_slo_ms=None, ttft_slo_ms=None,
            output_tokens: int = OUTPUT_TOKENS, prompt: int | None = None, dtype: str = "bf16",
            draft_kv_window: int | None = None, limit: int = CROSSOVER_LIMIT) -> Goodput:
    """The goodput (see the module docstring) under a TPOT target and/or a TTFT target, in ms.

    Every time of the model grows with the batch and tokens per second do not fall, so requests per
    second within the targets peak at the largest batch that meets them: found by bisection up to the
    batch that fits in memory (``limit`` when the hardware's memory is not known).

    >>> g = goodput("llama-3-8b", "llama-3.2-1b", "h100-sxm", 128, 0.8, 4, tpot_slo_ms=5)
    >>> (g.batch_plain, round(g.requests_plain, 1)), (g.batch_spec, round(g.requests_spec, 1))
    ((98, 76.9), (169, 132.8))
    """
    for value, name in ((tpot_slo_ms, "TPOT"), (ttft_slo_ms, "TTFT")):
        if value is not None and (isinstance(value, bool) or not 0 < value < float("inf")):
            raise ValueError(f"a {name} target must be a number of ms > 0, got {value!r}")
    if tpot_slo_ms is None and ttft_slo_ms is None:
        raise ValueError("goodput needs a latency target: a TPOT or a TTFT in ms")
    output_tokens = _output_tokens(output_tokens)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_BATCH:
        raise ValueError(f"limit must be an integer from 1 to {MAX_BATCH:,}, got {limit!r}")
    fit = max_batch(target, draft, hw, context, dtype, draft_kv_window)
    top = limit if fit is None else min(fit, limit)

    def row(b):
        return latency_point(target, draft, hw, b, context, alpha, gamma, prompt, dtype, draft_kv_window,
                             output_tokens)

    def largest(side: int):
        lo, hi = 0, top  # within(lo) holds (batch 0: vacuously)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            lo, hi = (mid, hi) if within(row(mid), tpot_slo_ms, ttft_slo_ms)[side] else (lo, mid - 1)
        return lo

    b_plain, b_spec = largest(0), largest(1)
    r_plain, r_spec = (row(b_plain) if b_plain else None), (row(b_spec) if b_spec else None)
    return Goodput(tpot_slo_ms, ttft_slo_ms, _gamma(gamma), output_tokens, top, b_plain, b_spec,
                   r_plain.requests_plain if r_plain else 0.0, r_spec.requests_spec if r_spec else 0.0,
                   r_plain, r_spec)
