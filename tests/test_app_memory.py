"""Settings kept per browser across reloads (app/parts/memory.py): the browser's id from the XSRF cookie."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "app"))
sys.path.insert(0, str(ROOT / "tests"))

from parts import memory  # noqa: E402


def cookie(token: bytes, mask: bytes, stamp: str = "0") -> str:
    """Tornado's version-2 XSRF cookie: 2|mask|token xor mask|timestamp."""
    return "|".join(["2", mask.hex(), bytes(b ^ mask[i % len(mask)] for i, b in enumerate(token)).hex(), stamp])


def test_one_browser_one_id_whatever_the_mask():
    token = bytes(range(16))
    a = memory.browser_id(cookie(token, b"\x01\x02\x03\x04"))
    b = memory.browser_id(cookie(token, b"\xff\x00\x10\x20", "99"))
    assert a == b and len(a) == 64
    assert memory.browser_id(cookie(bytes(range(1, 17)), b"\x01\x02\x03\x04")) != a  # another browser


def test_a_malformed_cookie_gives_no_id():
    for bad in (None, "", "junk", "1|00|00|0", "2|zz|00|0", "2||00|0", "2|01|", "2|01|0g|0"):
        assert memory.browser_id(bad) is None, bad


def test_the_warm_up_fills_the_caches_the_pages_read(monkeypatch):
    """parts.warmup computes through the pages' own cached functions (bare mode: Streamlit's memory cache)."""
    from parts import cached, warmup

    monkeypatch.setenv("SPECSIM_WARM_GPT", "0")  # the library's part alone (the Tiny GPT's part: below)
    warmup._work()
    assert cached.implementation_proof("vllm", warmup.N_TOKENS).exact
    assert "torch" not in warmup.MODULES and all(m.startswith("specsim.") for m in warmup.MODULES)


@pytest.mark.skipif(not (ROOT / "specsim" / "gpt" / "weights" / "manifest.json").exists(), reason="no shipped weights")
def test_the_warm_up_leaves_the_tiny_gpt_page_nothing_to_load_or_generate():
    """After ``gpt_runs.preload`` the page, opened with its defaults, finds its pair and its generation in
    the shared stores (it adds none: the keys agree), and shows that very generation; nothing was timed."""
    from apptest import open_page
    from parts import gpt_runs

    store = gpt_runs.store()
    for part in store.values():
        part._data.clear()
    gpt_runs.preload()
    assert (len(store["pairs"]), len(store["gens"]), len(store["runs"])) == (1, 1, 0)
    gen = next(iter(store["gens"]._data.values()))
    at = open_page("views/tiny_gpt.py", timeout=300)
    assert (len(store["pairs"]), len(store["gens"]), len(store["runs"])) == (1, 1, 1)  # only the timing added
    assert next(iter(store["gens"]._data.values())) is gen
    from sections import gpt_text_section
    pair = next(iter(store["pairs"]._data.values()))
    text = gpt_text_section.text_html(gpt_runs.DEFAULTS["gpt-prompt"], gpt_text_section.pieces(gen, pair.vocab))
    assert text in [m.value for m in at.markdown]
