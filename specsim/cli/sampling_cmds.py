"""Sampling commands: trace, generate, sample (--check), pitfalls, bench-sample.

trace, generate, sample and pitfalls take the verification scheme as one value (``--scheme``;
--gamma, --verify, --tree and --drafts are shorthand for it) and run one code path for every
scheme: ``sampling.trace_round`` / ``generate``, ``montecarlo.sample_rounds`` and the exact
engine all take the scheme.
"""
from __future__ import annotations

import argparse
import textwrap

from .. import bounds, transforms
from .common import (TEMPERATURE_HELP, UsageError, add_scheme_option, add_shorthand_options, budget, gamma_arg,
                     int_in_range, load_model_arg, max_work_arg, num, parse_context, print_json, progress_bar,
                     scheme_from_args, scheme_keys, scheme_text, seed_arg, table, temperature_arg, top_p_arg)

SAMPLE_ROUNDS, TREE_ROUNDS = 100_000, 10_000  # sample's default --rounds (a tree round takes ~1 ms: exact residuals)


LOOP_ROUNDS = 100_000  # bench-sample: the loop's default rounds when --rounds is larger


def _pitfalls():
    from ..labs import pitfalls  # the broken rules, imported when a command names or runs one
    return pitfalls


def _rule_name(text):
    try:  # a one-line ValueError naming every rule; a long text is quoted to 60 characters (no name is that long)
        _pitfalls().get(text[:60])
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return text


def _common(p, rule=True, verify=False, tree=False):
    p.add_argument("model", metavar="MODEL", help="preset name (seed, zeros, order2) or JSON file")
    p.add_argument("--context", help="context tokens, e.g. 'a' or '0 1' (default: the first context)")
    add_scheme_option(p)
    add_shorthand_options(p, verify=verify, tree=tree)
    p.add_argument("--seed", type=seed_arg, default=0, help="random seed (default 0)")
    if rule:
        p.add_argument("--rule", type=_rule_name, default="correct",
                       help="a rule from `specsim pitfalls` (default: correct)")
    p.add_argument("--temperature", type=temperature_arg, help=TEMPERATURE_HELP + " (1/k stays exact)")
    p.add_argument("--top-k", type=int_in_range("top-k", 1, 10**6), help="keep the k most probable tokens")
    p.add_argument("--top-p", type=top_p_arg,
                   help="keep the most probable tokens up to mass top-p in (0, 1]")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def register(sub) -> None:
    p = sub.add_parser("trace", help="one seeded round, every step recorded")
    _common(p, verify=True, tree=True)
    p.set_defaults(func=cmd_trace)

    p = sub.add_parser("generate", help="seeded rounds chained until N tokens are out")
    _common(p, verify=True, tree=True)
    p.add_argument("--tokens", type=int_in_range("tokens", 1, bounds.LIMITS.generate_tokens), default=10,
                   help="N (default 10)")
    max_work_arg(p)
    p.set_defaults(func=cmd_generate)

    p = sub.add_parser("sample", help="Monte-Carlo: many rounds, counts of outcomes and of K")
    _common(p, verify=True, tree=True)
    p.add_argument("--rounds", type=int_in_range("rounds", 1, bounds.LIMITS.sample_rounds), default=None,
                   help=f"rounds (default {SAMPLE_ROUNDS:,}; {TREE_ROUNDS:,} for a tree, whose rounds run one at "
                        "a time)")
    p.add_argument("--check", action="store_true", help="chi-square test against the exact round")
    p.add_argument("--top", type=int_in_range("top", 0, 10**9), default=20,
                   help="outcomes to list in the readable form (0 = all; default 20)")
    max_work_arg(p)
    p.set_defaults(func=cmd_sample)

    p = sub.add_parser("pitfalls", help="broken rules and their exact distance from the target")
    p.add_argument("model", metavar="MODEL", help="preset name or JSON file")
    p.add_argument("--context", help="context tokens (default: the first context)")
    add_scheme_option(p)
    add_shorthand_options(p)
    p.add_argument("--tokens", type=int_in_range("tokens", 1, 8), default=2, help="N (default 2)")
    p.add_argument("--rule", type=_rule_name, action="append",
                   help="only this rule (repeatable; default: every rule the scheme takes)")
    p.add_argument("--json", action="store_true")
    max_work_arg(p)
    p.set_defaults(func=cmd_pitfalls)

    p = sub.add_parser("bench-sample", help="benchmark: vectorized Monte-Carlo vs a per-round loop")
    p.add_argument("--model", default="seed")
    p.add_argument("--context", default=None)
    p.add_argument("--gamma", type=gamma_arg, default=3)
    p.add_argument("--rounds", type=int_in_range("rounds", 1, 10**8), default=10**6)
    p.add_argument("--loop-rounds", type=int_in_range("loop-rounds", 1, 10**8),
                   help=f"rounds for the loop (default: --rounds, at most {LOOP_ROUNDS:,}: the loop is "
                        "timed per round, and a million Python rounds take minutes)")
    p.add_argument("--repeats", type=int_in_range("repeats", 1, 100), default=5)
    p.add_argument("--loop-repeats", type=int_in_range("loop-repeats", 1, 100), default=3)
    p.add_argument("--seed", type=seed_arg, default=0)
    max_work_arg(p)
    p.set_defaults(func=cmd_bench_sample)


