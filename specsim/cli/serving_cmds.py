"""`specsim serving`: the roofline table of a served model pair, its best γ per batch and the crossover.

Every figure comes from ``specsim.serving`` (model shapes and hardware
presets, each cited: ``--list`` shows the sources). ``--hardware cpu``
measures this CPU first (about 1 s). A mixture-of-experts target (e.g.
``--target qwen3-30b-a3b --draft qwen3-0.6b``) reads the union of the
experts its tokens chose: ``--experts``, ``--experts-per-token`` and
``--routing`` change its routing. ``--latency`` adds, per batch, what a
serving benchmark reports, plain and with a chain of ``--latency-gamma``
drafts: time to first token (TTFT), time per output token (TPOT), the
inter-token latency per streamed chunk (ITL), the speculative gap's p50,
p90, p99, throughput and requests per second; with ``--tpot-slo-ms`` and/or
``--ttft-slo-ms``, the goodput under those targets
(``specsim.serving.latency``).
"""
from __future__ import annotations

from dataclasses import asdict, replace

from ..limits import LIMITS
from ..parsing import parse_whole
from ..serving import hardware as hw_presets
from ..schemes import Chain, families, family
from ..serving import latency, models, moe, roofline
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
    p.add_argument("--experts", type=int_in_range("experts", 1, moe.MAX_EXPERTS), default=None,
                   help="an MoE target's routed experts per layer (default: the preset's; --list)")
    p.add_argument("--experts-per-token", type=int_in_range("experts-per-token", 1, moe.MAX_EXPERTS),
                   default=None, help="an MoE target's experts per token (default: the preset's)")
    p.add_argument("--routing", choices=list(moe.ROUTINGS), default=None,
                   help="how an MoE target's tokens pick experts: uniform (independent, the default) or same "
                        "(every token of a pass the same k: a dense roofline's assumption)")
    p.add_argument("--dtype", choices=list(models.DTYPE_BYTES), default=None,
                   help="weights, caches and arithmetic (default bf16; fp32 on cpu)")
    p.add_argument("--scheme", type=argtype("scheme", parse_scheme), default="chain",
                   help=f"{' or '.join(k for k in families() if family(k))} (γ searched over --gammas, default "
                        "chain), or one fixed scheme: chain:4, block:4, tree:2,2,1 (a tree needs --tokens)")
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
                   help="add per batch, plain and speculative: time to first token (TTFT), time per output "
                        "token (TPOT), inter-token latency per streamed chunk (ITL), p50/p90/p99 of the "
                        "speculative gap, throughput and requests per second")
    p.add_argument("--latency-gamma", type=int_in_range("latency-gamma", 1, LIMITS.gamma), default=None,
                   help=f"drafts per round of --latency's chain (default: γ of a fixed --scheme chain:G, else "
                        f"{LATENCY_GAMMA})")
    p.add_argument("--prompt", type=int_in_range("prompt", 1, MAX_CONTEXT), default=None,
                   help="prompt tokens prefilled for --latency's time to first token (default: --context)")
    p.add_argument("--output-tokens", type=int_in_range("output-tokens", 2, latency.MAX_OUTPUT),
                   default=None, help=f"tokens a request asks for, for --latency's requests per second "
                                      f"(default {latency.OUTPUT_TOKENS})")
    p.add_argument("--tpot-slo-ms", type=number("tpot-slo-ms", 1e-6, 1e9), default=None,
                   help="with --latency: the goodput when every request's TPOT must be at most this (ms)")
    p.add_argument("--ttft-slo-ms", type=number("ttft-slo-ms", 1e-6, 1e9), default=None,
                   help="with --latency: the goodput when every request's TTFT must be at most this (ms)")
    p.add_argument("--list", action="store_true", help="list the model and hardware presets with their sources")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_serving)


def _list(as_json: bool) -> int:
    ms = [{"name": m.name, "params": m.params, "bytes_read_per_pass_bf16": m.weight_bytes("bf16"),
           "kv_bytes_per_token_bf16": m.kv_bytes_per_token("bf16"), "source": m.source,
           **({"experts": m.experts, "experts_per_token": m.experts_per_token, "moe_layers": m.moe_layers,
               "routing": m.routing} if m.experts else {})}
          for m in models.MODELS.values()]
    hs = [{"name": h.name, "bandwidth_bytes_per_s": h.bandwidth_bytes_per_s, "peak_flops": h.peak_flops,
           "memory_bytes": h.memory_bytes, "step_overhead_s": h.step_overhead_s, "source": h.source}
          for h in hw_presets.HARDWARE.values()]
    if as_json:
        print_json({"models": ms, "hardware": hs})
        return 0
    print("Models (bytes at bf16):")
    for m in ms:
        moe_text = (f" (one token's: {m['experts_per_token']} of {m['experts']} experts in each of its "
                    f"{m['moe_layers']} MoE layers)" if "experts" in m else "")
        print(f"  {m['name']}: {m['params']:,} parameters, {m['bytes_read_per_pass_bf16'] / 1e9:.3g} GB read per "
              f"pass{moe_text}, {m['kv_bytes_per_token_bf16']:,} KV bytes per token. {m['source']}")
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


