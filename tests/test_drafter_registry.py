"""A drafter is declared once (``specsim.gpt.specs.DRAFTERS``): a new one, declared in this file alone,
reaches parsing, ``--draft``'s help, the Tiny GPT page's options and its drafter gallery, the tree refusal,
decoding and (declared ``batched``) ``gpt serve-bench``'s choices and refusal; and no code asks a drafter
what it can do with ``hasattr``/``getattr`` (every capability is a method of ``gpt.drafters.Drafter`` with a
default)."""
import ast
import json
import re
import sys
from collections import Counter
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from specsim.gpt import api, specs  # noqa: E402
from specsim.gpt.drafters import Drafter, ModelDrafter  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PROMPT = "def add(a, b):\n    return a + b\n\ndef "

pytestmark = pytest.mark.usefixtures("one_thread")  # conftest: one torch thread, restored after


class FrequentDrafter(Drafter):
    """Drafts the token seen most often so far (ties: the smallest id), as a point mass: it overrides
    ``row`` alone, so every other capability is the base class's default (no ``passes`` of its own)."""

    name = "frequent"

    def __init__(self, vocab_size: int, device):
        self.vocab_size, self.device = vocab_size, device

    def row(self, ids, path, sampling):
        counts = Counter(list(ids) + list(path))
        top = min(counts, key=lambda t: (-counts[t], t))
        q = torch.zeros(self.vocab_size, device=self.device)  # (V,)
        q[top] = 1.0
        return q


def build_frequent(spec, target, shelf):
    return FrequentDrafter(target.config.vocab_size, target.wte.weight.device)


ENTRY = specs.DrafterEntry("frequent", "frequent", build_frequent, help="the most frequent token so far",
                           about="always the character seen most often so far", tree=False, page="frequent")


@pytest.fixture
def frequent():
    specs.register(ENTRY)
    yield ENTRY
    specs.unregister(ENTRY.name)


def build_copy(spec, target, shelf):
    return ModelDrafter(shelf.small("distilled"), spec.text)


COPY = specs.DrafterEntry("distilled-copy", "distilled-copy", build_copy, help="the distilled GPT again",
                          about="the distilled small GPT, declared a second time", batched=True)


@pytest.fixture
def distilled_copy():
    """A second small GPT drafter of its own model (``batched``): what ``gpt serve-bench`` can batch."""
    specs.register(COPY)
    yield COPY
    specs.unregister(COPY.name)


def test_the_registry_names_every_drafter_once():
    """Each shipped entry parses back from its page spec to its own name; forms and names are unique."""
    entries = list(specs.DRAFTERS.values())
    assert len({e.name for e in entries}) == len({e.form for e in entries}) == len(entries)
    for e in entries:
        if e.page:
            assert specs.parse(e.page).name == e.name
    assert specs.GALLERY == specs.gallery() and all(e.form in specs.SPECS for e in entries)
    with pytest.raises(ValueError, match="registered already"):
        specs.register(entries[0])


def test_a_new_drafter_reaches_parsing_and_the_help(frequent, cli):
    assert specs.parse_spec("frequent") == ("frequent", None)
    assert "frequent" in specs.SPECS and "frequent" in specs.GALLERY
    code, out, _ = cli("gpt", "generate", "--help")
    assert code == 0 and "frequent (the most frequent token so far)" in " ".join(out.split())
    code, out, err = cli("gpt", "generate", "--prompt", "ab", "--draft", "nope", "--device", "cpu")
    assert code == 2 and "frequent" in err and err.count("\n") == 1


def test_a_new_drafter_decodes_exactly_and_is_refused_a_tree(frequent, cli):
    """Greedy speculative decoding with it equals plain greedy decoding, its drafts are what it declares,
    it makes no drafter passes (the base class's default), and a tree is refused in one line."""
    pair = api.load_pair("frequent", "cpu")
    plain = api.plain_generate(pair, PROMPT, 30, greedy=True)
    g = api.speculative_generate(pair, PROMPT, 30, "chain:3", greedy=True)
    assert g.tokens == plain.tokens and g.draft_passes == 0
    ids = pair.tokenizer.encode(PROMPT)
    for r in g.rounds:
        counts = Counter(ids)
        top = min(counts, key=lambda t: (-counts[t], t))
        assert r.drafts and r.drafts[0] == top
        ids += r.emitted
    refused = "the frequent drafter cannot draft a tree; use " + specs.forms(tree=True)
    with pytest.raises(ValueError, match=re.escape(refused)):
        api.speculative_generate(pair, PROMPT, 5, "tree:2")
    code, out, err = cli("gpt", "generate", "--prompt", PROMPT, "--tokens", "5", "--draft", "frequent",
                         "--device", "cpu", "--scheme", "tree:2,1")
    assert code == 2 and out == "" and refused in err and err.count("\n") == 1


