"""`specsim implementations`: the verification rules of real systems, checked exactly (``specsim.labs.implementations``)."""
from __future__ import annotations

import textwrap

from .common import (UsageError, budget, int_in_range, load_model_arg, max_work_arg, num, parse_context, print_json,
                     table)

MAX_MODELS = 1000


def _entry_name(text: str) -> str:
    from ..labs.implementations import IMPLEMENTATIONS
    if text not in IMPLEMENTATIONS:
        raise UsageError(f"unknown implementation {text[:60]!r}; known: {', '.join(IMPLEMENTATIONS)}")
    return text


def register(sub) -> None:
    p = sub.add_parser("implementations", help="real systems' verification rules: exact or not, TV, tokens/round",
                       description="Each entry is a real system's verification rule, run through the exact engine "
                                   "on one model and context (TV from the target it means to produce, tokens per "
                                   "round against the textbook rule, the float edge of its uniforms) and proved "
                                   "on the presets plus --models random models.")
    p.add_argument("--preset", default="seed", metavar="MODEL", help="preset name or JSON file (default seed)")
    p.add_argument("--context", help="context tokens (default: the model's first context)")
    p.add_argument("--tokens", type=int_in_range("tokens", 1, 6), default=2, help="N tokens compared (default 2)")
    p.add_argument("--name", action="append", metavar="ENTRY", help="only this entry (repeatable)")
    p.add_argument("--models", type=int_in_range("models", 0, MAX_MODELS), default=None,
                   help="random models each entry is proved on besides the presets (default 40)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    max_work_arg(p)
    p.set_defaults(func=cmd_implementations)


def cmd_implementations(args) -> int:
    from ..labs import implementations as impl
    names = [_entry_name(n) for n in args.name] if args.name else None
    models = impl.FAMILY_MODELS if args.models is None else args.models
    model = load_model_arg(args.preset)
    ctx = parse_context(model, args.context)
    impl.check(model, args.tokens, names, models, budget(args))  # one line when too large
    reports = impl.table(model, ctx, args.tokens, names, models)
    if args.json:
        print_json({"model": model.name, "context": list(ctx), "tokens": args.tokens, "models": models,
                    "implementations": [r.to_dict() for r in reports]})
        return 0
    shown_ctx = " ".join(ctx) if len(ctx) <= 8 else "... " + " ".join(ctx[-8:])  # a long context: its tail
    print(f"Implementations gallery: model {model.name!r} after {shown_ctx!r}, next {args.tokens} token(s); "
          f"proved on the presets + {models} random models")
    rows = [[r.name, r.system.split(" (")[0], r.scheme, r.verdict, num(r.total_variation, "both"),
             num(r.tokens_per_round, "decimal", 3), num(r.textbook_tokens_per_round, "decimal", 3),
             "-" if r.float_hazard is None else f"{float(r.float_hazard):.3g}"] for r in reports]
    print(table(rows, ["entry", "system", "scheme", "verdict", "TV", "tokens/round", "textbook",
                       "float hazard/round"]))
    for r in reports:
        entry = impl.get(r.name)
        print()
        print(textwrap.fill(f"{r.name} ({entry.system}): {entry.description}", width=100, subsequent_indent="  "))
        print(textwrap.fill(f"source: {entry.source}", width=100, subsequent_indent="  "))
        print(textwrap.fill(f"uniforms: {entry.uniforms}; closing: {entry.closing}; float edge: {r.hazard_emits}",
                            width=100, subsequent_indent="  "))
        if r.counter_example:
            ce = r.counter_example
            print(f"  smallest counter-example: {ce.model.name} {list(ce.model.vocab)} after {' '.join(ce.context)!r}, "
                  f"γ = {ce.gamma}, N = {ce.n_tokens}: TV {num(ce.total_variation)}")
    return 0
