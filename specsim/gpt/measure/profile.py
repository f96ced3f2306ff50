"""Where a speculative round's time goes, beside the floor physics sets for each part (``gpt bench --profile``).

Every round of chain decoding is split into seven parts, each summed over
the rounds of interleaved repeats and reported per round:

* ``draft compute``: the drafter's passes (its one-position steps: the model's work alone);
* ``draft host``: the rest of drafting (adjusting q, bringing it to the
  host, the scheme's draws, the drafter's bookkeeping);
* ``verify compute``: the target's verify pass over gamma + 1 positions;
* ``verify host``: adjusting the pass's rows p and bringing them to the host;
* ``decide``: the scheme's walk (accept, correct, bonus) on the host;
* ``keep``: cropping both caches (and the EAGLE drafter's features);
* ``loop``: what the decoding loop does between rounds.

The floor of a model pass is physics, not code: a pass over T positions
with n cached keys must multiply every weight once per position and read
every weight (and the cache) once, so it takes at least
max(FLOPs / peak FLOP/s, bytes / memory bandwidth). ``probe`` measures the
two rates on this machine once, by a large matrix product and by a
matrix-vector product over a matrix larger than the processor's caches,
each with one thread's torch as decoding uses it. The host parts have no
floor above zero.

``costs_apart`` times drafter steps (gamma in a row after a verify pass, as
a round runs them), the round's first drafter call where it reads more
than one position, and verify passes of each width on their own,
interleaved, over a warm cache of the prompt's length: the costs a user can
measure before running speculative decoding at all. A round's first call
re-reads what the round before kept: a small GPT its closing token, and
the last draft too after a full acceptance; the EAGLE drafter every kept
token, with the target's features of them. How many positions it reads
follows from acceptance alone, like tokens per round, so the forecast
takes both from the profiled rounds. The speedup those costs predict is
set beside the measured one (``ratio_apart``), as the bench sets the
in-round costs' prediction beside it.
"""
from __future__ import annotations

import time
from collections import Counter

import torch
import torch.nn as nn

from ... import formulas
from .. import api
from ..decode import Sampling, plain_generate, speculative_generate, sync_device
from ..model import one_position
from .bench import bench_clock, dtype_name, heldout_prompts
from .machine import machine

PARTS = ("draft compute", "draft host", "verify compute", "verify host", "decide", "keep", "loop")
PREFILL_POSITIONS = 32  # a call over this many positions or more is a prefill, not a round's pass


def probe(device, repeats: int = 5, dtype=torch.float32) -> dict:
    """This machine's peak FLOP/s (a 512 x 512 x 512 product in ``dtype``, the target's: bfloat16 products
    run on other kernels) and memory bandwidth in bytes/s (a 4096 x 4096 float32 matrix, 64 MiB, times a
    vector: bytes cost the same whatever they hold), each the best of ``repeats``."""
    clock = time.perf_counter
    a = torch.randn(512, 512, device=device, dtype=dtype)
    m, x = torch.randn(4096, 4096, device=device), torch.randn(4096, device=device)
    flops, bw = 0.0, 0.0
    with torch.inference_mode():
        for _ in range(repeats):
            sync_device(device)
            t0 = clock()
            for _ in range(8):
                a @ a
            sync_device(device)
            flops = max(flops, 8 * 2 * 512 ** 3 / (clock() - t0))
            t0 = clock()
            for _ in range(4):
                m @ x
            sync_device(device)
            bw = max(bw, 4 * m.numel() * m.element_size() / (clock() - t0))
    return {"flops_per_s": flops, "bytes_per_s": bw}


def linear_weights(module: nn.Module) -> int:
    return sum(m.weight.numel() for m in module.modules() if isinstance(m, nn.Linear))


