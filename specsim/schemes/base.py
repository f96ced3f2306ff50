"""What every verification scheme shares: the draw, the round's outcome record, the verdict.

A scheme (``Chain``, ``Block``, ``Tree``) is a value with

* ``name``: its grammar string (``chain:4``, ``block:4``, ``tree:2,2,1``,
  ``tree:2,2,1:distinct``), which ``specsim.schemes.parse`` reads back;
* ``drafted_tokens`` and ``depth`` (the most drafts a round can keep);
* ``parents()``: the draft layout, node i's parent or -1 for the root (a
  chain is a path), and ``mask(n)`` / ``positions(n)``, the verification
  mask and position ids over n cached keys;
* ``enumerate(pair, context, rule, limit)``: every outcome of one round
  with its exact probability (a ``RoundDistribution``);
* ``draft(rows, u_draft, rule)``: the drafted tokens, one per node, drawn
  with the given uniforms from the drafter's rows;
* ``verify(drafts, p_rows, q_rows, u_test, u_final, rule)``: the sampled
  decision over plain Python numbers (Fraction or float), a ``Verdict``;
* ``round_work(shape)``: how many outcomes ``enumerate`` touches, for the
  work bound of ``specsim.exact``;
* ``gpt_round``: which part of the tiny GPT's round drafts, lays out and
  keeps it (``specsim.gpt.rounds``: ``"chain"`` or ``"tree"``), and for a
  chain ``capped(g)``, the same scheme with at most g drafts;
* ``check_rule(rule)``: a one-line refusal of a rule it cannot run (a
  tree takes tree rules, a chain chain rules, a block only the correct one).

Row layout, the same for every scheme: ``p_rows[0]`` and ``q_rows[0]`` are
the rows at the root (after the context), ``p_rows[j + 1]`` and
``q_rows[j + 1]`` the rows after draft node j (the context plus the path to
node j). So p_rows has one row per node plus one, which is what the target's
single verification pass returns. A leaf's q row is never read.

Uniforms: ``u_draft[j]`` draws node j, ``u_test[j]`` is node j's test (its
acceptance coin, or for a block the stop coin of position j + 1), and
``u_final`` draws the closing token. A chain's layout is therefore the
historical one (gamma draft uniforms, gamma test uniforms, one final).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from typing import NamedTuple


@dataclass(frozen=True)
class Param:
    """One parameter of a scheme's grammar, as data: ``parse``, ``grammar_help`` (the CLI's ``--scheme`` help)
    and the app's scheme picker all read it, so a scheme declares its grammar once (``Scheme.params``).

    ``type``: "whole" (ASCII digits), "widths" (W1,W2,...), "fraction" (a number such as 0.4 or 2/5, checked
    by the scheme) or "choice" (one of ``choices``); ``low``/``high``: a whole number's range (``high``: an
    int, "gamma" for ``LIMITS.gamma``, or the name of another parameter); ``default``: the value an omitted
    optional parameter takes (None: required); ``metavar``: how the syntax line writes it; ``attr``: the
    scheme's attribute holding it; ``label``, ``help``, ``start`` and ``key``: a picker's label, one-line help,
    starting value and widget key suffix.
    """

    name: str
    type: str
    help: str
    metavar: str = ""
    low: int | None = None
    high: int | str | None = None
    choices: tuple = ()
    default: object = None
    attr: str = ""
    label: str = ""
    start: object = None
    key: str = ""
    noun: str = ""  # a text parameter's name in a picker's one-line refusal ("the tree shape")
    chars: int = 40  # the most characters a picker's text box takes

    def text(self, value) -> str:
        """A value as the grammar writes it: widths joined by commas, a fraction as 0.4 or 1/3, else str."""
        if isinstance(value, tuple):
            return ",".join(map(str, value))
        if isinstance(value, Fraction):
            return stop_text(value)
        return str(value)

    @property
    def shown(self) -> str:
        """How the syntax line writes its value: its metavar, or its choices joined by |."""
        return self.metavar or "|".join(self.choices)

    def upper(self, values: dict | None = None) -> int | None:
        """Its most, with ``high`` read: an int, ``LIMITS.gamma``, or another parameter's value."""
        from ..limits import LIMITS
        if self.high == "gamma":
            return LIMITS.gamma
        if isinstance(self.high, str):
            return None if values is None else values.get(self.high)
        return self.high


def stop_text(t: Fraction) -> str:
    """A threshold as the grammar writes it: a decimal when it has one of at most 6 places, else n/d.

    >>> stop_text(Fraction(2, 5)), stop_text(Fraction(1, 3))
    ('0.4', '1/3')
    """
    for places in range(7):
        if (t * 10 ** places).denominator == 1:
            return str(Decimal(t.numerator) / Decimal(t.denominator))
    return f"{t.numerator}/{t.denominator}"


