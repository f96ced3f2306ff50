"""Time the app's pages in headless Chromium (a script, not collected by pytest).

    python tests/bench_pages.py [--rounds 3]

Starts ``streamlit run app`` on a free port (as tests/test_browser.py does),
visits every page once to warm the server, then prints JSON:

- ``switch_s``: per page, the median over rounds of a page switch in a warm
  tab: from the click on its sidebar link until its title is shown, its first
  chart is drawn (pages with charts) and the script run is over;
- ``cold_s``: per page, a fresh browser context (no cache, new session)
  opening the page's address, until the same three conditions hold.

Targets: a switch under 1 s, a cold page under 4 s, on a quiet
machine. Every wait has a timeout; the Tiny GPT page is left out (its first
model load is a separate figure, `specsim gpt bench`).
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
sys.path.insert(0, str(ROOT / "app"))
sys.path.insert(0, str(ROOT / "tests"))


def _done(pg, title: str, chart: bool, timeout_ms: int = 30_000) -> None:
    """The page's title is ``title``, its first chart is drawn (if it has one) and no run is going."""
    pg.wait_for_function(
        """([title, chart]) => {
            const h = document.querySelector('[data-testid="stMainBlockContainer"] h1');
            const w = document.querySelector('[data-testid="stStatusWidget"]');
            const running = w && /Running|Stop/.test(w.innerText);
            const drawn = !chart || document.querySelector('[data-testid="stPlotlyChart"] .main-svg');
            return h && h.innerText.includes(title) && drawn && !running;
        }""", arg=[title, chart], timeout=timeout_ms)


def main(rounds: int) -> int:
    from playwright.sync_api import sync_playwright

    from parts import nav
    from test_browser import CHARTS, CHROMIUM, CHROMIUM_ARGS, start_server

    pages = [(p.path.split("/")[-1][:-3], p.title) for p in nav.PAGES if not p.path.endswith("tiny_gpt.py")]
    titles = {}
    proc, url, _ = start_server(Path(tempfile.mkdtemp()))
    switch, cold = {name: [] for name, _ in pages}, {}
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            tab = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
            for name, title in pages:  # warm the server, and read each page's own h1
                tab.goto(f"{url}/{'' if name == 'home' else name}")
                tab.wait_for_selector('[data-testid="stMainBlockContainer"] h1', timeout=60_000)
                _done(tab, "", name in CHARTS or name == "home", 60_000)
                titles[name] = tab.inner_text('[data-testid="stMainBlockContainer"] h1').strip()[:20]
            for _ in range(rounds):
                for name, title in pages:
                    link = tab.locator(f'[data-testid="stSidebarNav"] a:has-text("{title}")').first
                    start = time.perf_counter()
                    link.click()
                    _done(tab, titles[name], name in CHARTS or name == "home")
                    switch[name].append(time.perf_counter() - start)
            for name, _ in pages:
                ctx = browser.new_context(viewport={"width": 1400, "height": 900})
                pg = ctx.new_page()
                start = time.perf_counter()
                pg.goto(f"{url}/{'' if name == 'home' else name}")
                _done(pg, titles[name], name in CHARTS or name == "home")
                cold[name] = time.perf_counter() - start
                ctx.close()
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    print(json.dumps({"rounds": rounds,
                      "switch_s": {k: round(statistics.median(v), 3) for k, v in switch.items()},
                      "switch_spread_s": {k: [round(min(v), 3), round(max(v), 3)] for k, v in switch.items()},
                      "cold_s": {k: round(v, 3) for k, v in cold.items()}}, indent=1))
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, choices=range(1, 11), metavar="1..10")
    sys.exit(main(parser.parse_args().rounds))
