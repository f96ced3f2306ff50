"""The app served to a class: hostile model files and visitors, bounded shared
stores, heavy work computed once and a few at a time, no raw exception, no server path reachable."""
from __future__ import annotations

import ast
import itertools
import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "app"
ENTRY = APP / "streamlit_app.py"
sys.path.insert(0, str(APP))
from parts import gpt_runs  # noqa: E402
from parts import own_pairs  # noqa: E402
from parts import heavy  # noqa: E402
from parts import tokens  # noqa: E402
from parts import widgets  # noqa: E402

MODEL_PAGES = {"views/stepper.py": "stepper", "views/exactness.py": "exact", "views/speedup.py": "sp",
               "views/pitfalls.py": "pit", "views/workbench.py": "wb", "views/trees.py": "trees"}
HOSTILE = ["![img](http://x/t.png)", "<img/src=x/onerror=alert(1)>", "**b**", "$x$", "[l](javascript:1)"]  # no spaces: a token has none
RAW = ["![", "<img", "](javascript", "](http", "**b**", "$x$"]  # none may reach Markdown unescaped


def run(at):
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def open_page(path, timeout=60, state=None):
    at = AppTest.from_file(str(ENTRY), default_timeout=timeout)
    for k, v in (state or {}).items():
        at.session_state[k] = v
    run(at)
    at.switch_page(path)
    return run(at)


def upload(at, key, name, data):
    at.selectbox(key=f"{key}-model").set_value(widgets.UPLOAD)
    run(at)
    at.file_uploader(key=f"{key}-upload").upload(name, data, "application/json")
    return run(at)


def model_json(vocab, name="m") -> bytes:
    """An order-1 model over ``vocab``: p uniform, q skewed towards the first token (so drafts get rejected)."""
    n = len(vocab)
    p = [f"1/{n}"] * n
    q = ["1/2"] + [f"1/{2 * (n - 1)}"] * (n - 1) if n > 1 else ["1"]
    return json.dumps({"name": name, "vocab": vocab, "order": 1, "target": {t: p for t in vocab},
                       "draft": {t: q for t in vocab}}).encode()


TEXT_KINDS = ("title", "header", "subheader", "markdown", "caption", "success", "info", "warning", "error")


def shown_text(at) -> list[str]:
    """Every string the page hands to Streamlit's Markdown renderer."""
    return [str(el.value) for kind in TEXT_KINDS for el in at.get(kind)]


def unescaped(text: str) -> str:
    """``text`` with Markdown's backslash escapes and HTML entities removed: what could still be markup."""
    return re.sub(r"&#?\w+;", "", re.sub(r"\\[^\w\s]", "", text))


# -- 6. markup from a model file --------------------------------------------------------------

def test_html_text_and_md_keep_hostile_tokens_literal():
    import html
    for t in HOSTILE:
        assert html.unescape(tokens.html_text(t)) == t
        for raw in RAW:
            assert raw not in unescaped(tokens.md(t)) and raw not in unescaped(tokens.html_text(t))


def _click_through(at, path):
    """Walk the page so that rounds with tokens are on screen."""
    if path == "views/stepper.py":
        for _ in range(3):
            at.button(key="stepper-round").click()
            run(at)
    if path == "views/trees.py":
        for _ in range(2):
            at.button(key="trees-round").click()
            run(at)


@pytest.mark.parametrize("path", list(MODEL_PAGES))
def test_hostile_tokens_never_reach_markdown_unescaped(path):
    key = MODEL_PAGES[path]
    at = open_page(path)
    upload(at, key, "hostile.json", model_json(HOSTILE, name="![n](http://x/n.png) <img src=y>"))
    _click_through(at, path)
    texts = shown_text(at)
    assert at.title and texts
    for text in texts:
        for raw in RAW:
            assert raw not in unescaped(text), (raw, text[:300])
    if path in ("views/stepper.py", "views/trees.py"):  # these pages name tokens in their text: escaped
        joined = "\n".join(texts)
        assert any(tokens.md(t) in joined or tokens.html_text(t) in joined for t in HOSTILE), joined[:500]


