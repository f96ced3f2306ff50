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

from .rule import CORRECT


class WorkRefused(ValueError):
    """A computation refused before it started; the message is one line."""


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


def _sci(x) -> str:
    return f"{float(x):.1e}" if x < 1e300 else f"10^{int(math.log10(x))}"


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
    >>> check(3 * 10**7, "this", "γ", b)
    Traceback (most recent call last):
    ...
    specsim.bounds.WorkRefused: this means ~3.0e+07 outcomes; the limit is 10,000,000: lower γ, or raise it with --max-work 30000000
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


def _budget(limit, default: int | None = None) -> Budget:
    """``limit`` as a Budget: None -> ``default`` (or the exact-work limit); an int -> that, unraisable;
    a Budget for an exact check -> itself; a Budget for another limit (``default``) -> scaled."""
    if isinstance(limit, Budget):
        return limit if default is None else limit.scaled(default)
    if default is not None:  # an int limit is an exact-step one: the other limits stay as they are
        return Budget(default)
    return Budget(LIMITS.exact_work if limit is None else limit)


def check(work, what: str, lower: str, limit=None, unit: str = "outcomes") -> None:
    """Raise ``WorkRefused`` when ``work`` is over ``limit`` (an int, a ``Budget``; default ``LIMITS.exact_work``)."""
    budget = _budget(limit)
    if work > budget.steps:
        raise WorkRefused(f"{what} means ~{_sci(work)} {unit}; the limit is {budget.steps:,}: "
                          f"lower {lower}{budget.hint(work)}")


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
    """Outcomes one exact chain round enumerates with at most ``vocab_size`` drafts per position.

    Without ``p_branch``: V^(gamma + 1), the plain upper bound. With it: every
    prefix of accepted drafts (b^i of length i) emits up to ``p_branch``
    replacement or bonus tokens. (``specsim.schemes.Chain.round_work`` reads it.)
    """
    if p_branch is None:
        return vocab_size ** (gamma + 1)
    return p_branch * _geom(vocab_size, gamma)


def _node_work(b: int, width: int, distinct: bool) -> int:
    """Child draws one tree node enumerates: i.i.d. pools its rejections (width x b);
    distinct keeps one state per tried set (at most b^j ordered tries at child j)."""
    if not distinct:
        return width * b
    return sum(min(b ** j, 10**12) * b for j in range(min(width, b)))


def tree_round_work(s: Shape, widths, distinct: bool) -> int:
    """Outcomes + node work of one tree round: b^i accepted prefixes at depth i
    (``specsim.schemes.Tree.round_work`` reads it)."""
    total, prefixes = 0, 1
    for w in widths:
        total += prefixes * (_node_work(s.branch, w, distinct) + s.p_branch)
        prefixes = min(prefixes * s.branch, 10**15)  # any drafted token can be the accepted child
    return total + prefixes * s.p_branch


# -- the work of a scheme ------------------------------------------------------
# A scheme (``specsim.schemes``: Chain, Block, Tree) states the work of one enumerated round itself,
# ``scheme.round_work(shape)``; every check below asks it, so a new scheme needs no new guard. This
# module sits below the schemes and never imports them: it reads ``name``, ``kind``, ``depth``,
# ``drafted_tokens``, ``round_work`` (and a tree's ``shape``). Measured on this machine (V 4-8,
# γ 4-7, tree 2,2,1): one unit of ``round_work`` takes 15-40 us for a chain, a block and a tree
# alike, so one constant (ROUND_STEPS) turns it into steps for every scheme.

class _GammaChain:
    """A plain int γ read as a chain of γ drafts, for callers that still pass an int (``scheme_of``)."""

    lower, size, kernel_draw = ("γ",), "γ", 1

    def __init__(self, gamma: int):
        self.gamma = self.depth = self.drafted_tokens = self.tested = gamma
        self.name = f"chain:{gamma}"

    def round_work(self, s: Shape) -> int:
        return round_work(s.branch, self.gamma, s.p_branch)

    def prefix_work(self, s: Shape, depth: int) -> int:
        return round_work(s.branch, min(depth, self.gamma), s.p_branch)


