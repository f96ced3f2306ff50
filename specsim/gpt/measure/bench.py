"""Measured speedup of speculative decoding against plain decoding of the same target.

For every gamma the bench reports the measured acceptance rate alpha
(accepted / checked drafts), the measured costs (``cost`` c = one drafter
step, ``verify_ratio`` v = one target pass over gamma + 1 positions, each
with the host work on its rows that the decoder does, in units of plain
decoding's time per token), tokens per round, throughputs and three speedups:

* ``speedup``: plain decoding seconds / speculative decoding seconds for
  the same prompts, seeds and models, each the minimum over interleaved
  repeats, with the interval of the per-repeat speedups (the machine's
  noise) and ``speedup_prompt_interval``, a 95 % bootstrap over prompts
  (which prompts were drawn: the prompt is the unit of replication);
* ``formula_speedup``: the i.i.d. formula with measured alpha and cost;
* ``refined_speedup``: measured tokens per round / (gamma c + v): the
  prediction from this run's costs. ``ratio`` = speedup / refined_speedup,
  with the interval of the same ratio repeat by repeat; what is left of the
  gap to 1 is the decoding loop's own work (``host_ratio``: the acceptance
  walk, cropping the caches, the loop).

``alpha_for_2x`` says, from the same run's c and v, what acceptance rate
i.i.d. rounds would need for 2x at that gamma (None: out of reach at any
alpha, (gamma + 1) / (gamma c + v) < 2).

How the numbers are made to hold still on a shared machine (``bench``):
the costs are timed inside the very rounds whose speedup is measured
(``Round.seconds``, ``in_round_costs``), the arms run interleaved in a
rotated order, and every timing is summarized by its minimum (load only
adds time). ``noisy`` flags a best gamma whose spread is wider than its
lead; the CLI then prints "noisy, rerun". The clock is not the only
noise: which text comes out moves tokens per round too, and
``best_gamma_share`` says in what share of the resamples of the prompts
each gamma is the best (``best_share``); more prompts (``heldout_prompts(n)``,
the CLI's --prompts) or other seeds settle it.

``quick_measure`` is the short version the Tiny GPT page runs on one prompt;
the drafter gallery (``specsim.gpt.gallery``) measures the same way.
"""
from __future__ import annotations

import re
import statistics
import time
from dataclasses import dataclass

import torch

from ... import formulas
from ...stats import bootstrap_best_share, bootstrap_ratio_interval, ratio_se
from .. import api
from ..train import corpus
from ..decode import Generation, plain_generate, speculative_generate
from .machine import machine

PROMPT_CHARS = 64
N_PROMPTS = 3
MAX_PROMPTS = 10  # held-out prompts the bench can take (``heldout_prompts``)
REPEATS = 5  # interleaved repeats of the bench: [min, max] of 5 covers the median with probability 15/16


def heldout_prompts(n: int | None = None, chars: int = PROMPT_CHARS) -> list[str]:
    """Fixed prompts from the held-out corpus text: ``chars`` characters from a line starting with "def " or
    "class ". The first five lie at least 20,000 characters apart (about one per held-out file); the next
    five are spread evenly over the text's other such lines. So the first n prompts are the same whatever
    n is asked for, up to ``MAX_PROMPTS``; ``n`` defaults to ``N_PROMPTS``.

    >>> many = heldout_prompts(MAX_PROMPTS)
    >>> len(set(many)), many[:3] == heldout_prompts(), all(p.startswith(("def ", "class ")) for p in many)
    (10, True, True)
    """
    n = n or N_PROMPTS
    if not 1 <= n <= MAX_PROMPTS:
        raise ValueError(f"the bench has 1 to {MAX_PROMPTS} held-out prompts, asked for {n}")
    _, val = corpus.shipped_splits()
    starts, pos = [], 0
    while len(starts) < 5:
        hits = [i for i in (val.find("\ndef ", pos), val.find("\nclass ", pos)) if i >= 0]
        if not hits:
            break
        starts.append(min(hits) + 1)
        pos = val.find("\n\n\n", starts[-1] + 20000)  # jump well ahead (next file or far part)
        if pos < 0:
            break
    rest = [m.start() + 1 for m in re.finditer(r"\n(?=def |class )", val) if m.start() + 1 not in starts]
    starts += [rest[int((j + 0.5) * len(rest) / 5)] for j in range(5)] if len(rest) >= 5 else []
    return [val[i:i + chars] for i in starts[:n]]


