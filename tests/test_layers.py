"""The package's import direction, read from the source with ``ast``.

``specsim/__init__.py`` states the layers; this file enforces them. It reads
every import of every module under ``specsim/`` (module-level and inside
functions, absolute and relative) and reports:

- a **wrong-way import**: a module importing one of a higher layer;
- a **private name used across modules**: ``from x import _y``, or
  ``x._y`` where ``x`` names another specsim module;
- an **import cycle**, through module-level imports and imports inside
  functions alike (the path is shown);
- ``importlib.import_module`` and ``__import__`` calls count as imports: a
  literal name as written, an f-string as every module under its constant
  prefix (``__main__`` aside);
- a **banned library**: streamlit anywhere, plotly outside ``plots/``, torch
  outside ``gpt/`` (``cli/`` may import it inside a command);
- a module that sits in **no layer** (a new module must be placed);
- a **heavy import at start**: what ``specsim --help`` loads through
  module-level imports (torch, scipy, sympy, the GPT, the rule checker).

The app (``app/``) may import any layer, but only public names.

The checker works on a ``{module name: source}`` mapping, so the planted
examples below test it without touching the package; the last tests run it
on the real package and expect nothing to report.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "specsim"

# Bottom to top: a module may import modules of its own layer or of a lower
# one. A name is a module or a package (the prefix rule: "specsim.gpt" covers
# specsim.gpt.measure.bench); the longest matching name places a module.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("base", ("specsim", "specsim.rule", "specsim.rule_np", "specsim.pair", "specsim.toy", "specsim.rows",
              "specsim.transforms", "specsim.stats", "specsim.acceptance", "specsim.limits", "specsim.parsing",
              "specsim.deps")),
    ("schemes", ("specsim.schemes",)),
    ("engines", ("specsim.exact", "specsim.sampling", "specsim.montecarlo", "specsim.formulas", "specsim.symbolic",
                 "specsim.bounds")),
    ("labs, bench", ("specsim.labs", "specsim.bench", "specsim.serving")),
    ("views", ("specsim.views",)),
    ("plots", ("specsim.plots",)),
    ("gpt", ("specsim.gpt",)),
    ("cli", ("specsim.cli",)),
]

# Third-party libraries only some folders may import (anywhere in their
# modules), and the folders that may import them inside a function only.
LIBRARIES = {"streamlit": (), "plotly": ("specsim.plots",), "torch": ("specsim.gpt",)}
INSIDE_FUNCTIONS = {"torch": ("specsim.cli",)}

# What `specsim --help` must not load (for a 0.3 s start): heavy
# libraries and the slow specsim modules, reached through module-level imports.
CLI = ("specsim.cli", "specsim.cli.__main__")
HEAVY = ("torch", "scipy", "sympy", "plotly", "transformers", "streamlit", "specsim.gpt.api",
         "specsim.labs.checker", "specsim.symbolic")


@dataclass(frozen=True)
class Import:
    """One import statement's target, as read from a module's source."""
    module: str          # the importing module
    target: str          # the module imported (a specsim module or a third-party name)
    names: tuple         # the names taken from it (``from target import a, b``), else ()
    line: int
    top_level: bool      # run when the module is imported (not inside a function)
    local: str | None = None   # the name it binds to the imported module (``import a.b as x``: x)


# ---- step 1: read the imports -------------------------------------------------

def _base_package(module: str, level: int, packages: set[str]) -> str:
    """The package a relative import of ``level`` dots starts from."""
    parts = module.split(".")
    if module not in packages:      # a plain module: its package is one level up
        parts = parts[:-1]
    return ".".join(parts[:len(parts) - (level - 1)])


def imports_of(module: str, source: str, modules: set[str], packages: set[str]) -> list[Import]:
    """Every import in ``source``; ``from pkg import sub`` counts as importing ``pkg.sub``."""
    tree = ast.parse(source)
    in_function = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            in_function.update(id(n) for n in ast.walk(node) if n is not node)
    found = []
    for node in ast.walk(tree):
        top = id(node) not in in_function
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.append(Import(module, alias.name, (), node.lineno, top, alias.asname))
        elif isinstance(node, ast.ImportFrom):
            target = node.module or ""
            if node.level:
                base = _base_package(module, node.level, packages)
                target = f"{base}.{target}" if target else base
            plain = []
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                if sub in modules:   # a submodule: the dependency is on it
                    found.append(Import(module, sub, (), node.lineno, top, alias.asname or alias.name))
                else:
                    plain.append(alias.name)
            if plain:
                found.append(Import(module, target, tuple(plain), node.lineno, top))
        elif isinstance(node, ast.Call):
            found += [Import(module, t, (), node.lineno, top) for t in dynamic_targets(module, node, modules, packages)]
    return found


def dynamic_targets(module: str, call: ast.Call, modules: set[str], packages: set[str]) -> list[str]:
    """What ``importlib.import_module(...)`` or ``__import__(...)`` may load: a literal name (relative
    ones against ``package=``), or for an f-string every module under its constant prefix
    (``f"{__name__}.{name}"``: any submodule of this module)."""
    fn = call.func
    named = (isinstance(fn, ast.Attribute) and fn.attr == "import_module") or \
        (isinstance(fn, ast.Name) and fn.id in ("import_module", "__import__"))
    if not named or not call.args:
        return []
    arg = call.args[0]
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        name = arg.value
        if name.startswith("."):
            level = len(name) - len(name.lstrip("."))
            base = _base_package(module, level, packages)
            name = f"{base}.{name.lstrip('.')}" if name.lstrip(".") else base
        return [name]
    if isinstance(arg, ast.JoinedStr):
        prefix = ""
        for part in arg.values:
            if isinstance(part, ast.Constant):
                prefix += part.value
            elif isinstance(part, ast.FormattedValue) and isinstance(part.value, ast.Name) \
                    and part.value.id == "__name__":
                prefix += module
            else:
                break
        if prefix.startswith("specsim"):  # ``__main__`` is what ``python -m`` runs, never a name looked up
            return sorted(m for m in modules if m.startswith(prefix) and m != module and not m.endswith(".__main__"))
    return []


def _module_named(node: ast.expr, aliases: dict[str, str], modules: set[str]) -> str | None:
    """The specsim module an expression such as ``s`` or ``specsim.sampling`` names, if any."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    head = aliases.get(node.id, node.id)
    dotted = ".".join([head, *reversed(parts)])
    return dotted if dotted in modules and (node.id in aliases or node.id == "specsim") else None


