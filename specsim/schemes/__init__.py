"""Verification schemes: a chain, a block and a tree (fixed or adaptive), one grammar, one protocol.

A scheme is a value every engine, command, page and the tiny GPT take:
``Chain(4)``, ``Block(4)``, ``Tree((2, 2, 1))``, or ``parse("tree:2,2,1")``;
and two whose layout follows the drafter's rows: ``ConfidenceChain`` (``chain:max=6,stop=0.4``)
and ``DynamicTree`` (``tree:dynamic,budget=6,depth=3,topk=2``).
Each one gives its draft layout (``parents``, ``mask``, ``positions``), an
exact ``enumerate`` of one round, ``draft`` and ``verify`` for a sampled
round over plain Python numbers, and ``round_work`` for the work bound;
``specsim.schemes.base`` states the protocol, and ``Scheme`` there answers what
callers would otherwise ask a scheme's kind for (its label, JSON keys, whether
its i.i.d. reference, what to lower, its kernel, its drafter passes). A new scheme is one module here: a
``Scheme`` subclass that declares its grammar as data (``keyword``, ``params``) and, at the module's end,
``register(MyScheme)``; this package imports every module of its folder, so ``kind:G`` then parses, and
the engines, checks, commands, help and pickers take it as they take a chain. Schemes sit above the rule
(``specsim.rule``) and the model pair, and below the engines
(``specsim.exact``, ``specsim.sampling``, ``specsim.montecarlo``).

>>> from specsim.toy import load_model
>>> m = load_model("seed")
>>> Tree((1, 1, 1)).enumerate(m, ("a",)).outcomes == Chain(3).enumerate(m, ("a",)).outcomes
True
>>> parse("block:2").enumerate(m, ("a",)).expected_tokens
Fraction(27, 10)
"""
import importlib
import pkgutil

# the families in the grammar's order: each module registers its class at its end (``base.register``)
from .chain import Chain  # noqa: I001
from .block import Block
from .tree import Tree, TreeRule
from .adaptive import ConfidenceChain
from .dynamic_tree import DynamicTree
from .base import Kernel, Param, RoundDistribution, Scheme, Verdict, draw
from .grammar import as_scheme, example, families, family, from_flags, grammar_help, parse, parse_list, register, write

for _module in pkgutil.iter_modules(__path__):  # a new family's module registers itself: import every module here
    importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["Block", "Chain", "ConfidenceChain", "DynamicTree", "Kernel", "Param", "RoundDistribution", "Scheme",
           "Tree", "TreeRule", "Verdict", "as_scheme", "draw", "example", "families", "family", "from_flags", "grammar_help",
           "parse", "parse_list", "register", "write"]