def measured_and_predicted(accepted_per_round, gamma: int, costs: dict) -> dict:
    """Measured alpha, tokens per round, cost and verify ratio, and the two speedups they predict.

    ``accepted_per_round`` lists K (drafts accepted) of each round of
    speculative runs with draft length ``gamma``; ``costs``: seconds of
    {"target": a step, "draft": {gamma: a drafter step}, "verify": {gamma: a pass}}. A round checks K + 1 drafts
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


def bench_clock(device):
    """(name, clock) the bench times with: on a CPU run with one torch thread, the process's CPU time
    (``time.process_time``), which other processes' work on a shared machine does not inflate (they can
    still slow it through the shared memory system); elsewhere (threads, an accelerator) wall time."""
    if device.type == "cpu" and torch.get_num_threads() == 1:
        return "process CPU time", time.process_time
    return "wall time", time.perf_counter


def dtype_name(model) -> str:
    """A model's number format as the CLI names it: "float32", "bfloat16"."""
    return str(model.wte.weight.dtype).removeprefix("torch.")


def _rounded(x, digits: int = 4):
    return None if x is None else round(x, digits)


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


def prompt_interval(plain_by_prompt, spec_by_prompt, seed: int = 0):
    """95 % bootstrap interval of the speedup over prompts (``stats.bootstrap_ratio_interval``).

    Each argument lists, per repeat, every prompt's decoding seconds; a prompt's time is its
    minimum over repeats (load only adds time), and the speedup of a resample is its prompts'
    plain time over their speculative time. None with one prompt.

    >>> prompt_interval([[2.0, 4.0], [2.2, 4.4]], [[1.0, 2.0], [1.1, 2.1]])
    (2.0, 2.0)
    """
    plain = [min(t) for t in zip(*plain_by_prompt)]
    spec = [min(t) for t in zip(*spec_by_prompt)]
    return bootstrap_ratio_interval(plain, spec, seed=seed)


def best_share(t, gammas: list, seed: int = 0):
    """Share of the prompt resamples in which each gamma has the best speedup (``stats.bootstrap_best_share``,
    each prompt's time the minimum over repeats): whether the text, not only the clock, settles the best
    gamma. None with one prompt; keys are the gammas as strings (JSON's)."""
    fastest = lambda arm: [min(x) for x in zip(*t.by_prompt[arm])]  # noqa: E731
    return bootstrap_best_share(fastest("plain"), {str(g): fastest(g) for g in gammas}, seed=seed)


def in_round_costs(gens, gamma: int) -> dict:
    """Seconds per drafter step, per verify pass and per round of the rest, as the rounds of ``gens``
    (generated with a clock) spent them: drafting time / (rounds x gamma), verify time / rounds, and the
    host's remaining work of the decoding loop (the acceptance walk, keeping the caches, the loop itself:
    decode time minus the two) / rounds.

    >>> from types import SimpleNamespace as NS
    >>> r = NS(seconds={"draft": 0.5, "verify": 1.0, "decide": 0.25})
    >>> g = NS(rounds=[r, r], seconds={"prefill": 5.0, "decode": 4.0})
    >>> in_round_costs([g], 2)  # 2 rounds: 1 s drafting, 2 s verifying, 1 s of the 4 s left
    {'draft': 0.25, 'verify': 1.0, 'host': 0.5}
    """
    rounds = [r for g in gens for r in g.rounds]
    draft, verify = (sum(r.seconds[k] for r in rounds) for k in ("draft", "verify"))
    decode = sum(g.seconds["decode"] for g in gens)
    return {"draft": draft / (len(rounds) * gamma), "verify": verify / len(rounds),
            "host": (decode - draft - verify) / len(rounds)}