# ---- step 2: the checks -------------------------------------------------------

def layer_of(module: str, layers=LAYERS) -> int | None:
    """The index of ``module``'s layer (longest matching name), or None."""
    best, best_len = None, -1
    for index, (_, names) in enumerate(layers):
        for name in names:   # the root package ("specsim") places only itself
            if (module == name or ("." in name and module.startswith(name + "."))) and len(name) > best_len:
                best, best_len = index, len(name)
    return best


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _within(module: str, places) -> bool:
    return any(module == place or module.startswith(place + ".") for place in places)


def check(sources: dict[str, str], layers=LAYERS, libraries=LIBRARIES, inside=INSIDE_FUNCTIONS,
          packages: set[str] | None = None) -> list[str]:
    """One line per violation in the ``{module: source}`` mapping (empty: all well).

    ``packages`` names the modules that are packages (``__init__``); by default
    a module is a package when another module sits under it.
    """
    modules = set(sources)
    if packages is None:
        packages = {m for m in modules if any(o.startswith(m + ".") for o in modules)}
    problems = []
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for module in sorted(modules):
        here = layer_of(module, layers)
        if here is None:
            problems.append(f"{module}: in no layer (place it in LAYERS and in specsim/__init__.py)")
        found = imports_of(module, sources[module], modules, packages)
        for imp in found:
            where = f"{module}:{imp.line}"
            if imp.target in modules:
                # (a) the direction of the import
                there = layer_of(imp.target, layers)
                if here is not None and there is not None and there > here:
                    problems.append(f"{where}: wrong way: {layers[here][0]} imports "
                                    f"{imp.target} ({layers[there][0]})")
                if imp.target != module:  # a function's import closes a cycle as surely, only later
                    graph[module].add(imp.target)
            else:
                # a third-party library only some folders may use
                root = imp.target.split(".")[0]
                lazy = () if imp.top_level else inside.get(root, ())
                if root in libraries and not _within(module, libraries[root] + lazy):
                    places = "only " + " and ".join(libraries[root]) if libraries[root] else "nothing in specsim"
                    if inside.get(root):
                        places += f" ({' and '.join(inside[root])} inside a function)"
                    problems.append(f"{where}: imports {root} ({places} may)")
        # (b) private names of other modules
        problems += private_names(module, sources[module], found, modules)
    # (c) cycles among all the imports
    for path, component in cycles(graph):
        others = sorted(component - set(path))
        problems.append(f"import cycle: {' -> '.join(path)}" + (f" (the same tangle holds {', '.join(others)})"
                                                                 if others else ""))
    return problems


