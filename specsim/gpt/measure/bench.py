"""Measured speedup of speculative decoding against plain decoding of the same target.

For every gamma the bench reports the measured acceptance rate alpha
(accepted / checked drafts), the measured costs (``cost`` c = one drafter step
/ one target step, ``verify_ratio`` v = one target pass over gamma + 1
positions / one target step over 1 position, each with the host work on its
rows that the decoder does; in ``bench`` the target step is plain decoding's
time per token in the same run), tokens per round, throughputs and three speedups:

* ``speedup``: plain seconds / speculative seconds for the same prompts,
  seeds and models, each the minimum over interleaved repeats, with the
  interval of the per-repeat speedups;
* ``formula_speedup``: the i.i.d. formula with measured alpha and cost;
* ``refined_speedup``: measured tokens per round / (gamma c + v): the
  prediction from this run's costs. ``ratio`` = speedup / refined_speedup,
  with the interval of the same ratio repeat by repeat; what is left of the
  gap to 1 is the decoding loop's own work (the host's draws, the verify
  walk, the trace).

How the numbers are made to hold still on a shared machine (``bench``): the
generations and the step costs are timed in the same repeats, each gamma's
costs right after its generations and at the cache lengths its rounds
verified (``round_costs``: target step, drafter steps and verify pass
interleaved at each length), and every timing is summarized by its minimum
(load only adds time). ``noisy`` flags a best gamma whose spread is wider
than its lead; the CLI then prints "noisy, rerun".

``quick_measure`` is the short version the Tiny GPT page runs on one prompt.
Every wall time is taken by ``specsim.bench.timing.measure`` or, inside an
emulated round, by ``time.perf_counter`` around each part.
"""
from __future__ import annotations

import statistics
import time
from dataclasses import dataclass

import torch

from ... import formulas
from ...stats import ratio_se
from ...bench.timing import measure
from .. import api
from ..train import corpus
from ..decode import Generation, Sampling, plain_generate, speculative_generate

PROMPT_CHARS = 64
N_PROMPTS = 3
COST_STEPS = 30  # steps per timing of one model step (cost, verify_ratio)
COST_REPEATS = 5  # timings per step kind; the median is kept
REPEATS = 5  # interleaved repeats of the bench: [min, max] of 5 covers the median with probability 15/16


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


def _prefill(model, cache, ids) -> None:
    """Fill a drafter's (or the target's) cache with ``ids``. An EAGLE cache reads queued real features
    for those slots: zeros here, since a step's time does not depend on the values it reads."""
    if hasattr(cache, "queue"):
        cache.queue = torch.zeros(ids.size(1), model.layer.config.n_embd, device=ids.device)
    model(ids, cache)


