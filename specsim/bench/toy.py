"""Benchmarks of the toy engines: the exact proof against a naive enumeration, and the
vectorized Monte-Carlo against the per-round loop. Each returns a JSON-ready dict.

``specsim bench-exact`` and ``specsim bench-sample`` print these dicts; the
tiny GPT's benchmark lives in ``specsim.gpt.measure.bench``. All timing goes through
``specsim.bench.timing.measure``.
"""
from __future__ import annotations

import os

from .. import bounds, exact, montecarlo
from ..limits import LIMITS
from ..schemes import Block, Chain, Tree, as_scheme
from .timing import measure


def prove_all(model, gamma: int = 4, n_tokens: int = 3, naive: bool = False) -> bool:
    """The theorem from every context of ``model``: speculative joint == target joint (a chain of ``gamma``)."""
    joint = exact.naive_speculative_joint if naive else exact.speculative_joint
    return all(joint(model, ctx, Chain(gamma), n_tokens) == exact.target_joint(model, ctx, n_tokens)
               for ctx in model.contexts())


def bench_exact(repeats: int = 3, seed: int = 0, small: int = 8, large: int = 16) -> dict:
    """Median seconds of the exact proof (N = 3, γ = 4, every context) on random rational
    models of ``small`` and ``large`` tokens, and one run of the naive enumeration on the
    small one (it takes a minute or more at the default size). Seconds are reported as
    measured; the ratio is naive / fast median, rounded to one decimal."""
    from ..toy import random_model
    m_small, m_large = random_model(small, seed=seed), random_model(large, seed=seed)
    if not prove_all(m_small):  # checked once first (this run also warms up)
        raise ValueError("the exact proof failed on the benchmark model")
    fast_small = measure(lambda: prove_all(m_small), repeats)
    naive_small = measure(lambda: prove_all(m_small, naive=True)).best
    fast_large = measure(lambda: prove_all(m_large), repeats).median
    return {
        "task": "prove N=3 from every context, gamma=4, random rational model",
        "repeats": repeats, "statistic": "median seconds (naive: one run)",
        f"v{small}_fast_s": fast_small.median, f"v{small}_naive_s": naive_small,
        f"v{small}_ratio": round(naive_small / fast_small.median, 1), f"v{large}_fast_s": fast_large,
    }


def bench_sample(model, context, gamma: int = 3, rounds: int = 10**6, loop_rounds: int | None = None,
                 repeats: int = 5, loop_repeats: int = 3, seed: int = 0) -> dict:
    """Median seconds of ``rounds`` vectorized rounds and of ``loop_rounds`` rounds of the
    per-round loop (the correct rule on a chain of ``gamma``), rounds per second, the per-round
    speedup (loop median / loop_rounds over vectorized median / rounds, one decimal) and the K
    counts of the vectorized run (the same for every repeat: one seed)."""
    import numpy as np
    loop_rounds = loop_rounds or rounds
    chain = Chain(gamma)
    vec = measure(lambda: montecarlo.sample_rounds(model, context, chain, rounds, seed), repeats)
    loop = measure(lambda: montecarlo.sample_rounds_loop(model, context, chain, loop_rounds, seed), loop_repeats)
    per_vec, per_loop = vec.median / rounds, loop.median / loop_rounds
    return {
        "task": f"one round of the correct rule from context {' '.join(context)!r}, model {model.name!r}",
        "scheme": chain.name, "gamma": gamma, "statistic": "median seconds",
        "vectorized_rounds": rounds, "vectorized_repeats": repeats,
        "vectorized_s": vec.median, "vectorized_all_s": list(vec.seconds),
        "loop_rounds": loop_rounds, "loop_repeats": loop_repeats,
        "loop_s": loop.median, "loop_all_s": list(loop.seconds),
        "speedup": round(per_loop / per_vec, 1),
        "vectorized_rounds_per_s": round(1 / per_vec), "loop_rounds_per_s": round(1 / per_loop),
        "accepted_counts": [int(c) for c in vec.result.accepted_counts],
        "same_counts": (vec.result.outcomes == loop.result.outcomes) if loop_rounds == rounds else None,
        "cpus": os.cpu_count(), "numpy": np.__version__,
    }