def step_weights(model) -> int:
    """The weights one position's pass multiplies: a GPT's linear layers and head; the EAGLE drafter's
    layer and the target's head; early exit's first K blocks and the head (and its trained exit)."""
    target = getattr(model, "target", None)
    if target is None:
        return linear_weights(model)
    head = target.lm_head.weight.numel()
    if hasattr(model, "layer"):  # EAGLE: its own layer, the target's head
        return linear_weights(model.layer) + head
    exit_head = getattr(model, "exit_head", None)
    return sum(linear_weights(b) for b in target.blocks[:model.k]) + head + \
        (linear_weights(exit_head) if exit_head is not None else 0)


def pass_floor(model, positions: int, cached: int, rates: dict) -> float:
    """Seconds a pass over ``positions`` new positions after ``cached`` keys cannot beat on this machine."""
    c = model.config
    w = step_weights(model)
    size = next(model.parameters()).element_size()
    flops = positions * (2 * w + 4 * (cached + positions) * c.n_embd * c.n_layer)
    bytes_ = size * (w + 2 * c.n_layer * (cached + positions) * c.n_embd)
    return max(flops / rates["flops_per_s"], bytes_ / rates["bytes_per_s"])


class Timed:
    """A model whose calls are timed (synchronised on an accelerator) and sorted into prefill and round
    calls; everything else is the model's own."""

    def __init__(self, model, clock, device):
        self.model, self.clock, self.device = model, clock, device
        self.seconds = {"prefill": 0.0, "round": 0.0}
        self.widths = Counter()  # how many round calls read each number of positions (steps not counted)

    def __getattr__(self, name):
        return getattr(self.model, name)

    def __call__(self, idx, *args, **kwargs):
        sync_device(self.device)
        t0 = self.clock()
        out = self.model(idx, *args, **kwargs)
        sync_device(self.device)
        prefill = idx.size(1) >= PREFILL_POSITIONS
        self.seconds["prefill" if prefill else "round"] += self.clock() - t0
        if not prefill:
            self.widths[idx.size(1)] += 1
        return out

    def stepper(self):
        """The model's one-position step (``model.one_position``), timed as a round's call."""
        step = one_position(self.model)

        def timed(token, cache):
            sync_device(self.device)
            t0 = self.clock()
            out = step(token, cache)
            sync_device(self.device)
            self.seconds["round"] += self.clock() - t0
            return out
        return timed


def profiled_run(pair, ids, n_tokens, gamma, sampling, seed, clock, device) -> dict:
    """One speculative generation with both models timed; its seven parts and rounds."""
    target = Timed(pair.target, clock, device)
    drafter = pair.drafter()
    model = drafter.own_model()
    timed = Timed(model, clock, device) if model is not None else None  # prompt lookup has none
    if timed is not None:
        drafter.model, drafter.step = timed, timed.stepper()
    g = speculative_generate(target, drafter, ids, n_tokens, gamma, sampling, seed, clock=clock)
    rounds = g.rounds
    total = {k: sum(r.seconds[k] for r in rounds) for k in ("draft", "verify", "decide", "keep")}
    verify_compute = target.seconds["round"]
    parts = {"draft compute": timed.seconds["round"] if timed else 0.0, "verify compute": verify_compute,
             "decide": total["decide"], "keep": total["keep"]}
    parts["draft host"] = total["draft"] - parts["draft compute"]
    parts["verify host"] = total["verify"] - verify_compute
    parts["loop"] = g.seconds["decode"] - sum(total.values())
    return {"parts": parts, "rounds": len(rounds), "accepted": [r.accepted for r in rounds],
            "decode": g.seconds["decode"], "steps": g.draft_passes,
            "feeds": timed.widths if timed else Counter()}


def model_of(pair):
    """The drafter's model, or None for a model-free drafter (prompt lookup)."""
    return pair.drafter().own_model()


