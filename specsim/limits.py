"""The limits of every entry point, and the units work is counted in.

Exact enumeration grows exponentially in gamma and in the number of tokens N,
and each Fraction operation grows with the digits of the numbers, so every
entry point asks ``specsim.bounds`` (the checks) before it starts; the limits
they compare with live here, in ``Limits``, once, with the sizes of a model
that drive the work (``Shape``) and the cost of its numbers. Each scheme
states its own work (``scheme.round_work``, ``specsim.schemes``). This module
sits in the base layer and knows no scheme.

The unit of exact work is one enumerated outcome times the relative cost of
one Fraction operation on the numbers involved (1 for small fractions).

>>> shape(__import__("specsim.toy").toy.load_model("seed"))
Shape(vocab=3, branch=3, p_branch=3, states=3, digits=2)
>>> number_cost(380)
2.0
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction


@dataclass(frozen=True)
class Limits:
    gamma: int = 64  # the largest draft length any entry point accepts
    exact_work: int = 200_000  # estimated outcomes (x number cost) of one exact computation (~1-2 s)
    interactive_work: int = 200_000  # the same budget for an app page (the app never raises it)
    # The CLI's default (--max-work, SPECSIM_MAX_WORK): about a minute of exact work. Measured on this
    # 2-core machine while other jobs shared it: chain proofs and rounds run 0.8-2.2e5 estimated steps/s
    # (16-token random model, γ 4, N 3, every context: 1.6e6 steps in 8.9 s; V 6 round γ 6: 1.7e6 in
    # 7.5 s; V 3 order 2, γ 1-4, N 5: 1.9e5 in 2.3 s), trees 2-4e4 steps/s. 5e6 steps: 25-60 s for chains.
    cli_work: int = 5_000_000
    max_work: int = 10**11  # the largest --max-work: days of work, beyond any honest use
    result_digits: int = 4300  # digits of a probability a result may show (Python's int-to-str limit)
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
    loop_work: int = 5 * 10**6  # cheap draws of the per-round loop (broken rules, trees; ~10 s): loop_work()
    sample_outcomes: int = 10**7  # distinct outcomes a sample may have to hold in memory
    generate_tokens: int = 10_000  # generate --tokens
    generate_work: int = 10**6  # tokens x (gamma + 1) x V probabilities kept by a generation trace (~5 s)
    # the tiny GPT (gpt_work()): target positions of a generation or a bench, a minute on this CPU
    # (generate --tokens 4096 --gamma 64: 266,240 positions in 96 s; a 5-position verify pass ~3.5 ms)
    gpt_positions: int = 200_000


LIMITS = Limits()



@dataclass(frozen=True)
class Budget:
    """The work one entry point may do, and who may raise it.

    ``steps``: the limit of an exact check (``LIMITS.exact_work`` units); ``scale``: how far a
    person raised the command's limits, applied alike to its other ones (block chains, sampled
    draws, GPT positions; ``scaled``); ``flag``: the option that raises them (the CLI's
    ``--max-work``), named in a refusal with the value that would let the work run. The app
    passes plain ints (``LIMITS.interactive_work``) and never names a flag.

    >>> b = cli_budget(10_000_000)
    >>> b.steps, b.scale, b.scaled(LIMITS.loop_work).steps
    (10000000, 2.0, 10000000)
    >>> b.hint(3 * 10**7)
    ', or raise it with --max-work 30000000'
    """

    steps: int = LIMITS.exact_work
    scale: float = 1.0
    flag: str | None = None

    def scaled(self, limit: int) -> "Budget":
        """Another limit of the same command, raised as far as this one."""
        return Budget(int(limit * self.scale), self.scale, self.flag)

    def hint(self, work) -> str:
        """', or raise it with --max-work N' when a person may raise it that far, else ''."""
        if not self.flag:
            return ""
        need = math.ceil(work / self.steps * self.scale * LIMITS.cli_work) if self.steps else math.inf
        return f", or raise it with {self.flag} {need}" if need <= LIMITS.max_work else ""


def cli_budget(max_work: int | None = None, flag: str = "--max-work") -> Budget:
    """The CLI's budget: ``max_work`` exact steps (default ``LIMITS.cli_work``, about a minute)."""
    steps = LIMITS.cli_work if max_work is None else max_work
    return Budget(steps, steps / LIMITS.cli_work, flag)


