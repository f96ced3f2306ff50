"""`specsim serving`: the roofline table of a served model pair, its best γ per batch and the crossover.

Every figure comes from ``specsim.serving`` (model shapes and hardware
presets, each cited: ``--list`` shows the sources). ``--hardware cpu``
measures this CPU first (about 1 s). ``--latency`` adds, per batch, time to
first token, inter-token latency (mean, and the speculative gap's p50, p90,
p99) and throughput, plain and with a chain of ``--latency-gamma`` drafts
(``specsim.serving.latency``).
"""
from __future__ import annotations

from dataclasses import asdict, replace

from ..limits import LIMITS
from ..parsing import parse_whole
from ..serving import hardware as hw_presets
from ..schemes import Chain
from ..serving import latency, models, roofline
from .common import argtype, GAMMAS_HELP, gammas_arg, int_in_range, num, number, print_json, shown, table

MAX_BATCHES = 64  # batch sizes on one command line
MAX_CONTEXT = 10_000_000
LATENCY_GAMMA = 4  # --latency's chain when --scheme is not one fixed chain


def parse_batches(text: str) -> list:
    """--batch: comma-separated batch sizes, each 1..MAX_BATCH, sorted without repeats.

    >>> parse_batches("64,1,8,8")
    [1, 8, 64]
    >>> parse_batches("0")
    Traceback (most recent call last):
    ...
    ValueError: batch must be from 1 to 1,000,000, got 0
    """
    items = str(text).split(",")
    if len(items) > MAX_BATCHES:
        raise ValueError(f"give at most {MAX_BATCHES} batch sizes, got {len(items)}")
    out = set()
    for item in items:
        b = parse_whole(item, "batch", digits=12)
        if not 1 <= b <= roofline.MAX_BATCH:
            raise ValueError(f"batch must be from 1 to {roofline.MAX_BATCH:,}, got {b:,}")
        out.add(b)
    return sorted(out)


def parse_scheme(text: str):
    """--scheme: a family whose γ is searched ("chain" -> ``Chain``, "block" -> ``Block``), or one scheme of
    the grammar (chain:4, tree:2,2,1)."""
    from ..schemes import family, parse
    return family(text) or parse(text)


def register(sub) -> None:
    p = sub.add_parser("serving", help="roofline cost of a model pair on a GPU: best γ per batch, crossover batch")
    p.add_argument("--target", default="llama-3-8b", help="target model preset (default llama-3-8b; --list)")
    p.add_argument("--draft", default="llama-3.2-1b", help="drafter preset (default llama-3.2-1b; --list)")
    p.add_argument("--hardware", default="h100-sxm",
                   help="hardware preset (default h100-sxm; --list), or cpu: measure this CPU (about 1 s)")
    p.add_argument("--batch", type=argtype("batch", parse_batches), default=[1, 8, 64],
                   help=f"batch sizes, comma-separated (default 1,8,64; each 1..{roofline.MAX_BATCH:,})")
    p.add_argument("--context", type=int_in_range("context", 1, MAX_CONTEXT), default=1024,
                   help="cached tokens per sequence (default 1024)")
    p.add_argument("--alpha", type=number("alpha", 0, 1), default=0.8,
                   help="acceptance rate α in [0, 1] (default 0.8)")
    p.add_argument("--dtype", choices=list(models.DTYPE_BYTES), default=None,
                   help="weights, caches and arithmetic (default bf16; fp32 on cpu)")
    p.add_argument("--scheme", type=argtype("scheme", parse_scheme), default="chain",
                   help="chain or block (γ searched over --gammas, default chain), or one fixed scheme: chain:4, "
                        "block:4, tree:2,2,1 (a tree needs --tokens)")
    p.add_argument("--gammas", type=gammas_arg, default=list(range(1, 11)),
                   help=GAMMAS_HELP + " searched beside plain decoding (default 1-10)")
    p.add_argument("--tokens", type=number("tokens", 1, 65), default=None,
                   help="expected tokens per round of a fixed scheme (instead of the i.i.d. formula)")
    p.add_argument("--draft-kv-window", type=int_in_range("draft-kv-window", 1, MAX_CONTEXT), default=None,
                   help="the drafter keeps only its last N cache entries (MagicDec-style); default: all")
    p.add_argument("--devices", type=int_in_range("devices", 1, 64), default=1,
                   help="GPUs splitting the models (ideal tensor parallelism; default 1)")
    p.add_argument("--step-overhead-us", type=number("step-overhead-us", 0, 10**6), default=None,
                   help="per forward pass overhead in µs (default: the preset's, 20 µs on a GPU, 0 on cpu)")
    p.add_argument("--crossover-limit", type=int_in_range("crossover-limit", 1, roofline.MAX_BATCH),
                   default=roofline.CROSSOVER_LIMIT,
                   help=f"search the crossover batch up to this (default {roofline.CROSSOVER_LIMIT:,})")
    p.add_argument("--latency", action="store_true",
                   help="add per batch: time to first token, inter-token latency (mean; p50/p90/p99 of the "
                        "speculative gap) and throughput, plain and speculative")
    p.add_argument("--latency-gamma", type=int_in_range("latency-gamma", 1, LIMITS.gamma), default=None,
                   help=f"drafts per round of --latency's chain (default: γ of a fixed --scheme chain:G, else "
                        f"{LATENCY_GAMMA})")
    p.add_argument("--prompt", type=int_in_range("prompt", 1, MAX_CONTEXT), default=None,
                   help="prompt tokens prefilled for --latency's time to first token (default: --context)")
    p.add_argument("--list", action="store_true", help="list the model and hardware presets with their sources")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_serving)


