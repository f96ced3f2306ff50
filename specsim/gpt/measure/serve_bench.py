"""Serving on the tiny GPT: tokens per second of batched plain and speculative decoding, beside the roofline.

For every thread count, batch size B and γ (0 = plain) the bench runs
``specsim.gpt.batch.batch_generate`` on B held-out prompts (cycled; every row
its own seed), ``repeats`` times, interleaved: each repeat runs plain decoding
and then every γ, so drift on a shared machine hits all of them alike. It
reports the median tokens/s and the min-max spread, and the speedup as the
median over repeats of speculative / plain tokens/s of the same repeat.

Beside each measurement, the roofline of ``specsim.serving``:

* **measured here** (on the bench's device, with its thread count): the
  memory bandwidth (a 64 MiB float32 copy, read + written) and the matmul
  rate at the target's own shapes (``CALIBRATION_ROWS`` x d by d x 4d);
* **calibrated**, one number per model: the per-step overhead, the measured
  time of one pass at B = 1 (one position) minus the roofline's time for it;
* **predicted**, everything else: each pass's time at every B and number of
  positions (``roofline.step_cost`` on the shapes ``tiny-target`` and
  ``tiny-draft``, fp32), hence v(B, γ) = verify pass over γ + 1 positions /
  plain step at the same B, plain tokens/s, and speculative tokens/s for the
  rounds the runs took (mean over repeats: the acceptance is measured, not
  predicted).

Seeds: repeat r gives row b the seed ``seed + r * MAX_BATCH + b``, so the
repeats sample different text (and acceptance) and one seed gives one table
of tokens (the times vary, of course).

The prediction adds the memory and the compute time of a pass instead of
taking the larger (``cpu_from``'s ``overlap=False``): one CPU core running
small matmuls streams the weights and computes largely in turn. Taking the
maximum, as on a GPU, predicted v about 1 up to batch 4 where this CPU
measured up to 2.5.

Measured v(B, γ): the same passes timed alone (``pass_times``) after
``context`` cached positions, each with the sampling transform of its rows
(the batch-1 bench, ``specsim.gpt.measure.bench``, times them inside real
rounds instead; batched rounds are ragged, so here they are timed alone); the
median over repeats of verify / plain step in the same repeat.

The crossover batch: the first batch size of the list at which no γ >= 1
is faster than plain decoding (None: every batch size still gains), measured
(median speedups) and predicted (predicted tokens/s).
"""
from __future__ import annotations

import os
import statistics
from dataclasses import dataclass

import torch

from ...bench.timing import measure
from ...bounds import check_gpt
from ...serving.hardware import cpu_from
from ...serving.models import MODELS
from ...serving.roofline import step_cost
from .. import api, specs
from ..batch import MAX_BATCH, MAX_GAMMA, BatchCache, batch_generate, forward
from ..decode import sync_device
from .bench import heldout_prompts

DEFAULT_BATCHES = (1, 2, 4, 8, 16, 32)
DEFAULT_GAMMAS = tuple(range(0, 7))
DEFAULT_TOKENS, DEFAULT_REPEATS = 32, 3
PROMPT_CHARS = 48
N_PROMPTS = 5  # held-out prompts, cycled over the rows of a batch
MAX_TOKENS = 160  # prompt + tokens + drafts stay inside the 256-position window
MAX_REPEATS = 20
WORK_FLAGS = "--batch, --gammas, --tokens, --repeats or --threads"
PASS_STEPS, PASS_REPEATS = 4, 7  # passes per timing, timings per pass kind (median kept)
CALIBRATION_ROWS = 64
SHAPES = {"target": MODELS["tiny-target"], "draft": MODELS["tiny-draft"]}