@pytest.mark.parametrize("scheme", ["block:2", "tree:2,1"])
def test_hostile_tokens_stay_escaped_in_every_event_of_a_block_and_a_tree(scheme):
    """The stepper's sentences, stream and legend for every event of two block or tree rounds."""
    at = AppTest.from_file(str(ENTRY), default_timeout=60)
    at.query_params["scheme"] = scheme
    run(at)
    at.switch_page("views/stepper.py")
    run(at)
    upload(at, "stepper", "hostile.json", model_json(HOSTILE))
    seen = set()
    while at.session_state["stepper"]["player"].round < 2:
        pl = at.session_state["stepper"]["player"]
        seen.add(pl.trace.events()[pl.event]["kind"])
        for text in shown_text(at):
            for h in HOSTILE:  # each token only in its escaped forms (our own ** around one is markup)
                text = text.replace(tokens.md(h), "TOKEN").replace(tokens.html_text(h), "TOKEN")
            for raw in RAW:
                assert raw not in unescaped(text), (raw, text[:300])
        at.button(key="stepper-next").click()
        run(at)
    assert {"draft", "verify", "emit"} <= seen and ({"weights", "stop"} <= seen or {"accept", "reject"} & seen)


# -- 4. degenerate slider ranges ----------------------------------------------------------------

@pytest.mark.parametrize("size", [64, 2])
@pytest.mark.parametrize("path", list(MODEL_PAGES))
def test_every_toy_page_takes_a_tiny_and_a_large_vocabulary(path, size):
    """A 64-token model gives the Trees page a budget range of one value (the slider crashed);
    every page must draw, with refusals as one error line each."""
    at = open_page(path)
    upload(at, MODEL_PAGES[path], f"v{size}.json", model_json([f"t{i}" for i in range(size)]))
    _click_through(at, path)
    assert at.title
    assert all("\n" not in e.value and len(e.value) < 400 for e in at.error), [e.value for e in at.error]


def test_int_slider_with_one_value_is_a_caption():
    at = AppTest.from_string("import sys; sys.path.insert(0, %r)\nfrom parts import widgets\n"
                             "import streamlit as st\nst.session_state['v'] = widgets.int_slider('budget', 1, 1, 4, key='b')"
                             % str(APP)).run()
    assert not at.exception and at.session_state["v"] == 1 and "budget: 1" in at.caption[0].value


# -- 5. text boxes are measured before they are parsed -----------------------------------------

def test_residual_refuses_a_huge_row_before_parsing_it():
    at = open_page("views/residual.py")
    at.session_state["res-p"] = "1/2, " * 1_200_000  # 6,000,000 characters, as a websocket client can send
    # (the browser's max_chars is not enforced by the server; AppTest's set_value would cut the text)
    t = time.perf_counter()
    run(at)
    elapsed = time.perf_counter() - t
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and f"the limit is {widgets.MAX_TEXT:,}" in errors[0] and "\n" not in errors[0], errors
    assert elapsed < 30  # a generous bound that catches a hang, not a timing


def test_trees_shape_box_is_capped():
    at = open_page("views/trees.py")
    at.session_state["trees-shape"] = "1," * 5000 + "1"
    run(at)
    assert any("the limit is 40" in e.value for e in at.error), [e.value for e in at.error]


def test_capped_text():
    assert widgets.capped_text("x" * widgets.MAX_TEXT, "p") == "x" * widgets.MAX_TEXT
    assert widgets.one_line(ValueError("first\nsecond")) == "first" and widgets.one_line(KeyError()) == "KeyError"


# -- 2. bounded shared stores -------------------------------------------------------------------

