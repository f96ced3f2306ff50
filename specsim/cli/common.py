"""Helpers shared by the CLI modules: argument types, the --gammas grammar, numbers as text, output.

Everything a command parses or prints the same way as another command lives
here once: the γ check (its maximum is ``specsim.bounds.LIMITS.gamma``), the
``--gammas`` grammar, the temperature convention and the number formatter.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from fractions import Fraction

from .. import bounds, transforms
from ..limits import LIMITS
from ..parsing import parse_ranges, parse_whole

GAMMAS_HELP = "draft lengths: a range 1-4, a list 2,4,8, or both, 1-3,8"
TEMPERATURE_HELP = "temperature τ >= 0 on p and q alike; 0 means greedy (argmax)"


class UsageError(ValueError):
    """Bad input from the command line; printed as one line, exit code 2."""


# -- numbers as text ----------------------------------------------------------

def num(x, form: str = "exact", digits: int = 4) -> str:
    """The one number formatter of the CLI.

    ``exact``: a rational as a fraction ("1659/500", "1", "0"), a float to
    ``digits`` significant digits; ``decimal``: ``digits`` decimals ("3.3180");
    ``both``: "1659/500 (3.3180)"; ``short``: the shortest decimal ("0.8").
    A string is returned as it is.

    >>> num(Fraction(1659, 500)), num(Fraction(1659, 500), "decimal"), num(Fraction(1659, 500), "both")
    ('1659/500', '3.3180', '1659/500 (3.3180)')
    >>> num(3), num(0.123456), num(Fraction(4, 5), "short"), num(2.5, "decimal", 2)
    ('3', '0.1235', '0.8', '2.50')
    """
    if isinstance(x, str):
        return x
    if form == "exact":
        if isinstance(x, float):
            return f"{x:.{digits}g}"
        try:  # the work estimate refuses longer results first (bounds.check_digits); this is the backstop
            return str(Fraction(x))
        except ValueError:
            raise ValueError(f"a probability has over {LIMITS.result_digits:,} digits, too long to show: "
                             "use a model with shorter fractions") from None
    if form == "decimal":
        return f"{float(x):.{digits}f}"
    if form == "both":
        return f"{num(x)} ({num(x, 'decimal', digits)})"
    if form == "short":
        return f"{float(x):g}"
    raise ValueError(f"unknown number form {form!r}")


# -- argument types -----------------------------------------------------------

def argtype(name: str, parse):
    """An argparse type from ``parse``; its ValueError becomes argparse's one-line error."""
    def check(text):
        try:
            return parse(text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
    check.__name__ = name
    return check


def int_in_range(name: str, lo: int, hi: int):
    """argparse type: an integer in [lo, hi] (ASCII digits) with a message naming the option."""
    def parse(text):
        try:
            value = parse_whole(text, name)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
        if not lo <= value <= hi:
            raise argparse.ArgumentTypeError(f"{name} must be between {lo} and {hi}, got {value}")
        return value
    parse.__name__ = name
    return parse


# -- the work limit a person can raise -------------------------------------------

MAX_WORK_ENV = "SPECSIM_MAX_WORK"


def parse_max_work(text: str) -> int:
    """--max-work STEPS (or $SPECSIM_MAX_WORK): a whole number of exact steps, 1..LIMITS.max_work.

    >>> parse_max_work("20000000")
    20000000
    >>> parse_max_work("1e9")
    Traceback (most recent call last):
    ...
    ValueError: max-work (--max-work or SPECSIM_MAX_WORK) '1e9' is not a whole number of steps
    """
    value = parse_whole(text, f"max-work (--max-work or {MAX_WORK_ENV})", noun="a whole number of steps")
    if not 1 <= value <= LIMITS.max_work:
        raise ValueError(f"max-work (--max-work or {MAX_WORK_ENV}) must be from 1 to {LIMITS.max_work:,} "
                         f"steps, got {value:,}")
    return value


def max_work_arg(p) -> None:
    """--max-work STEPS on a command that does bounded work; ``args.max_work`` is always an int.

    Its default is $SPECSIM_MAX_WORK when set, else ``LIMITS.cli_work`` (about a minute of exact
    work); argparse parses a string default with the same type, so a bad variable is one line too.
    """
    p.add_argument("--max-work", dest="max_work", metavar="STEPS", type=argtype("max-work", parse_max_work),
                   default=os.environ.get(MAX_WORK_ENV, str(LIMITS.cli_work)),
                   help=f"the work limit in exact steps (default ${MAX_WORK_ENV} or {LIMITS.cli_work:,}, about "
                        "a minute here); the command's other limits (sampled draws, block chains, GPT "
                        "positions) scale with it")


def budget(args) -> bounds.Budget:
    """The work this command may do: ``args.max_work`` steps, raisable with --max-work."""
    return bounds.cli_budget(getattr(args, "max_work", None))


def number(name: str, lo=None, hi=None, exact: bool = False):
    """argparse type: a number (exact Fraction when ``exact``) with optional bounds."""
    def parse(text):
        from ..parsing import parse_number
        try:  # bounded: no inf/nan, at most LIMITS.option_digits digits, exponent within LIMITS.exponent
            value = parse_number(text, name, LIMITS.option_digits)
        except ValueError as e:
            why = f"{name} must be a number, got {text[:40]!r}" if "not a number" in str(e) else str(e)
            raise argparse.ArgumentTypeError(why) from None
        value = value if exact else float(value)
        if lo is not None and value < lo:
            raise argparse.ArgumentTypeError(f"{name} must be >= {lo}, got {text}")
        if hi is not None and value > hi:
            raise argparse.ArgumentTypeError(f"{name} must be <= {hi}, got {text}")
        return value
    parse.__name__ = name
    return parse


def check_gamma(value: int, name: str = "gamma") -> int:
    """The one γ check: an integer in 1..LIMITS.gamma, else ValueError naming ``name``."""
    if not 1 <= value <= LIMITS.gamma:
        raise ValueError(f"{name} must be between 1 and {LIMITS.gamma}, got {value}")
    return value


def gamma_type(name: str = "gamma"):
    """argparse type: one draft length, checked by ``check_gamma``."""
    def parse(text):
        return check_gamma(parse_whole(text, name), name)
    return argtype(name, parse)


gamma_arg = gamma_type("gamma")

SEED_LIMIT = 2**63  # every --seed: 0 <= seed < 2^63 (fits numpy's and torch's seeding alike)


def parse_seed(text: str) -> int:
    """The one seed rule: an integer in [0, 2^63), else ValueError naming --seed.

    >>> parse_seed("7")
    7
    >>> parse_seed("-1")
    Traceback (most recent call last):
    ...
    ValueError: seed must be an integer from 0 to 2^63 - 1, got '-1'
    """
    text = text.strip()
    if not (text.isascii() and text.isdigit() and len(text) <= 19 and int(text) < SEED_LIMIT):
        raise ValueError(f"seed must be an integer from 0 to 2^63 - 1, got {text[:40]!r}")
    return int(text)


seed_arg = argtype("seed", parse_seed)


def parse_gammas(text: str) -> list[int]:
    """--gammas: comma-separated items, each a γ or a range A-B, every γ in 1..LIMITS.gamma
    (``specsim.parsing.parse_ranges``, the one list grammar).

    >>> parse_gammas("1-4"), parse_gammas("2,4,8"), parse_gammas("1-3,8"), parse_gammas(" 3 ")
    ([1, 2, 3, 4], [2, 4, 8], [1, 2, 3, 8], [3])
    """
    return parse_ranges(text, "gammas", 1, LIMITS.gamma)


gammas_arg = argtype("gammas", parse_gammas)


# -- the verification scheme --------------------------------------------------------
# One option, --scheme, names the whole scheme in the grammar of ``specsim.schemes``
# (chain:4, block:4, tree:2,2,1, tree:2,2,1:distinct). The historical flags --gamma G,
# --verify block, --tree W and --drafts D stay as shorthand for the same value, built in one
# place (``specsim.schemes.from_flags``); --scheme with any of them is refused in one line.
# The shorthand flags default to None so that "given" can be told from "default".

SHORTHAND = ("gamma", "gammas", "verify", "tree", "drafts")  # the flags --scheme replaces


def _schemes():
    from .. import schemes  # the scheme classes, imported when a command parses or runs one
    return schemes


def scheme_help(many: bool = False) -> str:
    """The --scheme help line: the grammar, and what the shorthand flags mean."""
    what = "verification schemes separated by ';'" if many else "the verification scheme"
    return (f"{what}: {_schemes().grammar_help()}; --gamma G is chain:G, --verify block makes it "
            "block:G, --tree W1,W2 is tree:W1,W2 and --drafts D adds :D")


scheme_arg = argtype("scheme", lambda text: _schemes().parse(text))  # one scheme
schemes_arg_list = argtype("scheme", lambda text: _schemes().parse_list(text))  # 'a;b;c'


def add_scheme_option(p, many: bool = False, flag: str = "--scheme") -> None:
    """--scheme SCHEME (``args.scheme``: a scheme, or a list with ``many``), help showing the grammar.

    ``flag`` names the option (``gpt bench`` may call its list --schemes); the value is always
    ``args.scheme``, which ``scheme_from_args`` / ``schemes_from_args`` read.
    """
    p.add_argument(flag, dest="scheme", type=schemes_arg_list if many else scheme_arg,
                   metavar="SCHEMES" if many else "SCHEME", help=scheme_help(many))


def _tree_shape(text):
    from ..schemes.tree import parse_shape
    return parse_shape(text)


def add_shorthand_options(p, gamma: int | None = 3, verify: bool = True, tree: bool = True,
                          gammas: str | None = None) -> None:
    """The shorthand flags (default None: ``scheme_from_args`` fills in ``gamma`` and the rest).

    ``gammas``: also add --gammas (a list, exclusive with --gamma), its default shown in the help.
    """
    g = p.add_mutually_exclusive_group() if gammas else p
    g.add_argument("--gamma", type=gamma_arg, default=None,
                   help="draft length γ: shorthand for --scheme chain:γ" + (f" (default {gamma})" if gamma else ""))
    if gammas:
        g.add_argument("--gammas", type=gammas_arg, default=None,
                       help=GAMMAS_HELP + f": one chain each (default {gammas})")
    if verify:
        p.add_argument("--verify", choices=["token", "block"], default=None,
                       help="token-wise (default) or block verification of the chain: --verify block is block:γ")
    if tree:
        p.add_argument("--tree", type=argtype("tree", _tree_shape), metavar="W1,W2,...",
                       help="verify a draft tree of widths W1,W2,...: shorthand for tree:W1,W2,...")
        p.add_argument("--drafts", choices=["iid", "distinct"], default=None,
                       help="tree children drafted iid (with replacement, default) or distinct")


def _given_shorthand(args) -> list:
    return [f"--{name}" for name in SHORTHAND if getattr(args, name, None) is not None]


def scheme_from_args(args, gamma: int = 3):
    """The scheme a command runs: ``args.scheme``, else the shorthand flags (``gamma`` when no --gamma).

    --scheme with a shorthand flag is a UsageError (one line, exit 2), as is --tree with --verify block.
    """
    return schemes_from_args(args, [gamma])[0]


def schemes_from_args(args, gammas=(3,)) -> list:
    """The schemes a command runs (a list): --scheme (one or a ';'-list), else --gamma / --gammas
    (default ``gammas``), --verify, --tree and --drafts through ``specsim.schemes.from_flags``."""
    given = getattr(args, "scheme", None)
    if given is not None:
        flags = _given_shorthand(args)
        if flags:
            raise UsageError(f"--scheme and {flags[0]} do not combine: --scheme names the whole scheme "
                             f"({_schemes().grammar_help()})")
        return list(given) if isinstance(given, list) else [given]
    if getattr(args, "gamma", None) is not None:
        gammas = [args.gamma]
    elif getattr(args, "gammas", None) is not None:
        gammas = args.gammas
    verify, tree = getattr(args, "verify", None) or "token", getattr(args, "tree", None)
    drafts = getattr(args, "drafts", None) or "iid"
    try:
        if tree is not None:
            return [_schemes().from_flags(None, verify, tree, drafts)]
        return [_schemes().from_flags(g, verify, None, drafts) for g in gammas]
    except ValueError as e:
        raise UsageError(str(e)) from None


def scheme_text(scheme) -> str:
    """A scheme in a readable output: "γ = 3" for a chain (as the commands always wrote it),
    "γ = 3, block verification" for a block, "scheme tree:2,2 (6 drafted tokens)" for a tree."""
    return scheme.label()


def scheme_keys(scheme) -> dict:
    """A scheme in a command's JSON: its grammar name, its depth as "gamma", its drafted tokens, and
    the keys the historical flags printed ("verify": "block"; "tree" and "drafts" for a tree)."""
    depth = scheme.depth  # a chain's γ; a tree's longest path of drafts (not its drafted tokens)
    # The key stays "gamma" though it holds the depth: the name the historical --gamma flag gave it, kept so
    # that every command's JSON stays byte-identical for the scripts that read it.
    return {"scheme": scheme.name, "gamma": depth, "drafted_tokens": scheme.drafted_tokens} | scheme.json_keys()


# The temperature convention, the same on the toy and the torch path: a number
# >= 0 (a Fraction when the text is exact, e.g. "1/2"), where 0 means greedy.
temperature_arg = argtype("temperature", transforms.parse_temperature)
top_p_arg = argtype("top-p", transforms.parse_top_p)  # (0, 1], as a Fraction


# -- models and contexts ----------------------------------------------------------

def load_model_arg(spec: str):
    """Load MODEL (a preset name or a JSON path); errors become UsageError."""
    from ..toy import ModelError, load_model
    try:
        return load_model(spec)
    except ModelError as e:
        raise UsageError(str(e)) from None


def parse_context(model, text):
    """The --context option, or the model's first context when absent."""
    from ..toy import ModelError
    if text is None:
        return model.contexts()[0]
    try:
        return model.parse_context(text)
    except ModelError as e:
        raise UsageError(str(e)) from None


# -- output ----------------------------------------------------------------

def print_json(obj) -> None:
    json.dump(obj, sys.stdout, indent=2)
    sys.stdout.write("\n")


def report(args, result, lines) -> int:
    """A command's result: JSON with ``--json``, else each line ``lines(result)`` yields; exit code 0."""
    if getattr(args, "json", False):
        print_json(result)
    else:
        for line in lines(result):
            print(line)
    return 0


def shown(text) -> str:
    """``text`` with control characters (ANSI escapes included) written as escapes, safe for a terminal.

    >>> print(shown(chr(27) + "[31mred" + chr(9)))
    \\x1b[31mred\\t
    """
    text = str(text)
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)


