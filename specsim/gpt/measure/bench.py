"""Measured speedup of speculative decoding against plain decoding of the same target.

For every gamma the bench reports the measured acceptance rate alpha
(accepted / checked drafts), the measured costs (``cost`` = one drafter step
/ one target step, ``verify_ratio`` = one target pass over gamma + 1 positions
/ one target step over 1 position, each including the sampling of its row),
tokens per round, throughputs and three speedups:

* ``speedup``: speculative tokens/s / plain tokens/s (median over repeats of
  runs interleaved on the same prompts, seeds and models);
* ``formula_speedup``: the i.i.d. formula with measured alpha and cost;
* ``refined_speedup``: measured tokens per round / (gamma * cost +
  verify_ratio): what the measured acceptance and costs allow. The gap to
  ``speedup`` is the decoding loop's own overhead.

``quick_measure`` is the short version the Tiny GPT page runs on one prompt.
Every wall time is taken by ``specsim.bench.timing.measure``.
"""
from __future__ import annotations

import statistics
import time
from dataclasses import dataclass

import torch

from ... import formulas
from ...bench.timing import measure
from .. import api
from ..train import corpus
from ..decode import Generation, Sampling, plain_generate, speculative_generate

PROMPT_CHARS = 64
N_PROMPTS = 3
COST_STEPS = 30  # steps per timing of one model step (cost, verify_ratio)
COST_REPEATS = 5  # timings per step kind; the median is kept


def heldout_prompts(n: int | None = None, chars: int = PROMPT_CHARS) -> list[str]:
    """Fixed prompts from held-out corpus files: ``chars`` characters from the first
    line starting with "def " or "class " in each of the first ``n`` held-out files."""
    n = n or N_PROMPTS
    _, val = corpus.shipped_splits()
    prompts, pos = [], 0
    while len(prompts) < n:
        hits = [i for i in (val.find("\ndef ", pos), val.find("\nclass ", pos)) if i >= 0]
        if not hits:
            break
        start = min(hits) + 1
        prompts.append(val[start:start + chars])
        pos = val.find("\n\n\n", start + 20000)  # jump well ahead (next file or far part)
        if pos < 0:
            break
    return prompts


