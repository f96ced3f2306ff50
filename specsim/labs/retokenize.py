"""Drafters with another tokenizer: draft in the drafter's tokens, re-tokenise the text, verify.

The target p and the drafter q no longer share a vocabulary. Each is a
``TextModel``: next-token rows of exact Fractions over its own string tokens,
given the text so far (only the last ``order`` characters count). One round:

1. draft       the drafter samples ``gamma`` of its own tokens; they spell a draft text.
2. retokenise  the draft text is cut into the target's tokens, the longest token first
               (what BPE does on these toys). The last token may be the start of a longer
               one ("a" before a "b" not yet drafted): ``boundary`` says what to do with it:
               ``keep`` it, ``drop`` it, or ``extend`` (the drafter writes one more token,
               which settles it; only tokens that start inside the first draft are kept).
3. verify      the textbook rule (``specsim.rule.CORRECT``), once, with a q row that the
               ``variant`` chooses for each drafted target token x:

   - ``point-mass``    q = the point mass on x: keep x with p(x), else draw from p without x.
                       Exact for any draft (the draft needs no q at all).
   - ``draft-law``     q = the law of the re-tokenised draft at that position, given the tokens
                       before it and that the position was drafted. Exact for every boundary.
   - ``stream-law``    q = the law of the next target token if the drafter never stopped
                       writing. A cut draft's last token does not follow it (the boundary
                       problem): lossy with ``keep`` and ``drop``; exact with ``extend`` when
                       every drafter token is one character (the cut then falls at a fixed
                       place; with longer drafter tokens where it falls tells about the tokens).
   - ``drafter-as-q``  q = ``drafter_token_row`` read fresh after the text at each position, as if
                       the drafter spoke the target's tokens. It ignores what the tokens before
                       x say about x ("a" then not "b"), so it is lossy.

Target tokens have at most 2 characters: then only a cut's last token can still change.

Example
-------
>>> pair = example()
>>> tokenize(pair.target.vocab, "aabab")
('a', 'ab', 'ab')
>>> total_variation(pair, "a", 3, 3, "point-mass")
Fraction(0, 1)
>>> total_variation(pair, "a", 3, 3, "drafter-as-q") > 0
True
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from fractions import Fraction

from .. import bounds
from ..exact import joint_total_variation, round_distribution as chain_round, target_joint as pair_target_joint
from ..rule import CORRECT
from ..schemes import Chain
from ..schemes.chain import round_work
from .text_models import (MixedPair, RetokenizeError, TextModel, drafter_token_row, example, prefix_mass,
                          stream_mass, stream_row, text_model, tokenize, unsettled)

__all__ = ["MixedPair", "RetokenizeError", "TextModel", "drafter_token_row", "example", "prefix_mass",
           "stream_mass", "stream_row", "text_model", "tokenize", "unsettled", "drafts", "retokenized_drafts",
           "RetokRound", "round_distribution", "speculative_joint", "TargetTokenPair", "target_joint",
           "total_variation", "costs", "VARIANTS", "BOUNDARIES"]

VARIANTS = ("point-mass", "draft-law", "stream-law", "drafter-as-q")
BOUNDARIES = ("keep", "drop", "extend")
MAX_TOKENS = 8  # tokens of a joint distribution


def drafts(pair: MixedPair, text: str, gamma: int) -> dict:
    """Step 1: {draft text: probability} for ``gamma`` drafter tokens after ``text``."""
    out = {"": Fraction(1)}
    for _ in range(gamma):
        nxt = defaultdict(Fraction)
        for d, pr in out.items():
            for t, qt in zip(pair.draft.vocab, pair.draft.row(text + d)):
                if qt:
                    nxt[d + t] += pr * qt
        out = dict(nxt)
    return out


def retokenized_drafts(pair: MixedPair, text: str, gamma: int, boundary: str = "keep") -> dict:
    """Steps 1-2: {tuple of target tokens: probability}, the draft as the target will read it."""
    _check(pair, text, gamma, 1, "point-mass", boundary)
    vocab = pair.target.vocab
    out = defaultdict(Fraction)
    for d, pr in drafts(pair, text, gamma).items():
        tokens = tokenize(vocab, d)
        if not unsettled(vocab, tokens) or boundary == "keep":
            out[tokens] += pr
        elif boundary == "drop":
            out[tokens[:-1]] += pr
        else:  # extend: one more drafter token settles the last one; keep the tokens that start inside d
            for t, qt in zip(pair.draft.vocab, pair.draft.row(text + d)):
                if qt:
                    longer = tokenize(vocab, d + t)
                    out[longer[:len(tokens)]] += pr * qt
    return dict(out)


def _law_rows(law: dict, vocab) -> dict:
    """{prefix: the draft's law at position len(prefix), given that prefix and that the position was drafted}."""
    reach = defaultdict(lambda: defaultdict(Fraction))
    for tokens, pr in law.items():
        for i, x in enumerate(tokens):
            reach[tokens[:i]][x] += pr
    return {prefix: tuple(row[x] / sum(row.values()) for x in vocab) for prefix, row in reach.items()}


@dataclass
class RetokRound:
    """All outcomes of one round: emitted target tokens -> probability, and what the round costs.

    accepted: P(K = k), k = 0..the longest draft; drafted: E[target tokens in the draft];
    drafter_steps: E[drafter tokens written] (gamma, plus the extension's one when it happens).
    """

    outcomes: dict
    accepted: list
    drafted: Fraction
    drafter_steps: Fraction

    @property
    def expected_tokens(self) -> Fraction:
        return sum((len(t) * pr for t, pr in self.outcomes.items()), Fraction(0))

    @property
    def expected_accepted(self) -> Fraction:
        return sum((k * pr for k, pr in enumerate(self.accepted)), Fraction(0))


def round_distribution(pair: MixedPair, text: str, gamma: int, variant: str = "point-mass",
                       boundary: str = "keep", limit: int | None = None) -> RetokRound:
    """Enumerate one round (steps 1-3 of the module docstring) from ``text``."""
    _check(pair, text, gamma, limit or 1, variant, boundary)
    vocab, index = pair.target.vocab, {t: i for i, t in enumerate(pair.target.vocab)}
    law = retokenized_drafts(pair, text, gamma, boundary)
    outcomes = defaultdict(Fraction)
    accepted = [Fraction(0)] * (max(map(len, law)) + 1)

    law_rows = _law_rows(law, vocab) if variant == "draft-law" else {}
    memo = {}

    def q_row(prefix, x, at):
        if variant == "point-mass":
            return tuple(Fraction(t == x) for t in vocab)
        if variant == "draft-law":
            return law_rows[prefix]
        key = prefix if variant == "stream-law" else at[len(at) - pair.order:]
        if key not in memo:
            memo[key] = stream_row(pair, text, prefix) if variant == "stream-law" else drafter_token_row(pair, at)
        return memo[key]

    def emit(emitted, prob, row):
        for y, ry in zip(vocab, row):
            if ry:
                outcomes[emitted + (y,)] += prob * ry

    for tokens, pr in law.items():
        prob, emitted = pr, ()
        for x in tokens:  # step 3: verify the drafts left to right
            if limit is not None and len(emitted) >= limit:
                break
            at = text + "".join(emitted)
            p, q = pair.target.row(at), q_row(emitted, x, at)
            a = CORRECT.accept(p, q, index[x])
            if a < 1:  # rejection: the residual of p and q, then the round ends
                accepted[len(emitted)] += prob * (1 - a)
                emit(emitted, prob * (1 - a), CORRECT.replacement(p, q))
            prob, emitted = prob * a, emitted + (x,)
            if not prob:
                break
        else:  # every draft kept: the bonus token from p
            accepted[len(emitted)] += prob
            emit(emitted, prob, CORRECT.bonus(pair.target.row(text + "".join(emitted))))
            continue
        if prob:  # stopped at the limit: the tokens needed are known
            accepted[len(emitted)] += prob
            outcomes[emitted] += prob
    if limit is not None:
        outcomes = _truncate(outcomes, limit)
    drafted = sum((len(t) * pr for t, pr in law.items()), Fraction(0))
    steps = gamma + (sum((pr for d, pr in drafts(pair, text, gamma).items() if unsettled(vocab, tokenize(vocab, d))),
                         Fraction(0)) if boundary == "extend" else 0)
    return RetokRound(dict(outcomes), accepted, drafted, steps)


def _truncate(outcomes, m):
    out = defaultdict(Fraction)
    for t, pr in outcomes.items():
        out[t[:m]] += pr
    return out


def speculative_joint(pair: MixedPair, text: str, gamma: int, n_tokens: int, variant: str = "point-mass",
                      boundary: str = "keep") -> dict:
    """{next ``n_tokens`` target tokens: probability} when rounds are chained from ``text``."""
    _check(pair, text, gamma, n_tokens, variant, boundary)
    memo = {}

    def joint(at, m):
        key = (at[len(at) - pair.order:], m)
        if key not in memo:
            out = defaultdict(Fraction)
            for emitted, pr in round_distribution(pair, at, gamma, variant, boundary, m).outcomes.items():
                if len(emitted) >= m:
                    out[emitted[:m]] += pr
                else:
                    for tail, pt in joint(at + "".join(emitted), m - len(emitted)).items():
                        out[emitted + tail] += pr * pt
            memo[key] = dict(out)
        return memo[key]

    return joint(text, n_tokens)


class TargetTokenPair:
    """A ``specsim.pair.ModelPair`` over the target's tokens: p, and a drafter that drafts target tokens.

    ``drafter="same"``: q = ``drafter_token_row``, the drafter as if it had been trained with the
    target's tokenizer. ``drafter="intersection"``: the drafter keeps only its tokens that are also
    target tokens (the same string), renormalised, and drafts those as target tokens.
    A context is a tuple of strings whose concatenation is the text (the first one the prompt).
    """

    def __init__(self, pair: MixedPair, drafter: str = "same"):
        if drafter not in ("same", "intersection"):
            raise RetokenizeError(f"unknown drafter {str(drafter)[:40]!r}; choose same or intersection")
        shared = [t for t in pair.draft.vocab if t in pair.target.vocab]
        if not shared:
            raise RetokenizeError("the two vocabularies share no token")
        self.mixed, self.vocab, self.drafter, self._rows = pair, pair.target.vocab, drafter, {}

    def state(self, context) -> str:
        text = "".join(context)
        return text[len(text) - self.mixed.order:]

    def p(self, context) -> tuple:
        return self.mixed.target.row("".join(context))

    def q(self, context) -> tuple:
        key = self.state(context)  # the row depends on the last characters only
        if key not in self._rows:
            self._rows[key] = self._q("".join(context))
        return self._rows[key]

    def _q(self, text: str) -> tuple:
        if self.drafter == "same":
            return drafter_token_row(self.mixed, text)
        own = dict(zip(self.mixed.draft.vocab, self.mixed.draft.row(text)))
        kept = sum((own.get(x, 0) for x in self.vocab), Fraction(0))
        if not kept:
            raise RetokenizeError(f"after {text[-20:]!r} the drafter puts nothing on a shared token")
        return tuple(Fraction(own.get(x, 0)) / kept for x in self.vocab)


def target_joint(pair: MixedPair, text: str, n_tokens: int) -> dict:
    """{next ``n_tokens`` target tokens: probability} sampling p one token at a time."""
    _check(pair, text, 1, n_tokens, "point-mass", "keep")
    return pair_target_joint(TargetTokenPair(pair), (text,), n_tokens)


def total_variation(pair: MixedPair, text: str, gamma: int, n_tokens: int, variant: str = "point-mass",
                    boundary: str = "keep") -> Fraction:
    """TV between the speculative and the target joint of the next ``n_tokens`` target tokens."""
    return joint_total_variation(speculative_joint(pair, text, gamma, n_tokens, variant, boundary),
                                 target_joint(pair, text, n_tokens))


def costs(pair: MixedPair, text: str, gamma: int) -> dict:
    """E[accepted target tokens] per round of ``gamma`` drafter steps, for every exact setting.

    Keys "variant, boundary" for the re-tokenised rounds; "intersection" and "same tokenizer" for
    a chain of ``gamma`` target tokens drafted by ``TargetTokenPair`` and verified by the textbook rule.
    """
    _check(pair, text, gamma, 1, "point-mass", "keep")
    # the chain's fractions grow long (measured on the example: gamma 9, 3^10 outcomes, 1.5 s): 4 units each
    bounds.check(4 * round_work(len(pair.target.vocab), gamma), f"a chain of γ = {gamma} target tokens", "γ")
    out = {f"{v}, {b}": round_distribution(pair, text, gamma, v, b).expected_accepted
           for v in ("point-mass", "draft-law") for b in BOUNDARIES}
    for drafter in ("intersection", "same"):
        chain = chain_round(TargetTokenPair(pair, drafter), (text,), Chain(gamma))
        out["same tokenizer" if drafter == "same" else drafter] = sum(
            (k * pr for k, pr in enumerate(chain.accepted)), Fraction(0))
    return out


def _check(pair, text, gamma, n_tokens, variant, boundary):
    if not isinstance(pair, MixedPair):
        raise RetokenizeError(f"expected a MixedPair, got {type(pair).__name__}")
    if variant not in VARIANTS:
        raise RetokenizeError(f"unknown variant {str(variant)[:40]!r}; choose one of {', '.join(VARIANTS)}")
    if boundary not in BOUNDARIES:
        raise RetokenizeError(f"unknown boundary {str(boundary)[:40]!r}; choose keep or drop")
    if not isinstance(text, str) or len(text) < pair.order:
        raise RetokenizeError(f"the text must be a string of at least {pair.order} character(s)")
    bad = next((c for c in text if c not in pair.target.alphabet), None)
    if bad is not None:
        raise RetokenizeError(f"character {bad!r} of the text is not in the models' alphabet")
    for name, value, top in (("gamma", gamma, bounds.LIMITS.gamma), ("the number of tokens", n_tokens, MAX_TOKENS)):
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= top:
            raise RetokenizeError(f"{name} must be an integer from 1 to {top}, got {value!r}")
    # rounds of |drafts| x (gamma + 1) steps, one per (text state, tokens still needed), a step here about
    # three of the chain engine's (measured: gamma 9, N 5 on the example, 1.1 s); then the target's joint
    states = len(pair.target.alphabet) ** pair.order
    work = 3 * len(pair.draft.vocab) ** gamma * (gamma + 1) * n_tokens * states + len(pair.target.vocab) ** n_tokens
    bounds.check(work, f"γ = {gamma} drafter tokens and {n_tokens} target tokens", "γ or the number of tokens")