def check_work(batches, gammas, tokens: int, repeats: int, threads, limit=None) -> None:
    """One-line refusals of ranges, and of more generation work than ``bounds.check_gpt`` allows
    (``limit``: a ``Budget``, the CLI's --max-work): every batch size's rows x repeats x thread counts
    runs of ``tokens`` tokens at every γ. Torch-free arithmetic, so the CLI runs it before torch loads.

    >>> check_work([1, 2], [0, 3], 32, 3, [1])
    >>> check_work([1, 64], list(range(17)), 160, 20, [1, 2])
    Traceback (most recent call last):
    ...
    specsim.bounds.WorkRefused: 160 tokens with 16 drafts per round, 2,600 runs means ~6.4e+07 target positions; the limit is 200,000: lower --batch, --gammas, --tokens, --repeats or --threads
    """
    if not batches or any(not 1 <= b <= MAX_BATCH for b in batches):
        raise ValueError(f"batch sizes must be in 1 .. {MAX_BATCH}, got {list(batches)[:8]}")
    if not gammas or any(not 0 <= g <= MAX_GAMMA for g in gammas):
        raise ValueError(f"gammas must be in 0 .. {MAX_GAMMA} (0: plain), got {list(gammas)[:8]}")
    if not 1 <= tokens <= MAX_TOKENS:
        raise ValueError(f"tokens must be in 1 .. {MAX_TOKENS} (the batch does not slide the window), got {tokens}")
    if not 1 <= repeats <= MAX_REPEATS:
        raise ValueError(f"repeats must be in 1 .. {MAX_REPEATS}, got {repeats}")
    check_gpt(tokens, sorted(set(gammas) | {0}), runs=sum(batches) * repeats * len(threads), limit=limit,
              lower=WORK_FLAGS)


def thread_counts(text: str) -> list:
    """--threads: "1", "all" (every core: ``os.cpu_count()``) or both, "1,all".

    >>> thread_counts("1"), thread_counts("all") == [os.cpu_count()]
    ([1], True)
    """
    out = []
    for item in str(text).split(","):
        n = {"1": 1, "all": os.cpu_count() or 1}.get(item.strip())
        if n is None:
            raise ValueError(f"threads must be 1, all or 1,all, got {text[:40]!r}")
        if n not in out:
            out.append(n)
    return out


# -- the roofline: measured roofs, calibrated overheads -----------------------------------

@dataclass(frozen=True)
class Calibration:
    """The roofs measured here and each model's calibrated overhead, as ``specsim.serving`` hardware."""

    bandwidth: float  # bytes/s, measured
    flops: float  # float32 FLOP/s at the target's shapes, measured
    overhead_s: dict  # per model ("target", "draft"): measured B = 1 step minus its roofline time
    hardware: dict  # per model: ``cpu_from(bandwidth, flops, overhead)``

    def seconds(self, model: str, batch: int, context: int, positions: int = 1) -> float:
        """The predicted time of one pass of ``model`` ("target" or "draft"): memory + compute + overhead."""
        return step_cost(SHAPES[model], self.hardware[model], batch, context, positions, dtype="fp32").seconds


def roofs(device) -> tuple:
    """(bandwidth bytes/s, matmul FLOP/s): the fastest of a few 64 MiB copies and target-sized matmuls."""
    src = torch.ones(16 * 2**20, device=device)  # 64 MiB of float32
    dst = torch.empty_like(src)
    d = SHAPES["target"].d_model
    a, w = torch.ones(CALIBRATION_ROWS, d, device=device), torch.ones(d, 4 * d, device=device)
    sync = lambda: sync_device(torch.device(device))  # noqa: E731
    copy = measure(lambda: dst.copy_(src), repeats=10, warmup=2, sync=sync).best
    reps = 20
    mm = measure(lambda: [a @ w for _ in range(reps)], repeats=10, warmup=2, sync=sync).best / reps
    return 2 * src.numel() * 4 / copy, 2 * CALIBRATION_ROWS * d * 4 * d / mm


def calibrate(step_s: dict, context: int, device="cpu") -> Calibration:
    """Roofs measured on ``device``; each model's overhead from its measured B = 1 step ``step_s[model]``."""
    bandwidth, flops = roofs(device)
    bare = cpu_from(bandwidth, flops, 0.0, name=f"{device} (measured)")
    over = {m: max(0.0, s - step_cost(SHAPES[m], bare, 1, context, 1, dtype="fp32").seconds)
            for m, s in step_s.items()}
    hw = {m: cpu_from(bandwidth, flops, o, name=f"{device} (measured, {m} overhead)") for m, o in over.items()}
    return Calibration(bandwidth, flops, over, hw)


# -- the passes, timed alone ---------------------------------------------------------------