def costs_apart(pair, ids, gammas, clock, device, repeats: int = 5, calls: int = 30, feeds=None) -> dict:
    """Seconds of a target step, a drafter step and a verify pass of gamma + 1 positions, each timed on
    its own over the prompt's warm cache, interleaved, the minimum over ``repeats`` of the mean of
    ``calls`` calls (the caches are cropped back after each call).

    A drafter step is timed per gamma as a round meets it: gamma steps in a row, each burst right after
    an untimed verify pass of gamma + 1 positions. The target's pass streams its weights through the
    processor's caches and pushes out the drafter's, so the first draft of a round is dearer than a step
    repeated alone (which would flatter c). The drafter starts on the prompt as decoding starts it (the
    EAGLE drafter reads the target's features of it) and takes the prompt's last token, so each timed step
    is a draft after another draft. Early exit gets a cache of its own here (it shares the target's when
    decoding a chain).

    ``feeds`` ({gamma: widths}, optional): the round's first drafter call over each of these numbers of
    positions (two or more; one is a step), timed as a round meets it: right after an untimed verify pass,
    the EAGLE drafter with features queued for every position, as the decoder queues the target's.
    Returns {"target", "draft": {gamma: s}, "verify": {gamma: s}, "feed": {gamma: {width: s}}}."""
    apart = _Apart(pair, ids, gammas, clock, device, calls)
    drafter = apart.drafter
    with torch.inference_mode():
        apart.start()
        feeds = {g: sorted(m for m in (feeds or {}).get(g, ()) if m > 1) if drafter else [] for g in gammas}
        best = {"target": float("inf"), "draft": {g: float("inf") if drafter else 0.0 for g in gammas},
                "verify": {g: float("inf") for g in gammas},
                "feed": {g: {m: float("inf") for m in feeds[g]} for g in gammas}}
        for _ in range(repeats):
            best["target"] = min(best["target"], apart.timed(apart.steps["t"], "t", ids[-1]))
            for g in gammas:
                best["verify"][g] = min(best["verify"][g], apart.timed(apart.target, "t", apart.widths[g]))
                if drafter:
                    best["draft"][g] = min(best["draft"][g], apart.drafted(g))
                for m in feeds[g]:
                    best["feed"][g][m] = min(best["feed"][g][m], apart.fed(g, m))
    return best


class _Apart:
    """The timers ``costs_apart`` interleaves, each over the prompt's warm caches (cropped back after
    each call): the models, their caches and one-position steps, and a verify pass's input per gamma."""

    def __init__(self, pair, ids, gammas, clock, device, calls: int):
        target, drafter = pair.target, pair.drafter()
        drafter = drafter.own_cache()  # early exit: a K-layer cache of its own (it shares the target's in a chain)
        drafter = drafter if drafter.own_model() is not None else None  # prompt lookup: no model, no cost
        self.target, self.drafter, self.ids, self.clock, self.device, self.calls = \
            target, drafter, ids, clock, device, calls
        self.caches = {"t": target.new_cache(), "d": drafter.cache if drafter else None}
        self.steps = {"t": one_position(target), "d": drafter.step if drafter else None}
        self.widths = {g: torch.tensor([ids[-1:] * (g + 1)], device=device) for g in gammas}
        self.n = {}

    def start(self) -> None:
        """The prompt into both caches, as decoding starts it; ``n``: their lengths, to crop back to."""
        ids, drafter = self.ids, self.drafter
        self.target(torch.tensor([ids[:-1]], device=self.device), self.caches["t"], last_only=True)
        if drafter:
            drafter.start(ids)
            drafter.step(ids[-1], drafter.cache)
        self.n = {k: c.length for k, c in self.caches.items() if c is not None}

    def timed(self, model, key, x) -> float:
        """Seconds of ``model(x)``: x a token (a step, as decoding takes it) or positions (a verify pass)."""
        sync_device(self.device)
        t0 = self.clock()
        for _ in range(self.calls):
            model(x, self.caches[key])
            self.caches[key].crop(self.n[key])
        sync_device(self.device)
        return (self.clock() - t0) / self.calls

    def after_verify(self, g, call, prepare=lambda: None) -> float:
        """Seconds of ``call()``, each right after an untimed verify pass of g + 1 positions."""
        total = 0.0
        for _ in range(self.calls):
            self.target(self.widths[g], self.caches["t"])
            self.caches["t"].crop(self.n["t"])
            prepare()
            sync_device(self.device)
            t0 = self.clock()
            call()
            sync_device(self.device)
            total += self.clock() - t0
            self.caches["d"].crop(self.n["d"])
        return total / self.calls

    def drafted(self, g) -> float:
        """g drafter steps after a verify pass, as in a round; seconds per step."""
        token = self.ids[-1]
        return self.after_verify(g, lambda: [self.steps["d"](token, self.caches["d"]) for _ in range(g)]) / g

    def fed(self, g, m) -> float:
        """The round's first drafter call over m positions, after a verify pass; seconds."""
        target, drafter = self.target, self.drafter
        tokens, width = torch.tensor([self.ids[-1:] * m], device=self.device), target.config.n_embd

        def queue():  # the real features the verify pass hands the EAGLE drafter
            if drafter.reads_features():
                self.caches["d"].queue = torch.zeros(m, width, device=self.device, dtype=target.wte.weight.dtype)
        return self.after_verify(g, lambda: drafter.model(tokens, self.caches["d"], last_only=True), queue)


