"""Work checks: what a computation will cost, asked before it starts, refused in one line.

Every entry point (CLI command, app page) calls a check here first: it asks the scheme for
its own work (``round_work``, ``prefix_work``, ``tested``, ``kernel``) and compares it
with ``specsim.limits`` (re-exported here: ``LIMITS``, ``Budget``), naming what to lower.

>>> check(3 ** 20, "a round with γ = 19 over 2 tokens", "γ")
Traceback (most recent call last):
...
specsim.bounds.WorkRefused: a round with γ = 19 over 2 tokens means ~3.5e+09 outcomes; the limit is 200,000: lower γ
"""
from __future__ import annotations

import math

from .limits import (LIMITS, ROUND_STEPS, Budget, Shape, as_budget, cli_budget, geom, loop_work,  # noqa: F401
                     number_cost, result_digits, sample_work, shape, temperature_power)
from .schemes import as_scheme


class WorkRefused(ValueError):
    """A computation refused before it started; the message is one line."""


def check(work, what: str, lower: str, limit=None, unit: str = "outcomes") -> None:
    """Raise ``WorkRefused`` when ``work`` is over ``limit`` (an int, a ``Budget``; default ``LIMITS.exact_work``)."""
    budget = as_budget(limit)
    if work > budget.steps:
        shown = f"{float(work):.1e}" if work < 1e300 else f"10^{int(math.log10(work))}"
        raise WorkRefused(f"{what} means ~{shown} {unit}; the limit is {budget.steps:,}: "
                          f"lower {lower}{budget.hint(work)}")


# -- exact work: each scheme prices its own round (``round_work``: one unit takes 15-40 us for every scheme)
def _joint_work(s: Shape, scheme, n: int) -> int:
    """Outcomes of ``exact.speculative_joint`` plus ``exact.target_joint`` for one context."""
    c = max(s.branch, s.p_branch)
    total = c * geom(c, n)  # target joint
    for m in range(1, n + 1):  # memo keys (state, m): truncated round + splicing the tails
        total += min(s.states, geom(c, n - m)) * (scheme.prefix_work(s, m - 1) + m * c ** m)
    return total


def exact_work(model, scheme=1, n_tokens: int = 0, schemes=None, contexts: int = 1,
               rounds: int = 0, rules: int = 1, power: int = 1) -> float:
    """Predicted cost of an exact computation, in steps: outcomes x number cost (x ROUND_STEPS in rounds).
    ``scheme`` (or several, ``schemes``; an int γ is a chain); ``rounds``: full rounds per rule (``round``
    does 2, ``sample --check`` 1); ``n_tokens``, ``contexts``: joints for a proof or a lab, per scheme;
    ``rules``: how many rules are evaluated (the pitfalls lab runs all of them)."""
    s = shape(model, power)
    schemes = [as_scheme(x) for x in (schemes if schemes is not None else [scheme])]
    outcomes = ROUND_STEPS * rounds * rules * max(x.round_work(s) for x in schemes)
    if n_tokens:
        outcomes += contexts * rules * sum(_joint_work(s, x, n_tokens) for x in schemes)
    g = max(x.depth for x in schemes)  # rows multiplied along one path: a round's γ + 1, a joint's N + min(γ, N) + 1
    depth = max(g + 1, n_tokens + min(g, n_tokens) + 1 if n_tokens else 0)
    return outcomes * number_cost(s.digits * depth)


def check_digits(model, positions: int, what: str, lower: str, n_tokens: int = 0, power: int = 1) -> None:
    """Refuse, before any work, results whose probabilities would have too many digits to show."""
    digits = result_digits(model, positions, n_tokens, power)
    if digits > LIMITS.result_digits:
        raise WorkRefused(f"{what} gives probabilities of up to ~{digits:,} digits; the limit is "
                          f"{LIMITS.result_digits:,} digits: lower {lower}, or use a model with shorter fractions")


def lower_words(schemes, n_tokens: int = 0) -> str:
    """What a person lowers: the longest of the schemes' ``lower`` words (and N for a joint), joined."""
    words = list(max((x.lower for x in schemes), key=len)) + (["N"] if n_tokens else [])
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"


def check_round(model, scheme, limit=None, rounds: int = 1, power: int = 1) -> None:
    """Refuse ``rounds`` exact rounds of ``scheme`` (a scheme, its grammar string or an int γ) on ``model``
    when they are too large (``limit``: an int or a ``Budget``)."""
    scheme = as_scheme(scheme)
    what, lower = f"a round of {scheme.name} over {len(model.vocab)} tokens", lower_words([scheme])
    check_digits(model, scheme.tested, what, lower, power=power)
    check(exact_work(model, scheme, rounds=rounds, power=power), what, lower, limit, "steps")