def inert(text) -> str:
    """Generated text for a terminal: every control character written as an escape (a checkpoint's
    tokenizer can map a token to ``ESC ] 0 ; title BEL``), newlines kept as line breaks.

    >>> print(inert("a" + chr(27) + "]0;PWNED" + chr(7) + chr(10) + "b"))
    a\\x1b]0;PWNED\\x07
    b
    """
    return "\n".join(shown(line) for line in str(text).split("\n"))


def table(rows, headers) -> str:
    """A plain text table: first column left-aligned, the others right-aligned; cells pass ``shown``."""
    cells = [[shown(h) for h in headers]] + [[shown(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    def fmt(row):
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                         for i, (c, w) in enumerate(zip(row, widths))).rstrip()
    lines = [fmt(r) for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths).rstrip())
    return "\n".join(lines)


@contextlib.contextmanager
def progress_bar(total: int, unit: str, threshold: int = 10**6):
    """``update(n)`` that keeps a one-line progress count on stderr, when it is a terminal and the
    work is long (``total`` >= ``threshold``); else None. The line is erased at the end."""
    if total < threshold or not sys.stderr.isatty():
        yield None
        return
    done = 0

    def update(n: int) -> None:
        nonlocal done
        done += n
        sys.stderr.write(f"\r{done:,} / {total:,} {unit} ({100 * done // total}%)")
        sys.stderr.flush()

    try:
        yield update
    finally:
        sys.stderr.write("\r" + " " * (2 * len(f"{total:,}") + len(unit) + 12) + "\r")
        sys.stderr.flush()