def _routed(args, target):
    """The target with --experts, --experts-per-token and --routing applied, refused in one line."""
    changes = {k: v for k, v in (("experts", args.experts), ("experts_per_token", args.experts_per_token),
                                 ("routing", args.routing)) if v is not None}
    if not changes:
        return target
    if not target.experts:
        moes = ", ".join(m.name for m in models.MODELS.values() if m.experts)
        raise ValueError(f"--experts, --experts-per-token and --routing need a mixture-of-experts target "
                         f"({moes}); {target.name} has no experts")
    return replace(target, **changes)  # ModelShape checks them: one line naming the problem


def cmd_serving(args) -> int:
    if args.list:
        return _list(args.json)
    target, draft = _routed(args, models.model_named(args.target)), models.model_named(args.draft)
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
    if not args.latency and any(v is not None for v in (args.latency_gamma, args.prompt, args.output_tokens,
                                                         args.tpot_slo_ms, args.ttft_slo_ms)):
        raise ValueError("--latency-gamma, --prompt, --output-tokens, --tpot-slo-ms and --ttft-slo-ms go with "
                         "--latency")
    lat = _latency(args, target, draft, hw, dtype) if args.latency else None
    if args.json:
        print_json({"target": target.name, "draft": draft.name, "hardware": hw.name, "hardware_source": hw.source,
                    "step_overhead_s": hw.step_overhead_s, "dtype": dtype, "context": args.context,
                    "alpha": args.alpha, "scheme": scheme, **_moe_json(target),
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
    if target.experts:
        print(f"{target.name}: each token is routed to {target.experts_per_token} of {target.experts} experts in each "
              f"of {target.moe_layers} MoE layers, {target.routing} routing ({moe.ROUTINGS[target.routing]}); a pass "
              "reads the union of its tokens' experts")
    if args.hardware == "cpu":
        print(shown(hw.source))
    print(table([(r.batch, f"{r.target_step_ms:.3f}", f"{r.draft_step_ms:.3f}", f"{r.verify_ms:.3f}",
                  f"{r.c:.3f}", f"{r.v:.3f}", r.best_gamma, f"{r.speedup:.2f}×", f"{r.target_bound}/{r.verify_bound}",
                  f"{r.memory_gb:.1f}" + ("" if r.fits is not False else " (does not fit)"))
                 for r in rows],
                ["batch", "target_step_ms", "draft_step_ms", "verify_ms", "c", "v", "best_gamma", "speedup",
                 "bound (target/verify)", "memory_gb"]))
    if target.experts:
        print(table([(r.batch, f"{r.target_experts:.1f}", f"{r.verify_experts:.1f}", r.best_gamma) for r in rows],
                    ["batch", "experts_per_layer_step", "experts_per_layer_verify", "at γ"]))
    top = max(args.gammas)
    if not fixed and any(r.best_gamma == top for r in rows):
        print(f"γ = {top} is the largest searched: a longer chain may pay more (raise --gammas)")
    if crossover is None:
        print(f"crossover_batch: none up to {args.crossover_limit:,} (some γ still pays there)")
    else:
        again = [r.batch for r in rows if r.batch > crossover and r.speedup > 1]
        print(f"crossover_batch: {crossover:,} (" + (
            "the first batch where no γ >= 1 beats plain decoding; speculation pays again at batch "
            f"{', '.join(f'{b:,}' for b in again)} of the table" if again else
            "from this batch on, no γ >= 1 beats plain decoding") + ")")
    if fit is not None:
        print(f"at most {fit:,} sequences fit in {hw.name}'s {hw.memory_bytes / 1e9:g} GB at this context")


def _moe_json(target) -> dict:
    """The MoE target's routing for --json ({} for a dense target)."""
    if not target.experts:
        return {}
    return {"experts": target.experts, "experts_per_token": target.experts_per_token,
            "moe_layers": target.moe_layers, "routing": target.routing}


def _latency(args, target, draft, hw, dtype) -> dict:
    """--latency's figures: one row per batch at a fixed chain, the batch where its TPOT stops beating
    plain decoding (the crossover of that one γ), and the goodput under --tpot-slo-ms / --ttft-slo-ms."""
    gamma = args.latency_gamma
    if gamma is None:
        fixed = None if roofline.searched(args.scheme) else args.scheme.chain_gamma  # chain:G: its G
        gamma = fixed or LATENCY_GAMMA
    prompt = args.context if args.prompt is None else args.prompt
    output = latency.OUTPUT_TOKENS if args.output_tokens is None else args.output_tokens
    rows = latency.latency_table(target, draft, hw, args.batch, args.context, args.alpha, gamma, prompt, dtype,
                                 args.draft_kv_window, output)
    crossover = roofline.crossover_batch(target, draft, hw, args.context, args.alpha, dtype, [gamma], Chain,
                                         args.draft_kv_window, limit=args.crossover_limit)
    out = {"gamma": gamma, "prompt": prompt, "output_tokens": output, "rows": [asdict(r) for r in rows],
           "tpot_crossover_batch": crossover}
    if args.tpot_slo_ms is not None or args.ttft_slo_ms is not None:
        g = latency.goodput(target, draft, hw, args.context, args.alpha, gamma, args.tpot_slo_ms, args.ttft_slo_ms,
                            output, prompt, dtype, args.draft_kv_window, args.crossover_limit)
        out["goodput"] = {k: v for k, v in asdict(g).items() if k not in ("row_plain", "row_spec")}
        out["rows_within"] = [dict(zip(("plain", "spec"), latency.within(r, args.tpot_slo_ms, args.ttft_slo_ms)))
                              for r in rows]
    return out


def _slo_text(g: dict) -> str:
    return " and ".join(f"{name} <= {num(v, 'short')} ms" for name, v in (("TPOT", g["tpot_slo_ms"]),
                                                                         ("TTFT", g["ttft_slo_ms"])) if v is not None)


def _print_latency(lat: dict, limit: int) -> None:
    g, rows = lat["gamma"], lat["rows"]
    print(f"\nLatency: plain decoding vs a chain of γ = {g}, prompt {lat['prompt']:,} tokens, "
          f"{lat['output_tokens']:,} output tokens a request")
    print("TTFT = half an iteration's wait + the prefill (both models' with speculation); TPOT = time per output "
          "token after the first (the mean gap); ITL = the time between streamed chunks: a plain step, or a "
          "whole round, whose K + 1 tokens come as one chunk; a speculative gap is 0 within a round's burst, or "
          "a whole round")
    print(table([(r["batch"], f"{r['ttft_plain_ms']:.3f}", f"{r['ttft_spec_ms']:.3f}", f"{r['tpot_plain_ms']:.3f}",
                  f"{r['tpot_spec_ms']:.3f}", f"{r['itl_chunk_plain_ms']:.3f}", f"{r['itl_chunk_spec_ms']:.3f}",
                  f"{r['gap_p50_ms']:.3f}", f"{r['gap_p90_ms']:.3f}", f"{r['gap_p99_ms']:.3f}")
                 for r in rows],
                ["batch", "ttft_plain_ms", "ttft_spec_ms", "tpot_plain_ms", "tpot_spec_ms", "itl_chunk_plain_ms",
                 "itl_chunk_spec_ms", "gap_p50_ms", "gap_p90_ms", "gap_p99_ms"]))
    within = lat.get("rows_within")
    marks = (lambda i, side: " ✓" if within[i][side] else " ✗") if within else (lambda i, side: "")
    print(table([(r["batch"], f"{r['throughput_plain']:,.0f}", f"{r['throughput_spec']:,.0f}",
                  f"{r['requests_plain']:,.2f}" + marks(i, "plain"), f"{r['requests_spec']:,.2f}" + marks(i, "spec"))
                 for i, r in enumerate(rows)],
                ["batch", "tokens/s plain", "tokens/s spec", "requests/s plain", "requests/s spec"]))
    cross = lat["tpot_crossover_batch"]
    if cross is None:
        print(f"tpot_crossover_batch: none up to {limit:,} (γ = {g} lowers the TPOT and raises throughput there)")
    else:
        again = [r["batch"] for r in rows if r["batch"] > cross and r["tpot_spec_ms"] < r["tpot_plain_ms"]]
        print(f"tpot_crossover_batch: {cross:,} (" + (
            f"the first batch where γ = {g} stops lowering the TPOT; it lowers it again at batch "
            f"{', '.join(f'{b:,}' for b in again)} of the table" if again else
            f"from this batch on, γ = {g} raises the TPOT and lowers throughput") + ")")
    if "goodput" in lat:
        gp = lat["goodput"]
        print(f"goodput under {_slo_text(gp)} (✓: this batch meets it; searched up to batch {gp['searched_to']:,}):")
        for who, b, r in (("plain", gp["batch_plain"], gp["requests_plain"]),
                          (f"γ = {g}", gp["batch_spec"], gp["requests_spec"])):
            print(f"  {who}: " + (f"{r:,.2f} requests/s at batch {b:,}" if b else "no batch meets it: 0 requests/s"))
