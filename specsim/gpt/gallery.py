"""The drafter gallery: every drafter on the same target and prompts, measured side by side.

For each drafter spec (``specsim.gpt.drafters``) and each prompt set the
gallery reports

* ``alpha`` = accepted / verified drafts over all rounds, with its standard
  error (``specsim.stats.ratio_se`` over rounds that verified a draft);
* ``cost`` c = seconds per drafted token and ``verify_ratio`` v = seconds
  per verify pass, both timed inside the speculative rounds themselves
  (``bench.in_round_costs``) and counted in plain decoding's seconds per
  token in the same repeat; for prompt lookup a "drafted token" is a
  proposal slot (its rounds may propose fewer than gamma);
* ``tokens_per_pass`` = generated tokens / target passes (plain decoding: 1);
* ``drafted_per_round``: lookup proposes fewer than gamma tokens when its
  match is short or absent;
* ``best_gamma`` and ``formula_speedup``: ``specsim.formulas.best_gamma`` with
  the measured alpha and c over gamma = 1..``MAX_GAMMA`` (the i.i.d. formula:
  for lookup, whose drafts are not i.i.d. and vary in length, a rough guide);
* ``speedup``: plain decoding seconds / speculative decoding seconds for the
  same prompts, seeds and number of tokens (prefill apart), each the
  minimum over ``repeats`` interleaved runs (``speedup_interval``: [min,
  max] of the per-repeat speedups); the clock is ``bench.bench_clock``'s.

Two prompt sets: ``heldout`` (``bench.heldout_prompts``: held-out corpus
files) and ``repetitive`` (``repetitive_prompts``: a held-out code block of at
least three lines written twice and then started a third time, so the
continuation repeats earlier lines -- where lookup shines).
"""
from __future__ import annotations

import torch

from .. import formulas
from ..stats import ratio_se
from . import api
from .measure import bench
from .train import corpus
from .decode import plain_generate, speculative_generate
from . import specs

MAX_GAMMA = 8
PROMPT_CHARS = 148  # a repetitive prompt's most characters: it, 100 tokens and a round's drafts fit 256
STARTS = ("def ", "class ", "if ", "for ", "while ", "with ", "try:")
BLOCK_LINES = 3  # at least this many lines, so the copy has something left to repeat after its first line


def _repeated(block: list) -> str:
    text = "\n".join(block) + "\n"
    return text + text + block[0] + "\n"


def repetitive_prompts(n: int | None = None, chars: int = PROMPT_CHARS, lines: int = BLOCK_LINES) -> list[str]:
    """Held-out code written twice, then its first line a third time: the continuation is
    invited to repeat lines 2, 3, ... The block starts at a line that opens a statement (``STARTS``), holds
    at least ``lines`` whole non-blank lines, and the prompt at most ``chars`` characters;
    the first ``n`` such blocks, each from a part of the text well after the previous one."""
    _, val = corpus.shipped_splits()
    text = val.split("\n")
    out, i, n = [], 0, n or bench.N_PROMPTS
    while len(out) < n and i < len(text):
        if text[i].lstrip().startswith(STARTS):
            j = i
            while j < len(text) and text[j].strip() and len(_repeated(text[i:j + 1])) <= chars:
                j += 1
            if j - i >= lines:
                out.append(_repeated(text[i:j]))
                i = j + 100  # the next block from a part well ahead
                continue
        i += 1
    return out


PROMPT_SETS = {"heldout": bench.heldout_prompts, "repetitive": repetitive_prompts}


def alpha_estimate(generations) -> dict:
    """alpha, its standard error and counts from the rounds of ``generations``."""
    rounds = [r for g in generations for r in g.rounds]
    checked = [len(r.accepted_flags) for r in rounds]
    acc = [r.accepted for r in rounds]
    pairs = [(a, c) for a, c in zip(acc, checked) if c]
    out = {"accepted": sum(acc), "verified": sum(checked), "rounds": len(rounds),
           "drafted": sum(len(r.drafts) for r in rounds)}
    if len(pairs) >= 2:
        e = ratio_se(*zip(*pairs))
        out.update(alpha=e.value, alpha_se=e.se)
    else:
        out.update(alpha=(sum(acc) / sum(checked)) if sum(checked) else float("nan"), alpha_se=float("nan"))
    return out


def drafter_cost(pair, ids, gamma: int, sampling, tokens: int = 40, seed: int = 0) -> dict:
    """Seconds per target step and per drafted token, and their ratio c, timed as ``bench`` does: one
    plain and one speculative generation of ``tokens`` after ``ids`` (each after an untimed one), c
    from the speculative rounds' own drafting time (``bench.in_round_costs``)."""
    _, clock = bench.bench_clock(pair.device)
    for _ in range(2):  # the first pair untimed: start-up costs land there
        plain = plain_generate(pair.target, ids, tokens, sampling, seed, clock=clock)
        spec = speculative_generate(pair.target, pair.drafter(), ids, tokens, gamma, sampling, seed, clock=clock)
    target = plain.seconds["decode"] / tokens
    per_token = bench.in_round_costs([spec], gamma)["draft"]
    return {"target_s": target, "draft_s": per_token, "cost": per_token / target}