def as_budget(limit, default: int | None = None) -> Budget:
    """``limit`` as a Budget: None -> ``default`` (or the exact-work limit); an int -> that, unraisable;
    a Budget for an exact check -> itself; a Budget for another limit (``default``) -> scaled."""
    if isinstance(limit, Budget):
        return limit if default is None else limit.scaled(default)
    if default is not None:  # an int limit is an exact-step one: the other limits stay as they are
        return Budget(default)
    return Budget(LIMITS.exact_work if limit is None else limit)


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


def digits_of(x) -> int:
    """Digits of the larger of a number's numerator and denominator (1 for anything that is not a number)."""
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
    digits = max((digits_of(x) for t in (target, draft) for row in t.values() for x in row), default=1)
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


def geom(b: int, n: int) -> int:
    """1 + b + ... + b^n."""
    return n + 1 if b == 1 else (b ** (n + 1) - 1) // (b - 1)


ROUND_STEPS = 5  # a full round's outcome costs ~5x a joint's (draft loop, p/q, residual): measured


def result_digits(model, positions: int, n_tokens: int = 0, power: int = 1) -> int:
    """Most digits a shown probability may reach: a round over ``positions`` drafted tokens in a row
    (γ, or a tree path's widths added up), or an ``n_tokens`` joint.

    Measured on models with D-digit rows (2-4 tokens, γ 1-3, trees up to 2,2 and 1,1,1): a round's
    probabilities reach 2D at γ 1, then grow by up to ~(b + 1) D per position (b drafts per
    position: each acceptance ratio and residual brings its own denominators), bounded here by
    2D (1 + b (positions - 1)); a joint of N tokens is a product of N rows: at most N D digits.
    """
    s = shape(model, power)
    b = max(s.branch, s.p_branch)
    digits = s.digits * n_tokens
    if positions:
        digits = max(digits, 2 * s.digits * (1 + b * (positions - 1)))
    return digits


def temperature_power(tau) -> int:
    """k when an exact temperature tau = 1/k raises rows to the k-th power, else 1."""
    if tau is None or not isinstance(tau, Fraction) or tau == 0:
        return 1
    inverse = 1 / tau
    return inverse.numerator if inverse.denominator == 1 else 1


# -- sampled work --------------------------------------------------------------
# Draw costs of montecarlo's vectorized kernels, relative to the chain kernel's, are each scheme's
# ``kernel_draw`` (``specsim.schemes``; None: no kernel). A scheme or a rule without a kernel is sampled
# one round at a time.
# One round at a time (``montecarlo.sample_rounds_loop``: draft, then ``scheme.verify``) costs about the
# same per drafted token for every scheme: measured 21-39 us at V 3-8 and 21-34 us at V 64 for chain:3,
# block:3 and trees 2,2,1 / 64 / 6,6 on Fraction rows, ~LOOP_DRAW cheap draws each.
LOOP_DRAW = 5


def sample_work(rounds: int, gamma: int, vocab_size: int = 2, kernel_draw: float = 1) -> int:
    """Draws a vectorized Monte-Carlo run makes, in units of one cheap draw: rounds x (gamma + 1),
    x (1 + V / 8) for the rows it searches (measured: ~1 us a draw at V 64, ~0.15 us at V 2-8),
    x10 when outcomes no longer fit in one int64 code ((V + 1)^(gamma + 1) >= 2^62: rows of
    digits are counted instead, measured ~10x slower per draw), x ``kernel_draw`` (the scheme's)."""
    wide = (gamma + 1) * math.log2(vocab_size + 1) >= 62
    per = (1 + vocab_size / 8) * (10 if wide else 1) * kernel_draw
    return math.ceil(rounds * (gamma + 1) * per)


def loop_work(rounds: int, drafted: int, vocab_size: int = 2) -> int:
    """Draws of a per-round loop (one round at a time): rounds x (drafted + 1) x ``LOOP_DRAW``,
    x (1 + V / 32) for the rows each draw reads; ``drafted``: the scheme's drafted tokens."""
    return math.ceil(rounds * (drafted + 1) * LOOP_DRAW * (1 + vocab_size / 32))