def _setup(args):
    """Model, context, scheme, the pair the round runs on, and the rule."""
    model = load_model_arg(args.model)
    ctx = parse_context(model, args.context)
    scheme = scheme_from_args(args)
    pair = transforms.transform_pair(model, args.temperature, args.top_k, args.top_p)
    try:  # the rule must apply to the scheme (a tree rule to a tree; a block has its own rule)
        [(pitfall, scheme)] = _pitfalls().cases(scheme, [getattr(args, "rule", None) or "correct"])
    except ValueError as e:
        raise UsageError(str(e)) from None
    return model, ctx, scheme, pitfall.speculative(pair), pitfall.rule


def _row(row) -> str:
    return " ".join(num(x) for x in row)


def _settings(args, scheme) -> str:
    extra = transforms.describe(args.temperature, args.top_k, args.top_p)
    rule = getattr(args, "rule", "correct")
    return f"{scheme_text(scheme)}, seed {args.seed}, rule {rule}" + (f", {extra}" if extra else "")


# -- trace -------------------------------------------------------------------

def cmd_trace(args) -> int:
    from .. import sampling
    model, ctx, scheme, pair, rule = _setup(args)
    t = sampling.trace_round(pair, ctx, scheme, args.seed, rule)
    if args.json:
        print_json(t.to_dict())
        return 0
    pl = t.played
    print(f"One round of model {model.name!r} after {' '.join(ctx)!r}: {_settings(args, scheme)}")
    print(f"vocabulary: {' '.join(t.vocab)}  (rows list probabilities in this order)")
    print(f"Step 1, draft: the drafter proposes {' '.join(t.drafts)}"
          + ("" if scheme.drawn_as != "tree" else
             f"  (parents {' '.join(map(str, t.parents))}; -1 = the context)"))
    print(f"Step 2, verify: one target pass computes p at {len(pl.p_rows)} positions")
    block = scheme.keeps_by_stop_coins
    print("Step 3, " + scheme.step_words)
    tests = {e["node"]: e for e in t.events() if e["kind"] in ("accept", "reject", "stop")}
    rows = []
    for j, x in enumerate(t.drafts):  # one line per drafted node, its test if it had one
        parent = pl.parents[j]
        path = [t.vocab[i] for i in pl.path_of(j)[:-1]]
        cells = [j + 1, " ".join(t.context + tuple(path)), _row(pl.q_rows[parent + 1]), _row(pl.p_rows[parent + 1]), x]
        e = tests.get(j)
        if e is None:
            rows.append(cells + ["", "", "", "", "discarded"])
        elif block:
            sign = "<" if e["stop"] else ">="
            result = f"{'stop' if e['stop'] else 'go on'} (u {sign} {e['h']})"
            rows.append(cells + ["", "", e["h"], num(e["u"], "decimal"), result])
        else:
            sign = "<" if e["kind"] == "accept" else ">="
            a = e["acceptance"]
            rows.append(cells + [e["q_x"], e["p_x"], a, num(e["u"], "decimal"), f"{e['kind']} (u {sign} {a})"])
    print(table(rows, ["#", "context", "q row", "p row", "draft x", "q(x)", "p(x)",
                       "stop prob h" if block else "accept prob", "u", "result"]))
    k, where = t.accepted, " ".join(t.context + t.emitted[:t.accepted])
    if t.replacement is not None:
        what = ("the block residual max(0, w p - q) normalized" if block
                else "residual max(0, p - q) normalized" if t.rule == "correct" else f"rule {t.rule}'s replacement row")
        why = scheme.closed_words(k)
        print(f"Step 4, correct: {why}; {what} after {where!r} "
              f"= ({_row(t.replacement_row)}) -> {t.replacement}")
    elif t.bonus is not None:
        print(f"Step 5, bonus: all {k} drafts kept; p after {where!r} = ({_row(t.verdict.closing_row)}) -> {t.bonus}")
    else:
        print(f"Step 5, bonus: all {k} drafts kept; this rule adds no bonus token")
    n = len(t.emitted)
    print(f"Emitted: {' '.join(t.emitted)}  (K = {k}; {n} token{'s' * (n != 1)} for 1 target pass)")
    return 0


