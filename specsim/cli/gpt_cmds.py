"""`specsim gpt generate | bench | train`: the tiny GPT pair from the command line.

All printing of the gpt sub-package happens here; the work is done by
``specsim.gpt.api``, ``.bench`` and ``.recipe``. torch is imported only inside
the handlers, so ``specsim --help`` never loads it; without torch a gpt
command fails with one line (exit code 2), like any other bad input.
"""
from __future__ import annotations

import argparse
import functools
import os
import sys

from .. import bounds
from . import gpt_hf_cmds, selfcheck_cmds
from .common import (GAMMAS_HELP, SHORTHAND, TEMPERATURE_HELP, UsageError, add_scheme_option, add_shorthand_options,
                     budget, inert, gamma_arg, gammas_arg, int_in_range, max_work_arg, num, print_json, report,
                     scheme_from_args, seed_arg, table, temperature_arg, top_p_arg)
from ..gpt import specs
from ..gpt.specs import parse_spec

MAX_TOKENS = 4096


def draft_help() -> str:
    """--draft's help: every registered drafter (``specs.DRAFTERS``), read when the parser is built."""
    return f"drafter: {specs.draft_help()}; with --target, the drafter's checkpoint directory"


def draft_arg(text: str) -> str:
    """A drafter spec, checked without torch (K's range is checked when the target is loaded), or a path."""
    if gpt_hf_cmds.looks_like_path(text):  # your own pair's drafter (--target PATH --draft PATH)
        return text
    try:
        kind, n = parse_spec(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    if n is not None and n < 1:
        raise argparse.ArgumentTypeError(f"{kind} needs a number >= 1, got {text!r}")
    return text


def drafters_arg(text: str) -> list:
    specs = [s.strip() for s in text.split(",") if s.strip()]
    if not specs:
        raise argparse.ArgumentTypeError("--drafters needs at least one drafter")
    return [draft_arg(s) for s in specs]


def rule_arg(text: str) -> str:
    """--rule NAME: a chain or tree rule of ``specsim.labs.pitfalls`` (the names the toy commands take)
    or an entry of the implementations gallery (`specsim implementations`)."""
    from ..labs import implementations, pitfalls
    known = [*pitfalls.PITFALLS, *pitfalls.TREE_PITFALLS, *implementations.IMPLEMENTATIONS]
    if text not in known:
        raise argparse.ArgumentTypeError(f"unknown rule {text[:60]!r}; known: {', '.join(known)}")
    return text


def rules_arg(text: str) -> list:
    """--rules NAME,NAME: textbook and gallery entries (``specsim.gpt.measure.bench_rules``), torch-free."""
    from ..gpt.measure.bench_rules import parse_names
    try:
        return parse_names(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


DTYPE_HELP = ("the target's number format (default float32); bfloat16 runs the target's passes in bfloat16 "
              "where the CPU or GPU has it, its rows p still computed from logits cast up to float32; the drafter "
              "stays float32")


def add_dtype_option(p) -> None:
    p.add_argument("--dtype", choices=["float32", "bfloat16"], default="float32", help=DTYPE_HELP)


COLOURS = {"accepted": "\033[32m", "correct": "\033[31m", "bonus": "\033[34m", "end": "\033[0m"}
GENERATE_GAMMA = 4  # --gamma's default for gpt generate (chain:4)


def register(subparsers) -> None:
    gpt = subparsers.add_parser("gpt", help="the tiny GPT pair: real speculative decoding",
                                description="A trained character-level target and drafter, shipped with specsim.")
    sub = gpt.add_subparsers(dest="gpt_command", metavar="GPT_COMMAND")
    sub.required = True
    _register_generate(sub)
    _register_bench(sub)
    _register_train(sub)
    gpt_hf_cmds.add_export(sub, needs_torch)
    selfcheck_cmds.add_selfcheck(sub, needs_torch)
    from . import serve_bench_cmds  # `gpt serve-bench`: batched decoding, measured beside the roofline
    serve_bench_cmds.add_serve_bench(sub, needs_torch)


def _register_generate(sub) -> None:
    g = sub.add_parser("generate", help="generate text, plain or speculative, with the round trace")
    g.add_argument("--prompt", required=True, help="start text (newline and printable ASCII)")
    g.add_argument("--tokens", type=int_in_range("tokens", 1, MAX_TOKENS), default=100)
    add_scheme_option(g)
    add_shorthand_options(g, gamma=GENERATE_GAMMA)
    g.add_argument("--rule", type=rule_arg, default="correct",
                   help="a rule from `specsim pitfalls` (a chain rule, or a tree rule with a tree; default: correct) "
                        "or an entry of `specsim implementations` (on its own kind of scheme: a tree entry on its "
                        "own tree unless you give one): any rule runs on the real model through the same "
                        "scheme.verify")
    _sampling_args(g)
    g.add_argument("--seed", type=seed_arg, default=0)
    g.add_argument("--plain", action="store_true", help="plain decoding with the target only")
    g.add_argument("--order", choices=["dfs", "bfs"], default="dfs",
                   help="how a draft tree is flattened for its verify pass (default dfs; the tokens do not change)")
    g.add_argument("--draft", type=draft_arg, default="distilled", help=draft_help())
    gpt_hf_cmds.add_pair_args(g)
    g.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    add_dtype_option(g)
    g.add_argument("--top", type=int_in_range("top", 1, 128), default=5,
                   help="entries of each p and q row in the JSON trace (default 5)")
    g.add_argument("--json", action="store_true")
    max_work_arg(g)
    g.set_defaults(func=cmd_generate)


def _register_bench(sub) -> None:
    b = sub.add_parser("bench", help="measured speedup against plain decoding and the formulas")
    b.add_argument("--gammas", type=gammas_arg, default="1-8", help=GAMMAS_HELP + " (default 1-8)")
    b.add_argument("--tokens", type=int_in_range("tokens", 1, MAX_TOKENS), default=None,
                   help="tokens per prompt (default 150, so that no run slides the window, and 200 with --drafters; "
                        "160 with --peer)")
    b.add_argument("--temperature", type=temperature_arg, default=1.0, help=TEMPERATURE_HELP + " (default 1)")
    b.add_argument("--repeats", type=int_in_range("repeats", 1, 50), default=None,
                   help="default 5 (3 with --drafters or --schemes)")
    b.add_argument("--seed", type=seed_arg, default=0)
    b.add_argument("--prompts", type=int_in_range("prompts", 1, BENCH_MAX_PROMPTS), default=None,
                   help=f"held-out prompts decoded by the gamma bench and --profile (default {BENCH_PROMPTS}, at most "
                        f"{BENCH_MAX_PROMPTS}; the first ones stay the same): more text pins down tokens per round, "
                        "and so the best gamma; the time grows in proportion")
    b.add_argument("--draft", type=draft_arg, default="distilled", help=draft_help())
    gpt_hf_cmds.add_pair_args(b)
    b.add_argument("--peer", choices=["hf"], default=None,
                   help="hf: specsim plain and speculative against transformers' generate and assisted generation "
                        "on the same pair, interleaved, T = 1 and greedy at --gamma (defaults: 160 tokens, 5 repeats; "
                        "--gammas and --temperature do not apply)")
    b.add_argument("--drafters", type=drafters_arg, default=None,
                   help="the drafter gallery: comma-separated drafters (e.g. distilled,trained,lookup:3,early-exit:2) "
                        "measured side by side on held-out and repetitive prompts")
    b.add_argument("--gamma", type=gamma_arg, default=4, help="drafts per round in the gallery (default 4)")
    b.add_argument("--rules", type=rules_arg, default=None,
                   help="real systems' rules side by side: textbook and entries of `specsim implementations`, "
                        "comma-separated (e.g. textbook,vllm,llama-cpp,medusa-typical), each on chain:--gamma or "
                        "its own kind of scheme, with the gallery's exactness verdict (default 150 tokens)")
    add_scheme_option(b, many=True, flag="--schemes")  # args.scheme: a list of schemes
    b.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    add_dtype_option(b)
    b.add_argument("--threads", type=int_in_range("threads", 1, 256), default=1,
                   help="torch CPU threads (default 1: one-token steps are memory-bound, and on a "
                        "shared CPU a second thread mostly waits at OpenMP barriers)")
    b.add_argument("--profile", action="store_true",
                   help="where a round's time goes per gamma (drafting, the verify pass, the walk, the caches, the "
                        "loop) beside each model part's physical floor on this machine, and the speedup predicted "
                        "from costs measured apart")
    b.add_argument("--json", action="store_true")
    max_work_arg(b)
    b.set_defaults(func=cmd_bench)


def _register_train(sub) -> None:
    """gpt train and gpt weights."""
    t = sub.add_parser("train", help="train the target, both drafters and the exit heads (progress bar, seeded, "
                                     "resumable: an interrupted stage continues from its checkpoint)")
    t.add_argument("--out", required=True, help="directory for the safetensors files and manifest.json")
    t.add_argument("--stage", choices=["all", "target", "target_more", "draft_trained", "draft_distilled",
                                       "distill_more", "exit_heads", "eagle", "eagle_more"], default="all")
    t.add_argument("--seed", type=seed_arg, default=0)
    for name in TRAIN_STEPS:
        flag = f"{name.replace('_', '-')}-steps"
        t.add_argument(f"--{flag}", type=int_in_range(flag, 1, 10**6), default=None)
    t.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    t.add_argument("--threads", type=int_in_range("threads", 1, 256), default=1,
                   help="torch CPU threads (default 1: the shipped weights were trained on one, and another "
                        "count sums in another order, so the checksums would differ)")
    t.set_defaults(func=cmd_train)

    w = sub.add_parser("weights", help="what the shipped weights are and how they were trained (from the manifest)")
    w.add_argument("--json", action="store_true")
    w.set_defaults(func=cmd_weights)


def _sampling_args(p):
    p.add_argument("--temperature", type=temperature_arg, default=1.0, help=TEMPERATURE_HELP + " (default 1)")
    p.add_argument("--top-k", type=int_in_range("top-k", 1, 10**6), default=None)
    p.add_argument("--top-p", type=top_p_arg, default=None, help="keep the most probable tokens up to mass top-p")
    p.add_argument("--greedy", action="store_true", help="argmax instead of sampling (the same as --temperature 0)")


def needs_torch(handler):
    """A handler that imports torch: without torch, one line and exit code 2."""
    @functools.wraps(handler)
    def run(args):
        try:
            import torch  # noqa: F401
        except ModuleNotFoundError:
            raise UsageError("the gpt commands need PyTorch (pip install torch)") from None
        return handler(args)
    return run


# -- the work bound, before torch loads anything ------------------------------------

BENCH_PROMPTS = 3  # held-out prompts of every bench (specsim.gpt.measure.bench.N_PROMPTS; a test checks they agree)
BENCH_MAX_PROMPTS = 10  # the most --prompts takes (specsim.gpt.measure.bench.MAX_PROMPTS; a test checks they agree)
BENCH_REPEATS = 5  # interleaved repeats of the gamma bench (specsim.gpt.measure.bench.REPEATS)
SHIPPED_VOCAB = 96  # the shipped pair's characters (len(specsim.gpt.tokenizer.ASCII_VOCAB))
SHIPPED_WINDOW = 256  # the shipped pair's context window (specsim.gpt.config: block_size)


def bounded(precheck):
    """Run ``precheck(args)`` (a one-line refusal of too much work) before the handler and its torch import."""
    def wrap(handler):
        @functools.wraps(handler)
        def run(args):
            precheck(args)
            return handler(args)
        return run
    return wrap


def generate_scheme(args):
    """The scheme ``gpt generate`` runs (None with --plain): --scheme, or the shorthand flags (chain:4)."""
    if args.plain:  # --gamma is tolerated (it always was); a scheme named another way is not
        if args.tree is not None:
            raise UsageError("--tree does not combine with --plain: plain decoding verifies nothing")
        for flag, given in (("--scheme", args.scheme is not None), ("--verify block", args.verify == "block"),
                            ("--rule", args.rule != "correct")):
            if given:
                raise UsageError(f"--plain does not combine with {flag} (plain decoding verifies nothing)")
        return None
    if args.tree is not None and args.verify == "block":
        raise UsageError("--tree does not combine with --verify block: a tree is verified node by node")
    scheme = scheme_from_args(args, gamma=GENERATE_GAMMA)
    from ..gpt.specs import rule_and_scheme  # torch-free: refused before a model loads
    given = args.scheme is not None or any(getattr(args, n, None) is not None for n in SHORTHAND)
    try:
        return rule_and_scheme(args.rule, scheme, given)[1]  # a gallery entry: its own kind of scheme
    except ValueError as e:
        raise UsageError(str(e)) from None


def check_generate_work(args) -> None:
    """``bounds.check_gpt`` for ``gpt generate`` (the library checks again once the pair's V is known)."""
    scheme = generate_scheme(args)
    if scheme is not None and args.target is None:
        scheme.check_window(SHIPPED_WINDOW)  # before the models load: a round must fit in half the window
    precheck_checkpoints(args)
    lower = "--tokens or " + ("--gamma" if scheme is None else scheme.flag)
    bounds.check_gpt(args.tokens, 0 if scheme is None else scheme.drafted_tokens,
                     None if args.target else SHIPPED_VOCAB, limit=budget(args), lower=lower)


def precheck_checkpoints(args) -> None:
    """--target and --draft directories checked before torch loads: config files, weight files, sizes."""
    if getattr(args, "target", None) is None:
        return
    from ..gpt.checkpoint_checks import CheckpointError, precheck
    for path, role in ((args.target, "target"), (args.draft, "draft")):
        try:
            precheck(path, role)
        except CheckpointError as e:
            raise UsageError(str(e)) from None


def check_bench_work(args) -> None:
    """``bounds.check_gpt`` for ``gpt bench``: every scheme and plain decoding, prompts x repeats runs."""
    precheck_checkpoints(args)
    repeats = args.repeats or 3
    if args.rules:
        from ..gpt.measure.bench_rules import resolve
        drafted, tokens = [r.scheme.drafted_tokens for r in resolve(args.rules, args.gamma)], args.tokens or 150
        lower = "--tokens, --repeats, --rules or --gamma"
    elif args.scheme:
        drafted, tokens = [s.drafted_tokens for s in args.scheme], args.tokens or 150
        lower = "--tokens, --repeats or --schemes"
    elif args.peer:  # specsim and transformers, plain and assisted, sampled and greedy (about)
        drafted, tokens = [args.gamma] * 6, args.tokens or gpt_hf_cmds.PEER_TOKENS
        repeats, lower = args.repeats or gpt_hf_cmds.PEER_REPEATS, "--tokens or --repeats"
    elif args.target is None and args.drafters:
        drafted, tokens = [args.gamma] * 2 * len(args.drafters or [args.draft]), args.tokens or 200  # two prompt sets
        lower = "--tokens, --repeats or --gamma"
    else:
        drafted, tokens, lower = list(args.gammas), args.tokens or 150, "--tokens, --repeats or --gammas"
        repeats = args.repeats or BENCH_REPEATS
        lower = lower.replace("--repeats", "--repeats, --prompts") if args.prompts else lower
    prompts = args.prompts or BENCH_PROMPTS
    bounds.check_gpt(tokens, drafted + [0], None, runs=prompts * repeats, limit=budget(args), lower=lower)


def check_dtype(args) -> None:
    """A --dtype other than float32 changes the shipped target alone: one line naming what it cannot join."""
    dtype = getattr(args, "dtype", "float32")
    if dtype != "float32":
        for flag, given in (("--target", args.target), ("--peer", getattr(args, "peer", None)),
                            ("--drafters", getattr(args, "drafters", None))):
            if given:
                raise UsageError(f"--dtype {dtype} does not combine with {flag}: it applies to the shipped target")


def _pair(args):
    gpt_hf_cmds.check_pair_args(args)
    check_dtype(args)
    if args.target is not None:
        return gpt_hf_cmds.own_pair(args)
    from ..gpt.api import load_pair
    return load_pair(args.draft, args.device, dtype=getattr(args, "dtype", "float32"))


@bounded(check_generate_work)
@needs_torch
def cmd_generate(args) -> int:
    from ..gpt import api
    pair = _pair(args)
    top_p = None if args.top_p is None else float(args.top_p)
    kw = dict(temperature=float(args.temperature), top_k=args.top_k, top_p=top_p, greedy=args.greedy,
              seed=args.seed)
    scheme = generate_scheme(args)
    if args.plain:
        g = api.plain_generate(pair, args.prompt, args.tokens, **kw)
    else:
        g = api.speculative_generate(pair, args.prompt, args.tokens, scheme, rule=args.rule, order=args.order,
                                     limit=budget(args), **kw)
    if args.json:
        print_json(g.to_dict(pair.vocab, top=args.top))
        return 0
    colour = sys.stdout.isatty() and "NO_COLOR" not in os.environ
    print(inert(args.prompt) + render(g, pair.vocab, colour))
    print()
    if g.mode == "plain":
        print(f"plain: {len(g.tokens)} tokens, {g.target_passes} target passes")
    else:
        what = g.scheme + (f" ({args.order})" if scheme.draft_modes else "") + (
            f", rule {args.rule}" if args.rule != "correct" else "")
        print(f"{what}: {len(g.tokens)} tokens in {g.target_passes} target passes "
              f"({num(len(g.tokens) / g.target_passes, 'decimal', 2)} per pass), alpha {num(g.alpha, 'decimal', 3)}")
        print("accepted per round: " + " ".join(str(k) for k in g.accepted_per_round))
        if colour:
            print(f"{COLOURS['accepted']}accepted draft{COLOURS['end']}  {COLOURS['correct']}residual "
                  f"replacement{COLOURS['end']}  {COLOURS['bonus']}bonus token{COLOURS['end']}")
        else:
            print("(run in a terminal for colours: accepted drafts, residual replacements, bonus tokens)")
    return 0


def render(g, vocab: str, colour: bool) -> str:
    """The generated text, each round's accepted drafts, replacement and bonus coloured."""
    if g.mode == "plain" or not colour:
        return inert("".join(vocab[t] for t in g.tokens))
    parts, left = [], len(g.tokens)
    for r in g.rounds:  # a chain's or a tree's round: accepted drafts, then the closing token
        pieces = [(t, "accepted") for t in r.emitted[:len(r.accepted_nodes)]]
        pieces += [(t, r.closing_kind) for t in r.emitted[len(r.accepted_nodes):]]  # the closing token, if any
        for t, kind in pieces[:left]:
            parts.append(f"{COLOURS[kind]}{inert(vocab[t])}{COLOURS['end']}")  # a token's text: never an escape
        left -= min(left, len(pieces))
    return "".join(parts)


@bounded(check_bench_work)
@needs_torch
def cmd_bench(args) -> int:
    import torch

    from ..gpt.measure.bench import bench, heldout_prompts
    torch.set_num_threads(args.threads)
    gpt_hf_cmds.check_pair_args(args)
    for flag, given in (("--rules", args.rules), ("--schemes", args.scheme), ("--peer", args.peer),
                        ("--drafters", args.target is None and args.drafters)):
        if args.prompts and given:
            raise UsageError(f"--prompts and {flag} do not combine: --prompts sets the gamma bench's and --profile's "
                             "held-out prompts")
    if args.profile:
        return _profile(args)
    if args.rules:
        return _rules(args)
    if args.scheme:
        if args.peer:
            raise UsageError("--schemes and --peer do not combine: run them one at a time")
        args.repeats = args.repeats or 3
        return _schemes(args)
    if args.peer:
        return gpt_hf_cmds.cmd_peer(args, _pair(args))
    gallery = args.target is None and bool(args.drafters)
    args.tokens = args.tokens or (200 if gallery else 150)  # the gamma bench: no run slides the window
    args.repeats = args.repeats or (3 if gallery else BENCH_REPEATS)
    if gallery:
        check_dtype(args)
        return _gallery(args)
    result = bench(_pair(args), args.gammas, args.tokens, float(args.temperature), args.repeats, args.seed,
                   heldout_prompts(args.prompts))
    if args.json:
        print_json(result)
        return 0
    _print_bench(result)
    return 0


def _print_bench(result: dict) -> None:
    """The gamma bench's table and what to read in it (``bench``'s result)."""
    from ..gpt.measure.machine import describe
    keys = ["gamma", "alpha", "cost", "verify_ratio", "host_ratio", "tokens_per_round", "spec_tokens_per_s",
            "speedup", "speedup_interval", "speedup_prompt_interval", "refined_speedup", "ratio", "ratio_interval",
            "formula_speedup"]
    rows = [[r[k] if "interval" not in k else "-" if r[k] is None else f"{r[k][0]:.3f}-{r[k][1]:.3f}" for k in keys]
            for r in result["results"]]
    target = "" if result["dtype"] == "float32" else f", target in {result['dtype']}"
    print(f"device {result['device']}{target}, drafter {result['draft']}, temperature {result['temperature']}, "
          f"{result['prompts']} held-out prompts x {result['tokens']} tokens, {result['repeats']} interleaved "
          f"repeats, {result['clock']}; every time the minimum over repeats (load only adds time); plain decoding "
          f"{result['plain_tokens_per_s']} tokens/s ({result['step_ms']['plain']} ms a token)")
    print(f"on {describe(result['machine'])}")
    print(table(rows, keys))
    print("c (cost), v (verify_ratio) and host_ratio: a drafter step, a verify pass and the rest of a round, timed "
          "inside the rounds, in plain decoding's time per token; speedups compare decoding (prefill apart)")
    print(f"intervals: [min, max] over repeats (the ratio's covers its median with probability "
          f"{result['ratio_coverage']:.4g}); speedup_prompt_interval: 95% bootstrap over the {result['prompts']} "
          "prompts (the prompt is the unit; rough with few); ratio = speedup / refined_speedup, tokens_per_round / "
          "(gamma c + v): what host_ratio leaves of it")
    print(f"best gamma: {result['best_gamma']}" + ("  noisy, rerun (its spread is wider than its lead)"
                                                     if result["noisy"] else ""))
    share = result["best_gamma_share"]
    if share:
        won = share[str(result["best_gamma"])]
        hint = "; other texts could change it (more --prompts, or other --seed)" if won < 0.8 else ""
        print(f"the text: gamma {result['best_gamma']} is the best in {won:.0%} of the resamples of the "
              f"{result['prompts']} prompts{hint}")
    best = next(r for r in result["results"] if r["gamma"] == result["best_gamma"])
    need = best["alpha_for_2x"]
    print(f"2x at gamma {best['gamma']} with this run's c and v would take alpha >= {need} (i.i.d. rounds; measured "
          f"{best['alpha']} +- {best['alpha_se']})" if need is not None else
          f"2x at gamma {best['gamma']} is out of reach at any alpha with this run's c and v: "
          f"(gamma + 1) / (gamma c + v) = {(best['gamma'] + 1) / (best['gamma'] * best['cost'] + best['verify_ratio']):.3f}")
    if result["slides"]:
        print(f"{result['slides']} generations slid the context window: their prefills are in the measured times, "
              "not in the prediction (lower --tokens)")


def _profile(args) -> int:
    from ..gpt.measure.bench import heldout_prompts
    from ..gpt.measure.machine import describe
    from ..gpt.measure.profile import PARTS, profile
    for flag, given in (("--target", args.target), ("--peer", args.peer), ("--drafters", args.drafters),
                        ("--rules", args.rules), ("--schemes", args.scheme)):
        if given:
            raise UsageError(f"--profile and {flag} do not combine: the profile splits chain rounds of the shipped "
                             "pair (choose the drafter with --draft)")
    gammas = list(args.gammas)
    r = profile(_pair(args), gammas, args.tokens or 150, float(args.temperature), args.repeats or 3, args.seed,
                heldout_prompts(args.prompts))
    if args.json:
        print_json(r)
        return 0
    target = "" if r["dtype"] == "float32" else f", target in {r['dtype']}"
    print(f"device {r['device']}{target}, drafter {r['draft']}, {r['prompts']} held-out prompts x {r['tokens']} "
          f"tokens, "
          f"{r['repeats']} interleaved repeats, {r['clock']}; ms per round, each part the minimum over repeats")
    print(f"this machine: {describe(r['machine'])}: {r['probe']['gflops_per_s']} GFLOP/s (512^3 product), "
          f"{r['probe']['gbytes_per_s']} GB/s (matrix-vector over 64 MiB); plain decoding {r['plain_step_ms']} ms a "
          f"token, floor {r['plain_floor_ms']} ms")
    res = r["results"]
    rows = [[part] + [f"{x['ms_per_round'][part]:.3f}" + (f" ({x['floor_ms'][part]:.3f})" if x["floor_ms"][part]
                                                          else "") for x in res] for part in PARTS]
    rows.append(["round"] + [f"{sum(x['ms_per_round'].values()):.3f}" for x in res])
    print(table(rows, ["part (floor)"] + [f"gamma {x['gamma']}" for x in res]))
    keys = ["gamma", "tokens_per_round", "speedup", "cost_apart", "verify_ratio_apart", "predicted_apart",
            "ratio_apart"]
    print(table([[x[k] for k in keys] for x in res], keys))
    drafts = ", ".join(f"{ms} (gamma {g})" for g, ms in r["draft_step_apart_ms"].items())
    feeds = []  # per gamma: how often a round's first drafter call reads several positions, and its mean cost
    for x in res:
        n, ms = sum(x["feeds_per_round"].values()), r["draft_feed_apart_ms"][x["gamma"]]
        if n:
            mean = sum(k * ms[m] for m, k in x["feeds_per_round"].items()) / n
            feeds.append(f"gamma {x['gamma']}: {n:.2f} a round, {mean:.4f} ms on average")
    feeds = "; ".join(feeds)
    print(f"costs apart: a target step {r['target_step_apart_ms']} ms, a drafter step {drafts} ms (gamma steps in a "
          "row, each burst after an untimed verify pass, as a round runs them) and verify passes, timed over a warm "
          "cache, interleaved, before any speculative round" +
          (f"; a round's first drafter call where it re-reads several kept positions ({feeds})" if feeds else "") +
          ": cost_apart is a round's drafting per drafted token, predicted_apart = tokens_per_round / (gamma c + v) "
          "from them, ratio_apart = speedup / predicted_apart; the host's work per round is not in it")
    return 0


SCHEME_KEYS = ["scheme", "drafted_tokens", "alpha", "tokens_per_pass", "verify_cost", "draft_passes_per_round",
               "tokens_per_s", "speedup", "speedup_interval", "slides"]


def _schemes(args) -> int:
    from ..gpt.measure.bench_schemes import bench_schemes
    if args.drafters:
        raise UsageError("--schemes and --drafters do not combine: compare schemes with one --draft")
    result = bench_schemes(_pair(args), args.scheme, args.tokens or 150, float(args.temperature), args.repeats,
                           args.seed, limit=budget(args))
    if args.json:
        print_json(result)
        return 0
    print(f"device {result['device']}, {result['threads']} thread(s), drafter {result['draft']}, temperature "
          f"{result['temperature']}, {result['prompts']} held-out prompts x {result['tokens']} tokens; plain "
          f"{result['plain_tokens_per_s']} tokens/s (target step {result['target_step_ms']} ms); verify_cost timed "
          f"inside the rounds, in target steps; speedup: the fastest of {result['repeats']} interleaved runs each, "
          "with [min, max] over runs")
    print(table([[_fmt(r[k]) for k in SCHEME_KEYS] for r in result["schemes"]], SCHEME_KEYS))
    return 0


RULE_KEYS = ["rule", "verdict", "scheme", "alpha", "tokens_per_pass", "verify_cost", "tokens_per_s", "speedup"]


def _rules(args) -> int:
    from ..gpt.measure.bench_rules import bench_rules
    for flag, given in (("--schemes", args.scheme), ("--peer", args.peer), ("--drafters", args.drafters)):
        if given:
            raise UsageError(f"--rules and {flag} do not combine: each rule runs on chain:--gamma or its own scheme")
    result = bench_rules(_pair(args), args.rules, args.gamma, args.tokens or 150, float(args.temperature),
                         args.repeats or 3, args.seed, limit=budget(args))
    if args.json:
        print_json(result)
        return 0
    print(f"device {result['device']}, {result['threads']} thread(s), drafter {result['draft']}, temperature "
          f"{result['temperature']}, {result['prompts']} held-out prompts x {result['tokens']} tokens; plain "
          f"{result['plain_tokens_per_s']} tokens/s; speedup: the fastest of {result['repeats']} interleaved runs each")
    print(table([[_fmt(r[k]) for k in RULE_KEYS] for r in result["rules"]], RULE_KEYS))
    print("verdict: the gallery's exact proof on the toy presets and random models (`specsim implementations`)")
    return 0


GALLERY_KEYS = ["drafter", "alpha", "alpha_se", "cost", "verify_ratio", "tokens_per_pass", "drafted_per_round",
                "best_gamma", "formula_speedup", "speedup", "speedup_interval"]


def _gallery(args) -> int:
    from ..gpt.gallery import gallery
    result = gallery(args.drafters or [args.draft], n_tokens=args.tokens, gamma=args.gamma,
                     temperature=float(args.temperature), repeats=args.repeats, seed=args.seed,
                     device=args.device)
    return report(args, result, _gallery_lines)


def _gallery_lines(result):
    st = result["settings"]
    yield (f"device {st['device']}, {st['threads']} thread(s), gamma {st['gamma']}, temperature {st['temperature']}, "
           f"{st['tokens']} tokens per prompt, {st['clock']}; c and v timed inside the rounds, in plain decoding's "
           f"time per token; speedup: the fastest of {st['repeats']} interleaved runs each, with [min, max] over runs")
    for name, rows in result["sets"].items():
        yield f"\n{name} prompts"
        yield table([[_fmt(r[k]) for k in GALLERY_KEYS] for r in rows], GALLERY_KEYS)


def _fmt(v):
    if isinstance(v, list):  # an interval
        return f"{v[0]:.3f}-{v[1]:.3f}"
    return round(v, 3) if isinstance(v, float) else v


def cmd_weights(args) -> int:
    """No torch: the manifest is JSON."""
    from ..gpt import weights_report as wr
    m = wr.manifest()
    if args.json:
        print_json({"models": wr.rows(m), "corpus": {k: v for k, v in wr.corpus_meta().items() if k != "files"}})
        return 0
    print("\n".join(wr.header_lines(m) + ["", table(wr.table_rows(wr.rows(m)), wr.HEADERS), ""] + wr.footer_lines(m)))
    return 0


TRAIN_STEPS = ("target", "more", "draft", "distill", "exit", "eagle", "eagle_more", "distill_more")  # --NAME-steps: Recipe.NAME_steps


def train_summary(stage: str, notes: dict) -> str:
    """One line on what a stage reached, from its manifest notes."""
    if stage == "exit_heads":
        alphas = ", ".join(f"K={k} {a['without_head']} -> {a['with_head']}"
                           for k, a in notes["teacher_forced_alpha"].items())
        return f"mean KL {notes['final_mean_kl']}, teacher-forced alpha without -> with head: {alphas}"
    alpha = (f", teacher-forced alpha {notes['teacher_forced_alpha']}"
             + (f" +- {notes['teacher_forced_alpha_se']}" if "teacher_forced_alpha_se" in notes else "")
             if "teacher_forced_alpha" in notes else "")
    if stage.startswith("eagle"):  # final losses are absent when a run was resumed at its last step
        losses = ", ".join(f"{what} {notes[key]}" for what, key in
                           (("smooth L1", "final_smooth_l1"), ("KL", "final_kl"), ("1 - alpha", "final_tv"))
                           if key in notes)
        return (losses or "losses not recorded (resumed at its last step)") + alpha
    return f"train loss {notes['final_train_loss']}, validation loss {notes['val_loss']}{alpha}"


@needs_torch
def cmd_train(args) -> int:
    from dataclasses import replace

    import torch

    from ..gpt.api import resolve_device
    from ..gpt.train.recipe import STAGES, Recipe, run_stage
    torch.set_num_threads(args.threads)
    recipe = Recipe(seed=args.seed)
    for name in TRAIN_STEPS:
        if getattr(args, f"{name}_steps"):
            recipe = replace(recipe, **{f"{name}_steps": getattr(args, f"{name}_steps")})
    device = resolve_device(args.device)
    stages = STAGES if args.stage == "all" else (args.stage,)
    for stage in stages:
        entry = run_stage(stage, args.out, recipe, device=device, progress=True)
        print(f"{stage}: {entry['parameters']} parameters, {train_summary(stage, entry['notes'])}, "
              f"{entry['notes']['seconds']} s -> {os.path.join(args.out, entry['file'])}")
    return 0