def _list(as_json: bool) -> int:
    ms = [{"name": m.name, "params": m.params, "bytes_read_per_pass_bf16": m.weight_bytes("bf16"),
           "kv_bytes_per_token_bf16": m.kv_bytes_per_token("bf16"), "source": m.source}
          for m in models.MODELS.values()]
    hs = [{"name": h.name, "bandwidth_bytes_per_s": h.bandwidth_bytes_per_s, "peak_flops": h.peak_flops,
           "memory_bytes": h.memory_bytes, "step_overhead_s": h.step_overhead_s, "source": h.source}
          for h in hw_presets.HARDWARE.values()]
    if as_json:
        print_json({"models": ms, "hardware": hs})
        return 0
    print("Models (bytes at bf16):")
    for m in ms:
        print(f"  {m['name']}: {m['params']:,} parameters, {m['bytes_read_per_pass_bf16'] / 1e9:.3g} GB read per "
              f"pass, {m['kv_bytes_per_token_bf16']:,} KV bytes per token. {m['source']}")
    print("Hardware:")
    for h in hs:
        peaks = ", ".join(f"{k} {v / 1e12:g}" for k, v in h["peak_flops"].items())
        print(f"  {h['name']}: {h['bandwidth_bytes_per_s'] / 1e12:g} TB/s, TFLOPS {peaks}, "
              f"{h['memory_bytes'] / 1e9:g} GB. {h['source']}")
    print("  cpu: measured when asked (--hardware cpu, about 1 s)")
    return 0


def _hardware(args) -> tuple:
    """(the hardware, split over --devices, with --step-overhead-us; the dtype), refused in one line."""
    if args.hardware == "cpu":
        hw = hw_presets.measure_cpu(1.0)
    else:
        hw = hw_presets.hardware_named(args.hardware)
    if args.devices > 1:
        if args.hardware == "cpu":
            raise ValueError("--devices is for GPU presets, not cpu")
        hw = hw_presets.tensor_parallel(hw, args.devices)
    if args.step_overhead_us is not None:
        hw = replace(hw, step_overhead_s=args.step_overhead_us * 1e-6)
    dtype = args.dtype or ("fp32" if args.hardware == "cpu" else "bf16")
    hw.peak(dtype)  # an unknown dtype for this hardware: one line
    return hw, dtype


def cmd_serving(args) -> int:
    if args.list:
        return _list(args.json)
    target, draft = models.model_named(args.target), models.model_named(args.draft)
    hw, dtype = _hardware(args)
    fixed = not roofline.searched(args.scheme)
    if args.tokens is not None and not fixed:
        raise ValueError("--tokens needs one fixed scheme (e.g. --scheme tree:2,2,1), not a searched family")
    gammas = [0] + args.gammas
    kw = dict(dtype=dtype, gammas=gammas, scheme=args.scheme, draft_kv_window=args.draft_kv_window,
              tokens=args.tokens)
    rows = roofline.serving_table(target, draft, hw, args.batch, args.context, args.alpha, **kw)
    crossover = roofline.crossover_batch(target, draft, hw, args.context, args.alpha, limit=args.crossover_limit,
                                         **kw)
    fit = roofline.max_batch(target, draft, hw, args.context, dtype, args.draft_kv_window)
    scheme = args.scheme.name if fixed else args.scheme.kind  # a family is shown by its keyword
    if (args.latency_gamma is not None or args.prompt is not None) and not args.latency:
        raise ValueError("--latency-gamma and --prompt go with --latency")
    lat = _latency(args, target, draft, hw, dtype) if args.latency else None
    if args.json:
        print_json({"target": target.name, "draft": draft.name, "hardware": hw.name, "hardware_source": hw.source,
                    "step_overhead_s": hw.step_overhead_s, "dtype": dtype, "context": args.context, "alpha": args.alpha, "scheme": scheme,
                    "gammas": gammas, "draft_kv_window": args.draft_kv_window,
                    "rows": [asdict(r) for r in rows], "crossover_batch": crossover,
                    "crossover_limit": args.crossover_limit, "max_batch_in_memory": fit,
                    **({"latency": lat} if lat else {})})
        return 0
    _print_serving(args, target, draft, hw, dtype, scheme, fixed, rows, crossover, fit)
    if lat:
        _print_latency(lat, args.crossover_limit)
    return 0


