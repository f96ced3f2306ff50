"""Symbolic proofs with sympy: the one-position identity and the round formulas.

The one-position identity, for every token x of a 3-token vocabulary with
symbolic p and q::

    q(x) * min(1, p(x)/q(x)) + (1 - alpha) * r(x) = p(x)

``min`` and ``max`` are not algebra, so the proof splits into cases by the set
S of tokens where p > q. On S, min(1, p/q) = 1 and max(0, p - q) = p - q;
off S, min(1, p/q) = p/q and max(0, p - q) = 0. Both rows sum to 1, which
makes 1 - alpha equal to the residual mass sum_S (p - q). S cannot hold every
token (both rows sum to 1); when S is empty p == q and no rejection happens.

Example
-------
>>> proof = prove_one_position()
>>> proof.holds, len(proof.cases)
(True, 7)
>>> prove_tokens_per_round().holds
True
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import sympy as sp


@dataclass
class Case:
    """One case of the split: which tokens have p > q, and the identity per token."""

    over: tuple  # indices x with p(x) > q(x)
    alpha: sp.Expr
    residual_mass: sp.Expr
    terms: list  # per token: (accepted term, residual term, sum, simplified sum - p(x))
    holds: bool


@dataclass
class Proof:
    """The case-split proof of the one-position identity."""

    p: list
    q: list
    cases: list = field(default_factory=list)

    @property
    def holds(self) -> bool:
        return all(c.holds for c in self.cases)

    def lines(self) -> list:
        """The derivation as readable lines (what `specsim prove --symbolic` prints)."""
        names = ["a", "b", "c"][: len(self.p)]
        out = [
            f"Target p = ({', '.join(map(str, self.p))}), drafter q = ({', '.join(map(str, self.q))}),",
            "each row summing to 1. Claim, for every token x:",
            "  q(x) min(1, p(x)/q(x)) + (1 - alpha) r(x) = p(x).",
            "Split on S = {x : p(x) > q(x)}: on S min(1, p/q) = 1 and max(0, p - q) = p - q;",
            "off S min(1, p/q) = p/q and max(0, p - q) = 0.",
        ]
        for case in self.cases:
            s = "{" + ", ".join(names[i] for i in case.over) + "}"
            out.append("")
            out.append(f"Case S = {s}:")
            if not case.over:
                out.append("  p <= q everywhere and both sum to 1, so p = q: alpha = 1, no rejection.")
            out.append(f"  alpha = sum min(p, q) = {case.alpha}")
            out.append(f"  1 - alpha = {case.residual_mass}  (= sum over S of p - q)")
            for x, (acc, res, total, diff) in enumerate(case.terms):
                out.append(f"  x = {names[x]}: {acc} + {res} = {total};  minus p({names[x]}) = {diff}")
            out.append("  holds" if case.holds else "  FAILS")
        out.append("")
        out.append("Q.E.D.: the emitted token is distributed as p in every case." if self.holds
                   else "The identity failed in some case.")
        return out


def prove_one_position(vocab_size: int = 3, replacement: str = "residual") -> Proof:
    """Prove the identity for symbolic p, q on ``vocab_size`` tokens, case by case.

    ``replacement="target"`` runs the same derivation for the broken rule that
    resamples from p on rejection (seed 004's pseudocode): it does not hold.

    >>> prove_one_position(replacement="target").holds
    False
    """
    if replacement not in ("residual", "target"):
        raise ValueError(f"replacement must be 'residual' or 'target', got {replacement!r}")
    ps = list(sp.symbols(f"p1:{vocab_size + 1}", positive=True))
    qs = list(sp.symbols(f"q1:{vocab_size + 1}", positive=True))
    # Both rows sum to 1: eliminate the last entry of each.
    p = ps[:-1] + [1 - sum(ps[:-1])]
    q = qs[:-1] + [1 - sum(qs[:-1])]
    proof = Proof(p, q)
    for size in range(vocab_size):  # S = every token is impossible
        for over in itertools.combinations(range(vocab_size), size):
            if size == 0:
                # p <= q everywhere with equal sums forces p = q.
                pp, qq = q, q
            else:
                pp, qq = p, q
            mins = [qq[i] if i in over else pp[i] for i in range(vocab_size)]
            excess = [pp[i] - qq[i] if i in over else sp.Integer(0) for i in range(vocab_size)]
            alpha = sp.simplify(sum(mins))
            mass = sp.simplify(1 - alpha)
            # 1 - alpha (from min) equals the residual mass sum max(0, p - q)
            terms, ok = [], sp.simplify(mass - sum(excess)) == 0
            for x in range(vocab_size):
                accept = qq[x] * (sp.Integer(1) if x in over else pp[x] / qq[x])
                # residual r(x) = excess / mass. With S empty it is undefined (mass 0 / 0):
                # the term is (1 - alpha) times any row r, so it vanishes only if 1 - alpha = 0.
                if not size:
                    resid = mass * sp.Symbol(f"r{x + 1}")
                elif replacement == "target":
                    resid = mass * pp[x]
                else:
                    resid = mass * excess[x] / sum(excess)
                total = sp.simplify(accept + resid)
                diff = sp.simplify(total - pp[x])
                ok = ok and diff == 0
                terms.append((sp.simplify(accept), resid, total, diff))
            proof.cases.append(Case(over, alpha, mass, terms, ok))
    return proof


@dataclass
class SeriesProof:
    """Closed forms of tokens per round, checked symbolically."""

    closed_form: sp.Expr
    from_distribution: sp.Expr
    holds: bool

    def lines(self) -> list:
        return [
            "Tokens per round with i.i.d. acceptance alpha and draft length gamma:",
            "  P(K = k) = alpha^k (1 - alpha) for k < gamma, P(K = gamma) = alpha^gamma;",
            "  E[K + 1] = sum_k (k + 1) P(K = k) = sum_{k=0..gamma} alpha^k",
            f"  = {self.closed_form}  (alpha != 1; gamma + 1 at alpha = 1)",
            "  checked: E[K + 1] from the distribution minus the closed form simplifies to 0"
            + (" for gamma = 1..8 and symbolically." if self.holds else ": FAILED"),
        ]


def prove_tokens_per_round(max_gamma: int = 8) -> SeriesProof:
    """Sum_{k=0..gamma} alpha^k = (1 - alpha^(gamma+1)) / (1 - alpha), and E[K+1] equals it."""
    a = sp.Symbol("alpha", positive=True)
    g = sp.Symbol("gamma", integer=True, positive=True)
    k = sp.Symbol("k", integer=True, nonnegative=True)
    closed = (1 - a ** (g + 1)) / (1 - a)
    series = sp.summation(a ** k, (k, 0, g))
    # sympy returns Piecewise((gamma + 1, alpha == 1), (closed form, True))
    general = series.args[-1][0] if isinstance(series, sp.Piecewise) else series
    holds = sp.simplify(general - closed) == 0
    for n in range(1, max_gamma + 1):
        dist = sum((j + 1) * a ** j * (1 - a) for j in range(n)) + (n + 1) * a ** n
        holds = holds and sp.simplify(dist - closed.subs(g, n)) == 0
    from_distribution = sp.simplify(sum((j + 1) * a ** j * (1 - a) for j in range(3)) + 4 * a ** 3)
    return SeriesProof(closed, from_distribution, bool(holds))


# -- multi-draft: one tree node with two i.i.d. children ---------------------------
@dataclass
class NodeCase:
    """S1 = {x : p > q} (first child), S2 = {x : r1 > q} (second child, r1 the residual)."""

    over_first: tuple
    over_second: tuple
    diffs: list  # per token: simplified P(emit x) - p(x)
    holds: bool


def prove_two_iid_children(vocab_size: int = 3, update: bool = True) -> list:
    """One tree node, two children drawn i.i.d. from q, then the residual, symbolically.

    P(emit y) = q(y) a1(y) + R1 [ q(y) a2(y) + R2 r2(y) ] with a1 = min(1, p/q),
    R1 = sum max(0, p - q), r1 = max(0, p - q)/R1, a2 = min(1, r1/q),
    R2 = sum max(0, r1 - q), r2 = max(0, r1 - q)/R2. Claim: P(emit y) = p(y).
    The case split is on S1 and on S2 (a subset of S1: r1 = 0 off S1); an
    empty S means no rejection there (R = 0, min(1, .) = ratio). Returns the
    cases; the identity holds when every case does.

    ``update=False`` is the ``tree-no-residual-update`` cousin: the second
    child is tested against p again and the fallback is p; it fails.

    >>> cases = prove_two_iid_children()
    >>> all(c.holds for c in cases), len(cases)
    (True, 19)
    >>> all(c.holds for c in prove_two_iid_children(update=False))
    False
    """
    ps = list(sp.symbols(f"p1:{vocab_size + 1}", positive=True))
    qs = list(sp.symbols(f"q1:{vocab_size + 1}", positive=True))
    p = ps[:-1] + [1 - sum(ps[:-1])]
    q = qs[:-1] + [1 - sum(qs[:-1])]
    tokens = range(vocab_size)
    cases = []
    for size1 in range(vocab_size):
        for s1 in itertools.combinations(tokens, size1):
            first = [q[y] if y in s1 else p[y] for y in tokens]  # q a1 = min(p, q)
            r1_mass = sum((p[y] - q[y] for y in s1), sp.Integer(0))
            if not s1:  # no rejection at the first child
                cases.append(_node_case(s1, (), [first[y] - p[y] for y in tokens]))
                continue
            if not update:  # second child against p again (same S), then a draw from p
                out = [first[y] + r1_mass * (first[y] + r1_mass * p[y]) for y in tokens]
                cases.append(_node_case(s1, s1, [out[y] - p[y] for y in tokens]))
                continue
            r1 = [(p[y] - q[y]) / r1_mass if y in s1 else sp.Integer(0) for y in tokens]
            for size2 in range(len(s1) + 1):
                for s2 in itertools.combinations(s1, size2):
                    second = [q[y] if y in s2 else r1[y] for y in tokens]  # q a2 = min(r1, q)
                    # R2 r2 = max(0, r1 - q): the normalizing mass R2 cancels
                    last = [(r1[y] - q[y]) if y in s2 else sp.Integer(0) for y in tokens]
                    out = [first[y] + r1_mass * (second[y] + last[y]) for y in tokens]
                    cases.append(_node_case(s1, s2, [out[y] - p[y] for y in tokens]))
    return cases


def _node_case(s1, s2, diffs) -> NodeCase:
    diffs = [sp.simplify(d) for d in diffs]
    return NodeCase(tuple(s1), tuple(s2), diffs, all(d == 0 for d in diffs))