def private_names(module: str, source: str, found: list[Import], modules: set[str]) -> list[str]:
    """``from x import _y`` and ``x._y``, where ``x`` is another module of ``modules``."""
    problems = []
    for imp in found:
        if imp.target in modules and imp.target != module:
            problems += [f"{module}:{imp.line}: private name {imp.target}.{name} imported"
                         for name in imp.names if _private(name)]
    aliases = {i.local: i.target for i in found if i.local and i.target in modules}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            owner = _module_named(node.value, aliases, modules)
            if owner is not None and owner != module:
                problems.append(f"{module}:{node.lineno}: private name {owner}.{node.attr} used")
    return problems


def loaded_at_start(sources: dict[str, str], start=CLI, heavy=HEAVY, packages: set[str] | None = None) -> list[str]:
    """The heavy names that importing ``start`` loads, each with the chain of imports that loads it.

    Follows module-level imports only, and counts the packages above a module
    (importing ``a.b.c`` runs ``a/__init__`` and ``a/b/__init__`` first).
    """
    modules = set(sources)
    if packages is None:
        packages = {m for m in modules if any(o.startswith(m + ".") for o in modules)}
    parent = {m: None for m in start if m in modules}
    queue, found = list(parent), []
    while queue:
        module = queue.pop(0)
        edges = [i.target for i in imports_of(module, sources[module], modules, packages) if i.top_level]
        parts = module.split(".")
        edges += [".".join(parts[:n]) for n in range(1, len(parts))]   # the packages above it
        for target in edges:
            name = target if target in modules else target.split(".")[0]
            if name in parent:
                continue
            parent[name] = module
            if name in heavy:
                chain = [name]
                while parent[chain[-1]] is not None:
                    chain.append(parent[chain[-1]])
                found.append(f"{name} loads at start: {' <- '.join(chain)}")
            elif name in modules:
                queue.append(name)
    return found


def cycles(graph: dict[str, set[str]]) -> list[tuple[list[str], set[str]]]:
    """Each tangle of modules that import each other (a strongly connected
    component), as a shortest cycle through its first module and the whole set."""
    reach = {v: _reachable(graph, v) for v in graph}
    found, done = [], set()
    for v in sorted(graph):
        if v in done or v not in reach[v]:
            continue
        component = {w for w in reach[v] if v in reach[w]}
        done |= component
        found.append((_cycle_through(graph, v), component))
    return found


def _reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    """The modules reached from ``start`` by one import or more."""
    seen, todo = set(), list(graph.get(start, ()))
    while todo:
        v = todo.pop()
        if v not in seen:
            seen.add(v)
            todo.extend(graph.get(v, ()))
    return seen


def _cycle_through(graph: dict[str, set[str]], start: str) -> list[str] | None:
    """A shortest path start -> ... -> start (breadth-first search), or None."""
    parent, frontier = {}, [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph.get(v, ())):
                if w == start:   # back at the start: walk the parents home
                    path = [v]
                    while path[-1] != start:
                        path.append(parent[path[-1]])
                    return [*reversed(path), start]
                if w not in parent:
                    parent[w] = v
                    nxt.append(w)
        frontier = nxt
    return None


# ---- step 3: the real package -------------------------------------------------

