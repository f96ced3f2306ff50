"""The implementations gallery on the tiny GPT: real systems' verification rules side by side.

Each name is ``textbook`` (the correct rule) or an entry of ``specsim.labs.implementations``
(``specsim implementations``). Every rule runs through the one decoder on its own kind of
scheme (``specs.rule_and_scheme``; names and schemes are checked without torch): a chain entry on ``chain:G``, llama.cpp's on its confidence
stop with at most G drafts, a tree entry on its own tree. The rows come from ONE interleaved
run of ``bench_schemes`` (plain decoding timed in every repeat, then each rule), so the
tokens per pass and speedups are measured side by side; each row carries the verdict of the
gallery's exact proof on the toy presets and the checker's random family
(``Implementation.expected_exact``, which tests/test_implementations.py holds equal to
``implementations.prove``): it is read, not proved again, on every bench.

>>> [(r.name, r.scheme.name, r.verdict) for r in resolve(["textbook", "llama-cpp", "medusa-typical"], 4)]
[('textbook', 'chain:4', 'exact'), ('llama-cpp', 'chain:max=4,stop=0.75', 'exact'), ('medusa-typical', 'chain:4', 'NOT exact')]
>>> resolve(["vllm", "medusa"], 4)
Traceback (most recent call last):
...
ValueError: unknown rule 'medusa' for --rules; known: textbook, hf-sampling, hf-prompt-lookup, vllm, medusa-typical, medusa-greedy, eagle2, specinfer, llama-cpp, llama-cpp-example, gpt-fast
"""
from __future__ import annotations

from dataclasses import dataclass

from ...labs.implementations import IMPLEMENTATIONS
from ...rule import CORRECT
from ...schemes import Chain
from ..specs import rule_and_scheme

TEXTBOOK = "textbook"
DEFAULT_RULES = ("textbook", "vllm", "llama-cpp", "medusa-typical")
KNOWN = (TEXTBOOK, *IMPLEMENTATIONS)


@dataclass(frozen=True)
class RuleRun:
    """A named rule, the scheme it runs on and the gallery's verdict on it."""

    name: str
    system: str
    rule: object
    scheme: object
    verdict: str  # "exact", "NOT exact", or "exact (target: greedy decoding of p)"


def parse_names(text: str) -> list:
    """'textbook,vllm' -> ['textbook', 'vllm']: comma-separated, each known and listed once (one-line ValueError)."""
    names = [n.strip() for n in str(text).split(",") if n.strip()]
    if not names:
        raise ValueError("--rules needs at least one rule")
    for n in names:
        if n not in KNOWN:
            raise ValueError(f"unknown rule {n[:60]!r} for --rules; known: {', '.join(KNOWN)}")
        if names.count(n) > 1:
            raise ValueError(f"--rules lists {n!r} twice")
    return names


def resolve(names, gamma: int) -> list:
    """Each name with its rule, its scheme (``chain:gamma`` or the entry's own kind) and its verdict."""
    runs = []
    for name in parse_names(",".join(names)):
        if name == TEXTBOOK:
            runs.append(RuleRun(name, "the textbook rule", CORRECT, Chain(gamma), "exact"))
            continue
        e = IMPLEMENTATIONS[name]
        rule, scheme = rule_and_scheme(name, Chain(gamma), given=False)
        verdict = ("exact" if e.expected_exact else "NOT exact") + (f" (target: {e.intended})" if e.intended != "p"
                                                                   else "")
        runs.append(RuleRun(name, e.system, rule, scheme, verdict))
    return runs


def bench_rules(pair, names=DEFAULT_RULES, gamma: int = 4, n_tokens: int = 150, temperature: float = 1.0,
                repeats: int = 3, seed: int = 0, prompts=None, limit=None) -> dict:
    """Every named rule against plain decoding, in one interleaved run; returns the JSON-ready dict:
    ``bench_schemes``' figures with a row per rule (``rule``, ``system``, ``verdict`` first)."""
    from .bench_schemes import bench_schemes  # torch: names are checked without it (the CLI's parser)
    runs = resolve(names, gamma)
    result = bench_schemes(pair, [r.scheme for r in runs], n_tokens, temperature, repeats, seed, prompts, limit,
                           rules=[r.rule for r in runs])
    rows = [{"rule": r.name, "system": r.system, "verdict": r.verdict, **row}
            for r, row in zip(runs, result.pop("schemes"))]
    return {"rules": rows, "gamma": gamma, **result}