def bench(pair, gammas=range(1, 7), n_tokens: int = 150, temperature: float = 1.0,
          repeats: int = REPEATS, seed: int = 0, prompts=None) -> dict:
    """Run the benchmark on a ``GPTModels`` (``specsim.gpt.api``); returns the JSON-ready result dict.

    Each repeat runs plain decoding and every gamma's speculative decoding of
    the same prompts and seeds, in an order rotated from repeat to repeat.
    Every generation runs with a clock: it splits its time into prefill
    (filling the caches with the prompt) and decoding, and each speculative
    round times its drafting and its verify pass (``Round.seconds``). The
    speedup compares decoding times (prefill is its own phase, the same
    target pass in both arms plus the drafter's in the speculative one, and
    not what the formula is about; ``prefill_ms`` reports it).

    The costs are those of the rounds themselves (``in_round_costs``): c =
    one drafter step (a round's drafting / gamma) and v = one verify pass,
    both in units of plain decoding's time per generated token. Timed inside
    the rounds, a model pass finds the processor's caches as decoding leaves
    them, which a pass timed alone, over and over, need not. ``host``
    is the rest of a round (the acceptance walk, cropping the caches, the
    loop), in the same unit. ``refined_speedup`` = tokens per round /
    (gamma c + v) counts the model passes only, so ``ratio`` (measured /
    refined) below 1 is the host's share of the loop: close to
    (gamma c + v) / (gamma c + v + host).

    Time is the process's CPU time on a CPU run with one thread, else wall
    time (``bench_clock``; the result's ``clock``). The figure of every
    timing is its **minimum** over repeats: load on a shared machine only
    ever adds time, so the fastest run is the one least disturbed and the
    closest to what the code costs. The costs are those of the fastest
    speculative repeat's own rounds, in units of the fastest plain step, so
    the measured speedup and its prediction come from the same generations
    and ``ratio`` is that repeat's own, inside the interval of the per-repeat
    ratios. A timing's spread is ``spread`` (median / minimum - 1). The
    ratio's interval is [min, max] of the same ratio computed repeat by
    repeat, which covers the per-repeat median with probability
    ``coverage(repeats)`` (0.9375 for 5). ``noisy``
    says when the best gamma's spread is wider than its lead. ``slides``
    counts the generations that slid the context window (their re-fills
    count as prefill).
    """
    gammas = list(gammas)
    prompts = prompts or heldout_prompts()
    ids = [pair.tokenizer.encode(p) for p in prompts]
    clock_name, clock = bench_clock(pair.device)
    t = time_arms(pair, ids, gammas, n_tokens, api.sampling(temperature), seed, clock, repeats)  # T 0: greedy
    n_out = len(ids) * n_tokens
    step = [s / n_out for s in t.seconds["plain"]]  # the target step: plain decoding's, per token
    results = [gamma_result(t, g, step, n_out, len(ids), seed) for g in gammas]
    return {"device": str(pair.device), "machine": machine(pair.device), "dtype": dtype_name(pair.target),
            "draft": pair.draft_name,
            "temperature": temperature,
            "tokens": n_tokens, "prompts": len(ids), "repeats": repeats, "seed": seed,
            "threads": torch.get_num_threads(), "statistic": "minimum over repeats", "clock": clock_name,
            "costs": "timed inside the rounds", "ratio_coverage": coverage(repeats),
            "alpha_se_unit": "prompt" if len(ids) >= 2 else "round",
            **step_figures(t, step, n_out, len(ids)), "results": results, "best_gamma": max(results, key=lambda r: r["speedup"])["gamma"],
            "noisy": noisy({r["gamma"]: r["speedup"] for r in results},
                           {r["gamma"]: r["speedup_interval"] for r in results}),
            "best_gamma_share": best_share(t, gammas, seed),
            "slides": slides(pair, ids, n_tokens, t.gens)}


@dataclass
class ArmTimings:
    """What the interleaved repeats of ``bench`` recorded; an arm is "plain" or a gamma."""

    seconds: dict  # arm -> decoding seconds of all prompts, one per repeat
    by_prompt: dict  # arm -> decoding seconds of each prompt, one list per repeat
    prefill: dict  # arm -> prefill seconds of all prompts, one per repeat
    costs: dict  # gamma -> ``in_round_costs`` of each repeat's rounds
    gens: dict  # gamma -> the last repeat's generations


def time_arms(pair, ids, gammas: list, n_tokens: int, sampling, seed: int, clock, repeats: int) -> ArmTimings:
    """Plain decoding and every gamma on every prompt (prompt k with seed ``seed + k``): every arm once
    untimed, then ``repeats`` repeats, each running the arms in an order rotated from the last."""
    def run(arm):  # every prompt once, each with its own seed
        if arm == "plain":
            return [plain_generate(pair.target, i, n_tokens, sampling, seed + s, clock=clock)
                    for s, i in enumerate(ids)]
        return [speculative_generate(pair.target, pair.drafter(), i, n_tokens, arm, sampling, seed + s, clock=clock)
                for s, i in enumerate(ids)]

    arms = ["plain"] + gammas
    for arm in arms:  # warm-up: every arm once, untimed
        run(arm)
    t = ArmTimings(seconds={a: [] for a in arms}, by_prompt={a: [] for a in arms}, prefill={a: [] for a in arms},
                   costs={g: [] for g in gammas}, gens={})
    for rep in range(repeats):
        for arm in arms[rep % len(arms):] + arms[:rep % len(arms)]:  # rotated: no arm always runs first
            out = run(arm)
            t.seconds[arm].append(sum(g.seconds["decode"] for g in out))
            t.by_prompt[arm].append([g.seconds["decode"] for g in out])
            t.prefill[arm].append(sum(g.seconds["prefill"] for g in out))
            if arm != "plain":
                t.gens[arm] = out
                t.costs[arm].append(in_round_costs(out, arm))
    return t


