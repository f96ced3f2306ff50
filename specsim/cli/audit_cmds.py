"""`specsim audit`: an engine judged by the tokens it emits (``specsim.gpt.audit``)."""
from __future__ import annotations

import math
import sys

from .common import UsageError, argtype, int_in_range, number, print_json, seed_arg, table, temperature_arg, top_p_arg

DESCRIPTION = (
    "Runs an engine N times from the prompt (seeded, independent runs) in a child process and tests whether "
    "the joint distribution of its first K tokens (K <= 3) equals the shipped target's exact distribution, "
    "computed here from the target's own forward passes with the same temperature, top-k and top-p; for K > 3 "
    "each emitted token is judged against the target's exact conditional given its run's own prefix "
    "(randomized probability-integral transforms: uniform for an exact engine; necessary, not sufficient). "
    "p-values are exact (every outcome enumerated) where the runs and cells are few enough, else from Monte Carlo "
    "draws of the target's own law (--p-value-method), so the false-alarm rate holds at every N. Engines: specsim "
    "(specsim's decoder: --scheme, --drafter), hf (transformers' assisted generation on the shipped pair, or on "
    "a local checkpoint pair --target DIR --draft DIR judged against that target; drafting options with --hf) or "
    "PATH.py:ClassName, your own: ClassName(target, drafter, temperature=, top_k=, top_p=) with a method "
    "generate(ids, n, generator) -> n token ids (examples: specsim/gpt/audit_engines.py; known bugs of real "
    "engines: specsim/gpt/audit_bugs.py). specsim and hf report the drafted tokens their target verified inside "
    "the judged window, and an audit that saw none is refused (transformers drafts at most K - 1 tokens). "
    "The verdict is "
    "computed here, never by the engine's process, which isolates itself on Linux (its own user, PID, mount, "
    "network and IPC namespaces, read-only files but a private temporary folder, no new processes, one memory limit: "
    "--memory) and is killed with everything it started at the end; the output says whether it was isolated "
    "(--require-isolation refuses where it cannot be). Samples can refute exactness, never prove it.")
EPILOG = "exit codes: 0 consistent with the target; 1 not the target; 2 no verdict or bad input (one line)."
P_VALUE_METHODS = {"auto": "auto", "exact": "exact", "monte-carlo": "monte carlo", "monte carlo": "monte carlo"}
P_VALUE_HELP = ("how Pearson's p-value is computed: auto (default) enumerates every outcome exactly where the runs "
                "and cells are few enough (at most {limit:,} count vectors) and draws from the target by Monte "
                "Carlo beyond that limit; exact does the same and says in the output when it had to fall back; "
                "monte-carlo always draws (written 'monte carlo' too). Where alpha is below what a million draws "
                "resolve, the chi-square approximation is used and said")


def p_value_method(text: str) -> str:
    """--p-value-method: auto, exact or monte-carlo (the library's "monte carlo" spelling accepted too), as the
    library spells it.

    >>> p_value_method("monte-carlo"), p_value_method("exact")
    ('monte carlo', 'exact')
    """
    if text not in P_VALUE_METHODS:
        raise ValueError(f"choose auto, exact or monte-carlo, got {str(text)[:40]!r}")
    return P_VALUE_METHODS[text]


