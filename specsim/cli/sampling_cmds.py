"""Sampling commands: trace, generate, sample (--check), pitfalls, bench-sample."""
from __future__ import annotations

import argparse
import textwrap

from .. import bounds, exact, montecarlo, sampling, transforms

from ..labs import pitfalls
from .exact_cmds import tree_args
from .common import (progress_bar, TEMPERATURE_HELP, UsageError, budget, gamma_arg, int_in_range, load_model_arg,
                     max_work_arg, num, parse_context, print_json, seed_arg, table, temperature_arg, top_p_arg)

SAMPLE_ROUNDS, TREE_ROUNDS = 100_000, 10_000  # sample's default --rounds (a tree round takes ~1 ms: exact residuals)


def _rule_name(text):
    if text not in pitfalls.PITFALLS and text not in pitfalls.TREE_PITFALLS:
        raise argparse.ArgumentTypeError(f"unknown rule {text[:60]!r}; known: {', '.join(pitfalls.PITFALLS)}")
    return text


def _common(p, rule=True):
    p.add_argument("model", metavar="MODEL", help="preset name (seed, zeros, order2) or JSON file")
    p.add_argument("--context", help="context tokens, e.g. 'a' or '0 1' (default: the first context)")
    p.add_argument("--gamma", type=gamma_arg, default=3, help="draft length γ (default 3)")
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
    _common(p)
    p.set_defaults(func=cmd_trace)

    p = sub.add_parser("generate", help="seeded rounds chained until N tokens are out")
    _common(p)
    p.add_argument("--tokens", type=int_in_range("tokens", 1, bounds.LIMITS.generate_tokens), default=10,
                   help="N (default 10)")
    max_work_arg(p)
    p.set_defaults(func=cmd_generate)

    p = sub.add_parser("sample", help="Monte-Carlo: many rounds, counts of outcomes and of K")
    _common(p)
    p.add_argument("--rounds", type=int_in_range("rounds", 1, bounds.LIMITS.sample_rounds), default=None,
                   help=f"rounds (default {SAMPLE_ROUNDS:,}; {TREE_ROUNDS:,} with --tree, whose rounds run one at a time)")
    p.add_argument("--check", action="store_true", help="chi-square test against the exact round")
    p.add_argument("--verify", choices=["token", "block"], default="token",
                   help="token-wise (default) or block verification (a per-round loop, correct rule only)")
    tree_args(p)
    p.add_argument("--top", type=int_in_range("top", 0, 10**9), default=20,
                   help="outcomes to list in the readable form (0 = all; default 20)")
    max_work_arg(p)
    p.set_defaults(func=cmd_sample)

    p = sub.add_parser("pitfalls", help="broken rules and their exact distance from the target")
    p.add_argument("model", metavar="MODEL", help="preset name or JSON file")
    p.add_argument("--context", help="context tokens (default: the first context)")
    p.add_argument("--gamma", type=gamma_arg, default=3)
    p.add_argument("--tokens", type=int_in_range("tokens", 1, 8), default=2, help="N (default 2)")
    p.add_argument("--rule", type=_rule_name, action="append", help="only this rule (repeatable)")
    p.add_argument("--json", action="store_true")
    tree_args(p)
    max_work_arg(p)
    p.set_defaults(func=cmd_pitfalls)

    p = sub.add_parser("bench-sample", help="benchmark: vectorized Monte-Carlo vs a per-round loop")
    p.add_argument("--model", default="seed")
    p.add_argument("--context", default=None)
    p.add_argument("--gamma", type=gamma_arg, default=3)
    p.add_argument("--rounds", type=int_in_range("rounds", 1, 10**8), default=10**6)
    p.add_argument("--loop-rounds", type=int_in_range("loop-rounds", 1, 10**8),
                   help="rounds for the loop (default: --rounds)")
    p.add_argument("--repeats", type=int_in_range("repeats", 1, 100), default=5)
    p.add_argument("--loop-repeats", type=int_in_range("loop-repeats", 1, 100), default=3)
    p.add_argument("--seed", type=seed_arg, default=0)
    max_work_arg(p)
    p.set_defaults(func=cmd_bench_sample)