# -- generate ----------------------------------------------------------------

def cmd_generate(args) -> int:
    from .. import sampling
    model, ctx, scheme, pair, rule = _setup(args)
    bounds.check_generate(model, scheme, args.tokens, budget(args))
    g = sampling.generate(pair, ctx, scheme, args.tokens, args.seed, rule)
    if args.json:
        print_json(g.to_dict())
        return 0
    print(f"Generation from {' '.join(ctx)!r} with model {model.name!r}: {_settings(args, scheme)}")
    rows = []
    for j, (r, total) in enumerate(zip(g.rounds, g.running_totals()), 1):
        rows.append([j, " ".join(r.emitted[:r.accepted]) or "-",
                     r.replacement if r.replacement is not None else "-",
                     r.bonus if r.bonus is not None else "-",
                     len(r.emitted), total["tokens"], total["target_passes"]])
    print(table(rows, ["round", "accepted drafts", "replacement", "bonus", "tokens",
                       "tokens so far", "target passes"]))
    marked = []
    for r in g.rounds:
        marked.append(" ".join(t if kind == "draft" else (f"[{t}]" if kind == "correct" else f"+{t}")
                               for t, kind in zip(r.emitted, r.kinds)))
    print("Tokens, rounds separated by |, [replacement], +bonus:")
    print("  " + " | ".join(marked))
    print(f"Output (first {args.tokens}): {' '.join(g.output)}")
    print(f"{len(g.tokens)} tokens in {g.target_passes} target passes: "
          f"{num(g.tokens_per_pass, 'both', 3)} tokens per pass")
    return 0


# -- sample ------------------------------------------------------------------