def scheme_of(x):
    """A scheme value as it is; an int γ as a chain of γ drafts (what ``schemes.as_scheme`` gives)."""
    if isinstance(x, bool) or not (isinstance(x, int) or hasattr(x, "round_work")):
        raise ValueError(f"not a verification scheme: {x!r}")
    return _GammaChain(x) if isinstance(x, int) else x


def _joint_work(s: Shape, scheme, n: int) -> int:
    """Outcomes of ``exact.speculative_joint`` plus ``exact.target_joint`` for one context."""
    c = max(s.branch, s.p_branch)
    total = c * _geom(c, n)  # target joint
    for m in range(1, n + 1):  # memo keys (state, m): truncated round + splicing the tails
        states = min(s.states, _geom(c, n - m))
        total += states * (scheme.prefix_work(s, m - 1) + m * c ** m)
    return total


ROUND_STEPS = 5  # a full round's outcome costs ~5x a joint's (draft loop, p/q, residual): measured


def exact_work(model, scheme=1, n_tokens: int = 0, schemes=None, contexts: int = 1,
               rounds: int = 0, rules: int = 1, power: int = 1) -> float:
    """Predicted cost of an exact computation, in steps: outcomes x number cost (x ROUND_STEPS in rounds).

    ``scheme`` (or several, ``schemes``; an int γ is a chain): how a round is verified;
    rounds: full rounds enumerated per rule (``round`` does 2, ``sample --check`` 1, a judged rule 2);
    n_tokens, contexts: joints for a proof (``check_exactness``) or a lab, per scheme;
    rules: how many rules are evaluated (the pitfalls lab runs all of them).
    """
    s = shape(model, power)
    schemes = [scheme_of(x) for x in (schemes if schemes is not None else [scheme])]
    outcomes = ROUND_STEPS * rounds * rules * max(x.round_work(s) for x in schemes)
    if n_tokens:
        outcomes += contexts * rules * sum(_joint_work(s, x, n_tokens) for x in schemes)
    g = max(x.depth for x in schemes)  # rows multiplied along one path: a round's γ + 1, a joint's N + min(γ, N) + 1
    depth = max(g + 1, n_tokens + min(g, n_tokens) + 1 if n_tokens else 0)
    return outcomes * number_cost(s.digits * depth)


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


def check_digits(model, positions: int, what: str, lower: str, n_tokens: int = 0, power: int = 1) -> None:
    """Refuse, before any work, results whose probabilities would have too many digits to show."""
    digits = result_digits(model, positions, n_tokens, power)
    if digits > LIMITS.result_digits:
        raise WorkRefused(f"{what} gives probabilities of up to ~{digits:,} digits; the limit is "
                          f"{LIMITS.result_digits:,} digits: lower {lower}, or use a model with shorter fractions")


def _lower(schemes, n_tokens: int = 0) -> str:
    """What a person lowers: γ, or a tree's widths and depth (and N for a joint)."""
    words = list(max((x.lower for x in schemes), key=len)) + (["N"] if n_tokens else [])
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"


def _names(schemes) -> str:
    names = [x.name for x in schemes]
    return names[0] if len(names) == 1 else f"{len(names)} schemes ({names[0]} .. {names[-1]})"


def check_round(model, scheme, limit=None, rounds: int = 1, power: int = 1) -> None:
    """Refuse ``rounds`` exact rounds of ``scheme`` (a scheme value, or an int γ for a chain) on
    ``model`` when they are too large (``limit``: an int or a ``Budget``)."""
    scheme = scheme_of(scheme)
    what = f"a round of {scheme.name} over {len(model.vocab)} tokens"
    lower = _lower([scheme])
    check_digits(model, scheme.tested, what, lower, power=power)
    check(exact_work(model, scheme, rounds=rounds, power=power), what, lower, limit, "steps")


