"""specsim: speculative decoding, simulated exactly and made visible.

The library is pure functions that return data; the command line prints it
and the app (``app/``, outside the package) draws it.

Layers, bottom to top. A module imports modules of its own layer or of a
lower one, never of a higher one:

1. **base**: ``rule`` (the acceptance rule, written once), ``rule_np`` (its
   numpy twin), ``pair`` (the model-pair contract), ``toy`` (exact toy
   models), ``rows``, ``transforms``, ``stats``, ``acceptance``, ``deps``
   (installed library versions against the tested ranges), ``limits``
   (every limit and the units work is counted in) and ``parsing`` (numbers
   and lists typed on the way in); schemes and toy models read them, so
   they sit at the bottom and never import a scheme.
2. **schemes/**: how a round is verified, one value (``chain:4``,
   ``block:4``, ``tree:2,2,1``): its draft layout, mask and positions, the
   exact ``enumerate`` and the sampled ``verify``. A scheme knows the rule
   and the pair, not the engines that call it.
3. **engines**: ``exact``, ``sampling``, ``montecarlo`` take a scheme;
   ``formulas`` (closed forms, set against the exact engine) and
   ``symbolic`` (sympy proofs of them) sit beside them, and ``bounds``
   (the work checks every entry point asks first: each scheme prices its
   own round, ``bounds`` compares it with ``limits``).
4. **labs/** (pitfalls, lossy cousins, the rule family, checker and
   shrink, compare, the implementations gallery), **bench/** (timing and
   toy benchmarks) and **serving/** (the roofline cost model of a served
   model pair on real hardware): experiments on the engines.
5. **views/**: what a page shows, as data. A view may show a lab's result
   (the schemes view ranks what ``labs/compare`` ranks); a lab never knows
   how it is shown.
6. **plots/**: plotly figures of the views' and engines' data.
7. **gpt/**: the tiny GPT pair in torch, its one decoder over the schemes,
   and ``gpt/measure``, ``gpt/train``, ``gpt/hf`` inside it. It uses the
   schemes, engines and bench, never a view or a plot.
8. **cli/**: every ``specsim`` command; it may import anything below, and
   imports torch, scipy, sympy, the GPT and the rule checker only inside
   the commands that need them, so ``specsim --help`` starts fast.

Three libraries have one home each: nothing here imports streamlit, only
``plots/`` imports plotly, and only ``gpt/`` imports torch (``cli/`` too,
inside a command). No private name (leading underscore) is used outside
its module, and the module-level imports have no cycle.
``tests/test_layers.py`` reads every import with ``ast`` and enforces all
of this; a new module is placed in a layer there and here.
"""
__version__ = "0.1.0"