@torch.inference_mode()
def pass_times(model, batch: int, context: int, positions, sampling, steps: int = PASS_STEPS,
               repeats: int = PASS_REPEATS) -> dict:
    """Seconds of one batched pass over each number of new positions after ``context`` cached ones,
    one figure per repeat: {positions: [seconds, ...]}.

    The kinds are timed in turn within each repeat (interleaved), so a ratio of
    two kinds is best taken repeat by repeat (``paired``); each pass is followed
    by the sampling transform of its rows and a crop back to ``context``.
    """
    device = model.wte.weight.device
    cache = BatchCache(model, batch)
    forward(model, cache, torch.randint(0, model.config.vocab_size, (batch, context), device=device,
                                        generator=torch.Generator(device).manual_seed(0)))
    times = {t: [] for t in positions}

    def run(t):
        idx = torch.zeros(batch, t, dtype=torch.long, device=device)
        for _ in range(steps):
            sampling.row(forward(model, cache, idx))
            cache.crop([context] * batch)

    for t in positions:
        run(t)  # warm-up
    for _ in range(repeats):
        for t in positions:
            times[t].append(measure(lambda: run(t), sync=lambda: sync_device(device)).seconds[0] / steps)
    return times


def paired(times: dict, t: int, base: int = 1) -> float:
    """The median over repeats of times[t] / times[base] in the same repeat (drift cancels).

    >>> paired({1: [1.0, 2.0, 1.0], 7: [2.0, 4.0, 3.0]}, 7)
    2.0
    """
    return statistics.median(a / b for a, b in zip(times[t], times[base]))


# -- the bench -------------------------------------------------------------------------------

def _spread(values) -> list:
    return [round(min(values), 1), round(max(values), 1)]


def crossover(batches, speedups: dict):
    """The first batch size at which no γ >= 1 has a speedup > 1 (``speedups[(b, γ)]``); None if none.

    >>> crossover([1, 2, 4], {(1, 2): 1.5, (2, 2): 1.1, (4, 2): 0.9})
    4
    """
    for b in batches:
        if all(s <= 1 for (bb, g), s in speedups.items() if bb == b and g >= 1):
            return b
    return None


def check_drafter(name: str) -> None:
    """One-line ValueError unless the drafter called ``name`` is registered as ``batched`` (a small GPT of its
    own, ``specs.DRAFTERS``): the bench batches the drafter's model beside the target's."""
    entry = specs.entry_named(name)
    if entry is None or not entry.batched:
        raise ValueError(f"serve-bench batches a small GPT drafter ({specs.listed(specs.batched())}), not {name}")


def serve_bench(pair, batches=DEFAULT_BATCHES, gammas=DEFAULT_GAMMAS, n_tokens: int = DEFAULT_TOKENS,
                repeats: int = DEFAULT_REPEATS, threads=(1,), temperature: float = 1.0, seed: int = 0,
                progress=None, limit=None) -> dict:
    """Run the bench on a ``GPTModels`` with a model drafter; the JSON-ready result (see the module docstring).

    ``threads``: torch thread counts, each measured in turn; ``limit``: a ``specsim.bounds.Budget``
    (default: the default bound); ``progress(text)`` is called before each phase."""
    batches, gammas, threads = sorted(set(batches)), sorted(set(gammas) | {0}), list(threads)
    check_work(batches, gammas, n_tokens, repeats, threads, limit)
    check_drafter(pair.draft_name)
    report = progress or (lambda text: None)
    sampling = api.sampling(temperature)
    prompts = [pair.tokenizer.encode(p) for p in heldout_prompts(N_PROMPTS, PROMPT_CHARS)]
    context = max(len(p) for p in prompts) + n_tokens // 2  # the middle of a run
    before = torch.get_num_threads()
    out = []
    try:
        for n_threads in threads:
            torch.set_num_threads(n_threads)
            out.append(_one_thread_count(pair, batches, gammas, n_tokens, repeats, sampling, seed, prompts,
                                         context, report))
    finally:
        torch.set_num_threads(before)
    return {"device": str(pair.device), "draft": pair.draft_name, "temperature": temperature, "tokens": n_tokens,
            "repeats": repeats, "seed": seed, "context": context, "batches": batches, "gammas": gammas,
            "runs": out}


