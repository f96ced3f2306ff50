"""Chain, block and tree verification side by side on the tiny GPT: tokens per pass and measured speedup.

A scheme is ``chain:G`` (token-wise verification of G drafts), ``block:G``
(block verification of the same chain) or ``tree:W1,W2,...[:iid|distinct]``
(a draft tree): the grammar of ``specsim.schemes``, every scheme run by the
one decoder (``specsim.gpt.decode``). For each the bench reports

* ``drafted_tokens``: drafts scored per verify pass (G, or W1 + W1 W2 + ...; the most, for
  ``chain:max=G,stop=T`` and ``tree:dynamic,budget=B,...``), and ``drafts_per_round``, measured;
* ``tokens_per_pass``: generated tokens / target passes;
* ``alpha``: accepted / tried drafts (for a tree: accepted / tried children);
* ``verify_cost``: one verify pass over the round's drafts + 1 positions (with
  the scheme's own mask and the sampling of every row), timed inside the
  rounds (``Round.seconds``), in units of plain decoding's time per token in
  the same run (a dynamic tree's or a stopped chain's: the mean over its
  rounds, whatever each drafted);
* ``speedup``: plain decoding time / speculative decoding time of the same
  prompts (prefill apart), runs interleaved, each the fastest of ``repeats``
  (load only adds time), with ``speedup_interval`` [min, max] of the
  per-repeat ratios; the clock is ``bench.bench_clock``'s.

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

from dataclasses import dataclass

import torch

from ...rule import CORRECT
from ...schemes import parse_list
from .. import api
from .bench import bench_clock, heldout_prompts, in_round_costs
from ..decode import plain_generate, speculative_generate
from ..rounds import gpt_round


def generate(pair, scheme, ids, n_tokens: int, sampling, seed: int, rule=CORRECT, clock=None):
    """One generation of ``scheme`` (verified by ``rule``) on the pair's target and a fresh drafter."""
    return speculative_generate(pair.target, pair.drafter(), ids, n_tokens, scheme, sampling, seed, rule=rule,
                                clock=clock)


def bench_schemes(pair, schemes, n_tokens: int = 150, temperature: float = 1.0, repeats: int = 3, seed: int = 0,
                  prompts=None, limit=None, rules=None) -> dict:
    """Every scheme against plain decoding on the held-out prompts; returns the JSON-ready dict.

    ``limit``: a ``specsim.bounds.Budget`` (the CLI's --max-work) for ``bounds.check_gpt``;
    ``rules``: one rule per scheme (default the correct rule; ``bench_rules`` passes the gallery's),
    row i is scheme i with rule i."""
    from ...bounds import check_gpt
    schemes = parse_list(schemes) if isinstance(schemes, str) else list(schemes)
    rules = list(rules) if rules is not None else [CORRECT] * len(schemes)
    drafter = pair.drafter()
    for s in schemes:  # a one-line refusal before any timing (lookup drafts no trees)
        gpt_round(s).drafter(drafter)
    prompts = prompts or heldout_prompts()
    check_gpt(n_tokens, [s.drafted_tokens for s in schemes] + [0], runs=len(prompts) * repeats, limit=limit,
              lower="the number of tokens, the repeats or the schemes")
    ids = [api.encode_prompt(pair, p) for p in prompts]
    sampling = api.sampling(temperature)
    _, clock = bench_clock(pair.device)
    t = time_schemes(pair, list(zip(schemes, rules)), ids, n_tokens, sampling, seed, clock, repeats)
    n_out = len(ids) * n_tokens
    step = min(t.plain) / n_out  # plain decoding's time per token: the target step
    rows = [scheme_row(s, t.gens[n], t.plain, t.spec[n], t.verify[n], step, n_out) for n, s in enumerate(schemes)]
    return {"schemes": rows, "plain_tokens_per_s": round(n_out / min(t.plain), 1),
            "target_step_ms": round(step * 1e3, 4), "statistic": "minimum over repeats", "device": str(pair.device),
            "draft": pair.draft_name, "temperature": temperature, "tokens": n_tokens, "prompts": len(ids),
            "prompt_chars": [len(i) for i in ids], "repeats": repeats, "seed": seed,
            "threads": torch.get_num_threads()}