def test_a_new_drafter_is_offered_on_the_tiny_gpt_page_and_in_its_gallery():
    """The page's options and help, and the drafter gallery's count of drafters, read the registry when drawn:
    the gallery's module is loaded here before the drafter is registered, and still counts it."""
    from specsim.views.words import number_word
    from tests.apptest import open_page
    from sections import gallery_section  # loaded before the registration below
    shipped = specs.gallery()
    specs.register(ENTRY)
    try:
        at = open_page("views/tiny_gpt.py", timeout=300)
        assert sys.modules["sections.gallery_section"] is gallery_section  # the page drew the module loaded above
        box = at.selectbox(key="gpt-draft")
        assert list(box.options) == list(specs.gallery()) and "frequent" in box.options
        assert "frequent: always the character seen most often so far" in box.help
        count = f"{number_word(len(specs.gallery())).capitalize()} ways to draft for the **same target**"
        assert specs.gallery() == shipped + ("frequent",) and any(m.value.startswith(count) for m in at.markdown)
        box.set_value("frequent")
        at.run()
        assert not at.exception and not at.error, [e.value for e in at.error]
        assert "measured" in " ".join(m.label for m in at.metric)
    finally:
        specs.unregister(ENTRY.name)


def test_serve_bench_offers_the_batched_drafters_and_refuses_the_others(frequent, distilled_copy, cli):
    """``gpt serve-bench``'s --draft choices and the library's refusal derive from ``batched``: the copy is
    offered and runs, ``frequent`` (no model of its own) and every shipped drafter not ``batched`` are refused."""
    from specsim.gpt.measure import serve_bench
    assert specs.batched() == [e.name for e in specs.DRAFTERS.values() if e.batched]
    assert "distilled-copy" in specs.batched() and "frequent" not in specs.batched()
    code, out, _ = cli("gpt", "serve-bench", "--help")
    assert code == 0 and "--draft {" + ",".join(specs.batched()) + "}" in out
    code, out, err = cli("gpt", "serve-bench", "--draft", "frequent")
    assert code == 2 and out == "" and "invalid choice: 'frequent'" in err and "'distilled-copy'" in err
    assert err.count("\n") == 1
    refusal = f"serve-bench batches a small GPT drafter ({specs.listed(specs.batched())}), not "
    for e in specs.DRAFTERS.values():
        if e.batched:
            serve_bench.check_drafter(e.page or e.form)
        else:
            with pytest.raises(ValueError, match=re.escape(refusal + (e.page or e.form))):
                serve_bench.check_drafter(e.page or e.form)
    with pytest.raises(ValueError, match=re.escape(refusal + "frequent")):
        serve_bench.serve_bench(api.load_pair("frequent", "cpu"), [1], [1], 2, 1)
    code, out, err = cli("gpt", "serve-bench", "--draft", "distilled-copy", "--batch", "1", "--gammas", "0,1",
                         "--tokens", "2", "--repeats", "1", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["draft"] == "distilled-copy" and [r["gamma"] for r in result["runs"][0]["rows"]] == [0, 1]


def test_every_shipped_tree_drafter_drafts_a_tree_and_the_others_are_refused():
    """The registry's ``tree`` agrees with what the built drafter can do."""
    for e in specs.DRAFTERS.values():
        pair = api.load_pair(e.page, "cpu")
        if e.tree:
            assert len(api.speculative_generate(pair, PROMPT, 6, "tree:2,1", greedy=True).tokens) == 6
        else:
            with pytest.raises(ValueError, match=f"the {re.escape(e.page)} drafter cannot draft a tree"):
                api.speculative_generate(pair, PROMPT, 6, "tree:2,1")


def _probes(path: Path) -> list:
    """hasattr/getattr calls in ``path`` that ask a drafter (an expression naming a draft) for a capability."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("hasattr", "getattr") \
                and len(node.args) >= 2:
            subject, what = ast.unparse(node.args[0]), node.args[1]
            named = what.value if isinstance(what, ast.Constant) else None
            if "draft" in subject or named in {"attach", "features", "own_cache", "passes"}:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_code_probes_a_drafter_with_hasattr():
    files = [p for p in (ROOT / "specsim" / "gpt").rglob("*.py")
             if not p.name.startswith("audit") and "hf" not in p.relative_to(ROOT).parts]
    files += list((ROOT / "app").rglob("*.py"))
    assert len(files) > 20
    probes = [hit for p in files for hit in _probes(p)]
    assert probes == [], "\n".join(probes)
