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
from ..schemes import Block, Chain, as_scheme, families
from ..schemes.adaptive import equal_cost_chain

MAX_BUDGET = 6  # the page's budget slider; compare.MAX_BUDGET is the library's own limit


def chain_keep(pair, context, gamma: int, seed=None) -> dict:
    """One seeded drafted chain and what each rule keeps of it.

    Returns {"drafts", "chain": {"accepted", "emitted", "tests"}, "block": {...}}:
    ``tests`` are (u, threshold, passed) per position: the acceptance
    min(1, p/q) for token-wise (read left to right, up to the first failure),
    the stop probability h_i for block (τ is the *last* position that passes).
    """
    out = {}
    for key, scheme in (("chain", Chain(gamma)), ("block", Block(gamma))):
        t = trace_round(pair, tuple(context), scheme, seed)
        if out and list(t.drafts) != out["drafts"]:
            raise AssertionError("the two traces drew different chains from one seed")
        out["drafts"] = list(t.drafts)
        out[key] = {"accepted": t.accepted, "emitted": list(t.emitted),
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


def check_budget(pair, budget: int, limit=None, scheme=None) -> None:
    """Refuse ``budget_rows(pair, context, budget, scheme)`` (``compare.check``, one line): the fixed schemes
    within the budget, then the adaptive ones."""
    compare.check(pair, budget, limit=limit)
    compare.check(pair, named=adaptive_schemes(budget, scheme), limit=limit)


def budget_rows(pair, context, budget: int, scheme=None) -> list:
    """``compare.compare`` rows of every fixed scheme within ``budget`` and of ``adaptive_schemes(budget,
    scheme)``, confidence chains with their fixed chain at equal drafts (``with_equal_cost``), most expected
    tokens first (fewer drafted tokens first on a tie), as ``compare.compare`` orders them.

    >>> from specsim.toy import load_model
    >>> [(r["scheme"], str(r["expected_tokens"])) for r in budget_rows(load_model("seed"), ("a",), 1)]
    [('chain:1', '19/10'), ('block:1', '19/10'), ('tree:1', '19/10'), ('tree:1:distinct', '19/10'), \
('chain:max=1,stop=0.45', '19/10'), ('tree:dynamic,budget=1,depth=1,topk=1', '8/5')]
    """
    rows = compare.compare(pair, context, budget) + compare.compare(pair, context, named=adaptive_schemes(budget, scheme))
    return sorted(with_equal_cost(pair, context, rows), key=lambda r: (-r["expected_tokens"], r["drafted_tokens"]))


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
    """A compare row's family: its kind, a drafting mode other than the first apart ("tree:distinct")."""
    return _family(as_scheme(row["scheme"]))


def _family(s) -> str:
    return s.kind if not s.draft_modes or s.drafts == s.draft_modes[0] else f"{s.kind}:{s.drafts}"


def curve_families() -> tuple:
    """(the families of the fixed schemes, the families that need settings): one curve each in
    ``best_by_budget``, from every registered family (``Scheme.budget_schemes``).

    >>> curve_families()
    (('chain', 'block', 'tree', 'tree:distinct'), ('confidence', 'dynamic'))
    """
    fixed = [_family(s) for cls in families().values() for s in cls.budget_schemes(1)]
    adaptive = [_family(s) for cls in families().values() if not cls.budget_schemes(1)
                for s in cls.budget_schemes(1, {})]
    return tuple(dict.fromkeys(fixed)), tuple(dict.fromkeys(adaptive))


FAMILIES, ADAPTIVE_FAMILIES = curve_families()  # the curves of the families registered with specsim.schemes


def best_by_budget(rows, budget: int) -> dict:
    """From ``compare.compare`` rows: for b = 1..budget, the best scheme of each family drafting <= b tokens.

    Returns {"budgets": [1..budget], family: [expected tokens], family + " scheme": [scheme name]} for
    fixed family of ``curve_families`` and each other one with a row; a family with no scheme at b
    (never, for b >= 1, with ``budget_rows``) would get None.
    """
    out = {"budgets": list(range(1, budget + 1))}
    present = {family(r) for r in rows}
    fixed, adaptive = curve_families()
    for fam in fixed + tuple(f for f in adaptive if f in present):
        values, labels = [], []
        for b in out["budgets"]:
            fit = [r for r in rows if family(r) == fam and r["drafted_tokens"] <= b]
            best = max(fit, key=lambda r: (r["expected_tokens"], -r["drafted_tokens"]), default=None)
            values.append(None if best is None else best["expected_tokens"])
            labels.append(None if best is None else best["scheme"])
        out[fam], out[fam + " scheme"] = values, labels
    return out


def adaptive_schemes(budget: int, scheme=None) -> list:
    """For b = 1..budget: one scheme of each family whose layout needs settings (``compare.schemes`` with
    settings): a confidence-stopped chain of at most b drafts and a dynamic tree of b nodes.

    The threshold and confidence (``on``), the depth and top-k are ``scheme``'s where it has them
    (``settings()``), else each family's starting ones (its params' ``start``); depth and top-k are capped at b.

    >>> [s.name for s in adaptive_schemes(2)]
    ['chain:max=1,stop=0.45', 'tree:dynamic,budget=1,depth=1,topk=1', 'chain:max=2,stop=0.45', 'tree:dynamic,budget=2,depth=2,topk=2']
    """
    fixed = compare.schemes(budget)
    return compare.schemes(budget, scheme.settings() if scheme else {})[len(fixed):]


def with_equal_cost(pair, context, rows) -> list:
    """``compare.compare`` rows, each confidence chain's with ``fixed_at_equal_drafts``: the exact tokens per
    round of fixed chains drafting as many tokens on average (``schemes.adaptive.equal_cost_chain``).

    >>> from specsim.toy import load_model
    >>> m = load_model("seed")
    >>> rows = with_equal_cost(m, ("a",), compare.compare(m, ("a",), named=["chain:max=6,stop=0.45"]))
    >>> rows[0]["expected_tokens"], rows[0]["expected_drafts"], rows[0]["fixed_at_equal_drafts"]
    (Fraction(227247, 62500), Fraction(8513, 2500), Fraction(17687079, 5000000))
    """
    return [{**r, "fixed_at_equal_drafts": equal_cost_chain(pair, tuple(context), r["expected_drafts"])}
            if as_scheme(r["scheme"]).equal_drafts_baseline else r for r in rows]