def profile(pair, gammas=(2, 4, 6), n_tokens: int = 150, temperature: float = 1.0, repeats: int = 3,
            seed: int = 0, prompts=None) -> dict:
    """The seven parts of a round per gamma (ms per round, the minimum over interleaved repeats of each
    part's mean), the floors of the model parts, plain decoding's step and its floor, and the speedup
    predicted from costs measured apart against the measured one."""
    device = pair.target.wte.weight.device
    clock_name, clock = bench_clock(device)
    sampling = Sampling(temperature)
    prompts = prompts or heldout_prompts()
    encoded = [api.encode_prompt(pair, p) for p in prompts]
    rates = probe(device, dtype=pair.target.wte.weight.dtype)
    m = _rounds_timed(pair, encoded, gammas, n_tokens, sampling, seed, clock, device, repeats)
    plain = m["plain"]
    apart = costs_apart(pair, encoded[0], gammas, clock, device, feeds=m["feeds"])
    n_ctx = len(encoded[0]) + n_tokens // 2  # the cache's length midway through a generation
    draft_model = model_of(pair)
    results = [_result_row(pair, draft_model, g, m, apart, plain * n_tokens * len(encoded), n_ctx, rates)
               for g in gammas]
    return {"device": str(device), "machine": machine(device), "dtype": dtype_name(pair.target), "clock": clock_name,
            "draft": pair.draft_name, "prompts": len(prompts),
            "tokens": n_tokens, "repeats": repeats, "temperature": temperature,
            "probe": {"gflops_per_s": round(rates["flops_per_s"] / 1e9, 2),
                      "gbytes_per_s": round(rates["bytes_per_s"] / 1e9, 2)},
            "plain_step_ms": round(1e3 * plain, 4),
            "plain_floor_ms": round(1e3 * pass_floor(pair.target, 1, n_ctx, rates), 4),
            "target_step_apart_ms": round(1e3 * apart["target"], 4),
            "draft_step_apart_ms": {g: round(1e3 * apart["draft"][g], 4) for g in gammas},
            "draft_feed_apart_ms": {g: {w: round(1e3 * s, 4) for w, s in apart["feed"][g].items()} for g in gammas},
            "results": results}