@dataclass
class SchemeTimings:
    """What the interleaved repeats of ``bench_schemes`` recorded; scheme n is row n."""

    plain: list  # decoding seconds of all prompts, one per repeat
    spec: dict  # n -> the same for scheme n
    verify: dict  # n -> scheme n's seconds per verify pass (per round, whatever it drafted), one per repeat
    gens: dict  # n -> scheme n's generations in the last repeat


def time_schemes(pair, runs: list, ids, n_tokens: int, sampling, seed: int, clock, repeats: int) -> SchemeTimings:
    """Plain decoding, then every (scheme, rule) of ``runs``, on every prompt (prompt k with seed ``seed + k``),
    ``repeats`` times interleaved, after one short untimed run of each."""
    def timed(fn):  # every prompt once: (generations, decoding seconds)
        gens = [fn(i, s) for s, i in enumerate(ids)]
        return gens, sum(g.seconds["decode"] for g in gens)

    plain = lambda i, s: plain_generate(pair.target, i, n_tokens, sampling, seed + s, clock=clock)  # noqa: E731
    spec = {n: (lambda i, k, s=s, r=r: generate(pair, s, i, n_tokens, sampling, seed + k, r, clock))
            for n, (s, r) in enumerate(runs)}
    plain_generate(pair.target, ids[0], 8, sampling, seed)  # warm-up: every code path once
    for s, r in runs:
        generate(pair, s, ids[0], 8, sampling, seed, r)
    t = SchemeTimings([], {n: [] for n in spec}, {n: [] for n in spec}, {})
    for _ in range(repeats):  # interleaved: plain, then every scheme, in each repeat
        t.plain.append(timed(plain)[1])
        for n, fn in spec.items():
            t.gens[n], seconds = timed(fn)
            t.spec[n].append(seconds)
            t.verify[n].append(in_round_costs(t.gens[n], 1)["verify"])  # per round, whatever it drafted
    return t


def level_widths(scheme) -> list | None:
    """Children per node, level by level, of the scheme's fixed layout (a chain of G drafts: [1] * G), read
    from ``parents()``; None when the drafter's rows lay each round out (a dynamic tree's ``parents()``
    refuses without them)."""
    try:
        parents = scheme.parents()
    except ValueError:
        return None
    widths, node = [], -1
    while kids := [j for j, a in enumerate(parents) if a == node]:
        widths.append(len(kids))
        node = kids[0]
    return widths


def scheme_row(s, gens, plain_s: list, spec_s: list, verify_s: list, step: float, n_out: int) -> dict:
    """One scheme's row of ``bench_schemes``: its layout, what its rounds drafted and kept, and its timings
    (``plain_s``, ``spec_s``: decoding seconds per repeat; ``verify_s``: seconds per verify pass)."""
    passes = sum(x.target_passes for x in gens)
    checked = sum(len(r.accepted_flags) for x in gens for r in x.rounds)
    speedups = [p / t for p, t in zip(plain_s, spec_s)]
    widths = level_widths(s)
    return {
        "scheme": s.name, "kind": s.kind, "tree": widths,
        "drafts": s.drafts if widths is not None and s.draft_modes else None,  # how siblings are drawn: a fixed tree's
        "drafted_tokens": s.drafted_tokens,
        "drafts_per_round": round(sum(len(r.drafts) for x in gens for r in x.rounds) / passes, 3),
        "tokens_per_pass": round(n_out / passes, 4),
        "alpha": round(sum(r.accepted for x in gens for r in x.rounds) / checked, 4) if checked else None,
        "verify_cost": round(min(verify_s) / step, 4),
        "speedup": round(min(plain_s) / min(spec_s), 4),
        "speedup_interval": [round(min(speedups), 4), round(max(speedups), 4)],
        "tokens_per_s": round(n_out / min(spec_s), 1),
        "draft_passes_per_round": round(sum(x.draft_passes for x in gens) / passes, 3),
        "slides": sum(r.slid for x in gens for r in x.rounds)}


def bench_shipped(schemes, n_tokens: int = 60, repeats: int = 1, n_prompts: int = 2, draft: str = "distilled",
                  device: str = "cpu") -> dict:
    """``bench_schemes`` on the shipped pair, loaded here (for a worker process that gets only plain values)."""
    from ..api import load_pair
    from .bench import heldout_prompts
    return bench_schemes(load_pair(draft, device), schemes, n_tokens=n_tokens, repeats=repeats,
                         prompts=heldout_prompts(n_prompts))