def run_set(pairs: dict, prompts: list, n_tokens: int, gamma: int, temperature: float,
            repeats: int, seed: int) -> list:
    """One row per drafter on one prompt set (see the module docstring)."""
    any_pair = next(iter(pairs.values()))
    ids = [any_pair.tokenizer.encode(p) for p in prompts]
    sampling = api.sampling(temperature)
    target = any_pair.target
    _, clock = bench.bench_clock(any_pair.device)

    def plain():
        return [plain_generate(target, i, n_tokens, sampling, seed + s, clock=clock) for s, i in enumerate(ids)]

    def spec(pair):
        return [speculative_generate(target, pair.drafter(), i, n_tokens, gamma, sampling, seed + s, clock=clock)
                for s, i in enumerate(ids)]

    decoding = lambda gens: sum(g.seconds["decode"] for g in gens)  # noqa: E731
    plain()  # warm-up: every arm once, untimed
    for pair in pairs.values():
        spec(pair)
    t_plain, t_spec, costs, gens = [], {name: [] for name in pairs}, {name: [] for name in pairs}, {}
    for _ in range(repeats):  # interleave plain and every drafter in each repeat
        t_plain.append(decoding(plain()))
        for name, pair in pairs.items():
            gens[name] = spec(pair)
            t_spec[name].append(decoding(gens[name]))
            costs[name].append(bench.in_round_costs(gens[name], gamma))
    step = min(t_plain) / (len(ids) * n_tokens)  # plain decoding's seconds per token: the target step
    rows = []
    for name, pair in pairs.items():
        est = alpha_estimate(gens[name])
        cost = min(c["draft"] for c in costs[name]) / step
        passes = sum(g.target_passes for g in gens[name])
        speedups = [p / t for p, t in zip(t_plain, t_spec[name])]
        row = {"drafter": name, "alpha": est["alpha"], "alpha_se": est["alpha_se"],
               "verified": est["verified"], "cost": cost,
               "verify_ratio": min(c["verify"] for c in costs[name]) / step,
               "tokens_per_pass": len(ids) * n_tokens / passes,
               "drafted_per_round": est["drafted"] / est["rounds"],
               "speedup": min(t_plain) / min(t_spec[name]), "speedup_interval": [min(speedups), max(speedups)],
               "speedups": speedups}
        a = est["alpha"]
        if a == a:  # not nan
            g_best, s_best = formulas.best_gamma(min(max(a, 0.0), 0.999999), max(cost, 1e-9), MAX_GAMMA)
            row.update(best_gamma=g_best, formula_speedup=float(s_best))
        else:
            row.update(best_gamma=None, formula_speedup=None)
        rows.append(row)
    return rows


def gallery(drafters=None, sets=("heldout", "repetitive"), n_tokens: int = 100,
            gamma: int = 4, temperature: float = 1.0, repeats: int = 3, seed: int = 0,
            device: str = "cpu", n_prompts: int | None = None, progress=None) -> dict:
    """The whole gallery as a JSON-ready dict: {"settings", "sets": {set: [row, ...]}}.

    ``drafters``: specs (default: those the registry offers, ``specs.gallery()``). ``progress(fraction,
    text)``, when given, is called before each prompt set and at the end.
    """
    drafters = specs.gallery() if drafters is None else drafters
    for name in sets:
        if name not in PROMPT_SETS:
            raise ValueError(f"unknown prompt set {name!r}; choose {', '.join(PROMPT_SETS)}")
    pairs = {spec: api.load_pair(spec, device) for spec in drafters}
    out = {"settings": {"drafters": list(drafters), "tokens": n_tokens, "gamma": gamma,
                        "temperature": temperature, "repeats": repeats, "seed": seed,
                        "device": str(next(iter(pairs.values())).device), "statistic": "minimum over repeats",
                        "clock": bench.bench_clock(next(iter(pairs.values())).device)[0],
                        "threads": torch.get_num_threads()}, "sets": {}}
    for k, name in enumerate(sets):
        if progress:
            progress(k / len(sets), f"prompt set {k + 1} of {len(sets)}: {name}")
        prompts = PROMPT_SETS[name](n_prompts)
        out["sets"][name] = run_set(pairs, prompts, n_tokens, gamma, temperature, repeats, seed)
    if progress:
        progress(1.0, "done")
    return out