class Kernel(NamedTuple):
    """A vectorized Monte-Carlo kernel of ``specsim.montecarlo``: its name there and the cost of one of its
    draws relative to the chain kernel's (``specsim.limits.sample_work``)."""

    name: str
    draw: float


class Scheme:
    """What every scheme answers, so that no caller asks which kind it holds (``DESIGN.md``: "ask the
    value, not its kind"). A subclass sets ``kind`` (its family's id, unique), declares its grammar as
    data (``keyword``, ``form``, ``tag``, ``params``: see ``Param``) and answers what differs. Where it is
    registered, one way: ``register(MyScheme)`` (``specsim.schemes.register``, defined below) as the last line
    of the module in ``specsim/schemes/`` that defines it; the package imports every module of its folder,
    so the one registry (``KINDS``, read through ``specsim.schemes.families()``) holds it for the grammar,
    ``--scheme`` help, the budget comparison and the app's scheme picker. (A test registers a class of its
    own the same way and takes it back with ``del KINDS[kind]``.)

    The questions callers ask, with a chain's answers as the defaults:

    * ``iid_gamma``: the γ whose i.i.d. formula is its reference, or None; ``chain_gamma``: its γ when it
      *is* chain:γ (told by γ alone, every chain rule runs on it), or None;
    * ``discarded_drafts(kept, k, n)``: the drafts a round that closed with a correction throws away;
      ``dropped_by_rejection(node, n)``: the later drafts a rejected draft takes with it;
    * ``keeps_by_stop_coins``: a round keeps drafts 1..τ by a stop coin per position (a block), not by
      testing each draft; ``point_mass_drafts``: its drafts are chosen, not sampled, so each is verified
      as a point mass (kept with p'(x), a rejected one removed from p');
    * ``drawn_as``: how a page draws a round: "row" (event by event), "path" (node by node, a path of its
      own length) or "tree"; ``draft_modes``: the drafting modes it can be written with (a fixed tree's
      iid/distinct) and ``in_mode(mode)``; ``layout_from_drafter``: its layout is grown from the drafter's rows;
      ``equal_drafts_baseline``: it is set beside fixed chains drafting as many tokens on average;
    * ``runs(rule)``: whether it runs ``rule`` (``check_rule`` refuses it otherwise); ``sample_share``:
      the share of a chain's default rounds a sample plays of it;
    * ``kernel(rule)``: its vectorized Monte-Carlo kernel under ``rule`` (a ``Kernel``), or None;
    * ``budget_schemes(budget, settings)`` (a class method): the schemes of its family the budget
      comparison ranks;
    * ``lower``: the sizes a person lowers to make its exact work smaller (words, joined by
      ``specsim.bounds``); ``size``: the same for the tiny GPT's work and the sampled work (``γ`` or
      ``the tree``); ``flag``: the historical option that sizes it (``--gamma``, ``--tree``);
    * ``label()``, ``json_keys()``, ``settings()``, ``step_words``, ``closed_words(k)``, ``round_note``:
      its parts in a command's text and JSON and on a page.
    """

    kind = "chain"
    keyword = None  # the grammar keyword (None: its kind); two families may share one, a positional and an options form
    form = "positional"  # kind:V1[:V2] (its params in order), or "options": kind:[tag,]key=value,...
    tag = None  # an options form's first item (tree:dynamic,...)
    params: tuple = ()
    title = None  # a picker's words for the family (None: its kind), with ``summary``, its one-line description
    summary = None
    gpt_round = "chain"
    lower, size, flag = ("γ",), "γ", "--gamma"
    step_words = "accept left to right while u < min(1, p(x)/q(x)):"
    round_note = ""  # what a page adds when it steps through a round of this scheme
    # the private answers behind the questions below (a chain's); a subclass changes the ones that differ
    _iid = _token_wise = True
    _stop_coins = _chosen = _adaptive = False
    _drawn_as = "row"
    _kernel = None  # (name, draw): montecarlo's kernel for this class alone (a subclass that declares none has none)

    def __eq__(self, other):  # a value: the same type with the same grammar string
        return type(other) is type(self) and other.name == self.name

    def __hash__(self):
        return hash(self.name)

    # -- the questions ---------------------------------------------------------------
    @property
    def iid_gamma(self) -> int | None:
        """The γ whose i.i.d. formula (``specsim.formulas``) is set beside it: it drafts γ tokens every round
        (a chain, a block: for a block the formula is a lower bound); None when that formula is not its reference."""
        return self.depth if self._iid else None

    @property
    def chain_gamma(self) -> int | None:
        """Its γ when a round of it is chain:γ's own (token-wise, any chain rule): then it is told by γ alone
        ("γ = 3") and whatever holds for chain:γ holds for it; else None."""
        return None

    def discarded_drafts(self, kept, k: int, n: int) -> list:
        """The drafts (node indices of ``n``) a round that kept the nodes ``kept`` (``k`` of them) and closed with
        a correction lists as discarded: for a chain the ones after the rejected draft k."""
        kept = set(kept)
        return [j for j in range(n) if j not in kept and (not self._token_wise or j > k)]

    def dropped_by_rejection(self, node: int, n: int) -> range:
        """The later drafts a rejected draft ``node`` takes with it (of ``n``): for a chain every later one; for
        a tree none (its next sibling is tried)."""
        return range(node + 1, n) if self._token_wise else range(0)

    @property
    def keeps_by_stop_coins(self) -> bool:
        """Whether a round keeps drafts 1..τ by one stop coin per position (τ: the last coin that comes up,
        a block's h), closing from the block residual, instead of testing each draft with min(1, p/q)."""
        return self._stop_coins

    @property
    def point_mass_drafts(self) -> bool:
        """Whether its drafts are chosen (the drafter's top tokens), not sampled, so each is verified as a point
        mass: kept with probability p'(x), a rejected one removed from p'."""
        return self._chosen

    @property
    def layout_from_drafter(self) -> bool:
        """Whether the drafter's rows decide a round's layout (its length, or its tree), so a page compares it
        at settings of its own."""
        return self._adaptive

    @property
    def equal_drafts_baseline(self) -> bool:
        """Whether a comparison sets it beside fixed chains that draft as many tokens on average (a chain whose
        length the drafter decides: ``adaptive.equal_cost_chain``)."""
        return self._adaptive and self._drawn_as == "path"

    @property
    def drawn_as(self) -> str:
        """How a page draws a round: "row" (a chain or a block, event by event), "path" (node by node, a path of
        its own length each round) or "tree" (node by node, its drafts branch: their parents are shown)."""
        return self._drawn_as

    @property
    def draft_modes(self) -> tuple:
        """The drafting modes it can be written with (a fixed tree's "iid" and "distinct"); () for none."""
        return ()

    def in_mode(self, mode: str):
        """The same layout drafted in ``mode`` (one of ``draft_modes``); None when it has no drafting modes."""
        return None

    # the share of a chain's default rounds a sample plays of it by default (a fixed tree's rounds, exact
    # residuals drawn one round at a time, take ~1 ms: a tenth)
    sample_share = 1

    def runs(self, rule) -> bool:
        """Whether it can run ``rule`` (``check_rule`` gives the one-line refusal otherwise)."""
        try:
            self.check_rule(rule)
        except ValueError:
            return False
        return True

    def kernel(self, rule=None) -> Kernel | None:
        """The vectorized Monte-Carlo kernel that plays it under ``rule`` (None: the correct rule), or None (the
        per-round loop): only the correct rule, and only on the class that declares the kernel."""
        from ..rule import CORRECT
        own = type(self).__dict__.get("_kernel")
        return Kernel(*own) if own and (rule is None or rule is CORRECT) else None

    @property
    def kernel_draw(self) -> float | None:
        """The cost of one draw of its kernel relative to a chain's (``kernel().draw``), None without one."""
        k = self.kernel()
        return k.draw if k else None

    @classmethod
    def budget_schemes(cls, budget: int, settings: dict | None = None) -> list:
        """The schemes of this family the budget comparison ranks (``specsim.labs.compare``): every one that
        drafts at most ``budget`` tokens. A family whose layout needs settings of its own (a stop, a depth)
        gives them only with ``settings`` (its ``settings()`` keys; missing ones take its params' ``start``)."""
        return []

    @classmethod
    def syntax(cls) -> str:
        """Its line in the grammar's help, written from ``params``: ``chain:G``, ``tree:W1,W2,...[:iid|distinct]``,
        ``chain:max=G,stop=T[,on=top|draft]``."""
        key = cls.keyword_of()
        if cls.form == "options":
            head = f"{key}:" + (f"{cls.tag}," if cls.tag else "")
            need = ",".join(f"{p.name}={p.shown}" for p in cls.params if p.default is None)
            return head + need + "".join(f"[,{p.name}={p.shown}]" for p in cls.params if p.default is not None)
        first, *rest = cls.params
        return f"{key}:{first.shown}" + "".join(f"[:{p.shown}]" if p.default is not None else f":{p.shown}"
                                                 for p in rest)

    @classmethod
    def syntax_note(cls) -> str:
        """The ranges its help line states ("G from 1 to 64"): a positional whole number's."""
        return ", ".join(f"{p.name} from {p.low} to {p.upper()}" for p in cls.params
                         if cls.form == "positional" and p.type == "whole" and p.upper() is not None)

    @classmethod
    def words(cls) -> tuple:
        """(its title, its one-line summary or None): a picker's words, the class's own (never inherited)."""
        return cls.__dict__.get("title") or cls.kind, cls.__dict__.get("summary")

    @classmethod
    def keyword_of(cls) -> str:
        """Its grammar keyword: ``keyword`` where the class itself sets one, else its ``kind``."""
        return cls.__dict__.get("keyword") or cls.kind

    @classmethod
    def from_params(cls, values: dict):
        """The scheme with these parameter values (by ``Param.name``, already read and checked)."""
        return cls(*(values[p.name] for p in cls.params))

    @property
    def tested(self) -> int:
        """Drafts one round's path may test (the positions whose numbers multiply along it)."""
        return self.depth

    def label(self) -> str:
        """How a command's text names it: "γ = 3" for a chain, "scheme tree:2,2 (6 drafted tokens)"."""
        n = self.drafted_tokens
        return f"scheme {self.name} ({n} drafted token{'s' * (n != 1)})"

    def json_keys(self) -> dict:
        """The keys a command's JSON adds for it beyond its name, depth and drafted tokens."""
        return {}

    def settings(self) -> dict:
        """The options it was written with beyond its size (a confidence chain's stop, a dynamic tree's topk)."""
        return {}

    def closed_words(self, k: int) -> str:
        """Why a round closed with a correction after ``k`` kept drafts."""
        return f"draft {k + 1} rejected"

    def drafter_passes(self) -> list | None:
        """Positions fed by each drafter pass of a round, one pass per level of its layout feeding the
        level above (None when that depends on the drafter's rows)."""
        level = []
        for parent in self.parents():  # a parent comes before its children
            level.append(0 if parent < 0 else level[parent] + 1)
        return [1] + [level.count(k) for k in range(max(level) + 1)][:-1]

    def prefix_work(self, s, depth: int) -> int:
        """Work of a round cut after ``depth`` kept drafts (``enumerate``'s ``limit``): the whole round by default."""
        return self.round_work(s)


