"""The tiny GPT's core never leans on its lab, read from the source with ``ast``.

The core is what turns the shipped weights into tokens: the model and its KV
cache, the weights, the rule, the decoders, the drafters, and the reference
round to read first. The lab is what measures, trains, exports, proves and
audits them. Every module under ``specsim/gpt/`` sits in exactly one of the
two (a new module must be placed here and in ``specsim/gpt/README.md``'s
table), and no core module imports a lab module: not at the top, not inside a
function, not through ``importlib`` (the imports are read as
``tests/test_layers.py`` reads them). So the core can be read, and copied,
without the lab.
"""
from __future__ import annotations

import re

from tests.test_layers import PACKAGE, imports_of, package_sources

GPT = "specsim.gpt"
README = PACKAGE / "gpt" / "README.md"

# Files relative to specsim/gpt/; a folder (ending in "/") places every module under it.
CORE = ("__init__.py", "reference_round.py", "config.py", "model.py", "tokenizer.py", "weights.py",
        "checkpoint_checks.py", "rule.py", "decode.py", "rounds.py", "tree_decode.py", "trace.py", "batch.py",
        "drafters.py", "eagle.py", "specs.py", "api.py")
LAB = ("measure/", "gallery.py", "train/", "hf/", "exact_adapter.py", "audit.py", "audit_bugs.py",
       "audit_child.py", "audit_engines.py", "weights_report.py")


def file_of(module: str, packages: set[str]) -> str:
    """``specsim.gpt.measure.bench`` -> ``measure/bench.py``; a package -> its ``__init__.py``."""
    path = "/".join(module.split(".")[2:])
    if module in packages:
        return f"{path}/__init__.py" if path else "__init__.py"
    return f"{path}.py"


def part_of(module: str, packages: set[str], core=CORE, lab=LAB) -> str | None:
    """"core", "lab" or None (placed nowhere) for a module under specsim.gpt."""
    path = file_of(module, packages)
    for part, names in (("core", core), ("lab", lab)):
        if path in names or any(n.endswith("/") and path.startswith(n) for n in names):
            return part
    return None


def report(sources: dict[str, str], packages: set[str], core=CORE, lab=LAB) -> list[str]:
    """Every module under specsim.gpt placed nowhere, and every import of a lab module by a core one."""
    modules, found = set(sources), []
    for m in sorted(x for x in sources if x == GPT or x.startswith(GPT + ".")):
        part = part_of(m, packages, core, lab)
        if part is None:
            found.append(f"{file_of(m, packages)} is neither core nor lab: place it in tests/test_gpt_core.py "
                         "and the README")
        if part != "core":
            continue
        for imp in imports_of(m, sources[m], modules, packages):
            if imp.target.startswith(GPT + ".") and part_of(imp.target, packages, core, lab) == "lab":
                where = "at the top" if imp.top_level else "inside a function"
                found.append(f"core {file_of(m, packages)} imports lab {imp.target} {where} (line {imp.line})")
    return found


# ---- planted examples: the checker finds what it should -----------------------

def test_a_core_module_importing_the_lab_inside_a_function_is_found():
    sources = {GPT: "", "specsim.gpt.decode": "def f():\n    from .measure import bench\n",
               "specsim.gpt.measure": "", "specsim.gpt.measure.bench": "from ..decode import f\n"}
    packages = {GPT, "specsim.gpt.measure"}
    assert report(sources, packages, core=("__init__.py", "decode.py"), lab=("measure/",)) == [
        "core decode.py imports lab specsim.gpt.measure.bench inside a function (line 2)"]


def test_an_importlib_import_of_the_lab_is_found_and_the_lab_may_import_the_core():
    sources = {GPT: "", "specsim.gpt.api": "import importlib\nm = importlib.import_module('specsim.gpt.gallery')\n",
               "specsim.gpt.gallery": "from . import api\n"}
    assert report(sources, {GPT}, core=("__init__.py", "api.py"), lab=("gallery.py",)) == [
        "core api.py imports lab specsim.gpt.gallery at the top (line 2)"]


def test_a_module_placed_nowhere_is_found():
    sources = {GPT: "", "specsim.gpt.new": ""}
    assert report(sources, {GPT}, core=("__init__.py",), lab=()) == [
        "new.py is neither core nor lab: place it in tests/test_gpt_core.py and the README"]


# ---- the real package ---------------------------------------------------------

def test_every_gpt_module_is_core_or_lab_and_the_core_imports_no_lab_module():
    sources, packages = package_sources()
    assert "specsim.gpt.reference_round" in sources and "specsim.gpt.measure.bench" in sources
    assert report(sources, packages) == []


def test_core_and_lab_name_each_file_once():
    names = CORE + LAB
    assert len(set(names)) == len(names)
    for name in names:
        assert (PACKAGE / "gpt" / name).exists(), f"{name} is listed but not in specsim/gpt"


def readme_parts(text: str) -> dict[str, set[str]]:
    """The README's core and lab table: {"core": files, "lab": files}, from rows whose first cell names
    the part ("core: the model"), the files being the backticked names of the second cell."""
    parts = {"core": set(), "lab": set()}
    for row in re.findall(r"^\| *(core|lab)\b[^|]*\|([^|]*)\|", text, flags=re.M):
        parts[row[0]] |= set(re.findall(r"`([^`]+)`", row[1]))
    return parts


def test_the_readme_table_names_the_core_and_the_lab_and_where_to_start():
    text = README.read_text(encoding="utf-8")
    assert readme_parts(text) == {"core": set(CORE), "lab": set(LAB)}
    section = text[text.index("## Core and lab"):]
    assert "start" in section[:600].lower() and "`reference_round.py`" in section[:600]
