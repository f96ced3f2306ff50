"""Verification schemes side by side: one drafted chain under token-wise (chain) and block verification,
each context's exact tokens per round, and the best scheme of each family for a drafting budget.

``chain_keep`` plays the same seeded round twice, ``sampling.trace_round`` with ``Chain(γ)`` and with
``Block(γ)``: both take their uniforms in the same layout (γ draft uniforms, γ test uniforms, one final
uniform), so one seed gives one drafted chain, and the two rules differ only in how they read it.

Example
-------
>>> from specsim.toy import load_model
>>> m = load_model("seed")
>>> c = chain_keep(m, ("a",), 3, seed=0)
>>> c["drafts"], c["chain"]["accepted"], c["block"]["accepted"]
(['b', 'a', 'a'], 1, 1)
>>> [(r["context"], str(r["chain"]), str(r["block"])) for r in chain_vs_block(m, 2)]
[('a', '267/100', '27/10'), ('b', '123/50', '62/25'), ('c', '49/20', '247/100')]
"""
from __future__ import annotations

from .. import bounds, exact
from ..labs import compare
from ..sampling import num, trace_round
from ..schemes import Block, Chain

FAMILIES = ("chain", "block", "tree", "tree:distinct")  # one curve each in ``best_by_budget``
MAX_BUDGET = 6  # the page's budget slider; compare.MAX_BUDGET is the library's own limit


def chain_keep(pair, context, gamma: int, seed=None) -> dict:
    """One seeded drafted chain and what each rule keeps of it.

    Returns {"drafts", "chain": {"accepted", "emitted", "tests"}, "block": {...}}:
    ``tests`` are (u, threshold, passed) per position: the acceptance
    min(1, p/q) for token-wise (read left to right, up to the first failure),
    the stop probability h_i for block (τ is the *last* position that passes).
    """
    out = {}
    for scheme in (Chain(gamma), Block(gamma)):
        t = trace_round(pair, tuple(context), scheme, seed)
        if out and list(t.drafts) != out["drafts"]:
            raise AssertionError("the two traces drew different chains from one seed")
        out["drafts"] = list(t.drafts)
        out[scheme.kind] = {"accepted": t.accepted, "emitted": list(t.emitted),
                            "tests": [(u, num(a), ok) for u, a, ok in zip(t.u, t.acceptance, t.accepted_flags)]}
    return out


def check_contexts(pair, gamma: int, limit=None) -> None:
    """Refuse ``chain_vs_block`` when one round per context, chain and block, is over the work limit."""
    n = len(pair.contexts())
    for scheme in (Chain(gamma), Block(gamma)):
        bounds.check_round(pair, scheme, limit, rounds=n)


def chain_vs_block(pair, gamma: int) -> list:
    """For every context: exact E[tokens per round] of a chain and of a block-verified round."""
    rows = []
    for ctx in pair.contexts():
        tok = exact.round_distribution(pair, ctx, Chain(gamma)).expected_tokens
        blk = exact.round_distribution(pair, ctx, Block(gamma)).expected_tokens
        rows.append({"context": " ".join(ctx), "chain": tok, "block": blk, "gain": blk - tok})
    return rows


def check_budget(pair, budget: int, limit=None) -> None:
    """Refuse ``compare.compare(pair, context, budget)`` (``compare.check``, one line)."""
    compare.check(pair, budget, limit=limit)


def largest_budget(pair, hi: int = MAX_BUDGET, limit=None) -> int:
    """The largest budget in 1..hi that ``compare.check`` accepts (1 if none)."""
    for b in range(hi, 1, -1):
        try:
            compare.check(pair, b, limit=limit)
            return b
        except bounds.WorkRefused:
            pass
    return 1


def family(row) -> str:
    """A compare row's family: its kind, a tree of distinct drafts apart ("tree:distinct")."""
    return "tree:distinct" if row.get("drafts") == "distinct" else row["kind"]


def best_by_budget(rows, budget: int) -> dict:
    """From ``compare.compare`` rows: for b = 1..budget, the best scheme of each family drafting <= b tokens.

    Returns {"budgets": [1..budget], family: [expected tokens], family + " scheme": [scheme name]} for
    each of ``FAMILIES``; a family with no scheme at b (never, for b >= 1) would get None.
    """
    out = {"budgets": list(range(1, budget + 1))}
    for fam in FAMILIES:
        values, labels = [], []
        for b in out["budgets"]:
            fit = [r for r in rows if family(r) == fam and r["drafted_tokens"] <= b]
            best = max(fit, key=lambda r: (r["expected_tokens"], -r["drafted_tokens"]), default=None)
            values.append(None if best is None else best["expected_tokens"])
            labels.append(None if best is None else best["scheme"])
        out[fam], out[fam + " scheme"] = values, labels
    return out