def cmd_sample(args) -> int:
    from .. import exact, montecarlo
    model, ctx, scheme, pair, rule = _setup(args)
    args.rounds = args.rounds or int(SAMPLE_ROUNDS * scheme.sample_share)  # a fixed tree: TREE_ROUNDS
    # a block refuses a broken rule itself (it has its own rule), in one line, before any round is sampled
    bounds.check_sample(pair, scheme, args.rounds, rule, budget(args))
    if args.check:
        bounds.check_round(pair, scheme, budget(args), power=bounds.temperature_power(args.temperature))
    with progress_bar(args.rounds, "rounds") as bar:  # on a terminal, for long runs
        s = montecarlo.sample_rounds(pair, ctx, scheme, args.rounds, args.seed, bar, rule)
    fit = dist = None
    if args.check:
        from .. import stats  # scipy: imported only when a check is asked for
        dist = exact.round_distribution(pair, ctx, scheme, rule)
        fit = stats.fit_round(s, dist)
    if args.json:
        out = {"scheme": scheme.name} | s.to_dict() | scheme.json_keys()  # the keys --tree always printed
        if fit:
            out["check"] = {k: v.to_dict() for k, v in fit.items()}
        print_json(out)
        return 0
    print(f"{args.rounds:,} rounds of model {model.name!r} after {' '.join(ctx)!r}: {_settings(args, scheme)}")
    items = sorted(s.outcomes.items(), key=lambda kv: (-kv[1], kv[0]))
    shown = items if args.top == 0 else items[:args.top]
    rows = []
    for tokens, c in shown:
        row = [" ".join(tokens), c, num(c / args.rounds, "decimal")]
        if dist:
            pr = dist.outcomes.get(tokens, 0)
            row += [num(pr), num(pr, "decimal")]
        rows.append(row)
    heads = ["emitted", "count", "frequency"] + (["exact", "≈"] if dist else [])
    print(f"{len(items)} distinct emitted sequences" +
          ("" if len(shown) == len(items) else f" (the {len(shown)} most frequent; --top 0 for all)"))
    print(table(rows, heads))
    rows = [[k, c, num(c / args.rounds, "decimal")] + ([num(dist.accepted[k]), num(dist.accepted[k], "decimal")] if dist else [])
            for k, c in enumerate(s.accepted_counts)]
    print(table(rows, ["K", "count", "frequency"] + (["exact", "≈"] if dist else [])))
    if fit:
        for what, f in fit.items():
            verdict = "consistent with the exact distribution" if f.passes() else "REJECTED at level 0.001"
            extra = f", {len(f.unexpected)} impossible outcome(s) sampled" if f.unexpected else ""
            print(f"chi-square ({what}): statistic {num(f.statistic, 'decimal', 3)}, dof {f.dof}, "
                  f"p-value {num(f.p_value, 'decimal')}"
                  f" ({f.pooled} rare cells pooled{extra}): {verdict}")
    return 0


# -- pitfalls ----------------------------------------------------------------

def cmd_pitfalls(args) -> int:
    pitfalls = _pitfalls()
    model = load_model_arg(args.model)
    ctx = parse_context(model, args.context)
    scheme = scheme_from_args(args)
    pitfalls.check_lab(model, scheme, args.tokens, args.rule, budget(args))  # the rules that apply, or one line
    results = pitfalls.run_lab(model, ctx, scheme, args.tokens, args.rule)
    if args.json:
        print_json({"context": " ".join(ctx)} | scheme_keys(scheme) | {"tokens": args.tokens, "rules": [
            r.to_dict() | ({"drafts": scheme.drafts if r.scheme == scheme.name else "distinct"}
                           if scheme.draft_modes else {}) for r in results]})
        return 0
    print(f"Pitfalls lab: model {model.name!r} after {' '.join(ctx)!r}, {scheme_text(scheme)}, "
          f"next {args.tokens} token(s); TV = distance from the intended distribution")
    rows = [[r.name, r.scheme, num(r.total_variation), num(r.total_variation, "decimal"),
             num(r.expected_tokens), num(r.expected_tokens, "decimal"),
             "yes" if r.exact else "no", r.source or "-"] for r in results]
    print(table(rows, ["rule", "scheme", "TV", "≈", "tokens/round", "≈", "exact", "source"]))
    for r in results:
        print()
        print(textwrap.fill(f"{r.name}: {r.description}", width=88, subsequent_indent="  "))
    return 0


# -- bench-sample ------------------------------------------------------------

def cmd_bench_sample(args) -> int:
    from ..bench.toy import bench_sample, check_bench_sample  # a chain of --gamma, the correct rule: kernel vs loop
    model = load_model_arg(args.model)
    loop_rounds = args.loop_rounds or min(args.rounds, LOOP_ROUNDS)
    check_bench_sample(model, args.gamma, args.rounds, loop_rounds, args.repeats,
                              args.loop_repeats, budget(args))
    print_json(bench_sample(model, parse_context(model, args.context), args.gamma, args.rounds,
                            loop_rounds, args.repeats, args.loop_repeats, args.seed))
    return 0