KINDS = {}  # the one registry: a family's kind -> its class, in registration order (``register``)


def register(cls):
    """Add a scheme class to the one registry (``KINDS``), under its ``kind``: its grammar (``keyword``,
    ``params``) then reads and writes it, and ``--scheme`` help, the budget comparison and the app's scheme
    picker offer it. The call goes at the end of the module that defines the class (every module of
    ``specsim.schemes`` is imported with the package)."""
    if cls.form == "options":
        clash = [k.kind for k in KINDS.values() if k is not cls and k.form == "options"
                 and k.keyword_of() == cls.keyword_of()]
        if clash:
            raise ValueError(f"{cls.kind}: the keyword {cls.keyword_of()!r} already has an options form ({clash[0]})")
    KINDS[cls.kind] = cls
    return cls


def draw(row, u):
    """Inverse-CDF draw: the first token whose cumulative probability exceeds u.

    Zero entries are never chosen; if rounding leaves u above the total, the
    last token with positive probability is returned. Exact for Fraction rows
    (Python compares a float u with a Fraction exactly).
    """
    total, last = 0, None
    for j, v in enumerate(row):
        if v > 0:
            total = total + v
            last = j
            if u < total:
                return j
    if last is None:
        raise ValueError("cannot draw from a row with no positive entry")
    return last


