"""Chain, block and tree verification side by side on the tiny GPT: tokens per pass and measured speedup.

A scheme is ``chain:G`` (token-wise verification of G drafts), ``block:G``
(block verification of the same chain) or ``tree:W1,W2,...[:iid|distinct]``
(a draft tree): the grammar of ``specsim.schemes``, every scheme run by the
one decoder (``specsim.gpt.decode``). For each the bench reports

* ``drafted_tokens``: drafts scored per verify pass (G, or W1 + W1 W2 + ...; the most, for
  ``chain:max=G,stop=T`` and ``tree:dynamic,budget=B,...``), and ``drafts_per_round``, measured;
* ``tokens_per_pass``: generated tokens / target passes;
* ``alpha``: accepted / tried drafts (for a tree: accepted / tried children);
* ``verify_cost``: one verify pass over its drafted_tokens + 1 positions (with
  the scheme's own mask and the sampling of every row) in target steps;
* ``speedup``: its tokens/s over plain decoding of the same target in the
  same run, runs interleaved, the median of ``repeats`` ratios.

tokens_per_pass / verify_cost is what the scheme could reach with a free
drafter; the drafter's passes and the loop's own work take the rest.
Prompts are the held-out ones of ``specsim.gpt.measure.bench``; a generation that
would run past the context window slides it, and ``slides`` counts it.

>>> [s.name for s in parse_list("chain:4; block:4; tree:2,2,1; tree:3,1:distinct")]
['chain:4', 'block:4', 'tree:2,2,1', 'tree:3,1:distinct']
>>> [s.drafted_tokens for s in parse_list("chain:4;tree:2,2,1")]
[4, 10]
"""
from __future__ import annotations

import statistics

import torch

from ...bench.timing import measure
from ...rule import CORRECT
from ...schemes import masks, parse_list
from .. import api
from .bench import heldout_prompts, sync_device
from ..decode import plain_generate, speculative_generate
from ..tree_decode import tree_drafter, tree_mask

COST_STEPS = 20  # passes per timing of one pass kind
COST_REPEATS = 5  # timings per pass kind (interleaved); the median is kept


def generate(pair, scheme, ids, n_tokens: int, sampling, seed: int, rule=CORRECT):
    """One generation of ``scheme`` (verified by ``rule``) on the pair's target and a fresh drafter."""
    return speculative_generate(pair.target, pair.drafter(), ids, n_tokens, scheme, sampling, seed, rule=rule)


@torch.inference_mode()
def verify_costs(target, prompt_ids, schemes, sampling, steps: int | None = None,
                 repeats: int | None = None) -> dict:
    """Seconds of one target step, and of each scheme's verify pass, after ``prompt_ids`` are cached.

    Each timed as the decoders run it, with the sampling of its rows: a chain
    (token-wise or block) with the default lower-right mask, a tree with its
    tree mask and position ids. Kinds are interleaved within each repeat.
    """
    steps, repeats = steps or COST_STEPS, repeats or COST_REPEATS
    device = target.wte.weight.device
    cache = target.new_cache()
    target(torch.tensor([prompt_ids[:-1]], device=device), cache)
    n, tok = cache.length, torch.tensor([prompt_ids[-1:]], device=device)  # (1, 1)

    def step():
        sampling.row(target(tok, cache, last_only=True)[0])
        cache.crop(n)

    def verify_fn(s):
        idx = tok.repeat(1, s.drafted_tokens + 1)  # (1, m + 1)
        if s.kind not in ("tree", "dynamic"):
            return lambda: (sampling.row(target(idx, cache)[0]), cache.crop(n))
        parents = s.parents() if s.kind == "tree" else [-1] * s.drafted_tokens  # a dynamic layout: one as large
        mask = tree_mask(parents, n, device)  # (m + 1, n + m + 1)
        pos = torch.tensor(masks.tree_positions(parents, n), device=device)
        return lambda: (sampling.row(target(idx, cache, pos=pos, mask=mask)[0]), cache.crop(n))

    fns = {"target": step} | {s.name: verify_fn(s) for s in schemes}
    seconds = {k: [] for k in fns}
    for fn in fns.values():
        fn()  # warm-up
    for _ in range(repeats):
        for k, fn in fns.items():
            t = measure(lambda: [fn() for _ in range(steps)], sync=lambda: sync_device(device))
            seconds[k].append(t.median / steps)
    return {k: statistics.median(v) for k, v in seconds.items()}