def check_joint(model, n_tokens: int, schemes, contexts: int = 1, limit=None,
                rules: int = 1, rounds: int = 0, power: int = 1) -> None:
    """Refuse exact n-token joints of these schemes (a proof, a lab: ``rules`` rules, each with
    ``rounds`` full rounds too) from ``contexts`` contexts that are too large."""
    schemes = [as_scheme(x) for x in schemes]
    work = exact_work(model, n_tokens=n_tokens, schemes=schemes, contexts=contexts, rounds=rounds,
                      rules=rules, power=power)
    names = [x.name for x in schemes]
    named = names[0] if len(names) == 1 else f"{len(names)} schemes ({names[0]} .. {names[-1]})"
    what = f"{n_tokens} token(s) with {named} over {len(model.vocab)} tokens from {contexts} context(s)"
    what += f", {rules} rules" if rules > 1 else ""
    lower = lower_words(schemes, n_tokens)
    # a correct rule's joints equal the target's (N rows); broken rules and rounds show round-sized numbers
    positions = max(x.tested for x in schemes) + n_tokens - 1 if rules > 1 or rounds else 0
    check_digits(model, positions, what, lower, n_tokens, power)
    check(work, what, lower, limit, "steps")


# -- sampled work ----------------------------------------------------------------------------------------
def check_sample(model, scheme, rounds: int, rule=None, limit=None) -> None:
    """Refuse a Monte-Carlo run of ``rounds`` rounds of ``scheme`` with ``rule`` (None: the correct one) that
    would take minutes or not fit in memory (a Budget ``limit`` raises every sampled limit alike): the correct
    rule on a scheme with a kernel (``scheme.kernel``) runs it, anything else the per-round loop."""
    scheme = as_scheme(scheme)
    check(rounds, f"--rounds {rounds:,}", "--rounds", LIMITS.sample_rounds, "rounds")
    s = shape(model)
    what, lower = f"{rounds:,} rounds of {scheme.name} over {s.vocab} tokens", "--rounds or " + scheme.size
    kernel = scheme.kernel(rule)
    if kernel is not None:
        check(sample_work(rounds, scheme.depth, s.vocab, kernel.draw), what, lower,
              as_budget(limit, LIMITS.sample_work), "draws")
    else:
        why = "a broken rule" if scheme.kernel() else "no vectorized kernel"
        check(loop_work(rounds, scheme.drafted_tokens, s.vocab), f"{what} ({why}: one round at a time)", lower,
              as_budget(limit, LIMITS.loop_work), "draws")
    distinct = min(rounds, scheme.round_work(s))
    check(distinct, what, lower, as_budget(limit, LIMITS.sample_outcomes), "distinct outcomes to count")


def check_generate(model, scheme, tokens: int, limit=None) -> None:
    """Refuse a recorded generation that would be too long or too large (``scheme``: or an int γ)."""
    scheme = as_scheme(scheme)
    check(tokens, f"--tokens {tokens:,}", "--tokens", LIMITS.generate_tokens, "tokens")
    v = len(model.vocab)
    check(tokens * (scheme.drafted_tokens + 1) * v, f"{tokens:,} tokens with {scheme.name} over {v} tokens",
          "--tokens or " + lower_words([scheme]), as_budget(limit, LIMITS.generate_work), "recorded probabilities")


def check_gpt(tokens: int, drafted, vocab_size: int | None = None, runs: int = 1, limit=None,
              lower: str = "--tokens or γ") -> None:
    """Refuse a tiny-GPT generation or bench before torch loads anything. ``drafted``: the drafted tokens
    per round of each scheme run (0: plain decoding); ``runs``: generations of each. At most one round a
    token: target positions <= runs x tokens x sum(drafted + 1); with ``vocab_size``, a generation's trace
    keeps (drafted + 1) rows of V probabilities a round.

    >>> check_gpt(4096, 64)
    Traceback (most recent call last):
    ...
    specsim.bounds.WorkRefused: 4,096 tokens with 64 drafts per round means ~2.7e+05 target positions; the limit is 200,000: lower --tokens or γ
    """
    drafted = [drafted] if isinstance(drafted, int) else list(drafted)
    positions = runs * tokens * sum(d + 1 for d in drafted)
    what = f"{tokens:,} tokens with {max(drafted)} drafts per round" + (f", {runs:,} runs" if runs > 1 else "")
    if vocab_size:  # memory first, then time
        check(tokens * (max(drafted) + 1) * vocab_size, f"{what} over {vocab_size} tokens", lower,
              as_budget(limit, LIMITS.generate_work), "recorded probabilities")
    check(positions, what, lower, as_budget(limit, LIMITS.gpt_positions), "target positions")
