"""A light page's response while heavy work runs, in headless Chromium (a script, not collected by pytest).

    python tests/bench_load.py [--sessions 8] [--switches 10] [--settle 1]

Starts ``streamlit run app`` on the loopback address, then:

1. idle: one tab switches between two light pages (Lessons and Home) ``switches``
   times; each switch is timed from the click until the page's title is shown
   and its run is over (as ``tests/bench_pages.py`` does);
2. loaded: ``sessions`` other browser sessions open Trees and press "Measure every
   scheme" at once (the tiny GPT bench, a minute of work alone); while they wait, the
   same tab times the same switches again;
3. the heavy sessions are waited for (bounded), each one's time to its table noted.

Prints JSON: the idle and loaded medians and their ratio (goal, issue 30: within
2x), and the heavy sessions' times (single-flight: they end together, one bench
computed for all). Bounded in count and time; nothing leaves the loopback.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

LIGHT = ("Lessons", "Home")  # sidebar labels of the two light pages
HEAVY_BUTTON = "Measure every scheme (about a minute)"


def _done(pg, title: str, timeout_ms: int = 120_000) -> None:
    pg.wait_for_function(
        """(title) => {
            const h = document.querySelector('[data-testid="stMainBlockContainer"] h1');
            const w = document.querySelector('[data-testid="stStatusWidget"]');
            return h && h.innerText.startsWith(title) && !(w && /Running|Stop/.test(w.innerText));
        }""", arg=title, timeout=timeout_ms)


def switches(tab, n: int, titles: dict) -> list:
    """``n`` timed switches between the light pages; ``titles``: sidebar label -> the page's h1."""
    out = []
    for k in range(n):
        label = LIGHT[k % 2]
        link = tab.locator(f'[data-testid="stSidebarNav"] a:has-text("{label}")').first
        start = time.perf_counter()
        link.click()
        _done(tab, titles[label])
        out.append(time.perf_counter() - start)
    return out


def main(sessions: int, n: int, settle: float = 1.0) -> int:
    from playwright.sync_api import sync_playwright

    from test_browser import CHROMIUM, CHROMIUM_ARGS, start_server

    proc, url, _ = start_server(Path(tempfile.mkdtemp()))
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            tab = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
            titles = {}
            for label, path in zip(LIGHT, ("lessons", "")):  # each light page's own title
                tab.goto(f"{url}/{path}")
                tab.wait_for_selector('[data-testid="stMainBlockContainer"] h1', timeout=60_000)
                _done(tab, "", 60_000)
                titles[label] = tab.inner_text('[data-testid="stMainBlockContainer"] h1').strip()[:20]
            switches(tab, 4, titles)  # warm
            idle = switches(tab, n, titles)
            heavy = []
            for _ in range(sessions):
                pg = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
                pg.goto(f"{url}/trees")
                pg.wait_for_selector('[data-testid="stMainBlockContainer"] h1', timeout=120_000)
                _done(pg, "", 120_000)
                heavy.append(pg)
            start = time.perf_counter()
            for pg in heavy:
                pg.get_by_role("button", name=HEAVY_BUTTON).click()
            tab.wait_for_timeout(settle * 1000)  # the bench has started (and the sessions' reruns are done)
            loaded = switches(tab, n, titles)
            ends = []
            for pg in heavy:
                pg.wait_for_selector('[data-testid="stDataFrame"]', timeout=300_000)
                ends.append(round(time.perf_counter() - start, 1))
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    idle_m, loaded_m = statistics.median(idle), statistics.median(loaded)
    print(json.dumps({"sessions": sessions, "switches": n, "settle_s": settle,
                      "idle_median_s": round(idle_m, 3), "idle_range_s": [round(min(idle), 3), round(max(idle), 3)],
                      "loaded_median_s": round(loaded_m, 3),
                      "loaded_range_s": [round(min(loaded), 3), round(max(loaded), 3)],
                      "ratio": round(loaded_m / idle_m, 2), "heavy_done_s": sorted(ends)}, indent=1))
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=8, choices=range(1, 17), metavar="1..16")
    parser.add_argument("--switches", type=int, default=10, choices=range(2, 41), metavar="2..40")
    parser.add_argument("--settle", type=float, default=1.0, metavar="SECONDS",
                        help="wait this long after the presses before timing (default 1; at most 10)")
    args = parser.parse_args()
    if not 0 <= args.settle <= 10:
        parser.error(f"--settle must be from 0 to 10 seconds, got {args.settle}")
    sys.exit(main(args.sessions, args.switches, args.settle))