def package_sources(root: Path = PACKAGE) -> tuple[dict[str, str], set[str]]:
    """``{module: source}`` for every .py file under ``root``, and the package names."""
    sources, packages = {}, set()
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
            packages.add(".".join(parts))
        sources[".".join(parts)] = path.read_text(encoding="utf-8")
    return sources, packages


# ---- planted examples: the checker finds what it should -----------------------

def test_a_clean_mapping_has_nothing_to_report():
    sources = {"specsim": "", "specsim.rule": "import math\n",
               "specsim.exact": "from .rule import alpha\nfrom . import rule\n",
               "specsim.cli": "from .. import exact\nimport torch\n",
               "specsim.cli.main": "from ..exact import round_distribution\n"}
    assert check(sources, libraries={"torch": ("specsim.cli",)}) == []


def test_a_wrong_way_import_is_found():
    sources = {"specsim": "", "specsim.rule": "from .exact import round_distribution\n",
               "specsim.exact": "from .rule import alpha\n"}
    assert "specsim.rule:1: wrong way: base imports specsim.exact (engines)" in check(sources)


def test_a_view_may_show_a_lab_but_a_lab_may_not_import_a_view():
    sources = {"specsim": "", "specsim.labs": "", "specsim.labs.compare": "",
               "specsim.labs.family": "from ..views import scheme_view\n",
               "specsim.views": "", "specsim.views.scheme_view": "from ..labs import compare\n"}
    assert check(sources) == ["specsim.labs.family:1: wrong way: labs, bench imports specsim.views.scheme_view (views)"]


def test_a_wrong_way_import_inside_a_function_is_found():
    sources = {"specsim": "", "specsim.schemes": "", "specsim.schemes.tree": (
        "def f():\n    import specsim.plots.tree as t\n    return t\n"), "specsim.plots": "", "specsim.plots.tree": ""}
    assert check(sources) == ["specsim.schemes.tree:2: wrong way: schemes imports specsim.plots.tree (plots)"]


def test_relative_imports_resolve_from_a_package_and_a_module():
    sources = {"specsim": "", "specsim.gpt": "from . import api\n", "specsim.gpt.api": "",
               "specsim.gpt.measure": "", "specsim.gpt.measure.bench": "from ... import formulas\nfrom .. import api\n",
               "specsim.formulas": "from .gpt.measure import bench\n"}
    found = {(i.module, i.target) for m, s in sources.items()
             for i in imports_of(m, s, set(sources), {"specsim", "specsim.gpt", "specsim.gpt.measure"})}
    assert found == {("specsim.gpt", "specsim.gpt.api"), ("specsim.gpt.measure.bench", "specsim.formulas"),
                     ("specsim.gpt.measure.bench", "specsim.gpt.api"),
                     ("specsim.formulas", "specsim.gpt.measure.bench")}


def test_a_private_name_imported_across_modules_is_found():
    sources = {"specsim": "", "specsim.sampling": "def _num(x):\n    return x\n",
               "specsim.labs": "", "specsim.labs.compare": "from ..sampling import _num, draw, __doc__\n"}
    assert check(sources) == ["specsim.labs.compare:1: private name specsim.sampling._num imported"]


def test_a_private_attribute_of_another_module_is_found():
    sources = {"specsim": "", "specsim.sampling": "def _num(x):\n    return x\n",
               "specsim.labs": "", "specsim.labs.compare": (
                   "from .. import sampling as s\n\ndef f(x):\n    return s._num(x) + s.__name__\n")}
    assert check(sources) == ["specsim.labs.compare:4: private name specsim.sampling._num used"]


def test_a_private_attribute_through_an_absolute_import_is_found():
    sources = {"specsim": "", "specsim.sampling": "", "specsim.views": "", "specsim.views.replay": (
        "import specsim.sampling\n\nx = specsim.sampling._row\ny = specsim.__version__\n")}
    assert check(sources) == ["specsim.views.replay:3: private name specsim.sampling._row used"]