def bench_schemes(repeats: int = 3, seed: int = 0, tree_vocab: int = 6, block_vocab: int = 8,
                  mc_rounds: int = 10**6) -> dict:
    """Median seconds of the exact proofs and the Monte-Carlo of the schemes beyond one chain.

    * a tree ``2,2,1`` (i.i.d. children), N = 3, every context of a random V = 6 model;
    * block verification with γ = 4, N = 3, every context of a random V = 8 model;
    * 10^6 vectorized block-verified rounds of ``seed`` from "a" with γ = 3 (and their K counts)
    (the sizes are parameters, so the tests can run it small).

    Each proof is checked once (and must be exact) before it is timed.
    """
    from ..toy import load_model, random_model

    def prove(model, scheme) -> bool:
        return all(c.exact for c in exact.check_exactness(model, 3, [scheme]))

    cases = {f"tree_2_2_1_v{tree_vocab}": (random_model(tree_vocab, seed=seed), lambda: Tree((2, 2, 1))),
             f"block_gamma4_v{block_vocab}": (random_model(block_vocab, seed=seed), lambda: Block(4))}  # fresh scheme: no memo
    out = {"task": "exact proof N=3 from every context (random rational models); Monte-Carlo block rounds",
           "repeats": repeats, "statistic": "median seconds", "cpus": os.cpu_count()}
    for name, (model, scheme) in cases.items():
        if not prove(model, scheme()):
            raise ValueError(f"the exact proof failed on the benchmark case {name}")
        out[f"{name}_s"] = measure(lambda m=model, s=scheme: prove(m, s()), repeats).median
    seed_model = load_model("seed")
    mc = measure(lambda: montecarlo.sample_rounds(seed_model, ("a",), Block(3), mc_rounds, seed), repeats)
    out["block_mc_rounds"] = mc_rounds
    out["block_mc_gamma3_s"] = mc.median
    out["block_mc_accepted_counts"] = [int(c) for c in mc.result.accepted_counts]
    return out


BENCH_RUNS = 10  # a benchmark repeats its runs: all of them together may take this many single runs' limit


def check_bench_sample(model, scheme, rounds: int, loop_rounds: int, repeats: int, loop_repeats: int,
                       limit=None) -> None:
    """Refuse a ``bench_sample`` that would take minutes: the vectorized run is checked as ``sample``
    checks it, the per-round loop's run against ``loop_work``, and the repeats of each run together
    against ``BENCH_RUNS`` times that run's limit (``scheme``: a chain or a block, or an int γ).

    >>> from specsim.toy import load_model
    >>> check_bench_sample(load_model("seed"), 3, 10**6, 10**5, 5, 3)
    >>> check_bench_sample(load_model("seed"), 3, 10**6, 10**5, 5, 50)
    Traceback (most recent call last):
    ...
    specsim.bounds.WorkRefused: 50 loop runs of 2,187,500 draws each means ~1.1e+08 draws; the limit is 50,000,000: lower --loop-rounds or --loop-repeats
    """
    scheme = as_scheme(scheme)
    bounds.check_sample(model, scheme, rounds, limit=limit)
    v = bounds.shape(model).vocab
    loop = bounds.loop_work(loop_rounds, scheme.drafted_tokens, v)
    bounds.check(loop, f"a loop run of {loop_rounds:,} rounds of {scheme.name} over {v} tokens", "--loop-rounds",
                 bounds.as_budget(limit, LIMITS.loop_work), "draws")
    kernel = scheme.kernel()
    vectorized = bounds.sample_work(rounds, scheme.depth, v, kernel.draw if kernel else None)
    for work, runs, base, what, flags in (
            (vectorized, repeats, LIMITS.sample_work, "vectorized", "--rounds or --repeats"),
            (loop, loop_repeats, LIMITS.loop_work, "loop", "--loop-rounds or --loop-repeats")):
        bounds.check(work * runs, f"{runs} {what} runs of {work:,} draws each", flags,
                     bounds.as_budget(limit, base * BENCH_RUNS), "draws")