def register(sub) -> None:
    from ..labs.audit_limits import (DEFAULT_MEMORY_MB, EXACT_LIMIT, MAX_JOINT, MAX_MEMORY_MB, MAX_SAMPLES,
                                     MAX_TOKENS, MIN_MEMORY_MB)  # numpy and torch load when an audit runs, not for --help
    p = sub.add_parser("audit", help="judge an engine (specsim, transformers, yours) by the tokens it emits",
                       description=DESCRIPTION, epilog=EPILOG)
    p.add_argument("--engine", required=True, metavar="ENGINE", help="specsim, hf or PATH.py:ClassName")
    p.add_argument("--prompt", required=True, help="start text (newline and printable ASCII)")
    p.add_argument("--tokens", type=int_in_range("tokens", 1, MAX_TOKENS), default=2,
                   help=f"K: the first K emitted tokens are judged, jointly up to {MAX_JOINT}, above that token by "
                        f"token against the target's conditional given each run's own prefix (randomized PITs; "
                        f"default 2, at most {MAX_TOKENS})")
    p.add_argument("--samples", type=int_in_range("samples", 2, MAX_SAMPLES), default=2000,
                   help="N runs of the engine (default 2000)")
    p.add_argument("--scheme", default="chain:4", help="the specsim engine's scheme (default chain:4)")
    p.add_argument("--drafter", default="distilled", help="the specsim engine's drafter (default distilled)")
    p.add_argument("--target", metavar="DIR", default=None,
                   help="with --engine hf: a local transformers checkpoint, the target (judged against its own "
                        "exact distribution; safetensors only, no code from the checkpoint)")
    p.add_argument("--draft", metavar="DIR", default=None,
                   help="with --engine hf: a local transformers checkpoint, the assistant (not --drafter)")
    p.add_argument("--hf", action="append", default=[], metavar="KEY=VALUE",
                   help="with --engine hf: a transformers drafting option, repeatable: num_assistant_tokens, "
                        "num_assistant_tokens_schedule, assistant_confidence_threshold, prompt_lookup_num_tokens, "
                        "max_matching_ngram_size, assistant_ensemble_weight (a logits processor the reference "
                        "cannot reproduce is refused)")
    p.add_argument("--temperature", type=temperature_arg, default=1.0, help="above 0 (default 1)")
    p.add_argument("--top-k", type=int_in_range("top-k", 1, 10**6), default=None)
    p.add_argument("--top-p", type=top_p_arg, default=None)
    p.add_argument("--seed", type=seed_arg, default=0, help="run i uses seed + i")
    p.add_argument("--alpha", type=number("the false-alarm rate", 1e-9, 0.5), default=1e-3,
                   help="the test's false-alarm rate, from 1e-9 to 0.5 (default 0.001); a Monte Carlo p-value takes "
                        "50/alpha draws from the target (valid at every N) down to 2e-5, below that the "
                        "chi-square approximation, said in the output")
    p.add_argument("--p-value-method", type=argtype("p-value method", p_value_method), default="auto",
                   metavar="{auto,exact,monte-carlo}", help=P_VALUE_HELP.format(limit=EXACT_LIMIT))
    p.add_argument("--sequential", action="store_true",
                   help="watch a mixture likelihood-ratio test while the runs arrive and stop as soon as it reaches "
                        "1/alpha ('not the target'; Ville's inequality keeps the false-alarm rate); it never stops "
                        "early to say 'consistent'")
    p.add_argument("--detect", type=number("--detect", 0.001, 1), default=0.05,
                   help="print the runs needed to detect this TV, from 0.001 to 1 (default 0.05)")
    p.add_argument("--timeout", type=int_in_range("timeout", 1, 86400), default=3600,
                   help="seconds for the whole audit (default 3600)")
    p.add_argument("--memory", type=int_in_range("memory", MIN_MEMORY_MB, MAX_MEMORY_MB), default=DEFAULT_MEMORY_MB,
                   metavar="MB", help=f"the engine's address space, its whole process tree (default {DEFAULT_MEMORY_MB})")
    p.add_argument("--require-isolation", action="store_true",
                   help="refuse (exit 2) where the engine's process cannot be isolated by the operating system")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_audit)


def _check_scheme(args) -> None:
    from .. import schemes
    from ..gpt.specs import parse_spec
    schemes.parse(args.scheme)  # one-line ValueError
    parse_spec(args.drafter)