def _rounds_timed(pair, encoded, gammas, n_tokens, sampling, seed, clock, device, repeats) -> dict:
    """Plain decoding and each gamma's profiled rounds, interleaved over ``repeats`` (gammas in a rotated
    order): "plain" (seconds a token), per gamma "best" (seconds a round per part), "decode" (seconds),
    and from the first repeat "accepted" (per round), "steps" (drafter passes), "rounds" and "feeds"
    (the drafter's calls over several positions: {width: count})."""
    best = {g: {k: float("inf") for k in PARTS} for g in gammas}
    decode = {g: float("inf") for g in gammas}
    plain, accepted, steps = float("inf"), {g: [] for g in gammas}, {g: 0 for g in gammas}
    rounds, feeds = {g: 0 for g in gammas}, {g: Counter() for g in gammas}
    with torch.inference_mode():
        for rep in range(repeats):
            t = sum(plain_generate(pair.target, ids, n_tokens, sampling, seed + i, clock=clock).seconds["decode"]
                    for i, ids in enumerate(encoded))
            plain = min(plain, t / (n_tokens * len(encoded)))
            for g in (gammas[rep % len(gammas):] + gammas[:rep % len(gammas)]):  # a rotated order
                runs = [profiled_run(pair, ids, n_tokens, g, sampling, seed + i, clock, device)
                        for i, ids in enumerate(encoded)]
                n_rounds = sum(r["rounds"] for r in runs)
                for k in PARTS:
                    best[g][k] = min(best[g][k], sum(r["parts"][k] for r in runs) / n_rounds)
                decode[g] = min(decode[g], sum(r["decode"] for r in runs))
                if rep == 0:
                    accepted[g] = [k for r in runs for k in r["accepted"]]
                    steps[g], rounds[g] = sum(r["steps"] for r in runs), n_rounds
                    for r in runs:  # the drafter's calls over several positions (one position is a step)
                        feeds[g].update({m: k for m, k in r["feeds"].items() if m > 1})
    return {"plain": plain, "best": best, "decode": decode, "accepted": accepted, "steps": steps,
            "rounds": rounds, "feeds": feeds}


def _result_row(pair, draft_model, g, m, apart, plain_s, n_ctx, rates) -> dict:
    """Gamma g's row: its parts and their floors, and the speedup predicted from the costs ``apart``
    against the measured one (``plain_s``: plain decoding's seconds for the same tokens)."""
    accepted, steps, rounds, feeds = m["accepted"][g], m["steps"][g], m["rounds"][g], m["feeds"][g]
    tokens_per_round = sum(k + 1 for k in accepted) / len(accepted)
    measured = plain_s / m["decode"][g]
    # the round's drafting, apart: its steps, and its first call where that reads several positions
    fed = sum(feeds.values())
    feed_s = sum(k * apart["feed"][g][w] for w, k in feeds.items())
    drafting = ((steps - fed) * apart["draft"][g] + feed_s) / rounds
    c, v = drafting / (g * apart["target"]), apart["verify"][g] / apart["target"]  # c: per drafted token
    predicted = float(formulas.refined_speedup(tokens_per_round, g, c, v))
    floors = {"draft compute": ((steps - fed) * pass_floor(draft_model, 1, n_ctx, rates) +
                                sum(k * pass_floor(draft_model, w, n_ctx, rates) for w, k in feeds.items()))
              / rounds if draft_model else 0.0,
              "verify compute": pass_floor(pair.target, g + 1, n_ctx, rates)}
    return {"gamma": g, "ms_per_round": {k: round(1e3 * m["best"][g][k], 4) for k in PARTS},
            "floor_ms": {k: round(1e3 * floors.get(k, 0.0), 4) for k in PARTS},
            "draft_steps_per_round": round(steps / rounds, 3),
            "feeds_per_round": {w: round(k / rounds, 4) for w, k in sorted(feeds.items())},
            "tokens_per_round": round(tokens_per_round, 4), "speedup": round(measured, 4),
            "cost_apart": round(c, 4), "verify_ratio_apart": round(v, 4),
            "predicted_apart": round(predicted, 4), "ratio_apart": round(measured / predicted, 4)}
