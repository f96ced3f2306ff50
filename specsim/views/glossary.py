"""The course's symbols and words, each defined once: the Glossary page lists them, widget labels show
them on hover (``help=``), in the project's notation (DESIGN.md).

>>> sorted(GLOSSARY) == sorted(ORDER)
True
>>> help_for("alpha") == GLOSSARY["α"].text
True
>>> help_for("α", "c").startswith("**α**: The chance")
True
>>> symbols_in("p(a)"), symbols_in("γ (drafts per round)"), symbols_in("cost c"), symbols_in("seed")
(('p',), ('γ',), ('c',), ())
>>> symbols_in("c: drafter step cost / target step"), symbols_in("alpha and r")
(('c',), ('α', 'residual'))
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Term:
    symbol: str        # as written in the lessons and labels: "α", "TV", "residual"
    name: str          # in words
    text: str          # one definition, in the project's notation
    code: str = ""     # the name in specsim's code, when it has one


ORDER = ("p", "q", "γ", "K", "α", "residual", "TV", "c", "v", "SE", "cells", "p-value")

GLOSSARY = {t.symbol: t for t in (
    Term("p", "the target's distribution",
         "The target model's next-token distribution, p(x | prefix): the output speculative decoding must "
         "reproduce exactly.", "p, target"),
    Term("q", "the drafter's distribution",
         "The drafter's next-token distribution, q(x | prefix): a cheaper model's guess that proposes the drafts.",
         "q, draft"),
    Term("γ", "gamma, the draft length",
         "How many tokens the drafter proposes per round; a round emits between 1 and γ + 1 tokens.",
         "gamma"),
    Term("K", "the drafts accepted",
         "How many of a round's γ drafts are accepted (0 to γ); the round emits K + 1 tokens.", "accepted"),
    Term("α", "alpha, the acceptance rate",
         "The chance that one draft is accepted: α = Σ min(p, q) = 1 − TV(p, q) at one position.", "alpha"),
    Term("residual", "r, the residual distribution",
         "Where a rejected draft's replacement is drawn from: r = max(0, p − q) / Σ max(0, p − q), the part "
         "of p that q falls short of.", "residual"),
    Term("TV", "total variation distance",
         "TV(p, q) = ½ Σ |p − q| = Σ max(0, p − q): how far apart two distributions are, from 0 (equal) "
         "to 1 (disjoint).", "total_variation"),
    Term("c", "cost, one drafter step",
         "The cost of one drafter step relative to one target step (c = 0.05: twenty drafter steps cost one "
         "target step).", "cost"),
    Term("v", "the verify pass's cost",
         "The cost of one target pass over the γ + 1 positions of a round, relative to one single-position "
         "target step (v = 1 in the simple speedup formula; measured on a real model).", "verify_ratio"),
    Term("SE", "standard error",
         "The estimated standard deviation of a measured value across repeats of the same measurement: a "
         "measurement is shown as value ± SE.", "se"),
    Term("cells", "the cells of a chi-square test",
         "The groups sampled outcomes are counted in for Pearson's chi-square test, each expected at least "
         "five times (rarer outcomes pooled into one cell).", "cells"),
    Term("p-value", "p-value",
         "If the sampler is right, the chance of counts at least as far from the exact probabilities (by the "
         "chi-square statistic) as those seen; a test that rejects below 0.001 raises a false alarm in one "
         "run out of a thousand.",
         "p_value"),
)}

ALIASES = {"gamma": "γ", "alpha": "α", "r": "residual", "cost": "c", "accepted": "K", "total_variation": "TV",
           "target": "p", "draft": "q", "se": "SE", "p_value": "p-value", "verify_ratio": "v"}


# the words of a label that name a symbol: the symbols, their Greek letters spelt out and r; never plain English
# ("target", "cost", "draft" are words of many labels, not the symbols p, c, q)
LABEL_WORDS = {"gamma": "γ", "alpha": "α", "r": "residual"}


def term(symbol: str) -> Term:
    """The glossary's entry for a symbol or its code name ("α" or "alpha"); KeyError when there is none."""
    return GLOSSARY[ALIASES.get(symbol, symbol)]


def help_for(*symbols: str) -> str:
    """A widget's hover text: the definition of one symbol, or of several ("α", "c"), one paragraph each
    led by its symbol. KeyError for a symbol the glossary does not define."""
    terms = [term(s) for s in symbols]
    if len(terms) == 1:
        return terms[0].text
    return "\n\n".join(f"**{t.symbol}**: {t.text}" for t in terms)


def symbols_in(label: str) -> tuple:
    """The glossary's symbols a widget label names, in order, once each ("α and c" -> ("α", "c")): a word
    of the label that is a symbol ("α", "TV", "p-value") or its code name ("alpha", "gamma")."""
    import re

    found = []
    for word in re.findall(r"p-value|[^\W_]+", label):
        key = word if word in GLOSSARY else LABEL_WORDS.get(word)
        if key in GLOSSARY and key not in found:
            found.append(key)
    return tuple(found)


def label_help(label: str) -> str | None:
    """The hover text for a widget labelled ``label``: the definitions of the symbols it names, or None."""
    found = symbols_in(label)
    return help_for(*found) if found else None