def check_joint(model, n_tokens: int, schemes, contexts: int = 1, limit=None,
                rules: int = 1, rounds: int = 0, power: int = 1) -> None:
    """Refuse exact n-token joints of these schemes (a proof, a lab: ``rules`` rules, each with
    ``rounds`` full rounds too) from ``contexts`` contexts that are too large."""
    schemes = [scheme_of(x) for x in schemes]
    work = exact_work(model, n_tokens=n_tokens, schemes=schemes, contexts=contexts, rounds=rounds,
                      rules=rules, power=power)
    what = f"{n_tokens} token(s) with {_names(schemes)} over {len(model.vocab)} tokens from {contexts} context(s)"
    what += f", {rules} rules" if rules > 1 else ""
    lower = _lower(schemes, n_tokens)
    # a correct rule's joints equal the target's (N rows); broken rules and rounds show round-sized numbers
    positions = max(x.tested for x in schemes) + n_tokens - 1 if rules > 1 or rounds else 0
    check_digits(model, positions, what, lower, n_tokens, power)
    check(work, what, lower, limit, "steps")


def temperature_power(tau) -> int:
    """k when an exact temperature tau = 1/k raises rows to the k-th power, else 1."""
    if tau is None or not isinstance(tau, Fraction) or tau == 0:
        return 1
    inverse = 1 / tau
    return inverse.numerator if inverse.denominator == 1 else 1


# -- sampled work --------------------------------------------------------------
# Draw costs of montecarlo's vectorized kernels, relative to the chain kernel's, are each scheme's
# ``kernel_draw`` (None: no kernel). A scheme or a rule without a kernel is sampled one round at a time.
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


def check_sample(model, scheme, rounds: int, rule=None, limit=None) -> None:
    """Refuse a Monte-Carlo run of ``rounds`` rounds of ``scheme`` with ``rule`` (None: the correct
    one) that would take minutes or not fit in memory (``limit``: a Budget raises ``sample_work``,
    ``loop_work`` and ``sample_outcomes`` alike). The correct rule on a chain or a block runs a
    vectorized kernel (``scheme.kernel_draw``); anything else the per-round loop, as ``montecarlo.sample_rounds``."""
    scheme = scheme_of(scheme)
    check(rounds, f"--rounds {rounds:,}", "--rounds", LIMITS.sample_rounds, "rounds")
    s = shape(model)
    what = f"{rounds:,} rounds of {scheme.name} over {s.vocab} tokens"
    lower = "--rounds or " + scheme.size
    if (rule is None or rule is CORRECT) and scheme.kernel_draw:
        check(sample_work(rounds, scheme.depth, s.vocab, scheme.kernel_draw), what, lower,
              _budget(limit, LIMITS.sample_work), "draws")
    else:
        why = "a broken rule" if scheme.kernel_draw else "no vectorized kernel"
        check(loop_work(rounds, scheme.drafted_tokens, s.vocab), f"{what} ({why}: one round at a time)", lower,
              _budget(limit, LIMITS.loop_work), "draws")
    distinct = min(rounds, scheme.round_work(s))
    check(distinct, what, lower, _budget(limit, LIMITS.sample_outcomes), "distinct outcomes to count")


BENCH_RUNS = 10  # a benchmark repeats its runs: all of them together may take this many single runs' limit


def check_bench_sample(model, scheme, rounds: int, loop_rounds: int, repeats: int, loop_repeats: int,
                       limit=None) -> None:
    """Refuse a ``bench-sample`` that would take minutes: the vectorized run is checked as ``sample``
    checks it, the per-round loop's run against ``loop_work``, and the repeats of each run together
    against ``BENCH_RUNS`` times that run's limit (``scheme``: a chain or a block, or an int γ).

    >>> from specsim.toy import load_model
    >>> check_bench_sample(load_model("seed"), 3, 10**6, 10**5, 5, 3)
    >>> check_bench_sample(load_model("seed"), 3, 10**6, 10**5, 5, 50)
    Traceback (most recent call last):
    ...
    specsim.bounds.WorkRefused: 50 loop runs of 2,187,500 draws each means ~1.1e+08 draws; the limit is 50,000,000: lower --loop-rounds or --loop-repeats
    """
    scheme = scheme_of(scheme)
    check_sample(model, scheme, rounds, limit=limit)
    v = shape(model).vocab
    loop = loop_work(loop_rounds, scheme.drafted_tokens, v)
    check(loop, f"a loop run of {loop_rounds:,} rounds of {scheme.name} over {v} tokens", "--loop-rounds",
          _budget(limit, LIMITS.loop_work), "draws")
    for work, runs, base, what, flags in (
            (sample_work(rounds, scheme.depth, v, scheme.kernel_draw), repeats, LIMITS.sample_work, "vectorized",
             "--rounds or --repeats"),
            (loop, loop_repeats, LIMITS.loop_work, "loop", "--loop-rounds or --loop-repeats")):
        check(work * runs, f"{runs} {what} runs of {work:,} draws each", flags, _budget(limit, base * BENCH_RUNS),
              "draws")


