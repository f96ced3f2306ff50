"""``specsim gpt selfcheck``: the first command to run on a new machine (a GPU above all).

Each check compares one quantity computed two ways on the shipped pair, on the chosen device:

1. greedy speculative decoding (chain, block, tree; and the EAGLE drafter's chain and tree) emits
   exactly plain greedy decoding's text (a bfloat16 target: up to a tie, ``bf16_tie``);
2. after tree rounds that keep a gathered path, both KV caches equal a fresh forward pass over
   the accepted text (within ``cache_tolerance``: the same numbers computed in two attention shapes);
   after sampled EAGLE rounds, its cache (keys, values, predicted features) and the queue of the
   target's features equal a fresh start over the same text;
3. the one-pass tree mask built on the device equals the numpy reference, cell for cell;
4. the first emitted token of a γ = 1 round follows p: the exact engine enumerates the round on
   float64 copies of the models and the distribution equals p within ``EXACT_TOL``;
5. a short bench (``bench.bench`` on one prompt, γ 2 and 4): the measured speedup with c and v
   timed inside the rounds and the prediction from them, figures, not verdicts (no pass/fail on
   timings).

``run_selfcheck(device, dtype=...)`` checks the pair with its target in float32 (the default) or
bfloat16 (``api.load_pair``). In bfloat16 a logit carries 8 significant bits, and a pass over six
positions need not round every number as a pass over one does: measured on the shipped target (one
CPU thread, oneDNN), logits of the same position differ by up to one unit in the last place (at
most 1/16 on the selfcheck's text, whose largest logits reach 13, where the unit is 1/16), so two logits
within that distance can swap places or tie exactly. Greedy
decoding then picks a different character at such a tie, and the two texts part there: an argmax
flip of bfloat16 rounding, not a broken rule (the rule's exactness is check 4, on the same rounded
weights in float64). Check 1 says where it happened and passes only when plain's top two logits
were within ``TIE_EPS`` x eps x the larger there.

``run_selfcheck`` returns a ``SelfCheck`` (a list of ``Check`` and the bench figures); the CLI
prints one line per check. A device that is not there is refused by ``api.resolve_device`` in one
line before anything loads.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

import torch

from .. import api

from ... import sampling as toy_sampling
from ...schemes import Tree, masks
from ..decode import Sampling, Context, one_round
from ..decode import speculative_generate as decode_speculative
from ..drafters import ModelDrafter
from ..exact_adapter import GPTPair
from ..tree_decode import tree_mask

PROMPT = "def __init__(self, "
GREEDY_TOKENS = 120  # characters of greedy text compared per scheme
CACHE_ATOL = 1e-4  # float32 keys and values written by two differently shaped passes
TIE_EPS = 2  # bfloat16: two logits within 2 eps x |the larger| (two units in the last place) are a tie
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
    dtype: str = "float32"  # the target's
    checks: list = field(default_factory=list)
    bench: dict = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)

    def to_dict(self) -> dict:
        return {"device": self.device, "dtype": self.dtype, "passed": self.passed,
                "checks": [asdict(c) for c in self.checks],
                "bench": self.bench}


# -- 1. greedy equality ------------------------------------------------------------------
GREEDY_SCHEMES = {"distilled": ("chain:4", "block:4", "tree:2,2,1"), "eagle": ("chain:4", "tree:2,2,1")}


def check_greedy(pair, schemes=GREEDY_SCHEMES["distilled"]) -> list:
    """One check per scheme: greedy speculative decoding with ``pair``'s drafter = plain greedy (a bfloat16
    target: or the texts part where plain's top two logits tie and the speculative text took the other
    one, ``bf16_tie``)."""
    plain = api.plain_generate(pair, PROMPT, GREEDY_TOKENS, greedy=True).tokens
    who = "" if pair.draft_name == "distilled" else f"{pair.draft_name} "
    out = []
    for name in schemes:
        g = api.speculative_generate(pair, PROMPT, GREEDY_TOKENS, name, greedy=True)
        first = next((i for i, (a, b) in enumerate(zip(g.tokens, plain)) if a != b), None)
        tie = None if first is None else bf16_tie(pair, pair.tokenizer.encode(PROMPT), plain, first, g.tokens[first])
        detail = (f"{GREEDY_TOKENS} characters equal plain greedy in {g.target_passes} target passes"
                  if first is None else f"differs from plain greedy at character {first}" + (
                      f", a bfloat16 tie: plain's top two logits there {tie[0]} and {tie[1]} are within "
                      f"{TIE_EPS} eps x the larger" if tie else ""))
        out.append(Check(f"greedy {who}{name} = plain greedy", first is None or tie is not None, detail))
    return out


@torch.inference_mode()
def plain_top(pair, prompt_ids: list, plain: list, i: int, k: int = 2) -> tuple[list, list]:
    """Plain decoding's ``k`` largest logits at character ``i`` and their tokens, recomputed the way plain
    decoding computes them: the prompt prefilled, then one position per pass."""
    target = pair.target
    ctx = Context([target], prompt_ids, target.wte.weight.device)
    for t in plain[:i]:
        target(ctx.pending, ctx.caches[0], last_only=True)
        ctx.pending = torch.tensor([[t]], device=ctx.device)
    top = target(ctx.pending, ctx.caches[0], last_only=True)[0, -1].float().topk(k)
    return top.values.tolist(), top.indices.tolist()


def bf16_tie(pair, prompt_ids: list, plain: list, i: int, chosen: int | None = None) -> tuple | None:
    """Plain decoding's top two logits at character ``i`` when the target is bfloat16, they lie within
    ``TIE_EPS`` x eps x |the larger| of each other and ``chosen`` (the speculative text's character there,
    if given) is one of those two; else None (float32: never a tie)."""
    dtype = pair.target.wte.weight.dtype
    if dtype != torch.bfloat16:
        return None
    top, tokens = plain_top(pair, prompt_ids, plain, i)
    if chosen is not None and chosen not in tokens:
        return None  # a third character: no rounding of two near-equal logits explains it
    return tuple(top) if top[0] - top[1] <= TIE_EPS * torch.finfo(dtype).eps * abs(top[0]) else None


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


def cache_tolerance(dtype, n_layer: int, scale: float) -> float:
    """How far the same cached numbers, computed by passes of two shapes, may lie apart.

    float32: ``CACHE_ATOL``. bfloat16 keeps 8 significant bits: a stored number is the nearest of a grid
    spaced eps = 2^-7 relative, and a pass of another shape, summing in another order, may land on the
    neighbouring point, a gap of up to eps x |value|; that layer's rounded output is the next layer's
    input, so each of ``n_layer`` layers can add such a gap: n_layer x eps x ``scale`` (the largest
    |value| compared). Measured on the shipped target: at most one unit in the last place (0.03 for
    values up to 5.7), a seventh of the tolerance."""
    if dtype != torch.bfloat16:
        return CACHE_ATOL
    return n_layer * torch.finfo(dtype).eps * scale


def _tolerance_text(pair, tol: float) -> str:
    if pair.target.wte.weight.dtype != torch.bfloat16:
        return f"tolerance {tol:.0e}"
    return f"tolerance {tol:.1e}: {pair.target.config.n_layer} layers x bfloat16 eps x the largest |value|"


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
    scale = max(ctx.caches[0].k.abs().max().item(), ctx.caches[0].v.abs().max().item())
    dtype = pair.target.wte.weight.dtype  # the model's: a CPU keeps bfloat16 values in a float32 cache
    tol = max(CACHE_ATOL, cache_tolerance(dtype, pair.target.config.n_layer, scale))
    return Check("caches = a fresh forward", worst <= tol,
                 f"largest gap {worst:.1e} over {rounds} tree rounds ({_tolerance_text(pair, tol)})")


@torch.inference_mode()
def check_eagle_cache(pair, rounds: int = 8) -> Check:
    """Sampled EAGLE rounds (chain and tree, T = 1), then its state against a fresh start over the text."""
    from ..eagle import EagleDrafter
    device = next(pair.target.parameters()).device
    worst, scale = 0.0, 0.0
    for k, scheme in enumerate(("chain:3", "tree:2,2,1")):
        drafter = EagleDrafter(pair.draft)
        ids = pair.tokenizer.encode(PROMPT)
        g = decode_speculative(pair.target, drafter, ids, rounds * 2, scheme, Sampling(), seed=k)
        ids = ids + [t for r in g.rounds for t in r.emitted]
        fresh = EagleDrafter(pair.draft)
        fresh.start(ids)
        real = pair.draft.features(ids[:-1])  # (L - 1, C): the target's features the drafter reads
        n, c, f = drafter.fed, drafter.cache, fresh.cache
        if c.length != n or c.queue is None or len(ids) - len(c.queue) != n:
            return Check("eagle cache = a fresh start", False, f"{scheme}: {c.length} slots cached, {n} expected")
        gaps = [(c.k[..., :n, :] - f.k[..., :n, :]), (c.v[..., :n, :] - f.v[..., :n, :]), (c.out[:n] - f.out[:n]),
                (c.queue - real[n - 1:].to(c.queue.device))]
        worst = max([worst] + [x.abs().max().item() for x in gaps if x.numel()])
        scale = max([scale] + [x.abs().max().item() for x in (f.k[..., :n, :], f.v[..., :n, :], f.out[:n], real)
                               if x.numel()])
    tol = max(CACHE_ATOL, cache_tolerance(pair.target.wte.weight.dtype, pair.target.config.n_layer, scale))
    return Check("eagle cache = a fresh start", worst <= tol,
                 f"largest gap {worst:.1e} after sampled chain and tree rounds ({_tolerance_text(pair, tol)})")


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
BENCH_GAMMAS = (2, 4)


def short_bench(pair) -> dict:
    """``bench.bench`` on ``PROMPT``: plain and every gamma of ``BENCH_GAMMAS`` interleaved, the best gamma's
    figures (its measured speedup with its interval, the prediction from the run's own c and v)."""
    from .bench import bench
    result = bench(pair, BENCH_GAMMAS, BENCH_TOKENS, repeats=BENCH_REPEATS, prompts=[PROMPT])
    best = next(r for r in result["results"] if r["gamma"] == result["best_gamma"])
    return {"tokens": BENCH_TOKENS, "repeats": BENCH_REPEATS, "clock": result["clock"],
            "plain_tokens_per_s": best["plain_tokens_per_s"], "gamma": best["gamma"],
            **{k: best[k] for k in ("spec_tokens_per_s", "speedup", "speedup_interval", "refined_speedup",
                                    "ratio", "alpha", "cost", "verify_ratio")}}


def run_selfcheck(device: str = "auto", with_bench: bool = True, dtype: str = "float32") -> SelfCheck:
    dev = api.resolve_device(device)
    pair = api.load_pair("distilled", device=str(dev), dtype=dtype)
    eagle = api.load_pair("eagle", device=str(dev), dtype=dtype)
    report = SelfCheck(str(dev), dtype)
    report.checks += check_greedy(pair) + check_greedy(eagle, GREEDY_SCHEMES["eagle"])
    report.checks += [check_caches(pair), check_eagle_cache(eagle)]
    report.checks.append(check_tree_mask(dev))
    report.checks.append(check_first_token(pair))
    if with_bench:
        report.bench = short_bench(pair)
    return report
