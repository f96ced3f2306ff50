"""Verification schemes side by side: one drafted chain under token-wise and block verification,
each context's exact tokens per round, and the best scheme of each kind for a drafting budget.

``chain_keep`` plays the same seeded round twice: ``sampling.trace_round`` and
``block.trace_block_round`` take their uniforms in the same layout (γ draft
uniforms, γ test uniforms, one final uniform), so one seed gives one drafted
chain, and the two rules differ only in how they read it.

Example
-------
>>> from specsim.toy import load_model
>>> m = load_model("seed")
>>> c = chain_keep(m, ("a",), 3, seed=0)
>>> c["drafts"], c["token"]["accepted"], c["block"]["accepted"]
(['b', 'a', 'a'], 1, 1)
>>> [(r["context"], str(r["token"]), str(r["block"])) for r in token_vs_block(m, 2)]
[('a', '267/100', '27/10'), ('b', '123/50', '62/25'), ('c', '49/20', '247/100')]
"""
from __future__ import annotations

from .. import bounds, exact

from ..labs import compare
from ..schemes.block import Block, trace_block_round
from ..sampling import num, trace_round

KINDS = ("token", "block", "tree iid", "tree distinct")
MAX_BUDGET = 6  # the page's budget slider; compare.MAX_BUDGET is the library's own limit


def chain_keep(models, context, gamma: int, seed=None) -> dict:
    """One seeded drafted chain and what each rule keeps of it.

    Returns {"drafts", "token": {"accepted", "emitted", "tests"}, "block": {...}}:
    ``tests`` are (u, threshold, passed) per position: the acceptance
    min(1, p/q) for token-wise (read left to right, up to the first failure),
    the stop probability h_i for block (τ is the *last* position that passes).
    """
    tok = trace_round(models, tuple(context), gamma, seed)
    blk = trace_block_round(models, tuple(context), gamma, seed)
    if list(tok.drafts) != blk["drafts"]:
        raise AssertionError("the two traces drew different chains from one seed")
    stops = [e for e in blk["events"] if e["kind"] == "stop"]
    token_tests = [(float(u), num(a), bool(u < a)) for u, a in zip(tok.u, tok.acceptance)]
    return {"drafts": list(tok.drafts),
            "token": {"accepted": tok.accepted, "emitted": list(tok.emitted), "tests": token_tests},
            "block": {"accepted": blk["accepted"], "emitted": blk["emitted"],
                      "tests": [(e["u"], e["h"], e["stop"]) for e in stops]}}


def check_contexts(models, gamma: int, limit: int | None = None) -> None:
    """Refuse ``token_vs_block`` when one round per context is over the work limit."""
    n = len(models.contexts())
    bounds.check_round(models, gamma, limit=limit, rounds=n)
    bounds.check_block(models, [gamma], rounds=n)


def token_vs_block(models, gamma: int) -> list:
    """For every context: exact E[tokens per round] of a token-wise and a block-verified round."""
    rows = []
    for ctx in models.contexts():
        tok = exact.round_distribution(models, ctx, gamma).expected_tokens
        blk = exact.round_distribution(models, ctx, Block(gamma)).expected_tokens
        rows.append({"context": " ".join(ctx), "token": tok, "block": blk, "gain": blk - tok})
    return rows


# Summed ``bounds.tree_work`` of every tree shape of a budget. Measured (an idle 2-core machine, the seed
# model): budget 5 = ~40,000 steps in ~0.3 s for the whole comparison, budget 6 = ~128,000 steps in ~1.1 s.
BUDGET_WORK = 50_000


def check_budget(models, budget: int, limit: int | None = None) -> None:
    """Refuse ``compare.compare(models, context, budget)`` when one of its schemes is over ``limit``
    or all its tree shapes together are over ``BUDGET_WORK`` (one line, ``bounds.WorkRefused``)."""
    bounds.check_round(models, budget, limit=limit)
    bounds.check_block(models, [budget], limit=limit)
    trees = [s for verify, s in compare.schemes(budget) if verify == "tree"]
    for s in trees:
        bounds.check_tree(models, s, rounds=1, limit=limit)
    total = sum(bounds.tree_work(models, s.shape, s.drafts == "distinct", rounds=1) for s in trees)
    bounds.check(total, f"every scheme within budget {budget} over {len(models.vocab)} tokens "
                 f"({len(trees)} trees)", "the budget",
                 limit if isinstance(limit, bounds.Budget) else BUDGET_WORK, "steps")  # the CLI's --max-work


def largest_budget(models, hi: int = MAX_BUDGET, limit: int | None = None) -> int:
    """The largest budget in 1..hi that ``check_budget`` accepts (1 if none)."""
    for b in range(hi, 1, -1):
        try:
            check_budget(models, b, limit)
            return b
        except bounds.WorkRefused:
            pass
    return 1


def best_by_budget(rows, budget: int) -> dict:
    """From ``compare.compare`` rows: for b = 1..budget, the best scheme of each kind drafting <= b tokens.

    Returns {"budgets": [1..budget], kind: [expected tokens], kind + " scheme": [label]} for each of
    ``KINDS``; a kind with no scheme at b (never, for b >= 1) would get None.
    """
    out = {"budgets": list(range(1, budget + 1))}
    for kind in KINDS:
        values, labels = [], []
        for b in out["budgets"]:
            fit = [r for r in rows if _kind(r) == kind and r["drafted_tokens"] <= b]
            best = max(fit, key=lambda r: (r["expected_tokens"], -r["drafted_tokens"]), default=None)
            values.append(None if best is None else best["expected_tokens"])
            labels.append(None if best is None else scheme_label(best))
        out[kind], out[kind + " scheme"] = values, labels
    return out


def _kind(row) -> str:
    return row["verify"] if row["tree"] is None else f"tree {row['drafts']}"


def scheme_label(row) -> str:
    """A compare row as a short label: "token γ=3", "block γ=3", "tree 2,1 iid"."""
    if row["tree"] is None:
        return f"{row['verify']} γ={row['drafted_tokens']}"
    return f"tree {','.join(map(str, row['tree']))} {row['drafts']}"