@torch.inference_mode()
def step_costs(target, draft, prompt_ids, gammas, sampling: Sampling = Sampling(),
               steps: int | None = None, repeats: int | None = None, prefix: int = 0) -> dict:
    """Seconds per target step, and per drafter step and per verify pass for each gamma.

    Measured the way the decoders run them, each with the sampling of its row,
    after ``len(prompt_ids) + prefix`` cached positions: target steps in a
    plain loop; drafter steps and verify passes inside emulated rounds (gamma
    drafter steps, then one target pass over gamma + 1 positions, both caches
    cropped back), so the two models share the CPU caches as in real decoding.
    """
    steps, repeats = steps or COST_STEPS, repeats or COST_REPEATS
    device = target.wte.weight.device
    gen = torch.Generator(device).manual_seed(0)
    ids = (list(prompt_ids) * (1 + prefix // max(1, len(prompt_ids))))[:len(prompt_ids) + prefix]
    ids = torch.tensor([ids[:min(len(ids), target.config.block_size - max(gammas) - 2)]], device=device)
    t_cache, d_cache = target.new_cache(), draft.new_cache()
    target(ids, t_cache)
    draft(ids, d_cache)
    n, tok = t_cache.length, ids[:, -1:]  # (1, 1)

    def sample(model, cache, x):
        torch.multinomial(sampling.row(model(x, cache, last_only=x.size(1) == 1)[0]), 1, generator=gen)

    def target_steps():
        for _ in range(steps):
            sample(target, t_cache, tok)
            t_cache.crop(n)

    def rounds(g):  # the drafter and verify parts of each round, timed apart
        d_time = v_time = 0.0
        new = ids[:, -1:].repeat(1, g + 1)  # (1, g + 1)
        for _ in range(steps):
            t0 = time.perf_counter()
            for _ in range(g):
                sample(draft, d_cache, tok)
            sync_device(device)
            t1 = time.perf_counter()
            sample(target, t_cache, new)
            sync_device(device)
            v_time += time.perf_counter() - t1
            d_time += t1 - t0
            t_cache.crop(n)
            d_cache.crop(n)
        return d_time / (steps * g), v_time / steps

    out = {"target": measure(target_steps, repeats, warmup=1, sync=lambda: sync_device(device)).median / steps,
           "draft": {}, "verify": {}}
    for g in gammas:
        rounds(g)  # warm-up
        d, v = zip(*(rounds(g) for _ in range(repeats)))
        out["draft"][g], out["verify"][g] = statistics.median(d), statistics.median(v)
    return out


def pair_step_costs(pair, ids, gamma: int, sampling: Sampling = Sampling(), prefix: int = 0,
                    steps: int | None = None, repeats: int | None = None) -> dict:
    """``step_costs`` for any drafter of ``pair``: a model drafter is timed inside emulated
    rounds; prompt lookup (no model) by the median time of one ``propose`` divided by gamma,
    with the target step and verify pass timed beside a one-layer stand-in drafter."""
    from ..drafters import EarlyExit

    model = pair.draft if pair.draft is not None else EarlyExit(pair.target, 1)
    costs = step_costs(pair.target, model, ids, [gamma], sampling, steps, repeats, prefix)
    if pair.draft is None:
        d = pair.drafter()
        context = (list(ids) * (1 + prefix // max(1, len(ids))))[:len(ids) + prefix]
        reps = 50
        t = measure(lambda: [d.propose_ids(context, gamma) for _ in range(reps)], repeats=5, warmup=1)
        costs["draft"][gamma] = t.median / reps / gamma
    return costs


def measured_and_predicted(accepted_per_round, gamma: int, costs: dict) -> dict:
    """Measured alpha, tokens per round, cost and verify ratio, and the two speedups they predict.

    ``accepted_per_round`` lists K (drafts accepted) of each round of
    speculative runs with draft length ``gamma``; ``costs`` is what
    ``step_costs`` returned for that gamma. A round checks K + 1 drafts
    (gamma when all are accepted) and emits K + 1 tokens.
    alpha = accepted / checked drafts; cost = drafter step / target step;
    verify_ratio = verify pass over gamma + 1 positions / target step.

    >>> r = measured_and_predicted([1, 3, 0], 3, {"target": 2.0, "draft": {3: 0.5}, "verify": {3: 3.0}})
    >>> r["alpha"], r["tokens_per_round"], r["cost"], r["verify_ratio"]  # 4 of 2 + 3 + 1 checked drafts
    (0.6666666666666666, 2.3333333333333335, 0.25, 1.5)
    """
    ks = list(accepted_per_round)
    checked = sum(min(k + 1, gamma) for k in ks)
    alpha = sum(ks) / checked if checked else float("nan")
    tokens_per_round = sum(k + 1 for k in ks) / len(ks)
    cost = costs["draft"][gamma] / costs["target"]
    verify_ratio = costs["verify"][gamma] / costs["target"]
    return {"alpha": alpha, "tokens_per_round": tokens_per_round, "cost": cost, "verify_ratio": verify_ratio,
            "formula_speedup": float(formulas.speedup(alpha, gamma, cost)) if checked else float("nan"),
            "refined_speedup": float(formulas.refined_speedup(tokens_per_round, gamma, cost, verify_ratio))}


def sync_device(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


def bench(pair, gammas=range(1, 7), n_tokens: int = 200, temperature: float = 1.0,
          repeats: int = 3, seed: int = 0, prompts=None) -> dict:
    """Run the benchmark on a ``GPTModels`` (``specsim.gpt.api``); returns the JSON-ready result dict."""
    gammas = list(gammas)
    prompts = prompts or heldout_prompts()
    ids = [pair.tokenizer.encode(p) for p in prompts]
    sampling = api.sampling(temperature)  # temperature 0 means greedy
    device = pair.device
    costs = step_costs(pair.target, pair.draft, ids[0], gammas, sampling, prefix=n_tokens // 2)

    def timed(fn):  # every prompt once: (generations, seconds)
        t = measure(lambda: [fn(i, s) for s, i in enumerate(ids)], sync=lambda: sync_device(device))
        return t.result, t.seconds[0]

    plain = lambda i, s: plain_generate(pair.target, i, n_tokens, sampling, seed + s)
    timed(plain)  # warm-up
    plain_tps, spec_tps, ratios, gens = [], {g: [] for g in gammas}, {g: [] for g in gammas}, {}
    for _ in range(repeats):  # interleave plain and every gamma in each repeat
        _, t_plain = timed(plain)
        plain_tps.append(len(ids) * n_tokens / t_plain)
        for g in gammas:
            spec = lambda i, s, g=g: speculative_generate(pair.target, pair.drafter(), i, n_tokens, g, sampling,
                                                          seed + s)
            gens[g], t_spec = timed(spec)
            spec_tps[g].append(len(ids) * n_tokens / t_spec)
            ratios[g].append(spec_tps[g][-1] / plain_tps[-1])
    results = []
    for g in gammas:
        fig = measured_and_predicted([k for gen in gens[g] for k in gen.accepted_per_round], g, costs)
        results.append({
            "gamma": g, **{k: round(fig[k], 4) for k in ("alpha", "cost", "verify_ratio", "tokens_per_round")},
            "plain_tokens_per_s": round(statistics.median(plain_tps), 1),
            "spec_tokens_per_s": round(statistics.median(spec_tps[g]), 1),
            "speedup": round(statistics.median(ratios[g]), 4),
            "formula_speedup": round(fig["formula_speedup"], 4),
            "refined_speedup": round(fig["refined_speedup"], 4)})
    best = max(results, key=lambda r: r["speedup"])
    return {"device": str(device), "draft": pair.draft_name, "temperature": temperature,
            "tokens": n_tokens, "prompts": len(ids), "repeats": repeats, "seed": seed,
            "threads": torch.get_num_threads(),
            "step_ms": {"target": round(costs["target"] * 1e3, 4),
                        "draft": {g: round(v * 1e3, 4) for g, v in costs["draft"].items()},
                        "verify": {g: round(v * 1e3, 4) for g, v in costs["verify"].items()}},
            "results": results, "best_gamma": best["gamma"]}


# -- the quick measurement of the Tiny GPT page ------------------------------------

QUICK_CONTEXT, QUICK_STEPS, QUICK_REPEATS = 64, 5, 3  # a short version of `step_costs`' defaults
QUICK_RUNS = 2  # interleaved runs of each decoder; the fastest counts (the machine may be shared)


def prepare(pair) -> None:
    """Ready a pair for timing: one torch thread on CPU (tiny models: one thread is fastest and
    immune to a busy second core), then one short run of each decoder so no timing pays the start-up."""
    if pair.device.type == "cpu":
        torch.set_num_threads(1)
    api.plain_generate(pair, "x", 4)
    api.speculative_generate(pair, "x", 8, 2)


@dataclass
class QuickMeasurement:
    """One speculative generation and its timings against plain decoding of the same length."""

    generation: Generation  # the speculative run (its rounds, alpha, text)
    seconds: dict  # {"speculative": s, "plain": s}: the fastest of ``runs`` interleaved runs each
    costs: dict  # ``step_costs`` for [gamma], after the generated text
    rates: dict  # ``measured_and_predicted``: alpha, tokens per round, cost, verify ratio, two speedups
    runs: int

    @property
    def speedup(self) -> float:
        """Measured speedup: plain seconds / speculative seconds for the same number of tokens."""
        return self.seconds["plain"] / self.seconds["speculative"]


def quick_measure(pair, prompt: str, n_tokens: int, gamma: int, temperature: float = 1.0, seed: int = 0,
                  runs: int = QUICK_RUNS, progress=None) -> QuickMeasurement:
    """Generate ``n_tokens`` after ``prompt`` speculatively and plainly (same settings,
    temperature 0 = greedy), ``runs`` times interleaved, then time one step of each model
    after the generated text.

    ``progress(fraction, text)``, when given, is called before each phase (a GUI progress bar).
    """
    opts = dict(temperature=temperature, seed=seed)
    sync = lambda: sync_device(pair.device)  # noqa: E731
    report = progress or (lambda fraction, text: None)
    spec, plain = [], []
    steps = 2 * runs + 1
    for i in range(runs):
        report(2 * i / steps, f"speculative decoding, run {i + 1} of {runs}")
        spec.append(measure(lambda: api.speculative_generate(pair, prompt, n_tokens, gamma, **opts), sync=sync))
        report((2 * i + 1) / steps, f"plain decoding (for the speedup), run {i + 1} of {runs}")
        plain.append(measure(lambda: api.plain_generate(pair, prompt, n_tokens, **opts), sync=sync))
    report(2 * runs / steps, "timing one step of each model")
    gen = spec[-1].result
    context = (gen.prompt_ids + gen.tokens)[-QUICK_CONTEXT:]  # a real context of >= gamma + 1 tokens
    costs = pair_step_costs(pair, context, gamma, api.sampling(temperature), steps=QUICK_STEPS,
                            repeats=QUICK_REPEATS)
    report(1.0, "done")
    return QuickMeasurement(gen, {"speculative": min(t.seconds[0] for t in spec),
                                  "plain": min(t.seconds[0] for t in plain)},
                            costs, measured_and_predicted(gen.accepted_per_round, gamma, costs), runs)