def test_an_import_cycle_is_found_with_its_path():
    sources = {"specsim": "", "specsim.labs": "",
               "specsim.labs.checker": "from . import shrink\n",
               "specsim.labs.shrink": "from .rule_proxy import RuleError\n",
               "specsim.labs.rule_proxy": "from .checker import check_rule\n"}
    assert check(sources) == ["import cycle: specsim.labs.checker -> specsim.labs.shrink -> "
                              "specsim.labs.rule_proxy -> specsim.labs.checker"]


def test_a_tangle_is_reported_once_with_every_module_in_it():
    sources = {"specsim": "", "specsim.labs": "", "specsim.labs.a": "from . import b\n",
               "specsim.labs.b": "from . import c\nfrom . import a\n", "specsim.labs.c": "from . import a\n"}
    assert check(sources) == ["import cycle: specsim.labs.a -> specsim.labs.b -> specsim.labs.a "
                              "(the same tangle holds specsim.labs.c)"]


def test_two_cycles_are_both_found():
    sources = {"specsim": "", "specsim.labs": "", "specsim.labs.a": "from . import b\n",
               "specsim.labs.b": "from . import a\n", "specsim.labs.c": "from . import d\n",
               "specsim.labs.d": "from . import c\nfrom . import a\n"}
    assert check(sources) == ["import cycle: specsim.labs.a -> specsim.labs.b -> specsim.labs.a",
                              "import cycle: specsim.labs.c -> specsim.labs.d -> specsim.labs.c"]


def test_an_import_inside_a_function_still_closes_a_cycle():
    sources = {"specsim": "", "specsim.labs": "",
               "specsim.labs.checker": "from . import shrink\n",
               "specsim.labs.shrink": "def f():\n    from .checker import check_rule\n"}
    assert check(sources) == ["import cycle: specsim.labs.checker -> specsim.labs.shrink -> specsim.labs.checker"]


def test_an_importlib_import_is_read_like_an_import_statement():
    sources = {"specsim": "", "specsim.rule": "import importlib\n\ndef f():\n"
                                             "    return importlib.import_module('specsim.exact')\n",
               "specsim.exact": "", "specsim.labs": "",
               "specsim.labs.a": "from importlib import import_module\nx = import_module('.b', __package__)\n",
               "specsim.labs.b": "y = __import__('specsim.labs.a')\n"}
    assert check(sources) == ["specsim.rule:4: wrong way: base imports specsim.exact (engines)",
                              "import cycle: specsim.labs.a -> specsim.labs.b -> specsim.labs.a"]


def test_an_fstring_importlib_import_may_load_any_module_under_its_prefix():
    sources = {"specsim": "", "specsim.schemes": "import importlib\n\ndef f(name):\n"
                                                 "    return importlib.import_module(f'specsim.{name}')\n",
               "specsim.plots": "", "specsim.rule": ""}
    assert check(sources) == ["specsim.schemes:4: wrong way: schemes imports specsim.plots (plots)"]


def test_banned_libraries_are_found():
    sources = {"specsim": "", "specsim.labs": "", "specsim.labs.family": "import plotly.graph_objects as go\n",
               "specsim.plots": "", "specsim.plots.charts": "import plotly.graph_objects as go\n",
               "specsim.views": "", "specsim.views.page": "import streamlit as st\n",
               "specsim.exact": "def f():\n    import torch\n"}
    assert check(sources) == ["specsim.exact:2: imports torch (only specsim.gpt (specsim.cli inside a function) may)",
                              "specsim.labs.family:1: imports plotly (only specsim.plots may)",
                              "specsim.views.page:1: imports streamlit (nothing in specsim may)"]


def test_the_cli_may_import_torch_inside_a_command_only():
    sources = {"specsim": "", "specsim.cli": "import torch\n\ndef run():\n    import torch\n"}
    assert check(sources) == ["specsim.cli:1: imports torch (only specsim.gpt (specsim.cli inside a function) may)"]


def test_a_heavy_import_at_start_is_found_with_its_chain():
    sources = {"specsim": "", "specsim.cli": "from . import exact_cmds\n\ndef f():\n    import scipy\n",
               "specsim.cli.exact_cmds": "from ..gpt.specs import parse_spec\n",
               "specsim.gpt": "import torch\n", "specsim.gpt.specs": "import re\n"}
    assert loaded_at_start(sources) == [
        "torch loads at start: torch <- specsim.gpt <- specsim.gpt.specs <- specsim.cli.exact_cmds <- specsim.cli"]


