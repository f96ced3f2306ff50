"""``specsim gpt selfcheck``: the first command to run on a new machine (a GPU above all).

Each check compares one quantity computed two ways on the shipped pair, on the chosen device:

1. greedy speculative decoding (chain, block, tree) emits exactly plain greedy decoding's text;
2. after tree rounds that keep a gathered path, both KV caches equal a fresh forward pass over
   the accepted text (within ``CACHE_ATOL``: float32 logits computed in two attention shapes);
3. the one-pass tree mask built on the device equals the numpy reference, cell for cell;
4. the first emitted token of a γ = 1 round follows p: the exact engine enumerates the round on
   float64 copies of the models and the distribution equals p within ``EXACT_TOL``;
5. a short interleaved bench: plain and speculative generation timed in turn, the fastest run of
   each kept, so the ratio is a figure, not a verdict (no pass/fail on timings).

``run_selfcheck`` returns a ``SelfCheck`` (a list of ``Check`` and the bench figures); the CLI
prints one line per check. A device that is not there is refused by ``api.resolve_device`` in one
line before anything loads.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field

import torch

from .. import api

from ... import sampling as toy_sampling
from ...schemes import Tree, masks
from ..decode import Sampling, Context, one_round, sync_device
from ..drafters import ModelDrafter
from ..exact_adapter import GPTPair
from ..tree_decode import tree_mask

PROMPT = "def __init__(self, "
GREEDY_TOKENS = 120  # characters of greedy text compared per scheme
CACHE_ATOL = 1e-4  # float32 keys and values written by two differently shaped passes
EXACT_TOL = 1e-9  # float64 enumeration against p
BENCH_TOKENS, BENCH_REPEATS = 100, 3


@dataclass
class Check:
    name: str
    passed: bool
    detail: str


@dataclass
class SelfCheck:
    device: str
    checks: list = field(default_factory=list)
    bench: dict = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)

    def to_dict(self) -> dict:
        return {"device": self.device, "passed": self.passed, "checks": [asdict(c) for c in self.checks],
                "bench": self.bench}


# -- 1. greedy equality ------------------------------------------------------------------
def check_greedy(pair) -> list:
    plain = api.plain_generate(pair, PROMPT, GREEDY_TOKENS, greedy=True).tokens
    runs = {"chain:4": api.speculative_generate(pair, PROMPT, GREEDY_TOKENS, 4, greedy=True),
            "block:4": api.block_generate(pair, PROMPT, GREEDY_TOKENS, 4, greedy=True),
            "tree:2,2,1": api.tree_generate(pair, PROMPT, GREEDY_TOKENS, (2, 2, 1), greedy=True)}
    out = []
    for name, g in runs.items():
        first = next((i for i, (a, b) in enumerate(zip(g.tokens, plain)) if a != b), None)
        detail = (f"{GREEDY_TOKENS} characters equal plain greedy in {g.target_passes} target passes"
                  if first is None else f"differs from plain greedy at character {first}")
        out.append(Check(f"greedy {name} = plain greedy", first is None, detail))
    return out


# -- 2. caches after tree rounds -------------------------------------------------------------
def _cache_gap(model, cache, ids, device) -> float:
    """Largest |difference| between ``cache`` and a fresh forward over ``ids``; inf on a length mismatch."""
    fresh = model.new_cache()
    model(torch.tensor([ids], device=device), fresh)
    L = len(ids)
    if cache.length != L:
        return float("inf")
    return max((cache.k[:, :, :, :L] - fresh.k[:, :, :, :L]).abs().max().item(),
               (cache.v[:, :, :, :L] - fresh.v[:, :, :, :L]).abs().max().item())


@torch.inference_mode()
def check_caches(pair, rounds: int = 8) -> Check:
    device = next(pair.target.parameters()).device
    drafter = ModelDrafter(pair.draft, pair.draft_name)
    ctx = Context([pair.target], pair.tokenizer.encode(PROMPT), device)
    drafter.start(ctx.view)
    rng, worst = toy_sampling.make_rng(1), 0.0
    for _ in range(rounds):
        one_round(pair.target, drafter, ctx, Tree((2, 2, 1)), Sampling(), rng)
        worst = max(worst, _cache_gap(pair.target, ctx.caches[0], ctx.view[:-1], device),
                    _cache_gap(pair.draft, drafter.cache, ctx.view[:drafter.fed], device))
    return Check("caches = a fresh forward", worst <= CACHE_ATOL,
                 f"largest gap {worst:.1e} over {rounds} tree rounds (tolerance {CACHE_ATOL:.0e})")


# -- 3. the tree mask --------------------------------------------------------------------------
def check_tree_mask(device: torch.device) -> Check:
    cases = [(masks.shape_parents((2, 2, 1)), 5), (masks.shape_parents((3, 1), "bfs"), 0)]
    bad = [n for parents, n in cases
           if tree_mask(parents, n, device).cpu().numpy().tolist() != masks.tree_grid(parents, n).tolist()]
    return Check("tree mask = reference", not bad, f"{len(cases)} masks built on {device.type}, "
                 + ("all equal" if not bad else f"{len(bad)} differ"))


# -- 4. the first token follows p ------------------------------------------------------------
def check_first_token(pair) -> Check:
    from ...exact import check_exactness
    models = GPTPair(pair.target, pair.draft, pair.vocab)
    [result] = check_exactness(models, 1, [1], contexts=[tuple("def")], tolerance=EXACT_TOL)
    return Check("first token follows p (exact, γ 1)", result.exact,
                 f"enumerated on float64 rows after 'def': within {EXACT_TOL:.0e} of p"
                 if result.exact else "the round's first token does not follow p")


# -- 5. a short bench --------------------------------------------------------------------------
def bench(pair, device: torch.device) -> dict:
    """Plain and speculative (chain:4, T = 1) timed in turn; the fastest of ``BENCH_REPEATS`` each."""
    times = {"plain": [], "chain:4": []}
    for seed in range(BENCH_REPEATS):
        for name in times:
            sync_device(device)
            start = time.perf_counter()
            if name == "plain":
                api.plain_generate(pair, PROMPT, BENCH_TOKENS, seed=seed)
            else:
                api.speculative_generate(pair, PROMPT, BENCH_TOKENS, 4, seed=seed)
            sync_device(device)
            times[name].append(time.perf_counter() - start)
    fastest = {k: min(v) for k, v in times.items()}
    return {"tokens": BENCH_TOKENS, "repeats": BENCH_REPEATS,
            "plain_tokens_per_s": round(BENCH_TOKENS / fastest["plain"], 1),
            "speculative_tokens_per_s": round(BENCH_TOKENS / fastest["chain:4"], 1),
            "speedup_fastest": round(fastest["plain"] / fastest["chain:4"], 3),
            "spread_s": {k: [round(min(v), 4), round(max(v), 4)] for k, v in times.items()}}


def run_selfcheck(device: str = "auto", with_bench: bool = True) -> SelfCheck:
    dev = api.resolve_device(device)
    pair = api.load_pair("distilled", device=str(dev))
    report = SelfCheck(str(dev))
    report.checks += check_greedy(pair)
    report.checks.append(check_caches(pair))
    report.checks.append(check_tree_mask(dev))
    report.checks.append(check_first_token(pair))
    if with_bench:
        report.bench = bench(pair, dev)
    return report
