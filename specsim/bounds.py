"""Work bounds: what a computation will cost, estimated before it starts.

Exact enumeration grows exponentially in gamma and in the number of tokens N,
and each Fraction operation grows with the digits of the numbers, so every
entry point (CLI command, app page) asks this module first and refuses, with
one line naming the limit and what to lower, the work it could not finish
quickly. Numbers typed or read from a file are bounded here too. The limits
live in ``Limits``, once.

The unit of exact work is one enumerated outcome times the relative cost of
one Fraction operation on the numbers involved (1 for small fractions).

Example
-------
>>> round_work(3, 3)
81
>>> check(round_work(2, 19), "a round with γ = 19 over 2 tokens", "γ")
Traceback (most recent call last):
...
specsim.bounds.WorkRefused: a round with γ = 19 over 2 tokens means ~1.0e+06 outcomes; the limit is 200,000: lower γ
>>> parse_number("1e-3", "alpha")
Fraction(1, 1000)
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction


class WorkRefused(ValueError):
    """A computation refused before it started; the message is one line."""


@dataclass(frozen=True)
class Limits:
    gamma: int = 64  # the largest draft length any entry point accepts
    exact_work: int = 200_000  # estimated outcomes (x number cost) of one exact computation
    interactive_work: int = 200_000  # the same budget for an app page
    # numbers on the way in
    digits: int = 1000  # digits of a numerator or denominator in a model file
    option_digits: int = 50  # digits of a number typed as an option (--alpha, --cost, --temperature)
    exponent: int = 100  # decimals and floats: |exponent| of 1e-5 style numbers at most this
    max_cost: int = 10**6  # --cost (a drafter step in target steps)
    temperature_power: int = 100  # exact temperature 1/k needs p^k: k at most this; tau >= 1/this
    # files on the way in
    file_bytes: int = 4_000_000  # a model file's size, read with os.stat before opening
    json_depth: int = 32  # nesting of arrays and objects in a model file
    order: int = 12  # a model's context order
    contexts: int = 4096  # V^order contexts of a model
    # sampled work
    sample_rounds: int = 10**8  # sample --rounds
    sample_work: int = 2 * 10**8  # draws of the vectorized sampler (sample_work(); ~5-10 s at the limit)
    loop_work: int = 5 * 10**6  # rounds x (gamma + 1) of the per-round loop (broken rules; ~10 s)
    sample_outcomes: int = 10**7  # distinct outcomes a sample may have to hold in memory
    generate_tokens: int = 10_000  # generate --tokens
    generate_work: int = 10**6  # tokens x (gamma + 1) x V probabilities kept by a generation trace (~5 s)


LIMITS = Limits()


def _sci(x) -> str:
    return f"{float(x):.1e}" if x < 1e300 else f"10^{int(math.log10(x))}"


def check(work, what: str, lower: str, limit: int | None = None, unit: str = "outcomes") -> None:
    """Raise ``WorkRefused`` when ``work`` is over ``limit`` (default: ``LIMITS.exact_work``)."""
    limit = LIMITS.exact_work if limit is None else limit
    if work > limit:
        raise WorkRefused(f"{what} means ~{_sci(work)} {unit}; the limit is {limit:,}: lower {lower}")


# -- what a model's enumeration depends on -------------------------------------
@dataclass(frozen=True)
class Shape:
    """The sizes that drive exact work, read from a model without computing anything.

    branch: most positive entries in a q row (drafts per position);
    p_branch: most positive entries in a p row (replacement and bonus tokens);
    states: distinct contexts the model tells apart (V^order);
    digits: most digits of a numerator or denominator in any row.
    """

    vocab: int
    branch: int
    p_branch: int
    states: int
    digits: int = 1


def _digits(x) -> int:
    try:
        n, d = Fraction(x).as_integer_ratio()
    except (TypeError, ValueError, OverflowError):
        return 1
    return int(max(abs(n), d).bit_length() * 0.30103) + 1


def shape(model, power: int = 1) -> Shape:
    """The Shape of a toy model (or of a wrapped one: falls back to V for anything unknown).

    ``power`` multiplies the digits (an exact temperature 1/k raises rows to the k-th power).
    """
    base = model
    while not hasattr(base, "target") and hasattr(base, "base"):
        base = base.base
    v = len(model.vocab)
    target, draft = getattr(base, "target", None), getattr(base, "draft", None)
    if not isinstance(target, dict) or not isinstance(draft, dict):
        return Shape(v, v, v, v ** getattr(base, "order", 1))
    qb = max((sum(1 for x in row if x) for row in draft.values()), default=v)
    pb = max((sum(1 for x in row if x) for row in target.values()), default=v)
    digits = max((_digits(x) for t in (target, draft) for row in t.values() for x in row), default=1)
    if base is not model:  # a transform (top-k, temperature) may move mass anywhere
        qb = pb = max(qb, pb)
    return Shape(v, max(qb, 1), max(pb, 1), len(target), digits * power)


def number_cost(digits: int) -> float:
    """Relative cost of one outcome whose probability is a product with ``digits`` digits.

    Fitted on this machine on rounds of 2-token models with random D-digit rows
    (digits = D x (gamma + 1)): ~1 at a few hundred digits, 50 at 2,700,
    400 at 6,600, 1,500 at 14,000.
    """
    return 1 + (digits / 380) ** 2


def _geom(b: int, n: int) -> int:
    """1 + b + ... + b^n."""
    return n + 1 if b == 1 else (b ** (n + 1) - 1) // (b - 1)


def round_work(vocab_size: int, gamma: int, p_branch: int | None = None) -> int:
    """Outcomes one exact round enumerates with at most ``vocab_size`` drafts per position.

    Without ``p_branch``: V^(gamma + 1), the plain upper bound. With it: every
    prefix of accepted drafts (b^i of length i) emits up to ``p_branch``
    replacement or bonus tokens.
    """
    if p_branch is None:
        return vocab_size ** (gamma + 1)
    return p_branch * _geom(vocab_size, gamma)


def joint_work(vocab_size: int, gamma: int, n_tokens: int, contexts: int = 1) -> int:
    """Plain upper bound on the n-token joints (speculative and target) from ``contexts`` contexts."""
    depth = max(n_tokens, min(gamma, n_tokens) + 1)
    return vocab_size ** depth * contexts


def _spec_joint(s: Shape, gamma: int, n: int) -> int:
    """Outcomes of ``exact.speculative_joint`` plus ``exact.target_joint`` for one context."""
    c = max(s.branch, s.p_branch)
    total = c * _geom(c, n)  # target joint
    for m in range(1, n + 1):  # memo keys (state, m): truncated round + splicing the tails
        states = min(s.states, _geom(c, n - m))
        total += states * (round_work(s.branch, min(gamma, m - 1), s.p_branch) + m * c ** m)
    return total


ROUND_STEPS = 5  # a full round's outcome costs ~5x a joint's (draft loop, p/q, residual): measured


def exact_work(model, gamma: int = 1, n_tokens: int = 0, gammas=None, contexts: int = 1,
               rounds: int = 0, rules: int = 1, power: int = 1) -> float:
    """Predicted cost of an exact computation, in steps: outcomes x number cost (x ROUND_STEPS in rounds).

    rounds: full rounds enumerated (``round`` does 2, ``sample --check`` 1, each pitfall 1);
    n_tokens, gammas, contexts: joints for a proof (``check_exactness``) or a pitfalls lab;
    rules: how many rules are evaluated (the pitfalls lab runs all of them).
    """
    s = shape(model, power)
    gammas = list(gammas) if gammas is not None else [gamma]
    outcomes = ROUND_STEPS * rounds * round_work(s.branch, max(gammas), s.p_branch) * rules
    if n_tokens:
        outcomes += contexts * rules * sum(_spec_joint(s, g, n_tokens) for g in gammas)
    g = max(gammas)  # rows multiplied along one path: a round's gamma + 1, a joint's N + min(gamma, N) + 1
    depth = max(g + 1, n_tokens + min(g, n_tokens) + 1 if n_tokens else 0)
    return outcomes * number_cost(s.digits * depth)


def check_round(model, gamma: int, limit: int | None = None, rounds: int = 1, power: int = 1) -> None:
    """Refuse an exact round of ``model`` with this gamma when it is too large."""
    v = len(model.vocab)
    check(exact_work(model, gamma, rounds=rounds, power=power),
          f"a round with γ = {gamma} over {v} tokens", "γ", limit, "steps")


def check_joint(model, n_tokens: int, gammas, contexts: int = 1, limit: int | None = None,
                rules: int = 1, rounds: int = 0, power: int = 1) -> None:
    """Refuse exact n-token joints (a proof, a pitfalls lab) that are too large."""
    gammas = list(gammas)
    v, g = len(model.vocab), max(gammas)
    work = exact_work(model, n_tokens=n_tokens, gammas=gammas, contexts=contexts, rounds=rounds,
                      rules=rules, power=power)
    what = f"{n_tokens} token(s) with γ up to {g} over {v} tokens from {contexts} context(s)"
    check(work, what + (f", {rules} rules" if rules > 1 else ""), "γ or N", limit, "steps")


BLOCK_WORK = 10**6  # chains x γ of block rounds; measured ~3.5 s at V = 8, γ = 4, N = 3 (393,216)


def block_work(model, gamma: int, n_tokens: int = 0, rounds: int = 0) -> int:
    """A block round enumerates every drafted chain: V_q^γ chains, ~γ steps each.

    A proof enumerates one truncated round per (model state, tokens still needed).
    """
    s = shape(model)
    count = rounds + (min(s.states, _geom(s.branch, n_tokens)) * n_tokens if n_tokens else 0)
    return max(count, 1) * s.branch ** gamma * gamma


def check_block(model, gammas, n_tokens: int = 0, rounds: int = 1) -> None:
    """Refuse block-verified rounds or proofs whose chain enumeration is too large."""
    g, v = max(gammas), len(model.vocab)
    work = sum(block_work(model, x, n_tokens, rounds) for x in gammas)
    what = f"block verification with γ up to {g} over {v} tokens" + (f", N = {n_tokens}" if n_tokens else "")
    check(work, what, "γ" + (" or N" if n_tokens else ""), BLOCK_WORK, "chain steps")


def _node_work(b: int, width: int, distinct: bool) -> int:
    """Child draws one tree node enumerates: i.i.d. pools its rejections (width x b);
    distinct keeps one state per tried set (at most b^j ordered tries at child j)."""
    if not distinct:
        return width * b
    return sum(min(b ** j, 10**12) * b for j in range(min(width, b)))


def tree_round_work(s: Shape, widths, distinct: bool) -> int:
    """Outcomes + node work of one tree round: b^i accepted prefixes at depth i."""
    total, prefixes = 0, 1
    for w in widths:
        total += prefixes * (_node_work(s.branch, w, distinct) + s.p_branch)
        prefixes = min(prefixes * s.branch, 10**15)  # any drafted token can be the accepted child
    return total + prefixes * s.p_branch


def tree_work(model, widths, distinct: bool = False, n_tokens: int = 0, contexts: int = 1,
              rounds: int = 0, rules: int = 1) -> float:
    """Predicted steps of tree rounds (``rounds`` full ones) and n-token tree joints."""
    s = shape(model)
    widths = tuple(widths)
    work = ROUND_STEPS * rounds * rules * tree_round_work(s, widths, distinct)
    if n_tokens:
        c = max(s.branch, s.p_branch)
        per = c * _geom(c, n_tokens)
        for m in range(1, n_tokens + 1):
            states = min(s.states, _geom(c, n_tokens - m))
            per += states * (tree_round_work(s, widths[:m - 1], distinct) + m * c ** m)
        work += contexts * rules * per
    depth = max(len(widths) + 1, n_tokens + min(len(widths), n_tokens) + 1 if n_tokens else 0)
    return work * number_cost(s.digits * depth)


def check_tree(model, tree, n_tokens: int = 0, contexts: int = 1, rounds: int = 0, rules: int = 1,
               limit: int | None = None) -> None:
    """Refuse an exact tree round or tree proof that is too large (``tree``: a ``specsim.tree.Tree``)."""
    v = len(model.vocab)
    what = f"a tree {','.join(map(str, tree.shape))} ({tree.drafts}) over {v} tokens"
    if n_tokens:
        what += f", {n_tokens} token(s) from {contexts} context(s)"
    work = tree_work(model, tree.shape, tree.drafts == "distinct", n_tokens, contexts, rounds, rules)
    check(work, what, "the widths, the depth or N", limit, "steps")


def check_tree_sample(model, tree, rounds: int) -> None:
    """Refuse a per-round tree Monte-Carlo run that would take minutes (rounds x drafted tokens)."""
    check(rounds, f"--rounds {rounds:,}", "--rounds", LIMITS.sample_rounds, "rounds")
    check(rounds * (tree.drafted_tokens + 1), f"{rounds:,} rounds of a {tree.name} (one round at a time)",
          "--rounds or the tree", LIMITS.loop_work, "draws")


def temperature_power(tau) -> int:
    """k when an exact temperature tau = 1/k raises rows to the k-th power, else 1."""
    if tau is None or not isinstance(tau, Fraction) or tau == 0:
        return 1
    inverse = 1 / tau
    return inverse.numerator if inverse.denominator == 1 else 1


# -- sampled work --------------------------------------------------------------
def sample_work(rounds: int, gamma: int, vocab_size: int = 2) -> int:
    """Draws a Monte-Carlo run makes: rounds x (gamma + 1), x10 when outcomes no longer fit
    in one int64 code ((V + 1)^(gamma + 1) >= 2^62: rows of digits are counted instead, measured
    ~10x slower per draw)."""
    wide = (gamma + 1) * math.log2(vocab_size + 1) >= 62
    return rounds * (gamma + 1) * (10 if wide else 1)


def check_sample(model, gamma: int, rounds: int, loop: bool = False) -> None:
    """Refuse a Monte-Carlo run that would take minutes or not fit in memory."""
    check(rounds, f"--rounds {rounds:,}", "--rounds", LIMITS.sample_rounds, "rounds")
    limit = LIMITS.loop_work if loop else LIMITS.sample_work
    what = f"{rounds:,} rounds with γ = {gamma}" + (" (a broken rule: one round at a time)" if loop else "")
    s = shape(model)
    check(sample_work(rounds, gamma, 2 if loop else s.vocab), what, "--rounds or γ", limit, "draws")
    distinct = min(rounds, round_work(s.branch, gamma, s.p_branch))
    check(distinct, f"{rounds:,} rounds with γ = {gamma} over {s.vocab} tokens", "--rounds or γ",
          LIMITS.sample_outcomes, "distinct outcomes to count")


def check_generate(model, gamma: int, tokens: int) -> None:
    """Refuse a recorded generation that would be too long or too large."""
    check(tokens, f"--tokens {tokens:,}", "--tokens", LIMITS.generate_tokens, "tokens")
    v = len(model.vocab)
    check(tokens * (gamma + 1) * v, f"{tokens:,} tokens with γ = {gamma} over {v} tokens",
          "--tokens or γ", LIMITS.generate_work, "recorded probabilities")


# -- numbers on the way in -----------------------------------------------------
_DECIMAL = re.compile(r"[+-]?(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?")
_INTEGER = re.compile(r"[+-]?\d+")


def parse_number(value, field: str, digits: int | None = None) -> Fraction:
    """An exact Fraction from "3/5", "0.25", "1e-3", an int, a float or a Decimal, bounded.

    Refuses (ValueError naming ``field``) inf, nan, more than ``digits`` digits
    (default ``LIMITS.digits``) and exponents beyond +-``LIMITS.exponent``,
    before any big number is built.
    """
    digits = LIMITS.digits if digits is None else digits
    bad = f"{field}: {str(value)[:40]!r} is not a number (use \"3/5\", \"0.25\" or 1)"
    if isinstance(value, bool):
        raise ValueError(bad)
    if isinstance(value, int):
        if _digits(value) > digits:
            raise ValueError(f"{field}: an integer over {digits} digits is refused")
        return Fraction(value)
    if isinstance(value, Fraction):
        if _digits(value) > digits:
            raise ValueError(f"{field}: a numerator or denominator over {digits} digits is refused")
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{field}: {value} is refused (numbers must be finite)")
        value = repr(value)
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise ValueError(f"{field}: {value} is refused (numbers must be finite)")
        value = str(value)
    if not isinstance(value, str):
        raise ValueError(bad)
    text = value.strip()
    if text.lower().lstrip("+-") in ("inf", "infinity", "nan", "snan"):
        raise ValueError(f"{field}: {text} is refused (numbers must be finite)")
    if "/" in text:
        parts = [t.strip() for t in text.split("/")]
        if len(parts) != 2 or not all(_INTEGER.fullmatch(t) for t in parts):
            raise ValueError(bad)
        if max(len(t.lstrip("+-")) for t in parts) > digits:
            raise ValueError(f"{field}: a numerator or denominator over {digits} digits is refused")
        if int(parts[1]) == 0:
            raise ValueError(f"{field}: {text} divides by zero")
        return Fraction(int(parts[0]), int(parts[1]))
    m = _DECIMAL.fullmatch(text)
    if not m or not (m.group(1) or m.group(2)):
        raise ValueError(bad)
    if len(m.group(1)) + len(m.group(2) or "") > digits:
        raise ValueError(f"{field}: a number over {digits} digits is refused")
    exp = m.group(3)
    if exp is not None and (len(exp.lstrip("+-")) > 6 or abs(int(exp)) > LIMITS.exponent):
        raise ValueError(f"{field}: exponent {exp} is outside ±{LIMITS.exponent} "
                         f"(numbers are read exactly; write a fraction or a smaller exponent)")
    return Fraction(text)
