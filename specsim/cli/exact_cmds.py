"""Exact commands: round, prove, compare, speedup, best-gamma, tables, bench-exact, bench-schemes.

round, prove and compare take the verification scheme as one value (``--scheme``, the grammar of
``specsim.schemes``; --gamma, --verify, --tree and --drafts are shorthand for it) and run one code
path for every scheme.
"""
from __future__ import annotations

from .. import bounds, formulas
from .common import (UsageError, add_scheme_option, add_shorthand_options, budget, gamma_arg,
                     gamma_type, int_in_range, load_model_arg, max_work_arg, num, number, parse_context,
                     print_json, scheme_keys, scheme_from_args, scheme_text, schemes_from_args, seed_arg, table)


def register(sub) -> None:
    register_exact(sub)
    register_formulas(sub)


def register_exact(sub) -> None:
    """round, prove and compare: the exact engine's commands."""
    p = sub.add_parser("round", help="every outcome of one round, with exact probabilities")
    p.add_argument("model", metavar="MODEL", help="preset name (seed, zeros, order2) or JSON file")
    p.add_argument("--context", help="context tokens, e.g. 'a' or '0 1' (default: the first context)")
    add_scheme_option(p)
    add_shorthand_options(p)
    p.add_argument("--top", type=int_in_range("top", 0, 10**9), default=20,
                   help="outcomes to list in the readable form (0 = all; default 20)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    max_work_arg(p)
    p.set_defaults(func=cmd_round)

    p = sub.add_parser("prove", help="check speculative == target joint distribution exactly")
    p.add_argument("model", metavar="MODEL", nargs="?", help="preset name or JSON file")
    p.add_argument("--tokens", type=int_in_range("tokens", 1, 12), default=3, help="N tokens (default 3)")
    add_scheme_option(p, many=True)
    add_shorthand_options(p, gamma=None, gammas="1-4")
    p.add_argument("--context", help="one context (default: every context)")
    p.add_argument("--table", action="store_true", help="show speculative vs target side by side")
    p.add_argument("--symbolic", action="store_true", help="print the sympy derivation of the rule")
    p.add_argument("--json", action="store_true")
    max_work_arg(p)
    p.set_defaults(func=cmd_prove)

    p = sub.add_parser("compare", help="expected tokens per round of every scheme within a draft budget")
    p.add_argument("model", metavar="MODEL", help="preset name or JSON file")
    p.add_argument("--context", help="context tokens (default: the first context)")
    p.add_argument("--budget", type=int_in_range("budget", 1, 16), default=None,
                   help="drafted tokens per round, 1..8 (default 4): every scheme that fits; 1..16 with --best-tree")
    add_scheme_option(p, many=True)
    p.add_argument("--best-tree", action="store_true",
                   help="the best static tree for the budget by Sequoia's dynamic program over exact acceptance "
                        "estimates, checked with the exact engine and set beside the exhaustive ranking")
    p.add_argument("--drafts", choices=["iid", "distinct"], default=None,
                   help="with --best-tree: the tree's children drafted iid (default) or distinct")
    p.add_argument("--json", action="store_true")
    max_work_arg(p)
    p.set_defaults(func=cmd_compare)


def register_formulas(sub) -> None:
    """speedup, best-gamma and tables (the i.i.d. formula), and the exact engine's benchmarks."""
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
    from .. import exact
    model = load_model_arg(args.model)
    ctx = parse_context(model, args.context)
    scheme = scheme_from_args(args)
    g = scheme.iid_gamma  # a chain or a block: shown beside the i.i.d. formula for its γ
    # the round, and for a chain or a block the formula's chain round (formulas.exact_vs_iid)
    bounds.check_round(model, scheme, budget(args), rounds=1 if g is None else 2)
    r = exact.round_distribution(model, ctx, scheme)
    info = None if g is None else formulas.exact_vs_iid(model, ctx, g)
    outcomes = sorted(r.outcomes.items(), key=lambda kv: (-kv[1], kv[0]))
    if args.json:
        out = {"context": _context_text(ctx)} | scheme_keys(scheme) | {
            "outcomes": [{"tokens": list(t), "probability": num(pr)} for t, pr in outcomes],
            "accepted": [num(x) for x in r.accepted], "expected_tokens": num(r.expected_tokens)}
        if info:
            out |= {"alpha": num(info["alpha"]), "iid_expected_tokens": num(info["iid_expected_tokens"])}
        print_json(out)
        return 0
    print(f"One round of model {model.name!r} after context {_context_text(ctx)!r}, {scheme_text(scheme)}")
    if info:
        print(f"α = Σ min(p, q) = {num(info['alpha'], 'both')}")
    print()
    rows = [[k, num(x), num(x, "decimal")] for k, x in enumerate(r.accepted)]
    if info:
        rows = [row + [num(y), num(y, "decimal")] for row, y in zip(rows, info["iid_accepted"])]
    print(table(rows, ["K", "P(K) exact", "≈"] + (["i.i.d. formula", "≈"] if info else [])))
    print()
    print(f"E[tokens per round] = {num(r.expected_tokens, 'both')}")
    if info:
        print(f"i.i.d. formula with α = {num(info['alpha'])}: {num(info['iid_expected_tokens'], 'both')}")
    print()
    shown = outcomes if args.top == 0 else outcomes[: args.top]
    print(f"{len(outcomes)} distinct emitted sequences"
          + ("" if len(shown) == len(outcomes) else f" (the {len(shown)} most likely; --top 0 for all)"))
    print(table([(" ".join(t), num(pr), num(pr, "decimal")) for t, pr in shown],
                ["emitted", "probability", "≈"]))
    return 0


# -- prove -------------------------------------------------------------------

def _label(scheme):
    """How a check's scheme was always shown: γ for a chain or a block, the name of a tree."""
    return scheme.name if scheme.iid_gamma is None else scheme.iid_gamma


def cmd_prove(args) -> int:
    if args.symbolic:
        return _prove_symbolic(args)
    if args.model is None:
        raise UsageError("MODEL is required (a preset name or a JSON file), unless --symbolic")
    from .. import exact
    model = load_model_arg(args.model)
    schemes = schemes_from_args(args, gammas=[1, 2, 3, 4])
    contexts = [parse_context(model, args.context)] if args.context is not None else model.contexts()
    bounds.check_joint(model, args.tokens, schemes, len(contexts), budget(args))
    checks = exact.check_exactness(model, args.tokens, schemes, contexts)
    ok = all(c.exact for c in checks)
    if args.json:
        print_json({
            "tokens": args.tokens, "schemes": [s.name for s in schemes], "gammas": [_label(s) for s in schemes],
            "exact": ok,
            "checks": [{"context": _context_text(c.context), "scheme": c.scheme.name, "gamma": _label(c.scheme),
                        "exact": c.exact, "max_abs_difference": num(c.max_abs_difference),
                        "sequences": c.sequences} for c in checks],
        })
        return 0 if ok else 1
    chains = all(s.chain_gamma for s in schemes)  # chain:γ schemes are shown by γ alone
    show = (lambda s: str(s.chain_gamma)) if chains else (lambda s: s.name)
    print(f"Model {model.name!r}: speculative vs target joint distribution of the next {args.tokens} "
          f"token(s), {'γ' if chains else 'scheme'} = {', '.join(show(s) for s in schemes)}")
    rows = [(_context_text(c.context), show(c.scheme), c.sequences, num(c.max_abs_difference),
             "exact" if c.exact else "DIFFERS") for c in checks]
    print(table(rows, ["context", "γ" if chains else "scheme", "sequences", "max |spec - target|", "result"]))
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
            heads = [f"spec γ={c.scheme.gamma}" if chains else f"spec {c.scheme.name}" for c in mine]
            print(table(body, ["next tokens", "target"] + heads + [""]))
    print()
    print(f"All {len(checks)} checks exact: the emitted distribution equals the target's."
          if ok else "Some checks differ: this model pair and rule do not reproduce the target.")
    return 0 if ok else 1


def _prove_symbolic(args) -> int:
    from .. import symbolic  # sympy: imported only for --symbolic
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
    model = load_model_arg(args.model)
    ctx = parse_context(model, args.context)
    if args.scheme is not None and args.budget is not None:
        raise UsageError("--scheme and --budget do not combine: --budget compares every scheme that fits")
    if args.best_tree:
        return _compare_best_tree(args, model, ctx)
    if args.drafts is not None:
        raise UsageError("--drafts goes with --best-tree (name a tree's drafts in --scheme, e.g. tree:2,1:distinct)")
    if (args.budget or 0) > compare.MAX_BUDGET:
        raise UsageError(f"--budget {args.budget} is above {compare.MAX_BUDGET} for the exhaustive ranking: "
                         f"lower it, or add --best-tree (up to 16)")
    within = None if args.scheme is not None else args.budget or 4  # a draft budget, or the schemes named
    compare.check(model, within, args.scheme, budget(args))  # every round, and all of them together
    rows = compare.compare(model, ctx, within, args.scheme)  # best first
    if args.json:
        print_json({"context": _context_text(ctx), "budget": within, "schemes": [
            r | {k: num(r[k]) for k in ("expected_tokens", "expected_drafts", "drafter_passes")} for r in rows]})
        return 0
    what = f"at most {within} drafted tokens per round" if within else "the schemes asked for"
    print(f"Model {model.name!r} after {_context_text(ctx)!r}: {what}, most tokens per round first")
    print(table([(r["scheme"], r["drafted_tokens"], num(r["expected_tokens"]), num(r["expected_tokens"], "decimal"),
                  num(r["expected_drafts"], "decimal"), num(r["drafter_passes"], "decimal")) for r in rows],
                ["scheme", "drafted", "E[tokens]", "≈", "E[drafts]", "drafter passes"]))
    return 0


def _compare_best_tree(args, model, ctx) -> int:
    """compare --best-tree: the DP's shape, its prediction, the exact engine's figure, the exhaustive best."""
    from ..labs import best_tree, compare
    from ..schemes import Tree
    if args.scheme is not None:
        raise UsageError("--best-tree and --scheme do not combine: --best-tree searches the shapes of a --budget")
    within, drafts = args.budget or 4, args.drafts or "iid"
    c = best_tree.check(model, ctx, within, drafts, limit=budget(args))
    b = c.best
    name = Tree(b.shape, drafts).name
    ranked, why_not = None, None
    if within > compare.MAX_BUDGET:
        why_not = f"the exhaustive ranking lists every scheme up to budget {compare.MAX_BUDGET} only"
    else:
        try:
            compare.check(model, within, None, budget(args))
            ranked = compare.compare(model, ctx, within)
        except bounds.WorkRefused as e:
            why_not = str(e)
    tree_row = ranked and next(r for r in ranked if r.get("drafts") == drafts and "tree" in r)  # a fixed tree
    if args.json:
        def row(r):
            return r and {"scheme": r["scheme"], "drafted_tokens": r["drafted_tokens"],
                          "expected_tokens": num(r["expected_tokens"])}
        print_json({"context": _context_text(ctx), "budget": within, "drafts": drafts,
                    "contexts": [_context_text(x) for x in c.contexts], "acceptance": [num(x) for x in b.acceptance],
                    "shape": list(b.shape), "scheme": name, "drafted_tokens": b.drafted_tokens,
                    "predicted_tokens": num(b.expected_tokens),
                    "general": {"parents": list(b.general.parents), "ranks": list(b.general.ranks),
                                "predicted_tokens": num(b.general.expected_tokens)},
                    "exact_tokens": None if c.exact_tokens is None else num(c.exact_tokens),
                    "exact_mean": None if c.exact_mean is None else num(c.exact_mean), "exact_refused": c.refused,
                    "exhaustive": ranked and {"best_tree": row(tree_row), "best_scheme": row(ranked[0])},
                    "exhaustive_refused": why_not})
        return 0
    where = ", ".join(_context_text(x) for x in c.contexts)
    children = "i.i.d." if drafts == "iid" else drafts
    print(f"Model {model.name!r}: the best static tree of at most {within} drafted tokens ({children} children), "
          "by Sequoia's dynamic program")
    print(f"p_k, child k of an accepted node is the one accepted (exact, the root of each context, plain mean "
          f"over {where}; --json for the fractions):")
    print("  " + ", ".join(f"p{k} = {num(x, 'decimal')}" for k, x in enumerate(b.acceptance, 1)))
    print(f"best level shape: {name} ({b.drafted_tokens} drafted), "
          f"predicted E[tokens] = {num(b.expected_tokens, 'both')}")
    print(f"best tree of any layout (parents {list(b.general.parents)}): predicted "
          f"{num(b.general.expected_tokens, 'both')}, an upper bound under the same assumption")
    if c.refused:
        print(f"exact engine: not computed ({c.refused})")
    else:
        print(f"exact engine, {name}: E[tokens] = {num(c.exact_tokens, 'both')} after {_context_text(ctx)!r}, "
              f"{num(c.exact_mean, 'both')} averaged over {where}")
    if ranked:
        print(f"exhaustive ranking after {_context_text(ctx)!r}: best {children} tree {tree_row['scheme']} "
              f"{num(tree_row['expected_tokens'], 'both')}; best scheme {ranked[0]['scheme']} "
              f"{num(ranked[0]['expected_tokens'], 'both')}")
    else:
        print(f"exhaustive ranking: not computed ({why_not})")
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