def _setup(args):
    """Model, context, the pair the round runs on, and the rule."""
    model = load_model_arg(args.model)
    ctx = parse_context(model, args.context)
    pair = transforms.transform_pair(model, args.temperature, args.top_k, args.top_p)
    pitfall = pitfalls.get(getattr(args, "rule", None) or "correct")
    return model, ctx, pitfall.speculative(pair), pitfall.rule


def _row(row) -> str:
    return " ".join(num(x) for x in row)


def _settings(args) -> str:
    extra = transforms.describe(args.temperature, args.top_k, args.top_p)
    rule = getattr(args, "rule", "correct")
    return f"γ = {args.gamma}, seed {args.seed}, rule {rule}" + (f", {extra}" if extra else "")


# -- trace -------------------------------------------------------------------

def cmd_trace(args) -> int:
    model, ctx, pair, rule = _setup(args)
    t = sampling.trace_round(pair, ctx, args.gamma, args.seed, rule)
    if args.json:
        print_json(t.to_dict())
        return 0
    print(f"One round of model {model.name!r} after {' '.join(ctx)!r}: {_settings(args)}")
    print(f"vocabulary: {' '.join(t.vocab)}  (rows list probabilities in this order)")
    print(f"Step 1, draft: the drafter proposes {' '.join(t.drafts)}")
    print(f"Step 2, verify: one target pass computes p at {args.gamma + 1} positions")
    print("Step 3, accept left to right while u < min(1, p(x)/q(x)):")
    rows = []
    events = {(e["kind"], e.get("position")): e for e in t.events()}
    for i, x in enumerate(t.drafts):
        e = events.get(("accept", i)) or events.get(("reject", i))
        cells = [i + 1, " ".join(t.context + t.drafts[:i]), _row(t.q_rows[i]), _row(t.p_rows[i]), x]
        if e is None:
            rows.append(cells + ["", "", "", "", "discarded"])
        else:
            sign = "<" if e["kind"] == "accept" else ">="
            a = num(e["acceptance"])
            rows.append(cells + [num(e["q_x"]), num(e["p_x"]), a, num(e['u'], 'decimal'),
                                 f"{e['kind']} (u {sign} {a})"])
    print(table(rows, ["#", "context", "q row", "p row", "draft x", "q(x)", "p(x)",
                       "accept prob", "u", "result"]))
    if t.accepted < t.gamma:
        where = " ".join(t.context + t.drafts[:t.accepted])
        what = ("residual max(0, p - q) normalized" if t.rule == "correct"
                else f"rule {t.rule}'s replacement row")
        print(f"Step 4, correct: draft {t.accepted + 1} rejected; {what} after {where!r} "
              f"= ({_row(t.replacement_row)}) -> {t.replacement}")
    elif t.bonus is not None:
        where = " ".join(t.context + t.drafts)
        print(f"Step 5, bonus: all {t.gamma} drafts kept; p after {where!r} = ({_row(t.p_rows[-1])}) -> {t.bonus}")
    else:
        print(f"Step 5, bonus: all {t.gamma} drafts kept; this rule adds no bonus token")
    n = len(t.emitted)
    print(f"Emitted: {' '.join(t.emitted)}  (K = {t.accepted}; {n} token{'s' * (n != 1)} for 1 target pass)")
    return 0


# -- generate ----------------------------------------------------------------