def _print_serving(args, target, draft, hw, dtype, scheme: str, fixed: bool, rows, crossover, fit) -> None:
    """The readable form: the settings, one row per batch, the crossover and the memory (``scheme``: as
    shown; ``fixed``: one scheme rather than a searched family)."""
    g = args.gammas
    over = f"{g[0]}..{g[-1]}" if g == list(range(g[0], g[-1] + 1)) else ",".join(map(str, g))
    searched = f"{scheme}, γ searched over {over}" if not fixed else scheme
    window = f", drafter KV window {args.draft_kv_window:,}" if args.draft_kv_window else ""
    print(f"{target.name} verified, {draft.name} drafting, on {hw.name} ({dtype}, {hw.step_overhead_s * 1e6:g} µs "
          f"overhead per pass); context {args.context:,}, α = {num(args.alpha, 'short')}, {searched} (plain "
          f"decoding is γ = 0){window}")
    if args.hardware == "cpu":
        print(shown(hw.source))
    print(table([(r.batch, f"{r.target_step_ms:.3f}", f"{r.draft_step_ms:.3f}", f"{r.verify_ms:.3f}",
                  f"{r.c:.3f}", f"{r.v:.3f}", r.best_gamma, f"{r.speedup:.2f}×", f"{r.target_bound}/{r.verify_bound}",
                  f"{r.memory_gb:.1f}" + ("" if r.fits is not False else " (does not fit)"))
                 for r in rows],
                ["batch", "target_step_ms", "draft_step_ms", "verify_ms", "c", "v", "best_gamma", "speedup",
                 "bound (target/verify)", "memory_gb"]))
    top = max(args.gammas)
    if not fixed and any(r.best_gamma == top for r in rows):
        print(f"γ = {top} is the largest searched: a longer chain may pay more (raise --gammas)")
    if crossover is None:
        print(f"crossover_batch: none up to {args.crossover_limit:,} (some γ still pays there)")
    else:
        print(f"crossover_batch: {crossover:,} (from this batch on, no γ >= 1 beats plain decoding)")
    if fit is not None:
        print(f"at most {fit:,} sequences fit in {hw.name}'s {hw.memory_bytes / 1e9:g} GB at this context")


def _latency(args, target, draft, hw, dtype) -> dict:
    """--latency's figures: one row per batch at a fixed chain, and the batch where its mean ITL stops
    beating plain decoding (the crossover of that one γ)."""
    gamma = args.latency_gamma
    if gamma is None:
        chain = not roofline.searched(args.scheme) and args.scheme.plain
        gamma = args.scheme.gamma if chain else LATENCY_GAMMA
    prompt = args.context if args.prompt is None else args.prompt
    rows = latency.latency_table(target, draft, hw, args.batch, args.context, args.alpha, gamma, prompt, dtype,
                                 args.draft_kv_window)
    crossover = roofline.crossover_batch(target, draft, hw, args.context, args.alpha, dtype, [gamma], Chain,
                                         args.draft_kv_window, limit=args.crossover_limit)
    return {"gamma": gamma, "prompt": prompt, "rows": [asdict(r) for r in rows], "itl_crossover_batch": crossover}


def _print_latency(lat: dict, limit: int) -> None:
    g, rows = lat["gamma"], lat["rows"]
    print(f"\nLatency: plain decoding vs a chain of γ = {g}, prompt {lat['prompt']:,} tokens")
    print("TTFT = half an iteration's wait + the prefill (both models' with speculation); a speculative gap is 0 "
          "within a round's burst, or a whole round")
    print(table([(r["batch"], f"{r['ttft_plain_ms']:.3f}", f"{r['ttft_spec_ms']:.3f}", f"{r['itl_plain_ms']:.3f}",
                  f"{r['itl_spec_ms']:.3f}", f"{r['gap_p50_ms']:.3f}", f"{r['gap_p90_ms']:.3f}",
                  f"{r['gap_p99_ms']:.3f}", f"{r['throughput_plain']:,.0f}", f"{r['throughput_spec']:,.0f}")
                 for r in rows],
                ["batch", "ttft_plain_ms", "ttft_spec_ms", "itl_plain_ms", "itl_spec_ms", "gap_p50_ms",
                 "gap_p90_ms", "gap_p99_ms", "tokens/s plain", "tokens/s spec"]))
    cross = lat["itl_crossover_batch"]
    if cross is None:
        print(f"itl_crossover_batch: none up to {limit:,} (γ = {g} lowers the mean ITL and raises throughput there)")
    else:
        print(f"itl_crossover_batch: {cross:,} (from this batch on, γ = {g} raises the mean ITL and lowers "
              "throughput)")