def check_generate(model, scheme, tokens: int, limit=None) -> None:
    """Refuse a recorded generation that would be too long or too large (``scheme``: or an int γ)."""
    scheme = scheme_of(scheme)
    check(tokens, f"--tokens {tokens:,}", "--tokens", LIMITS.generate_tokens, "tokens")
    v = len(model.vocab)
    check(tokens * (scheme.drafted_tokens + 1) * v, f"{tokens:,} tokens with {scheme.name} over {v} tokens",
          "--tokens or " + _lower([scheme]), _budget(limit, LIMITS.generate_work), "recorded probabilities")


def check_gpt(tokens: int, drafted, vocab_size: int | None = None, runs: int = 1, limit=None,
              lower: str = "--tokens or γ") -> None:
    """Refuse a tiny-GPT generation or bench, any scheme, before torch loads anything.

    ``drafted``: the drafted tokens per round of each scheme run (γ for a chain or a block, the
    tree's drafted tokens, 0 for plain decoding); ``runs``: generations of each (prompts x repeats).
    At most one round per token: target positions <= runs x tokens x sum(drafted + 1). With
    ``vocab_size``, a generation's trace (one run) keeps (drafted + 1) rows of V probabilities a round.

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
              _budget(limit, LIMITS.generate_work), "recorded probabilities")
    check(positions, what, lower, _budget(limit, LIMITS.gpt_positions), "target positions")


# -- numbers on the way in -----------------------------------------------------
_DECIMAL = re.compile(r"[+-]?(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?")
_INTEGER = re.compile(r"[+-]?\d+")
_WHOLE = re.compile(r"[+-]?[0-9]+")  # ASCII digits only: str.isdigit() and int() also take '４' or '٣'


def parse_whole(text, field: str, digits: int = 30, noun: str = "an integer") -> int:
    """An integer written in ASCII digits (an optional sign), at most ``digits`` of them.

    Anything else is a one-line ValueError naming ``field`` (and a character that is not ASCII).

    >>> parse_whole(" 12 ", "gamma")
    12
    >>> parse_whole("\uff14", "gamma")
    Traceback (most recent call last):
    ...
    ValueError: gamma '４' is not an integer (U+FF14 FULLWIDTH DIGIT FOUR is not an ASCII digit)
    """
    import unicodedata
    t = str(text).strip()
    if not _WHOLE.fullmatch(t):
        odd = next((c for c in t if not c.isascii()), None)
        why = f" (U+{ord(odd):04X} {unicodedata.name(odd, 'a character')} is not an ASCII digit)" if odd else ""
        raise ValueError(f"{field} {t[:40]!r} is not {noun}{why}")
    if len(t.lstrip("+-")) > digits:
        raise ValueError(f"{field} has {len(t.lstrip('+-')):,} digits; at most {digits} are read")
    return int(t)


ECHO = 60  # characters of an input an error message repeats


def echo(text, limit: int = ECHO) -> str:
    """An input as an error message repeats it: its repr, cut to ``limit`` characters with its length said.

    >>> echo("2,2,1"), echo("x" * 100, 5)
    ("'2,2,1'", "'xxxxx...' (100 characters)")
    """
    text = str(text)
    return repr(text) if len(text) <= limit else f"{repr(text[:limit])[:-1]}...{repr(text)[-1]} ({len(text):,} characters)"


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