def cmd_generate(args) -> int:
    model, ctx, pair, rule = _setup(args)
    bounds.check_generate(model, args.gamma, args.tokens, budget(args))
    g = sampling.generate(pair, ctx, args.gamma, args.tokens, args.seed, rule)
    if args.json:
        print_json(g.to_dict())
        return 0
    print(f"Generation from {' '.join(ctx)!r} with model {model.name!r}: {_settings(args)}")
    rows = []
    for j, (r, total) in enumerate(zip(g.rounds, g.running_totals()), 1):
        k = r.accepted
        rows.append([j, " ".join(r.drafts[:k]) or "-",
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
    args.rounds = args.rounds or (TREE_ROUNDS if args.tree else SAMPLE_ROUNDS)
    model, ctx, pair, rule = _setup(args)
    if args.tree:
        if args.verify == "block":
            raise UsageError("--tree and --verify block do not combine: a tree is verified node by node")
        return _sample_tree(args, pair, ctx, rule)
    block = args.verify == "block"
    if block and rule is not pitfalls.PITFALLS["correct"].rule:
        raise UsageError("--verify block runs the correct rule only; drop --rule")
    bounds.check_sample(pair, args.gamma, args.rounds, loop=rule is not pitfalls.PITFALLS["correct"].rule,
                        limit=budget(args), block=block)
    if args.check:
        bounds.check_round(pair, args.gamma, budget(args), power=bounds.temperature_power(args.temperature))
        if block:
            bounds.check_block(pair, [args.gamma], limit=budget(args))
    with progress_bar(args.rounds, "rounds") as bar:  # on a terminal, for long runs
        if block:
            from ..schemes import block as blocks
            from ..schemes import block_mc as montecarlo_block
            s = montecarlo_block.sample_block_rounds_vectorized(pair, ctx, args.gamma, args.rounds, args.seed, bar)
        elif rule is pitfalls.PITFALLS["correct"].rule:
            s = montecarlo.sample_rounds(pair, ctx, args.gamma, args.rounds, args.seed, bar)
        else:  # broken rules are sampled by the per-round loop, through their own methods
            s = montecarlo.sample_rounds_loop(pair, ctx, args.gamma, args.rounds, args.seed, rule, bar)
    fit = dist = None
    if args.check:
        from .. import stats  # scipy: imported only when a check is asked for
        dist = exact.round_distribution(pair, ctx, blocks.Block(args.gamma) if block else args.gamma, rule)
        fit = stats.fit_round(s, dist)
    if args.json:
        out = s.to_dict()
        if fit:
            out["check"] = {k: v.to_dict() for k, v in fit.items()}
        print_json(out)
        return 0
    print(f"{args.rounds:,} rounds of model {model.name!r} after {' '.join(ctx)!r}: {_settings(args)}")
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


def _sample_tree(args, pair, ctx, rule) -> int:
    from ..schemes.tree import Tree
    t = Tree(args.tree, args.drafts)
    bounds.check_tree_sample(pair, t, args.rounds, budget(args))
    if args.check:
        bounds.check_tree(pair, t, rounds=1, limit=budget(args))
    s = t.sample_rounds(pair, ctx, args.rounds, args.seed, rule)
    out = s.to_dict()
    out.update({"tree": list(t.shape), "drafts": t.drafts})
    if args.check:
        from .. import stats
        fit = stats.fit_round(s, exact.round_distribution(pair, ctx, t, rule))
        out["check"] = {k: v.to_dict() for k, v in fit.items()}
    if args.json:
        print_json(out)
        return 0
    print(f"{args.rounds:,} rounds of a {t.name} after {' '.join(ctx)!r}, seed {args.seed}")
    rows = [[" ".join(o["tokens"]), o["count"], num(o["count"] / args.rounds, "decimal")]
            for o in out["outcomes"][: args.top or None]]
    print(table(rows, ["emitted", "count", "frequency"]))
    print("K counts: " + ", ".join(f"{k}: {c}" for k, c in enumerate(s.accepted_counts)))
    for what, f in out.get("check", {}).items():
        print(f"chi-square ({what}): p-value {num(f['p_value'], 'decimal')}")
    return 0


# -- pitfalls ----------------------------------------------------------------

def cmd_pitfalls(args) -> int:
    model = load_model_arg(args.model)
    ctx = parse_context(model, args.context)
    if args.tree:
        return _pitfalls_tree(args, model, ctx)
    bounds.check_joint(model, args.tokens, [args.gamma], rules=len(args.rule or pitfalls.PITFALLS), rounds=1,
                       power=bounds.temperature_power(pitfalls.LAB_TEMPERATURE), limit=budget(args))
    results = pitfalls.run_lab(model, ctx, args.gamma, args.tokens, args.rule)
    if args.json:
        print_json({"context": " ".join(ctx), "gamma": args.gamma, "tokens": args.tokens,
                    "rules": [r.to_dict() for r in results]})
        return 0
    print(f"Pitfalls lab: model {model.name!r} after {' '.join(ctx)!r}, γ = {args.gamma}, "
          f"next {args.tokens} token(s); TV = distance from the intended distribution")
    rows = [[r.name, num(r.total_variation), num(r.total_variation, "decimal"),
             num(r.expected_tokens), num(r.expected_tokens, "decimal"),
             "yes" if r.exact else "no", r.source or "-"] for r in results]
    print(table(rows, ["rule", "TV", "≈", "tokens/round", "≈", "exact", "source"]))
    for r in results:
        print()
        print(textwrap.fill(f"{r.name}: {r.description}", width=88, subsequent_indent="  "))
    return 0


def _pitfalls_tree(args, model, ctx) -> int:
    """The tree rules (and the correct one) on a tree; top-k-tree-as-if-sampled always drafts distinct."""
    from ..schemes.tree import Tree
    names = args.rule or ["correct"] + list(pitfalls.TREE_PITFALLS)
    pits = []
    for n in names:
        if n not in pitfalls.TREE_PITFALLS and n != "correct":
            raise UsageError(f"rule {n!r} is a chain rule; with --tree use: correct, {', '.join(pitfalls.TREE_PITFALLS)}")
        pit = pitfalls.TREE_PITFALLS.get(n) or pitfalls.PITFALLS[n]
        drafts = "distinct" if n == "top-k-tree-as-if-sampled" else args.drafts
        pits.append((pit, Tree(args.tree, drafts)))
    for _, t in pits:
        bounds.check_tree(model, t, args.tokens, rounds=1, rules=len(pits), limit=budget(args))
    results = [pitfalls.evaluate(pit, model, ctx, t, args.tokens) for pit, t in pits]
    if args.json:
        print_json({"context": " ".join(ctx), "gamma": None, "tree": list(args.tree), "drafts": args.drafts,
                    "tokens": args.tokens, "rules": [dict(r.to_dict(), drafts=t.drafts)
                                                     for r, (_, t) in zip(results, pits)]})
        return 0
    print(f"Pitfalls lab (tree {','.join(map(str, args.tree))}): model {model.name!r} after "
          f"{' '.join(ctx)!r}, next {args.tokens} token(s)")
    rows = [[r.name, t.drafts, num(r.total_variation), num(r.total_variation, "decimal"),
             num(r.expected_tokens), num(r.expected_tokens, "decimal"), "yes" if r.exact else "no"]
            for r, (_, t) in zip(results, pits)]
    print(table(rows, ["rule", "drafts", "TV", "≈", "tokens/round", "≈", "exact"]))
    return 0


# -- bench-sample ------------------------------------------------------------

def cmd_bench_sample(args) -> int:
    from ..bench.toy import bench_sample
    model = load_model_arg(args.model)
    bounds.check_bench_sample(model, args.gamma, args.rounds, args.loop_rounds or args.rounds, args.repeats,
                              args.loop_repeats, budget(args))
    print_json(bench_sample(model, parse_context(model, args.context), args.gamma, args.rounds,
                            args.loop_rounds, args.repeats, args.loop_repeats, args.seed))
    return 0
