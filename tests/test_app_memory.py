"""Settings kept per browser across reloads (app/parts/memory.py): the browser's id from the XSRF cookie."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "app"))

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


def test_the_warm_up_fills_the_caches_the_pages_read():
    """parts.warmup computes through the pages' own cached functions (bare mode: Streamlit's memory cache)."""
    from parts import cached, warmup

    warmup._work()
    assert cached.implementation_proof("vllm", warmup.N_TOKENS).exact
    assert "torch" not in warmup.MODULES and all(m.startswith("specsim.") for m in warmup.MODULES)