def test_a_module_in_no_layer_is_found():
    assert check({"specsim": "", "specsim.newthing": ""}) == [
        "specsim.newthing: in no layer (place it in LAYERS and in specsim/__init__.py)"]


# ---- the real package ---------------------------------------------------------

def test_every_module_is_read():
    sources, packages = package_sources()
    assert {"specsim.rule", "specsim.schemes.chain", "specsim.gpt.measure.bench", "specsim.cli"} <= set(sources)
    assert {"specsim", "specsim.schemes", "specsim.gpt", "specsim.gpt.measure"} <= packages


def test_the_package_docstring_names_every_layer():
    doc = ast.get_docstring(ast.parse((PACKAGE / "__init__.py").read_text(encoding="utf-8")))
    for _, names in LAYERS:
        for name in names:
            short = name.removeprefix("specsim").lstrip(".")
            if short:
                assert re.search(rf"\b{short}\b", doc), f"specsim/__init__.py does not name {short}"


README = PACKAGE / "README.md"


def readme_layers(text: str) -> list[tuple[str, set[str]]]:
    """The layer table of ``specsim/README.md``: ``(layer, {module names})`` per row, top row first.

    A row reads ``| layer | `a`, `b/` (words) |``; each name in backquotes is a
    module (``rule`` -> ``specsim.rule``) or a package (``schemes/`` ->
    ``specsim.schemes``); words outside backquotes are comments.
    """
    rows, in_table = [], False
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("|") else None
        if cells and cells[:2] == ["layer", "modules"]:
            in_table = True
        elif in_table and cells is None:
            break
        elif in_table and not set(cells[0]) <= {"-", " "}:
            names = {"specsim." + n.rstrip("/").replace("/", ".") for n in re.findall(r"`([^`]+)`", cells[1])}
            rows.append((cells[0], names))
    return rows


def test_the_readme_table_parser_reads_names_and_skips_words():
    text = ("intro\n\n| layer | modules |\n| --- | --- |\n| base | `rule`, `pair` |\n"
            "| views | `views/` (what a page shows) |\n\nafter | `x` |\n")
    assert readme_layers(text) == [("base", {"specsim.rule", "specsim.pair"}), ("views", {"specsim.views"})]


def test_the_readme_layer_table_is_layers():
    # one source of truth: the table a contributor reads is the one this file enforces, row for row
    table = readme_layers(README.read_text(encoding="utf-8"))
    expected = [(layer, set(names) - {"specsim"}) for layer, names in LAYERS]   # the root package goes unnamed
    assert [layer for layer, _ in table] == [layer for layer, _ in expected], "the README's rows are not LAYERS'"
    for (layer, shown), (_, names) in zip(table, expected):
        assert shown == names, (f"README row {layer!r}: missing {sorted(names - shown)}, "
                                f"not in LAYERS {sorted(shown - names)}")


def test_the_cli_starts_without_heavy_imports():
    sources, packages = package_sources()
    problems = loaded_at_start(sources, packages=packages)
    assert not problems, "\n".join(problems)


def test_the_app_uses_no_private_name_of_the_package():
    # app/ may import any layer, but only what a module offers: its public names
    sources, packages = package_sources()
    modules = set(sources)
    problems = []
    for path in sorted((ROOT / "app").rglob("*.py")):
        name = "app." + ".".join(path.relative_to(ROOT / "app").with_suffix("").parts)
        source = path.read_text(encoding="utf-8")
        found = imports_of(name, source, modules, packages)
        problems += private_names(name, source, found, modules)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("kind", ["wrong way", "private name", "import cycle", ": imports ", "in no layer"])
def test_the_package_keeps_the_rules(kind):
    sources, packages = package_sources()
    problems = [p for p in check(sources, packages=packages) if kind in p]
    assert not problems, f"{len(problems)} violation(s):\n" + "\n".join(problems)