def cmd_audit(args) -> int:
    from ..gpt import audit
    from ..gpt.audit import AuditError
    _check_scheme(args)
    top_p = None if args.top_p is None else float(args.top_p)

    def progress(done, total):
        if not args.json and sys.stderr.isatty() and (done % max(1, total // 20) == 0 or done == total):
            print(f"\r{done}/{total} runs", end="" if done < total else "\n", file=sys.stderr, flush=True)

    try:
        r = audit.audit(args.engine, args.prompt, args.tokens, args.samples, args.scheme, args.drafter,
                        float(args.temperature), args.top_k, top_p, args.seed, args.alpha, args.timeout,
                        args.detect, progress, args.memory, args.require_isolation, target_dir=args.target,
                        draft_dir=args.draft, hf_options=args.hf, sequential=args.sequential,
                        p_value_method=args.p_value_method)
    except AuditError as e:
        raise UsageError(str(e)) from None
    code = 0 if r["verdict"] == "consistent with the target" else 1
    if args.json:
        print_json(r)
        return code
    from ..labs.isolation import describe
    from ..labs.sandbox import escaped
    what = escaped(args.engine)[:300] + (f" ({args.scheme}, drafter {args.drafter})" if args.engine == "specsim" else "")
    if r.get("target"):
        what += f" (target {escaped(r['target'])[:200]}, draft {escaped(r['draft'])[:200]})"
    if r.get("hf_options"):
        what += " (" + ", ".join(f"{k}={v}" for k, v in r["hf_options"].items()) + ")"
    print(f"Engine {what}: {r['samples']:,} runs from {args.prompt!r}, first {r['tokens']} token(s), "
          f"T = {r['temperature']:g}, top-k {r['top_k']}, top-p {r['top_p']}; {r['samples_per_s']} runs/s")
    iso = describe(r["isolation"]["isolated"], r["isolation"]["why"])
    print(f"{iso[:1].upper()}{iso[1:]}; memory limit {r['memory_mb']:,} MB")
    for line in r.get("warnings") or ():
        print(f"Warning: {line}", file=sys.stderr)
    if r.get("verified_drafts") is not None:
        print(f"Speculation seen: {r['verified_drafts']:,} drafted tokens verified inside the judged window, "
              f"in {r['runs_with_drafts']:,} of {r['samples']:,} runs")
    print(f"Verdict: {r['verdict'].upper()}")
    _print_statistics(r, args)
    return code


def _p_text(r: dict) -> str:
    p = "0" if r["p_value"] == 0 else f"{r['p_value']:.3g}"
    if r.get("mc_draws"):
        p += f" (Monte Carlo, {r['mc_draws']:,} draws from the target, standard error {r['p_value_se']:.2g})"
    return p


def _print_statistics(r: dict, args) -> None:
    rate = (f"false-alarm rate {args.alpha:g} (an exact engine is called 'not the target' in at most "
            f"{args.alpha:g} of audits")
    rate += ", at every N)" if r["p_value_method"].startswith(("monte carlo", "exact")) else \
        "; the chi-square approximation at this rate is not exact at every N)"
    if r["mode"] == "token by token":
        print(f"Token by token: {r['tokens_judged']:,} tokens, each against the target's exact conditional given its "
              f"run's prefix (randomized PITs, uniform for an exact engine; necessary, not sufficient); "
              f"p-value {_p_text(r)}, Bonferroni over 3 tests; {rate}")
        print(table([(t["name"], f"{t['statistic']:.1f}", t["cells"], f"{t['values']:,}", f"{t['p_value']:.3g}")
                     for t in r["tests"]], ["test", "Pearson", "cells", "values", "p-value"]))
        _print_pit_figures(r, args)
    else:
        stat = "inf (a sequence the target never emits)" if math.isinf(r["statistic"]) else f"{r['statistic']:.1f}"
        print(f"Pearson chi-square over {r['cells']} cells (each expecting >= 5 runs): {stat} on {r['df']} "
              f"degrees, p-value {_p_text(r)}; {rate}")
        print(f"TV over the cells: {r['tv']:.4f}, 95% interval [{r['tv_ci'][0]:.4f}, {r['tv_ci'][1]:.4f}] "
              f"(bootstrap); noise alone gives an exact engine {r['tv_exact_engine']:.4f} with this many runs")
        print(f"This budget detects a TV of {r['detectable_tv']:.4f} with probability 0.8 (noncentral chi-square); "
              f"a TV of {args.detect:g} needs {r['samples_to_detect']:,} runs (with the cells those runs make)")
    _print_sequential(r, args)
    if r.get("top"):
        print(table([(repr(t["text"]), f"{t['observed']:.4f}", f"{t['exact']:.4f}") for t in r["top"]],
                    ["tokens", "emitted", "exact p"]))


def _print_pit_figures(r: dict, args) -> None:
    """The token-by-token TV and power lines, as the joint mode prints its own (``labs.audit.pit_figures``)."""
    rank = next(t for t in r["tests"] if t["name"].startswith("pit, likeliest first"))
    print(f"TV of the probability-rank PITs' histogram from uniform over its {rank['cells']} equal bins (every token "
          f"of every run pooled): {r['tv']:.4f}; noise alone gives an exact engine {r['tv_exact_engine']:.4f} with "
          f"this many tokens")
    print(f"This budget detects a TV of {r['detectable_tv']:.4f} with probability 0.8 (i.i.d. PITs, by the rank test "
          f"alone at alpha/3; noncentral chi-square); a TV of {args.detect:g} needs {r['samples_to_detect']:,} runs "
          f"of {r['tokens']} tokens (checked by simulating the hardest histogram at that TV)")


def _print_sequential(r: dict, args) -> None:
    if r.get("sequential"):
        s = r["sequential"]
        print("Sequential test (mixture likelihood ratio, Ville's inequality): " +
              (f"decided 'not the target' at run {s['decided_at']:,} of {r['runs_planned']:,}" if s["decided_at"]
               else f"undecided after {r['samples']:,} runs (largest e-value {s['e_value']:.3g}, "
                    f"1/alpha = {1 / args.alpha:.3g})"))