def bench_schemes(pair, schemes, n_tokens: int = 150, temperature: float = 1.0, repeats: int = 3, seed: int = 0,
                  prompts=None, limit=None, rules=None) -> dict:
    """Every scheme against plain decoding on the held-out prompts; returns the JSON-ready dict.

    ``limit``: a ``specsim.bounds.Budget`` (the CLI's --max-work) for ``bounds.check_gpt``;
    ``rules``: one rule per scheme (default the correct rule; ``bench_rules`` passes the gallery's),
    row i is scheme i with rule i."""
    from ...bounds import check_gpt
    schemes = parse_list(schemes) if isinstance(schemes, str) else list(schemes)
    rules = list(rules) if rules is not None else [CORRECT] * len(schemes)
    if any(s.kind in ("tree", "dynamic") for s in schemes):
        tree_drafter(pair.drafter())  # a one-line refusal before any timing (lookup drafts no trees)
    prompts = prompts or heldout_prompts()
    check_gpt(n_tokens, [s.drafted_tokens for s in schemes] + [0], runs=len(prompts) * repeats, limit=limit,
              lower="the number of tokens, the repeats or the schemes")
    ids = [api.encode_prompt(pair, p) for p in prompts]
    sampling = api.sampling(temperature)
    device = pair.device
    costs = verify_costs(pair.target, ids[0], schemes, sampling)

    def timed(fn):  # every prompt once: (generations, seconds)
        t = measure(lambda: [fn(i, s) for s, i in enumerate(ids)], sync=lambda: sync_device(device))
        return t.result, t.seconds[0]

    plain = lambda i, s: plain_generate(pair.target, i, n_tokens, sampling, seed + s)  # noqa: E731
    runs = {n: (lambda i, k, s=s, r=r: generate(pair, s, i, n_tokens, sampling, seed + k, r))
            for n, (s, r) in enumerate(zip(schemes, rules))}
    plain_generate(pair.target, ids[0], 8, sampling, seed)  # warm-up: every code path once
    for s, r in zip(schemes, rules):
        generate(pair, s, ids[0], 8, sampling, seed, r)
    plain_tps, tps, ratios, gens = [], {k: [] for k in runs}, {k: [] for k in runs}, {}
    for _ in range(repeats):  # interleaved: plain, then every scheme, in each repeat
        _, t = timed(plain)
        plain_tps.append(len(ids) * n_tokens / t)
        for k, fn in runs.items():
            gens[k], t = timed(fn)
            tps[k].append(len(ids) * n_tokens / t)
            ratios[k].append(tps[k][-1] / plain_tps[-1])
    rows = []
    for n, s in enumerate(schemes):
        g = gens[n]
        passes = sum(x.target_passes for x in g)
        checked = sum(len(r.accepted_flags) for x in g for r in x.rounds)
        rows.append({
            "scheme": s.name, "kind": s.kind,
            "tree": list(s.shape) if s.kind == "tree" else [1] * s.gamma if hasattr(s, "gamma") else None,
            "drafts": s.drafts if s.kind == "tree" else None,
            "drafted_tokens": s.drafted_tokens,
            "drafts_per_round": round(sum(len(r.drafts) for x in g for r in x.rounds) / passes, 3),
            "tokens_per_pass": round(len(ids) * n_tokens / passes, 4),
            "alpha": round(sum(r.accepted for x in g for r in x.rounds) / checked, 4) if checked else None,
            "verify_cost": round(costs[s.name] / costs["target"], 4),
            "speedup": round(statistics.median(ratios[n]), 4),
            "tokens_per_s": round(statistics.median(tps[n]), 1),
            "draft_passes_per_round": round(sum(x.draft_passes for x in g) / passes, 3),
            "slides": sum(r.slid for x in g for r in x.rounds)})
    return {"schemes": rows, "plain_tokens_per_s": round(statistics.median(plain_tps), 1),
            "target_step_ms": round(costs["target"] * 1e3, 4), "device": str(device), "draft": pair.draft_name,
            "temperature": temperature, "tokens": n_tokens, "prompts": len(ids),
            "prompt_chars": [len(i) for i in ids], "repeats": repeats, "seed": seed,
            "threads": torch.get_num_threads()}


def bench_shipped(schemes, n_tokens: int = 60, repeats: int = 1, n_prompts: int = 2, draft: str = "distilled",
                  device: str = "cpu") -> dict:
    """``bench_schemes`` on the shipped pair, loaded here (for a worker process that gets only plain values)."""
    from ..api import load_pair
    from .bench import heldout_prompts
    return bench_schemes(load_pair(draft, device), schemes, n_tokens=n_tokens, repeats=repeats,
                         prompts=heldout_prompts(n_prompts))