@dataclass
class RoundDistribution:
    """All outcomes of one round from one context.

    outcomes: emitted sequence (tuple of tokens) -> probability, distinct sequences
    accepted: P(K = k) for k = 0..depth (K = drafts accepted)
    expected_tokens: E[number of tokens emitted by the round]
    """

    context: tuple
    gamma: int
    outcomes: dict
    accepted: list
    expected_tokens: object


@dataclass
class Verdict:
    """What verification decided in one sampled round.

    path: the accepted draft nodes, root to leaf (K = ``len(path)``)
    closing: the closing token's index (None when the rule gives no bonus)
    closing_kind: "correct" (after a rejection or a stop) or "bonus" (after the whole depth)
    closing_row: the row the closing token was drawn from
    tests: one dict per test made, in order (the node, the token, the
        numbers compared and whether it passed); see each scheme's ``verify``
    extra: scheme-specific numbers (a block's weights w and stop probabilities h)
    """

    path: list
    closing: int | None
    closing_kind: str
    closing_row: list | None
    tests: list = field(default_factory=list)
    extra: dict = field(default_factory=dict)

    @property
    def accepted(self) -> int:
        return len(self.path)


def nonempty(row, rule, what):
    """A rule's replacement, fallback or bonus row must hand out some probability."""
    if row is None or not any(v > 0 for v in row):
        raise ValueError(f"rule {getattr(rule, 'name', rule)!r}: the {what} row has no positive entry "
                         "(a round must emit a token)")
    return row


def expected_length(outcomes) -> object:
    return sum((len(t) * pr for t, pr in outcomes.items()), 0)
