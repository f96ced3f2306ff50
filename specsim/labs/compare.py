"""Which verification scheme gets the most tokens per round from a budget of drafted tokens?

``schemes(budget)`` lists every scheme whose round drafts at most ``budget``
tokens, as scheme values, asking every registered family
(``Scheme.budget_schemes``): chains and blocks of γ = 1..budget and every tree
shape (W1, ..., Wd) with W1 + W1·W2 + ... ≤ budget, with i.i.d. and distinct
drafts; with ``settings`` the families whose layout needs settings of their own
too (a confidence chain's stop, a dynamic tree's depth and top-k). ``compare`` computes each one's exact expected tokens per round (for
a budget, or for the schemes named); ``check`` refuses, with one line, a
comparison too large to finish, and is what the CLI and the Trees page both
call before ``compare``.

>>> from specsim.toy import load_model
>>> [(r["scheme"], r["drafted_tokens"], str(r["expected_tokens"]))
...  for r in compare(load_model("seed"), ("a",), 2) if "tree" not in r]
[('block:2', 2, '27/10'), ('chain:2', 2, '267/100'), ('chain:1', 1, '19/10'), ('block:1', 1, '19/10')]
"""
from __future__ import annotations

from .. import bounds, exact
from ..schemes import as_scheme, families
from ..schemes.adaptive import drafting_cost

MAX_BUDGET = 8
# Every scheme of a budget is enumerated once: the page's own limit on their summed work (the CLI passes its
# --max-work budget instead). Measured (an idle 2-core machine, the seed model): budget 5 = ~50,000 steps in
# ~0.3 s for the whole comparison, budget 6 = ~160,000 steps in ~1.1 s.
BUDGET_WORK = 60_000


def schemes(budget: int, settings: dict | None = None) -> list:
    """Every scheme drafting at most ``budget`` tokens: the families of one γ each (γ drafts every round, the
    i.i.d. formula's: chains and blocks) side by side for γ = 1..budget, then every other family in registration
    order (the trees, any family registered later); with ``settings`` (a scheme's ``settings()`` keys) the
    families that need them too, one of each per budget b = 1..budget."""
    if isinstance(budget, bool) or not isinstance(budget, int) or not 1 <= budget <= MAX_BUDGET:
        raise ValueError(f"budget must be an integer in 1..{MAX_BUDGET}, got {budget!r}")
    lists = [cls.budget_schemes(budget) for cls in families().values()]
    by_gamma = [x for x in lists if x and all(s.iid_gamma == s.drafted_tokens for s in x)]
    fixed = [s for same in zip(*by_gamma) for s in same] + [s for x in lists if x not in by_gamma for s in x]
    if settings is None:
        return fixed
    adaptive = [s for cls in families().values() for s in cls.budget_schemes(budget, settings) if s not in fixed]
    return fixed + sorted(adaptive, key=lambda s: s.drafted_tokens)  # per b: one of each family


def _schemes(budget, named) -> list:
    if (budget is None) == (named is None):
        raise ValueError("compare a budget or a list of schemes (one of the two)")
    return schemes(budget) if named is None else [as_scheme(s) for s in named]


def check(pair, budget: int | None = None, named=None, limit=None) -> None:
    """Refuse ``compare(pair, context, budget, named)`` before it starts (``bounds.WorkRefused``, one line).

    Each scheme's round is checked as a round is (digits and work), then all rounds together:
    against ``limit`` when it is a ``bounds.Budget`` (the CLI's --max-work), else ``BUDGET_WORK``.
    """
    todo = _schemes(budget, named)
    for s in todo:
        bounds.check_round(pair, s, limit)
    total = sum(bounds.exact_work(pair, s, rounds=1) for s in todo)
    what = (f"every scheme within budget {budget}" if named is None else "the schemes asked for") + \
        f" over {len(pair.vocab)} tokens ({len(todo)} schemes)"
    bounds.check(total, what, "the budget" if named is None else "the schemes",
                 limit if isinstance(limit, bounds.Budget) else BUDGET_WORK, "steps")


def compare(pair, context, budget: int | None = None, named=None) -> list:
    """Rows {scheme, kind, gamma, drafted_tokens, expected_tokens, expected_drafts, drafter_passes} (plus
    tree and drafts for a tree), most expected tokens first (fewer drafted tokens first on a tie);
    ``named``: these schemes instead of every one within ``budget``. ``expected_drafts`` and
    ``drafter_passes`` are the exact drafting cost of a round here (``schemes.adaptive.drafting_cost``):
    what an adaptive scheme (``chain:max=G,stop=T``, ``tree:dynamic,...``) drafts on average, below its most."""
    rows = []
    for s in _schemes(budget, named):
        r = exact.round_distribution(pair, tuple(context), s)
        cost = drafting_cost(pair, tuple(context), s)
        # "kind": the grammar keyword, shown in the table and the JSON, never branched on
        row = {"scheme": s.name, "kind": s.kind, "gamma": s.depth, "drafted_tokens": s.drafted_tokens,
               "expected_tokens": r.expected_tokens, "expected_drafts": cost.drafts, "drafter_passes": cost.passes}
        if s.draft_modes:  # a fixed tree: its widths and drafting mode
            row.update(tree=list(s.shape), drafts=s.drafts)
        rows.append(row)
    rows.sort(key=lambda r: (-r["expected_tokens"], r["drafted_tokens"]))
    return rows