def step_figures(t: ArmTimings, step: list, n_out: int, n_prompts: int) -> dict:
    """Plain decoding's throughput and spread, and the milliseconds of every step (the fastest of each:
    a target step, and per gamma a drafter step, a verify pass, a round's host work) and of prefill."""
    ms = lambda k: {g: round(min(c[k] for c in costs) * 1e3, 4) for g, costs in t.costs.items()}  # noqa: E731
    return {"plain_tokens_per_s": round(n_out / min(t.seconds["plain"]), 1),
            "plain_spread": round(spread(t.seconds["plain"]), 4),
            "step_ms": {"plain": round(min(step) * 1e3, 4), "draft": ms("draft"), "verify": ms("verify"),
                        "host": ms("host")},
            "prefill_ms": {a: round(min(t.prefill[a]) / n_prompts * 1e3, 4) for a in t.seconds}}


def slides(pair, ids, n_tokens: int, gens: dict) -> int:
    """Generations that slid the context window: plain runs whose prompt and tokens exceed it, and
    speculative ones (``gens``: gamma -> generations) with a round that slid."""
    window = min(pair.target.config.block_size, pair.drafter().window)
    return sum(len(i) + n_tokens > window for i in ids) + sum(
        any(r.slid for r in gen.rounds) for runs in gens.values() for gen in runs)


def gamma_result(t: ArmTimings, g: int, step: list, n_out: int, n_prompts: int, seed: int) -> dict:
    """One gamma's row of ``bench``: measured figures, their predictions and intervals (``step``: the
    target step of each repeat, plain decoding's seconds per token)."""
    plain, fastest = min(t.seconds["plain"]), min(t.seconds[g])
    best = t.costs[g][t.seconds[g].index(fastest)]  # the fastest speculative repeat's own rounds
    ks = [k for gen in t.gens[g] for k in gen.accepted_per_round]
    fig = measured_and_predicted(ks, g, {"target": min(step), "draft": {g: best["draft"]},
                                         "verify": {g: best["verify"]}})
    per_repeat = [p / s for p, s in zip(t.seconds["plain"], t.seconds[g])]
    ratios = [m / float(formulas.refined_speedup(fig["tokens_per_round"], g, c["draft"] / s, c["verify"] / s))
              for m, c, s in zip(per_repeat, t.costs[g], step)]
    speedup = plain / fastest
    interval = prompt_interval(t.by_prompt["plain"], t.by_prompt[g], seed)
    return {
        "gamma": g, **{k: round(fig[k], 4) for k in ("alpha", "cost", "verify_ratio", "tokens_per_round")},
        "alpha_se": round(alpha_se(t.gens[g], g, n_prompts >= 2), 4),
        "host_ratio": round(best["host"] / min(step), 4),
        "plain_tokens_per_s": round(n_out / plain, 1),
        "spec_tokens_per_s": round(n_out / fastest, 1),
        "speedup": round(speedup, 4),
        "speedup_interval": [round(min(per_repeat), 4), round(max(per_repeat), 4)],
        "speedup_prompt_interval": interval and [round(x, 4) for x in interval],
        "speedup_with_prefill": round((plain + min(t.prefill["plain"])) / (fastest + min(t.prefill[g])), 4),
        "formula_speedup": round(fig["formula_speedup"], 4),
        "refined_speedup": round(fig["refined_speedup"], 4),
        "ratio": round(speedup / fig["refined_speedup"], 4),
        "alpha_for_2x": _rounded(formulas.alpha_needed(2, g, fig["cost"], fig["verify_ratio"])),
        "ratio_interval": [round(min(ratios), 4), round(max(ratios), 4)],
        "spread": {"speculative": round(spread(t.seconds[g]), 4),
                   **{k: round(spread([c[k] for c in t.costs[g]]), 4) for k in ("draft", "verify", "host")}}}