def _one_thread_count(pair, batches, gammas, n_tokens, repeats, sampling, seed, prompts, context, report) -> dict:
    n_threads = torch.get_num_threads()
    report(f"{n_threads} thread(s): calibrating the roofline")
    one = {"target": statistics.median(pass_times(pair.target, 1, context, [1], sampling)[1]),
           "draft": statistics.median(pass_times(pair.draft, 1, context, [1], sampling)[1])}
    cal = calibrate(one, context, pair.device)
    rows, measured_speedup, predicted_speedup = [], {}, {}
    for b in batches:
        report(f"{n_threads} thread(s): batch {b}")
        t_times = pass_times(pair.target, b, context, [1] + [g + 1 for g in gammas if g], sampling)
        t_pass = {t: statistics.median(s) for t, s in t_times.items()}
        d_pass = statistics.median(pass_times(pair.draft, b, context, [1], sampling)[1])
        rows_prompts = [prompts[i % len(prompts)] for i in range(b)]
        tps = {g: [] for g in gammas}
        ratio = {g: [] for g in gammas}
        gens = {g: [] for g in gammas}
        run = lambda g, r: batch_generate(pair.target, pair.draft, rows_prompts, n_tokens, g, sampling,  # noqa
                                          seed + r * MAX_BATCH)  # every row of every repeat its own seed
        run(max(gammas), 0)  # warm-up
        for r in range(repeats):  # plain, then every γ, in each repeat
            for g in gammas:
                t = measure(lambda: run(g, r), sync=lambda: sync_device(pair.device))
                gens[g].append(t.result)
                tps[g].append(b * n_tokens / t.seconds[0])
                ratio[g].append(tps[g][-1] / tps[0][-1])
        plain_pred = cal.seconds("target", b, context)
        for g in gammas:
            rounds = statistics.mean(gen.rounds for gen in gens[g])
            verify_pred = cal.seconds("target", b, context, g + 1)
            round_pred = verify_pred + g * cal.seconds("draft", b, context)
            pred_tps = b * n_tokens / (rounds * round_pred)
            v_meas, v_pred = paired(t_times, g + 1), verify_pred / plain_pred
            measured_speedup[(b, g)] = statistics.median(ratio[g])
            predicted_speedup[(b, g)] = pred_tps / (b / plain_pred)  # over predicted plain tokens/s
            rows.append({
                "batch": b, "gamma": g, "tokens_per_s": round(statistics.median(tps[g]), 1),
                "tokens_per_s_min_max": _spread(tps[g]), "speedup": round(measured_speedup[(b, g)], 3),
                "predicted_tokens_per_s": round(pred_tps, 1),
                "predicted_speedup": round(predicted_speedup[(b, g)], 3),
                "rounds": rounds, "tokens_per_round": round(statistics.mean(
                    t for gen in gens[g] for t in gen.tokens_per_round()), 3),
                "v": round(v_meas, 3), "predicted_v": round(v_pred, 3), "v_ratio": round(v_pred / v_meas, 3),
                "c": round(d_pass / t_pass[1], 4),
                "predicted_c": round(cal.seconds("draft", b, context) / plain_pred, 4),
                "step_ms": round(t_pass[1] * 1e3, 3), "predicted_step_ms": round(plain_pred * 1e3, 3),
                "verify_ms": round(t_pass[g + 1] * 1e3, 3), "predicted_verify_ms": round(verify_pred * 1e3, 3),
                "bound": step_cost(SHAPES["target"], cal.hardware["target"], b, context, g + 1, "fp32").bound})
    spec = [r for r in rows if r["gamma"] >= 1 and r["batch"] <= 16 and r["gamma"] <= 6]
    worst = max(spec, key=lambda r: max(r["v_ratio"], 1 / r["v_ratio"]), default=None)  # furthest from 1
    return {"threads": n_threads,
            "calibration": {"bandwidth_gb_s": round(cal.bandwidth / 1e9, 2),
                            "matmul_gflop_s": round(cal.flops / 1e9, 2),
                            "overhead_ms": {m: round(s * 1e3, 4) for m, s in cal.overhead_s.items()},
                            "step_b1_ms": {m: round(s * 1e3, 4) for m, s in one.items()}},
            "rows": rows,
            "crossover_batch": crossover(batches, measured_speedup),
            "predicted_crossover_batch": crossover(batches, predicted_speedup),
            "worst_v": None if worst is None else {k: worst[k] for k in ("batch", "gamma", "v", "predicted_v",
                                                                            "v_ratio")}}