@torch.inference_mode()
def round_costs(target, draft, seq: list, positions: list, gamma: int, sampling: Sampling = Sampling(),
                seed: int = 0, clock=time.perf_counter) -> dict:
    """Mean seconds of one target step, one drafter step and one verify pass, timed interleaved.

    For each cache length n in ``positions`` (the lengths the rounds of a
    generation of ``seq`` started at) an emulated round runs, each part timed
    apart and both caches cropped back to n: ``gamma`` drafter steps (each
    row brought to the host, as the scheme's draws need it), one verify pass
    over exactly gamma + 1 positions after n cached ones (its rows brought to
    the host, as ``scheme.verify`` reads them), then one plain target step
    (its row sampled, as plain decoding does). Each part follows what it
    follows in real decoding (a target step another target pass, drafting a
    verify pass), so it finds the processor's caches as it would. Interleaving the
    three at every position means a burst of load on a shared machine lands on
    all of them alike, so their ratios (c, v) hold still when the times do not.
    The tokens are those of ``seq`` (a step's time does not depend on them).
    ``clock``: what counts as time (``bench_clock``).
    """
    device = target.wte.weight.device
    gen = torch.Generator(device).manual_seed(seed)
    top = max(positions) + gamma + 1
    if top > min(target.config.block_size, draft.config.block_size) or min(positions) < 1:
        raise ValueError(f"positions must lie in 1 .. {target.config.block_size - gamma - 1}, got "
                         f"{min(positions)} .. {max(positions)}")
    ids = torch.tensor([(list(seq) * (1 + top // max(1, len(seq))))[:top]], device=device)  # (1, top)
    t_cache, d_cache = target.new_cache(), draft.new_cache()
    target(ids, t_cache)
    _prefill(draft, d_cache, ids)
    t_time = d_time = v_time = 0.0
    for n in sorted(positions, reverse=True):  # each round crops both caches to n: longest first
        t_cache.crop(n)
        d_cache.crop(n)
        tok, new = ids[:, n:n + 1], ids[:, n:n + gamma + 1]  # (1, 1), (1, gamma + 1)
        sync_device(device)
        t0 = clock()
        for i in range(gamma):
            sampling.row(draft(new[:, i:i + 1], d_cache, last_only=True)[0, -1]).tolist()
        sync_device(device)
        t1 = clock()
        sampling.row(target(new, t_cache)[0]).tolist()
        sync_device(device)
        t2 = clock()
        t_cache.crop(n)
        int(torch.multinomial(sampling.row(target(tok, t_cache, last_only=True)[0, -1]), 1, generator=gen))
        sync_device(device)
        t3 = clock()
        d_time, v_time, t_time = d_time + t1 - t0, v_time + t2 - t1, t_time + t3 - t2
    k = len(positions)
    return {"target": t_time / k, "draft": d_time / (k * gamma), "verify": v_time / k}


@torch.inference_mode()
def step_costs(target, draft, prompt_ids, gammas, sampling: Sampling = Sampling(),
               steps: int | None = None, repeats: int | None = None, prefix: int = 0) -> dict:
    """Seconds per target step, and per drafter step and per verify pass for each gamma.

    ``round_costs`` at one cache length, ``len(prompt_ids) + prefix``,
    ``steps`` emulated rounds a timing, ``repeats`` timings per gamma; the
    median of the timings is kept (the target step's over every gamma's).
    """
    steps, repeats = steps or COST_STEPS, repeats or COST_REPEATS
    n = min(len(prompt_ids) + prefix, target.config.block_size - max(gammas) - 2)
    out, target_times = {"draft": {}, "verify": {}}, []
    for g in gammas:
        round_costs(target, draft, prompt_ids, [n] * 2, g, sampling)  # warm-up
        runs = [round_costs(target, draft, prompt_ids, [n] * steps, g, sampling) for _ in range(repeats)]
        out["draft"][g] = statistics.median(r["draft"] for r in runs)
        out["verify"][g] = statistics.median(r["verify"] for r in runs)
        target_times += [r["target"] for r in runs]
    return {"target": statistics.median(target_times), **out}


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


def bench_clock(device):
    """(name, clock) the bench times with: on a CPU run with one torch thread, the process's CPU time
    (``time.process_time``), which other processes' work on a shared machine does not inflate (they can
    still slow it through the shared memory system); elsewhere (threads, an accelerator) wall time."""
    if device.type == "cpu" and torch.get_num_threads() == 1:
        return "process CPU time", time.process_time
    return "wall time", time.perf_counter


def spread(seconds) -> float:
    """How far the typical timing sits above the fastest: median / minimum - 1 (0: every run alike).

    >>> spread([2.0, 2.2, 3.0])
    0.10000000000000009
    """
    return statistics.median(seconds) / min(seconds) - 1


def coverage(repeats: int) -> float:
    """Probability that [min, max] of ``repeats`` independent values covers their median (any continuous
    distribution): 1 - 2 ** (1 - repeats), the distribution-free interval of the ratio's spread.

    >>> coverage(5)
    0.9375
    """
    return 1 - 2.0 ** (1 - repeats)


def noisy(speedups: dict, intervals: dict) -> bool:
    """True when the best gamma is not decided: the spread (width of the per-repeat interval) of the
    best gamma's measured speedup is wider than its gap to the runner-up's.

    >>> noisy({2: 1.50, 3: 1.60}, {2: (1.45, 1.55), 3: (1.58, 1.63)})  # width 0.05 < gap 0.10
    False
    >>> noisy({2: 1.58, 3: 1.60}, {2: (1.45, 1.65), 3: (1.50, 1.70)})  # width 0.20 > gap 0.02
    True
    """
    ranked = sorted(speedups, key=speedups.get, reverse=True)
    if len(ranked) < 2:
        return False
    lo, hi = intervals[ranked[0]]
    return hi - lo > speedups[ranked[0]] - speedups[ranked[1]]


def bench(pair, gammas=range(1, 7), n_tokens: int = 150, temperature: float = 1.0,
          repeats: int = REPEATS, seed: int = 0, prompts=None) -> dict:
    """Run the benchmark on a ``GPTModels`` (``specsim.gpt.api``); returns the JSON-ready result dict.

    Each repeat times plain decoding and every gamma's speculative decoding of
    the same prompts and seeds, in an order rotated from repeat to repeat, and
    right after each gamma's generations its costs (``round_costs`` at the
    cache lengths where that gamma's rounds started, one prompt's rounds).

    The target step that c and v are counted in is plain decoding's time per
    generated token in the same run (its loop and its prompt's prefill
    included: what the speculative loop is compared against);
    ``step_ms["target"]`` is the bare step ``round_costs`` timed beside them.
    Time is the process's CPU time on a CPU run with one thread, else wall
    time (``bench_clock``; the result's ``clock``). The figure of every
    timing is its **minimum** over repeats: load on a
    shared machine only ever adds time, so the fastest run is the one least
    disturbed and the closest to what the code costs; generations and step
    costs get the same statistic, so their ratio compares like with like (a
    median would mix in however busy the machine was at each moment). Its
    spread is ``spread`` (median / minimum - 1). The measured/predicted ratio
    is the measured speedup over ``refined_speedup`` (tokens per round /
    (gamma c + v), c and v from this run's costs); its interval is [min, max]
    of the same ratio computed repeat by repeat (plain, speculative and costs
    of one repeat), which covers the per-repeat median with probability
    ``coverage(repeats)`` (0.9375 for 5). ``noisy`` says when the best
    gamma's spread is wider than its lead. ``slides`` counts the generations
    that slid the context window: a slide re-fills the caches (a prefill of
    half the window) that no step cost accounts for, so the default length
    keeps every run inside the window.
    """
    gammas = list(gammas)
    prompts = prompts or heldout_prompts()
    ids = [pair.tokenizer.encode(p) for p in prompts]
    sampling = api.sampling(temperature)  # temperature 0 means greedy
    device = pair.device

    clock_name, clock = bench_clock(device)

    def timed(fn):  # every prompt once: (generations, seconds on the bench's clock)
        spent = []

        def run():
            c0 = clock()
            out = [fn(i, s) for s, i in enumerate(ids)]
            spent.append(clock() - c0)
            return out
        t = measure(run, sync=lambda: sync_device(device))
        return t.result, t.seconds[0] if clock is time.perf_counter else spent[-1]  # wall: measure's, synced

    def run(arm):
        if arm == "plain":
            return timed(lambda i, s: plain_generate(pair.target, i, n_tokens, sampling, seed + s))
        return timed(lambda i, s: speculative_generate(pair.target, pair.drafter(), i, n_tokens, arm, sampling,
                                                       seed + s))

    def positions(gen):  # where the first prompt's rounds started, at most COST_STEPS of them, evenly spread
        starts = [r.start for r in gen.rounds]
        return [starts[i * len(starts) // COST_STEPS] for i in range(COST_STEPS)] if len(starts) > COST_STEPS \
            else starts

    arms = ["plain"] + gammas
    for arm in arms:  # warm-up: every arm once, untimed
        run(arm)
    seconds = {a: [] for a in arms}
    costs = {g: [] for g in gammas}
    gens = {}
    for rep in range(repeats):
        for arm in arms[rep % len(arms):] + arms[:rep % len(arms)]:  # rotated: no arm always runs first
            out, t = run(arm)
            seconds[arm].append(t)
            if arm != "plain":
                gens[arm] = out
                seq = out[0].prompt_ids + out[0].tokens
                costs[arm].append(round_costs(pair.target, pair.draft, seq, positions(out[0]), arm, sampling, rep,
                                              clock))
    plain = min(seconds["plain"])
    window = min(pair.target.config.block_size, pair.draft.config.block_size if pair.draft else 10**9)
    slides = sum(len(i) + n_tokens > window for i in ids) + sum(
        any(r.slid for r in gen.rounds) for g in gammas for gen in gens[g])
    step = [t / (len(ids) * n_tokens) for t in seconds["plain"]]  # the target step: plain decoding's, per token
    results = []
    for g in gammas:
        best = {k: min(c[k] for c in costs[g]) for k in ("draft", "verify")}
        fig = measured_and_predicted([k for gen in gens[g] for k in gen.accepted_per_round], g,
                                     {"target": min(step), "draft": {g: best["draft"]}, "verify": {g: best["verify"]}})
        per_repeat = [p / s for p, s in zip(seconds["plain"], seconds[g])]
        ratios = [m / float(formulas.refined_speedup(fig["tokens_per_round"], g, c["draft"] / t, c["verify"] / t))
                  for m, c, t in zip(per_repeat, costs[g], step)]
        speedup = plain / min(seconds[g])
        ks = [k for gen in gens[g] for k in gen.accepted_per_round]
        alpha_se = ratio_se(ks, [min(k + 1, g) for k in ks]).se if len(ks) >= 2 else float("nan")
        results.append({
            "gamma": g, **{k: round(fig[k], 4) for k in ("alpha", "cost", "verify_ratio", "tokens_per_round")},
            "alpha_se": round(alpha_se, 4),
            "plain_tokens_per_s": round(len(ids) * n_tokens / plain, 1),
            "spec_tokens_per_s": round(len(ids) * n_tokens / min(seconds[g]), 1),
            "speedup": round(speedup, 4),
            "speedup_interval": [round(min(per_repeat), 4), round(max(per_repeat), 4)],
            "formula_speedup": round(fig["formula_speedup"], 4),
            "refined_speedup": round(fig["refined_speedup"], 4),
            "ratio": round(speedup / fig["refined_speedup"], 4),
            "ratio_interval": [round(min(ratios), 4), round(max(ratios), 4)],
            "spread": {"speculative": round(spread(seconds[g]), 4),
                       **{k: round(spread([c[k] for c in costs[g]]), 4) for k in ("target", "draft", "verify")}}})
    best = max(results, key=lambda r: r["speedup"])
    is_noisy = noisy({r["gamma"]: r["speedup"] for r in results},
                     {r["gamma"]: r["speedup_interval"] for r in results})
    return {"device": str(device), "draft": pair.draft_name, "temperature": temperature,
            "tokens": n_tokens, "prompts": len(ids), "repeats": repeats, "seed": seed,
            "threads": torch.get_num_threads(), "statistic": "minimum over repeats", "clock": clock_name,
            "ratio_coverage": coverage(repeats),
            "plain_spread": round(spread(seconds["plain"]), 4),
            "step_ms": {"plain": round(min(step) * 1e3, 4),
                        "target": {g: round(min(c["target"] for c in costs[g]) * 1e3, 4) for g in gammas},
                        "draft": {g: round(min(c["draft"] for c in costs[g]) * 1e3, 4) for g in gammas},
                        "verify": {g: round(min(c["verify"] for c in costs[g]) * 1e3, 4) for g in gammas}},
            "results": results, "best_gamma": best["gamma"], "noisy": is_noisy, "slides": slides}


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