def _cache_decorators():
    for path in sorted(APP.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for d in node.decorator_list:
                    name = ast.unparse(d.func if isinstance(d, ast.Call) else d)
                    if name in ("st.cache_data", "st.cache_resource"):
                        yield f"{path.name}:{node.name}", d


def test_every_app_cache_has_max_entries():
    found = list(_cache_decorators())
    assert len(found) >= 12
    for where, d in found:
        assert isinstance(d, ast.Call) and any(k.arg == "max_entries" for k in d.keywords), where


def test_shared_stores_are_bounded():
    from sections import gallery_section
    from sections import tree_gpt_section
    assert gpt_runs.store()["pairs"].max_entries == gpt_runs.MAX_PAIRS <= 4
    assert gpt_runs.store()["runs"].max_entries == gpt_runs.MAX_RUNS
    assert tree_gpt_section._store()["runs"].max_entries == tree_gpt_section.MAX_RUNS
    assert gallery_section._results().max_entries == gallery_section.MAX_RESULTS


def test_store_evicts_the_least_recently_used():
    s = heavy.Store(3)
    for k in range(10):
        s.get_or_compute(k, lambda k=k: k)
        if k == 5:
            s.get(4)  # used: kept longer than 3 and 5
    assert len(s) == 3 and s.get(9) == 9 and s.get(6) is None


# -- 7. heavy work: computed once, a few at a time ---------------------------------------------

def _threads(n, target):
    ts = [threading.Thread(target=target) for _ in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
        assert not t.is_alive()


def test_concurrent_identical_requests_compute_once():
    s, calls, results = heavy.Store(4), [], []
    gate = threading.Event()

    def compute():
        calls.append(1)
        gate.wait(5)  # hold the flight open until every thread has asked
        return "bench"

    def ask():
        results.append(s.get_or_compute("rows", compute, heavy=True))

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for t in threads:
        t.start()
    time.sleep(0.3)
    gate.set()
    for t in threads:
        t.join(60)
    assert calls == [1] and results == ["bench"] * 8


def test_heavy_slots_cap_concurrent_work_and_say_so():
    now, most, waited = [0], [0], []
    lock = threading.Lock()

    def work():
        with heavy.slot(on_wait=lambda: waited.append(1)):
            with lock:
                now[0] += 1
                most[0] = max(most[0], now[0])
            time.sleep(0.05)
            with heavy.slot():  # re-entrant: a heavy step inside a heavy step does not wait on itself
                pass
            with lock:
                now[0] -= 1

    _threads(6, work)
    assert most[0] == heavy.HEAVY_SLOTS and len(waited) >= 1 and heavy.running() == 0


def test_failed_computation_is_not_stored():
    s = heavy.Store(2)
    with pytest.raises(ValueError):
        s.get_or_compute("k", lambda: (_ for _ in ()).throw(ValueError("bad prompt")))
    assert "k" not in s and s.get_or_compute("k", lambda: 1) == 1


def test_light_exact_work_takes_no_slot():
    assert isinstance(heavy.exact_slot(10), type(heavy.exact_slot(0)))
    assert not isinstance(heavy.exact_slot(heavy.EXACT_HEAVY + 1), type(heavy.exact_slot(0)))


def test_streamlit_cache_data_computes_a_key_once_under_concurrency():
    """The installed Streamlit holds a lock per cache key: the exact engine's wrappers are single-flight."""
    import streamlit as st
    calls = []

    @st.cache_data(max_entries=4, show_spinner=False)
    def slow(x):
        calls.append(x)
        time.sleep(0.5)
        return x * 2

    out = []
    _threads(4, lambda: out.append(slow(21)))
    assert calls == [21] and out == [42] * 4


# -- 8. plotly imported at start ----------------------------------------------------------------

def test_app_start_imports_plotly_trace_classes():
    """A fresh process that runs the entry file has plotly's lazily imported trace classes loaded,
    so sessions opening chart pages at once never see a half-imported module."""
    code = ("import sys, runpy; sys.path.insert(0, %r); runpy.run_path(%r)\n"
            "from plotly.graph_objs import _bar, _scatter, _heatmap\n"
            "print(all(m in sys.modules for m in ('plotly.graph_objs._bar', 'plotly.graph_objs._heatmap', "
            "'plotly.graph_objs._contour', 'plotly.subplots')))") % (str(APP), str(ENTRY))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.stdout.strip().endswith("True"), out.stderr[-2000:]


# -- 1. your own pair: only the operator's directory --------------------------------------------

@pytest.fixture
def pairs_root(tmp_path, monkeypatch):
    """An operator's directory: a and b checkpoints, an alias of a, one without config.json, a symlink
    out of the directory and a hidden one; the environment variable set."""
    root, outside = tmp_path / "pairs", tmp_path / "outside"
    for d in (root / "a", root / "b", root / "nocfg", root / ".hidden", outside):
        d.mkdir(parents=True)
        if d.name != "nocfg":
            (d / "config.json").write_text("{}")
    (root / "alias").symlink_to(root / "a")
    (root / "out").symlink_to(outside)
    (root / "file.json").write_text("{}")
    monkeypatch.setenv(own_pairs.PAIRS_ENV, str(root))
    return root


def test_own_pairs_are_off_by_default(monkeypatch):
    monkeypatch.delenv(own_pairs.PAIRS_ENV, raising=False)
    assert own_pairs.pairs_dir() is None and own_pairs.own_choices() == [] and own_pairs.own_path("a") is None


def test_own_pairs_come_only_from_the_operator_directory(pairs_root):
    assert own_pairs.own_choices() == ["a", "alias", "b"]
    real_a = os.path.realpath(pairs_root / "a")
    assert own_pairs.own_path("a") == own_pairs.own_path("alias") == real_a  # one key for one checkpoint
    for name in ["out", "nocfg", ".hidden", "file.json", "../outside", str(pairs_root / "a"), "/etc", "", "a/"]:
        assert own_pairs.own_path(name) is None, name


def test_tiny_gpt_page_takes_no_path_from_a_visitor(monkeypatch, tmp_path):
    monkeypatch.delenv(own_pairs.PAIRS_ENV, raising=False)
    at = open_page("views/tiny_gpt.py", timeout=300, state={"gpt-n": 8})
    assert not [t for t in at.text_input if "own" in str(t.key)] and not at.error
    assert any("Off on this server" in c.value for c in at.caption)
    (tmp_path / "ckpt").mkdir()
    (tmp_path / "ckpt" / "config.json").write_text("{}")
    monkeypatch.setenv(own_pairs.PAIRS_ENV, str(tmp_path))
    at = open_page("views/tiny_gpt.py", timeout=300, state={"gpt-n": 8})
    assert at.selectbox(key="gpt-own-target").options == ["(the shipped pair)", "ckpt"]
    at.selectbox(key="gpt-own-target").set_value("ckpt")
    at.selectbox(key="gpt-own-draft").set_value("ckpt")
    run(at)
    errors = [e.value for e in at.error]  # an empty config.json: one line, and no server path in it
    assert len(errors) == 1 and "\n" not in errors[0] and str(tmp_path) not in errors[0], errors


# -- 3. damaged checkpoints: one error line, never a traceback --------------------------------

@pytest.fixture(scope="module")
def damaged(tmp_path_factory):
    """An operator directory with the shipped draft exported and four damaged targets."""
    transformers = pytest.importorskip("transformers")
    transformers.logging.set_verbosity_error()
    import shutil

    import torch
    from safetensors.torch import load_file, save_file

    from specsim.gpt.hf import export as hf_export
    root = tmp_path_factory.mktemp("pairs")
    hf_export.export_hf(str(root / "draft"), "draft-distilled")
    hf_export.export_hf(str(root / "good"), "target")
    # a truncated model.safetensors
    shutil.copytree(root / "good", root / "truncated")
    w = root / "truncated" / "model.safetensors"
    w.write_bytes(w.read_bytes()[: w.stat().st_size // 2])
    # NaN weights
    shutil.copytree(root / "good", root / "nan")
    w = root / "nan" / "model.safetensors"
    tensors = load_file(str(w))
    tensors = {k: torch.full_like(v, float("nan")) if v.is_floating_point() else v for k, v in tensors.items()}
    save_file(tensors, str(w), metadata={"format": "pt"})
    # a 100,000-deep config.json
    shutil.copytree(root / "good", root / "deep")
    (root / "deep" / "config.json").write_text("[" * 100_000 + "]" * 100_000)
    # a pickle that would run code when loaded, and no safetensors
    shutil.copytree(root / "good", root / "pickle")
    (root / "pickle" / "model.safetensors").unlink()
    marker = root / "pwned"

    class Evil:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))
    import pickle
    (root / "pickle" / "pytorch_model.bin").write_bytes(pickle.dumps({"x": Evil()}))
    return root


@pytest.mark.parametrize("bad", ["truncated", "nan", "deep", "pickle"])
def test_damaged_checkpoint_is_one_error_line(damaged, bad, monkeypatch):
    monkeypatch.setenv(own_pairs.PAIRS_ENV, str(damaged))
    at = open_page("views/tiny_gpt.py", timeout=300, state={"gpt-n": 8, "gpt-own-target": bad,
                                                            "gpt-own-draft": "draft"})
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "\n" not in errors[0] and len(errors[0]) < 400, errors
    assert "Traceback" not in errors[0] and str(damaged) not in errors[0]
    assert not (damaged / "pwned").exists()  # no code ran from the checkpoint


def test_readme_states_the_caps_the_app_sets():
    from sections import gallery_section
    from sections import tree_gpt_section
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Serving the app to a class"):text.index("## Notation")]
    for phrase in (f"at most {gpt_runs.MAX_PAIRS} loaded model pairs", f"{gpt_runs.MAX_RUNS}\n  finished Tiny GPT runs",
                   f"{tree_gpt_section.MAX_RUNS} tree generations", f"{gallery_section.MAX_RESULTS} drafter galleries",
                   f"at most {heavy.HEAVY_SLOTS} heavy computation", f"limited to {widgets.MAX_TEXT:,} characters",
                   own_pairs.PAIRS_ENV, "--server.address 127.0.0.1"):
        assert phrase in section, phrase