def alpha_se(gens, gamma: int, by_prompt: bool) -> float:
    """Standard error of the measured alpha (accepted / checked drafts) over the rounds of ``gens``,
    clustered by prompt when ``by_prompt`` (``stats.ratio_se``); nan with fewer than two rounds."""
    ks = [k for gen in gens for k in gen.accepted_per_round]
    if len(ks) < 2:
        return float("nan")
    units = [j for j, gen in enumerate(gens) for _ in gen.accepted_per_round]  # the prompt of each round
    return ratio_se(ks, [min(k + 1, gamma) for k in ks], units if by_prompt else None).se


# -- the quick measurement of the Tiny GPT page ------------------------------------

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
    seconds: dict  # {"speculative": s, "plain": s}: decoding time (prefill apart), the fastest of ``runs`` runs
    costs: dict  # ``in_round_costs`` of the fastest speculative run, "target": plain decoding's time per token
    rates: dict  # ``measured_and_predicted``: alpha, tokens per round, cost, verify ratio, two speedups
    runs: int
    spreads: dict  # {"speculative", "plain"}: ``spread`` of each decoder's runs (median / fastest - 1)
    clock: str  # what was timed: "process CPU time" or "wall time" (``bench_clock``)
    machine: dict  # what it ran on (``machine.machine``)

    @property
    def speedup(self) -> float:
        """Measured speedup: plain seconds / speculative seconds for the same number of tokens."""
        return self.seconds["plain"] / self.seconds["speculative"]


def quick_measure(pair, prompt: str, n_tokens: int, scheme, temperature: float = 1.0, seed: int = 0,
                  runs: int = QUICK_RUNS, progress=None) -> QuickMeasurement:
    """Generate ``n_tokens`` after ``prompt`` speculatively and plainly (same settings,
    temperature 0 = greedy), ``runs`` times interleaved, each with a clock: the speedup
    compares decoding times, and c and v are the fastest speculative run's own
    (``in_round_costs``) in units of the fastest plain run's time per token.

    ``scheme``: a draft length (a chain) or any scheme the decoder runs (a ``specsim.schemes`` value or
    its grammar, "block:4", "tree:2,2,1", "tree:dynamic,budget=6,depth=3,topk=2"). The formula's
    quantities (c, v, α and the two predicted speedups of ``measured_and_predicted``) are a chain's:
    for any other scheme ``costs`` holds only the target step and ``rates`` the measured tokens per
    round and per target pass.

    ``progress(fraction, text)``, when given, is called before each run (a GUI progress bar).
    """
    from ...schemes import as_scheme
    scheme = as_scheme(scheme)
    clock_name, clock = bench_clock(pair.device)
    opts = dict(temperature=temperature, seed=seed, clock=clock)
    report = progress or (lambda fraction, text: None)
    spec, plain = [], []
    for i in range(runs):
        report(2 * i / (2 * runs), f"speculative decoding, run {i + 1} of {runs}")
        spec.append(api.speculative_generate(pair, prompt, n_tokens, scheme, **opts))
        report((2 * i + 1) / (2 * runs), f"plain decoding (for the speedup), run {i + 1} of {runs}")
        plain.append(api.plain_generate(pair, prompt, n_tokens, **opts))
    report(1.0, "done")
    decode = {k: [g.seconds["decode"] for g in gens] for k, gens in (("speculative", spec), ("plain", plain))}
    gen = min(spec, key=lambda g: g.seconds["decode"])
    step = min(decode["plain"]) / n_tokens
    if scheme.chain_gamma is not None:  # the i.i.d. formula (c, v, predictions) is chain:γ's
        g = scheme.chain_gamma
        own = in_round_costs([gen], g)
        costs = {"target": step, "draft": {g: own["draft"]}, "verify": {g: own["verify"]}, "host": own["host"]}
        rates = measured_and_predicted(gen.accepted_per_round, g, costs)
    else:
        costs = {"target": step}
        rates = {"tokens_per_round": sum(len(r.emitted) for r in gen.rounds) / max(len(gen.rounds), 1)}
    rates["tokens_per_pass"] = len(gen.tokens) / gen.target_passes
    return QuickMeasurement(gen, {k: min(v) for k, v in decode.items()}, costs, rates, runs,
                            {k: spread(v) for k, v in decode.items()}, clock_name, machine(pair.device))
