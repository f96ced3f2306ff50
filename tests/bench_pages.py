"""Time the app's pages in headless Chromium, as a visitor waits for them (a script, not collected by pytest).

    PYTHONPATH=. python tests/bench_pages.py [--rounds 3] [--idle 10] [--skip-gpt | --gpt-only]

Starts ``streamlit run app`` on a free port (as ``tests/test_browser.py`` does) and prints JSON:

- ``tiny_gpt``: the Tiny GPT page's first load on a **fresh server** (torch not imported yet,
  no pair loaded), twice: ``direct`` (the server's very first visit is that page) and
  ``after_home`` (a visitor opens Home, and ``--idle`` seconds later the Tiny GPT page, in a
  new browser context: the background warm-up has had that time). Each gives ``chart_s``
  (the generated text's chart is drawn: what the page is about; not the low placeholder that
  holds its place while the models load) and ``done_s`` (the run is over: the measured
  speedup shown too).
- ``cold_s``: per page, the median over ``rounds`` of a cold load: a fresh browser context
  (empty cache, new session) opening the page's address until its title is shown, its first
  chart is drawn (pages with charts) and no run is going; ``cold_median_s`` over pages.
- ``cached_s``: the same page opened again in a new tab of that browser right after (a new
  session, the browser's cache warm: a reload, or a student's second visit).
- ``switch_s``: per page, the median over ``rounds`` of a page switch in one warm tab: from
  the click on its sidebar link to the same three conditions; ``switch_median_s`` over pages.

Goals: cold median <= 3 s, Tiny GPT first load <= 5 s, a switch <= 0.7 s, on this
machine. It is a benchmark: the machine is shared, so run it when nothing else runs, and read
the spread (``*_spread_s``: [min, max]). Every wait has a timeout.
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
sys.path.insert(0, str(ROOT))  # test_browser imports tests.bench_layout

SIZE = {"width": 1280, "height": 720}
DONE = """([title, chart]) => {
    const h = document.querySelector('[data-testid="stMainBlockContainer"] h1');
    const w = document.querySelector('[data-testid="stStatusWidget"]');
    const running = w && /Running|Stop/.test(w.innerText);
    const drawn = !chart || document.querySelector('[data-testid="stPlotlyChart"] .main-svg');
    return h && h.innerText.includes(title) && drawn && !running;
}"""
CHART = """() => [...document.querySelectorAll('[data-testid="stPlotlyChart"] .js-plotly-plot')].some(
    d => d.querySelector('.main-svg') && !(d.layout && d.layout.meta === 'placeholder'))"""  # a real chart


def _done(pg, title: str, chart: bool, timeout_ms: int = 60_000) -> None:
    """The page's title holds ``title``, its first chart is drawn (if it has one) and no run is going."""
    pg.wait_for_function(DONE, arg=[title, chart], timeout=timeout_ms)


def _spread(xs: list) -> list:
    return [round(min(xs), 3), round(max(xs), 3)]


def tiny_gpt_first(browser, idle: float) -> dict:
    """The Tiny GPT page's first load on two fresh servers: opened first, and opened after Home."""
    from test_browser import start_server
    out = {}
    for how in ("direct", "after_home"):
        proc, url, _ = start_server(Path(tempfile.mkdtemp()))
        try:
            if how == "after_home":
                ctx = browser.new_context(viewport=SIZE)
                home = ctx.new_page()
                home.goto(url)
                _done(home, "", True)
                time.sleep(idle)
                ctx.close()
            ctx = browser.new_context(viewport=SIZE)
            pg = ctx.new_page()
            start = time.perf_counter()
            pg.goto(f"{url}/tiny_gpt")
            pg.wait_for_function(CHART, timeout=240_000)
            chart = time.perf_counter() - start
            _done(pg, "Tiny GPT", True, 240_000)
            pg.wait_for_function(CHART, timeout=240_000)  # still the real chart once the run is over
            out[how] = {"chart_s": round(chart, 3), "done_s": round(time.perf_counter() - start, 3)}
            ctx.close()
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    return out


def _sidebar_link(tab, title: str):
    more = tab.locator('[data-testid="stSidebarNavViewButton"]')
    if more.count() and "more" in more.first.inner_text().lower():
        more.first.click()
    return tab.locator('[data-testid="stSidebarNav"] a', has_text=title).first


def pages_timed(browser, rounds: int) -> dict:
    """Cold loads and switches of every page but the Tiny GPT one, on one server warmed by a first visit."""
    from parts import nav
    from test_browser import CHARTS, start_server

    pages = [(p.path.split("/")[-1][:-3], p.title) for p in nav.PAGES if not p.path.endswith("tiny_gpt.py")]
    chart = {name: (name in CHARTS or name == "home") for name, _ in pages}
    proc, url, _ = start_server(Path(tempfile.mkdtemp()))
    switch, cold, cached = ({n: [] for n, _ in pages} for _ in range(3))
    heads = {}
    try:
        tab = browser.new_context(viewport=SIZE).new_page()
        for name, _ in pages:  # warm the server (imports, caches), and read each page's own h1
            tab.goto(f"{url}/{'' if name == 'home' else name}")
            _done(tab, "", chart[name])
            heads[name] = tab.inner_text('[data-testid="stMainBlockContainer"] h1').strip()[:20]
        for _ in range(rounds):
            for name, title in pages:
                link = _sidebar_link(tab, title)
                start = time.perf_counter()
                link.click()
                _done(tab, heads[name], chart[name])
                switch[name].append(time.perf_counter() - start)
            for name, _ in pages:
                ctx = browser.new_context(viewport=SIZE)
                for into in (cold, cached):  # an empty cache, then a new session in the same browser
                    pg = ctx.new_page()
                    start = time.perf_counter()
                    pg.goto(f"{url}/{'' if name == 'home' else name}")
                    _done(pg, heads[name], chart[name])
                    into[name].append(time.perf_counter() - start)
                    pg.close()
                ctx.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    med = {k: {n: round(statistics.median(v), 3) for n, v in d.items()}
           for k, d in (("cold", cold), ("cached", cached), ("switch", switch))}
    return {"cold_s": med["cold"], "cold_median_s": round(statistics.median(med["cold"].values()), 3),
            "cold_spread_s": {n: _spread(v) for n, v in cold.items()},
            "cached_s": med["cached"], "cached_median_s": round(statistics.median(med["cached"].values()), 3),
            "switch_s": med["switch"], "switch_median_s": round(statistics.median(med["switch"].values()), 3),
            "switch_spread_s": {n: _spread(v) for n, v in switch.items()}}


def main(rounds: int, skip_gpt: bool, idle: float, gpt_only: bool = False) -> int:
    from playwright.sync_api import sync_playwright
    from test_browser import CHROMIUM, CHROMIUM_ARGS

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        result = {"rounds": rounds, "viewport": f"{SIZE['width']}x{SIZE['height']}"}
        if not skip_gpt:
            result["tiny_gpt"] = tiny_gpt_first(browser, idle)
        if not gpt_only:
            result.update(pages_timed(browser, rounds))
        browser.close()
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, choices=range(1, 11), metavar="1..10")
    parser.add_argument("--idle", type=float, default=10.0, help="seconds between Home and the Tiny GPT page")
    parser.add_argument("--skip-gpt", action="store_true", help="only the other pages")
    parser.add_argument("--gpt-only", action="store_true", help="only the Tiny GPT page's first loads")
    args = parser.parse_args()
    sys.exit(main(args.rounds, args.skip_gpt, args.idle, args.gpt_only))
