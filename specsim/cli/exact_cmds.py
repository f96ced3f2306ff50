"""Exact commands: round, prove, speedup, best-gamma, tables, bench-exact."""
from __future__ import annotations

from .. import bounds, exact, formulas

from ..schemes import block
from ..schemes import tree as tree_mod
from .common import (GAMMAS_HELP, UsageError, budget, gamma_arg, gamma_type, gammas_arg, int_in_range,
                     load_model_arg, max_work_arg, num, number, parse_context, print_json, seed_arg, table)

def tree_args(p) -> None:
    """--tree W1,W2,... and --drafts iid|distinct (multi-draft tree verification)."""
    p.add_argument("--tree", type=_tree_shape, help="verify a draft tree of widths W1,W2,... instead of a chain")
    p.add_argument("--drafts", choices=tree_mod.DRAFTS, default="iid",
                   help="tree children drafted iid (with replacement, default) or distinct")


def _tree_shape(text):
    import argparse
    try:
        return tree_mod.parse_shape(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def register(sub) -> None:
    p = sub.add_parser("round", help="every outcome of one round, with exact probabilities")
    p.add_argument("model", metavar="MODEL", help="preset name (seed, zeros, order2) or JSON file")
    p.add_argument("--context", help="context tokens, e.g. 'a' or '0 1' (default: the first context)")
    p.add_argument("--gamma", type=gamma_arg, default=3, help="draft length γ (default 3)")
    p.add_argument("--top", type=int_in_range("top", 0, 10**9), default=20,
                   help="outcomes to list in the readable form (0 = all; default 20)")
    p.add_argument("--verify", choices=["token", "block"], default="token",
                   help="token-wise (default) or block verification of the chain")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    tree_args(p)
    max_work_arg(p)
    p.set_defaults(func=cmd_round)

    p = sub.add_parser("prove", help="check speculative == target joint distribution exactly")
    p.add_argument("model", metavar="MODEL", nargs="?", help="preset name or JSON file")
    p.add_argument("--tokens", type=int_in_range("tokens", 1, 12), default=3, help="N tokens (default 3)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--gamma", type=gamma_arg, help="one draft length")
    g.add_argument("--gammas", type=gammas_arg, help=GAMMAS_HELP + " (default 1-4)")
    p.add_argument("--context", help="one context (default: every context)")
    p.add_argument("--table", action="store_true", help="show speculative vs target side by side")
    p.add_argument("--symbolic", action="store_true", help="print the sympy derivation of the rule")
    p.add_argument("--verify", choices=["token", "block"], default="token",
                   help="token-wise (default) or block verification of the chain")
    p.add_argument("--json", action="store_true")
    tree_args(p)
    max_work_arg(p)
    p.set_defaults(func=cmd_prove)

    p = sub.add_parser("compare", help="expected tokens per round of every scheme within a draft budget")
    p.add_argument("model", metavar="MODEL", help="preset name or JSON file")
    p.add_argument("--context", help="context tokens (default: the first context)")
    p.add_argument("--budget", type=int_in_range("budget", 1, 8), default=4,
                   help="drafted tokens per round, 1..8 (default 4)")
    p.add_argument("--json", action="store_true")
    max_work_arg(p)
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("speedup", help="expected tokens per round and speedup (i.i.d. formula)")
    _alpha_cost(p)
    p.add_argument("--gamma", type=gamma_arg, required=True)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_speedup)

    p = sub.add_parser("best-gamma", help="the draft length that maximizes the speedup")
    _alpha_cost(p)
    p.add_argument("--max-gamma", type=gamma_type("max-gamma"), default=formulas.DEFAULT_MAX_GAMMA,
                   help=f"search γ in 1..MAX_GAMMA (default {formulas.DEFAULT_MAX_GAMMA})")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_best_gamma)

    p = sub.add_parser("tables", help="two reference speedup tables (c = 1/20 and 1/5)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_tables)

    p = sub.add_parser("bench-exact", help="benchmark the exact proof against a naive enumeration")
    p.add_argument("--repeats", type=int_in_range("repeats", 1, 100), default=3)
    p.add_argument("--seed", type=seed_arg, default=0)
    p.set_defaults(func=cmd_bench_exact)

    p = sub.add_parser("bench-schemes", help="benchmark the exact proofs of a tree and a block, block Monte-Carlo")
    p.add_argument("--repeats", type=int_in_range("repeats", 1, 100), default=3)
    p.add_argument("--seed", type=seed_arg, default=0)
    p.set_defaults(func=cmd_bench_schemes)


def _alpha_cost(p):
    p.add_argument("--alpha", type=number("alpha", 0, 1, exact=True), required=True,
                   help="acceptance rate α in [0, 1]")
    p.add_argument("--cost", type=number("cost", 0, bounds.LIMITS.max_cost, exact=True), required=True,
                   help="drafter step cost c relative to a target step (>= 0)")


def _context_text(ctx) -> str:
    return " ".join(ctx)


# -- round -------------------------------------------------------------------

def cmd_round(args) -> int:
    model = load_model_arg(args.model)
    ctx = parse_context(model, args.context)
    if args.tree:
        return _round_tree(args, model, ctx)
    bounds.check_round(model, args.gamma, budget(args), rounds=2)  # the round and formulas.exact_vs_iid
    scheme = args.gamma
    if args.verify == "block":
        bounds.check_block(model, [args.gamma], limit=budget(args))
        scheme = block.Block(args.gamma)
    r = exact.round_distribution(model, ctx, scheme)
    info = formulas.exact_vs_iid(model, ctx, args.gamma)
    outcomes = sorted(r.outcomes.items(), key=lambda kv: (-kv[1], kv[0]))
    if args.json:
        print_json({
            "context": _context_text(ctx), "gamma": args.gamma,
            "outcomes": [{"tokens": list(t), "probability": num(pr)} for t, pr in outcomes],
            "accepted": [num(x) for x in r.accepted],
            "expected_tokens": num(r.expected_tokens),
            "alpha": num(info["alpha"]),
            "iid_expected_tokens": num(info["iid_expected_tokens"]),
        } | ({"verify": "block"} if args.verify == "block" else {}))
        return 0
    print(f"One round of model {model.name!r} after context {_context_text(ctx)!r}, γ = {args.gamma}"
          + (", block verification" if args.verify == "block" else ""))
    print(f"α = Σ min(p, q) = {num(info['alpha'], 'both')}")
    print()
    rows = [(k, num(x), num(x, "decimal"), num(y), num(y, "decimal"))
            for k, (x, y) in enumerate(zip(r.accepted, info["iid_accepted"]))]
    print(table(rows, ["K", "P(K) exact", "≈", "i.i.d. formula", "≈"]))
    print()
    print(f"E[tokens per round] = {num(r.expected_tokens, 'both')}")
    print(f"i.i.d. formula with α = {num(info['alpha'])}: {num(info['iid_expected_tokens'], 'both')}")
    print()
    shown = outcomes if args.top == 0 else outcomes[: args.top]
    print(f"{len(outcomes)} distinct emitted sequences"
          + ("" if len(shown) == len(outcomes) else f" (the {len(shown)} most likely; --top 0 for all)"))
    print(table([(" ".join(t), num(pr), num(pr, "decimal")) for t, pr in shown],
                ["emitted", "probability", "≈"]))
    return 0


def _round_tree(args, model, ctx) -> int:
    t = tree_mod.Tree(args.tree, args.drafts)
    bounds.check_tree(model, t, rounds=1, limit=budget(args))
    r = exact.round_distribution(model, ctx, t)
    outcomes = sorted(r.outcomes.items(), key=lambda kv: (-kv[1], kv[0]))
    if args.json:
        print_json({"context": _context_text(ctx), "tree": list(t.shape), "drafts": t.drafts,
                    "drafted_tokens": t.drafted_tokens,
                    "outcomes": [{"tokens": list(x), "probability": num(pr)} for x, pr in outcomes],
                    "accepted": [num(x) for x in r.accepted], "expected_tokens": num(r.expected_tokens)})
        return 0
    print(f"One {t.name} round ({t.drafted_tokens} drafted tokens) of model {model.name!r} "
          f"after context {_context_text(ctx)!r}")
    print(table([(k, num(x), num(x, "decimal")) for k, x in enumerate(r.accepted)], ["K", "P(K)", "≈"]))
    print(f"E[tokens per round] = {num(r.expected_tokens, 'both')}")
    shown = outcomes if args.top == 0 else outcomes[: args.top]
    print(f"{len(outcomes)} distinct emitted sequences")
    print(table([(" ".join(x), num(pr), num(pr, "decimal")) for x, pr in shown], ["emitted", "probability", "≈"]))
    return 0


# -- prove -------------------------------------------------------------------

def _gammas(args) -> list:
    if args.gamma is not None:
        return [args.gamma]
    return args.gammas or [1, 2, 3, 4]


def _label(scheme):
    """How a check's scheme is shown: γ for a chain (token-wise or block), the name of a tree."""
    return scheme if isinstance(scheme, int) else getattr(scheme, "gamma", scheme.name)


def cmd_prove(args) -> int:
    if args.symbolic:
        return _prove_symbolic(args)
    if args.model is None:
        raise UsageError("MODEL is required (a preset name or a JSON file), unless --symbolic")
    model = load_model_arg(args.model)
    gammas = _gammas(args)
    contexts = [parse_context(model, args.context)] if args.context is not None else model.contexts()
    if args.tree:
        if args.verify == "block":
            raise UsageError("--tree and --verify block do not combine: a tree is verified node by node")
        schemes = [tree_mod.Tree(args.tree, args.drafts)]
        bounds.check_tree(model, schemes[0], args.tokens, len(contexts), limit=budget(args))
    else:
        bounds.check_joint(model, args.tokens, gammas, len(contexts), budget(args))
        schemes = gammas
        if args.verify == "block":
            bounds.check_block(model, gammas, args.tokens, rounds=0, limit=budget(args))
            schemes = [block.Block(g) for g in gammas]
    checks = exact.check_exactness(model, args.tokens, schemes, contexts)
    ok = all(c.exact for c in checks)
    if args.json:
        print_json({
            "tokens": args.tokens, "gammas": [_label(g) for g in schemes], "exact": ok,
            "checks": [{"context": _context_text(c.context), "gamma": _label(c.gamma), "exact": c.exact,
                        "max_abs_difference": num(c.max_abs_difference),
                        "sequences": c.sequences} for c in checks],
        })
        return 0 if ok else 1
    print(f"Model {model.name!r}: speculative vs target joint distribution of the next "
          f"{args.tokens} token(s), γ = {', '.join(str(_label(g)) for g in schemes)}")
    rows = [(_context_text(c.context), _label(c.gamma), c.sequences, num(c.max_abs_difference),
             "exact" if c.exact else "DIFFERS") for c in checks]
    print(table(rows, ["context", "γ", "sequences", "max |spec - target|", "result"]))
    if args.table:
        for ctx in contexts:
            mine = [c for c in checks if c.context == tuple(ctx)]
            seqs = sorted(set().union(*(set(c.speculative) | set(c.target) for c in mine)))
            body = []
            for s in seqs:
                t = mine[0].target.get(s, 0)
                specs = [c.speculative.get(s, 0) for c in mine]
                body.append([" ".join(s), num(t)] + [num(x) for x in specs]
                            + ["✓" if all(x == t for x in specs) else "✗"])
            print()
            print(f"After {_context_text(ctx)!r}:")
            print(table(body, ["next tokens", "target"] + [f"spec γ={_label(c.gamma)}" for c in mine] + [""]))
    print()
    print(f"All {len(checks)} checks exact: the emitted distribution equals the target's."
          if ok else "Some checks differ: this model pair and rule do not reproduce the target.")
    return 0 if ok else 1


def _prove_symbolic(args) -> int:
    from .. import symbolic
    one = symbolic.prove_one_position()
    series = symbolic.prove_tokens_per_round()
    ok = one.holds and series.holds
    if args.json:
        print_json({"exact": ok, "symbolic": {
            "one_position": {"holds": one.holds, "cases": [
                {"over": list(c.over), "alpha": str(c.alpha), "residual_mass": str(c.residual_mass),
                 "holds": c.holds} for c in one.cases]},
            "tokens_per_round": {"holds": series.holds, "closed_form": str(series.closed_form)}}})
    else:
        print("\n".join(one.lines()))
        print()
        print("\n".join(series.lines()))
    return 0 if ok else 1


# -- compare -----------------------------------------------------------------

def cmd_compare(args) -> int:
    from ..labs import compare
    from ..views import scheme_view
    model = load_model_arg(args.model)
    ctx = parse_context(model, args.context)
    scheme_view.check_budget(model, args.budget, budget(args))  # the longest chain, the block, every tree
    rows = compare.compare(model, ctx, args.budget)
    if args.json:
        print_json({"context": _context_text(ctx), "budget": args.budget, "schemes": [
            r | {"expected_tokens": num(r["expected_tokens"])} for r in rows]})
        return 0
    print(f"Model {model.name!r} after {_context_text(ctx)!r}: at most {args.budget} drafted tokens per round")
    print(table([(r["verify"], ",".join(map(str, r["tree"])) if r["tree"] else "-", r["drafts"] or "-",
                  r["drafted_tokens"], num(r["expected_tokens"]), num(r["expected_tokens"], "decimal"))
                 for r in rows], ["verify", "tree", "drafts", "drafted", "E[tokens]", "≈"]))
    return 0


# -- formulas ----------------------------------------------------------------

def cmd_speedup(args) -> int:
    e = formulas.expected_tokens(args.alpha, args.gamma)
    s = formulas.speedup(args.alpha, args.gamma, args.cost)
    if args.json:
        print_json({"alpha": float(args.alpha), "gamma": args.gamma, "cost": float(args.cost),
                    "expected_tokens": float(e), "speedup": float(s)})
    else:
        print(f"α = {num(args.alpha, 'short')}, γ = {args.gamma}, c = {num(args.cost, 'short')}")
        print(f"expected tokens per round (1 - α^(γ+1)) / (1 - α) = {num(e, 'decimal')}")
        print(f"round cost γc + 1 = {num(formulas.round_cost(args.gamma, args.cost), 'decimal')} target steps")
        print(f"speedup = {num(s, 'decimal')}×" + ("  (slower than plain decoding)" if s < 1 else ""))
    return 0


def cmd_best_gamma(args) -> int:
    g, s = formulas.best_gamma(args.alpha, args.cost, args.max_gamma)
    if args.json:
        print_json({"alpha": float(args.alpha), "cost": float(args.cost), "gamma": g, "speedup": float(s)})
    else:
        print(f"α = {num(args.alpha, 'short')}, c = {num(args.cost, 'short')}: best γ = {g} "
              f"(searched 1..{args.max_gamma}), speedup {num(s, 'decimal')}×")
    return 0


def cmd_tables(args) -> int:
    tables = formulas.speedup_tables()
    if args.json:
        print_json({"tables": [{"cost": float(t["cost"]), "rows": [
            {"alpha": float(r["alpha"]), "speedups": {str(g): float(s) for g, s in r["speedups"].items()},
             "best_gamma": r["best_gamma"], "best_speedup": float(r["best_speedup"])}
            for r in t["rows"]]} for t in tables]})
        return 0
    for t in tables:
        gammas = list(t["rows"][0]["speedups"])
        print(f"Speedup with a drafter costing c = {t['cost']} of a target step (best γ over 1..32)")
        rows = [[f"α = {num(r['alpha'], 'short')}"] + [f"{num(s, 'decimal', 2)}×" for s in r["speedups"].values()]
                + [f"{r['best_gamma']} ({num(r['best_speedup'], 'decimal', 2)}×)"] for r in t["rows"]]
        print(table(rows, [""] + [f"γ = {g}" for g in gammas] + ["best γ"]))
        print()
    return 0


# -- benchmark ---------------------------------------------------------------

def cmd_bench_exact(args) -> int:
    from ..bench.toy import bench_exact
    print_json(bench_exact(args.repeats, args.seed))
    return 0


def cmd_bench_schemes(args) -> int:
    from ..bench.toy import bench_schemes
    print_json(bench_schemes(args.repeats, args.seed))
    return 0
