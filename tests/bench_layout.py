"""Where each page's main chart lands, in headless Chromium (a script, not collected by pytest).

    python tests/bench_layout.py [--pages home,stepper] [--widths 1280x720,420x900] [--presenter] [--shots DIR]

Starts ``streamlit run app`` on a free port (as tests/test_browser.py does) and opens every page
in a fresh tab at each viewport. Per page and viewport it prints, as JSON:

- ``chart_top``: the top y (px, from the top of the page) of the page's main chart, the figure the
  page is about (``MAIN_CHART``: its Streamlit key), and ``screens``: that top in viewport heights
  (goal: under 1 at 1280×720, under 1.5 at 420 px);
- ``overlaps``: pairs of page elements whose boxes overlap (neither inside the other);
- ``cut``: elements wider than the window (cut at its right edge), and chart text (titles, legends,
  axis labels) drawn outside its chart;
- ``load_s``: seconds from opening the address to the chart drawn and the run over.

Screenshots of the first screen and of the whole page go to ``--shots`` (default test-artifacts/layout/):
open them and look. Every wait has a timeout; nothing leaves the loopback address.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))  # test_browser imports tests.bench_layout


def main_charts() -> dict:
    """url path -> the Streamlit key of the page's main chart (None: the page has no chart, its text is the
    point), from the app's page registry (``app/parts/nav.PAGES``, ``chart=``)."""
    if str(ROOT / "app") not in sys.path:
        sys.path.insert(0, str(ROOT / "app"))
    from parts import nav
    return {p.url: p.chart for p in nav.PAGES}


MAIN_CHART = main_charts()
VIEWPORTS = {"1280x720": (1280, 720), "420x900": (420, 900)}

CHART_TOP_JS = """(key) => {
    const main = document.querySelector('[data-testid="stMain"]');
    const el = key ? document.querySelector('.st-key-' + key) : null;
    if (!el) return null;
    return el.getBoundingClientRect().top + (main ? main.scrollTop : 0) + window.scrollY;
}"""

# element boxes that overlap, elements cut at the right edge, chart text outside its chart
LAYOUT_JS = """() => {
    const main = document.querySelector('[data-testid="stMain"]');
    const dy = (main ? main.scrollTop : 0) + window.scrollY;
    const name = e => (e.className && typeof e.className === 'string' ?
        (e.className.match(/st-key-[\\w-]+/) || [e.getAttribute('data-testid') || e.tagName])[0] :
        e.getAttribute('data-testid') || e.tagName) + ':' + (e.innerText || e.textContent || '').trim().slice(0, 30);
    // the part of an element one can see: its box clipped by every box that scrolls it (a table's box of
    // fixed height), up to the page's own scroller
    const shown = e => { let r = e.getBoundingClientRect(); r = {left: r.left, right: r.right, top: r.top, bottom: r.bottom};
        for (let p = e.parentElement; p && p !== main; p = p.parentElement) {
            const s = getComputedStyle(p);
            if (!/auto|scroll|hidden/.test(s.overflowY + s.overflowX)) continue;
            const c = p.getBoundingClientRect();
            r = {left: Math.max(r.left, c.left), right: Math.min(r.right, c.right),
                 top: Math.max(r.top, c.top), bottom: Math.min(r.bottom, c.bottom)};
        }
        return r; };
    const visible = e => { const r = shown(e); const s = getComputedStyle(e);
        return r.right - r.left > 1 && r.bottom - r.top > 1 && s.visibility !== 'hidden' && s.display !== 'none'; };
    const boxes = [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stElementContainer"]')]
        .filter(visible).filter(e => !e.closest('[data-testid="stExpanderDetails"]') ||
                                     e.closest('details[open]'));
    const overlaps = [];
    for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
        const a = boxes[i], b = boxes[j];
        if (a.contains(b) || b.contains(a)) continue;
        const r = shown(a), s = shown(b);
        const w = Math.min(r.right, s.right) - Math.max(r.left, s.left);
        const h = Math.min(r.bottom, s.bottom) - Math.max(r.top, s.top);
        if (w > 4 && h > 4) overlaps.push([name(a), name(b), Math.round(r.top + dy)]);
    }
    const width = document.documentElement.clientWidth;
    const cut = boxes.filter(e => shown(e).right > width + 1).map(name);
    for (const gd of document.querySelectorAll('[data-testid="stMain"] .js-plotly-plot')) {
        const frame = gd.getBoundingClientRect();
        for (const t of gd.querySelectorAll('.gtitle, .xtitle, .ytitle, .legendtext, .annotation-text, .xtick text, .ytick text')) {
            const r = t.getBoundingClientRect();
            if (r.width < 1) continue;
            if (r.left < frame.left - 1 || r.right > frame.right + 1 || r.top < frame.top - 1 || r.bottom > frame.bottom + 1)
                cut.push('chart text outside its chart: ' + (t.textContent || '').slice(0, 30));
        }
        const labels = [...gd.querySelectorAll('.gtitle, .legend, .xtitle, .ytitle')].filter(visible);
        for (let i = 0; i < labels.length; i++) for (let j = i + 1; j < labels.length; j++) {
            const r = labels[i].getBoundingClientRect(), s = labels[j].getBoundingClientRect();
            const w = Math.min(r.right, s.right) - Math.max(r.left, s.left);
            const h = Math.min(r.bottom, s.bottom) - Math.max(r.top, s.top);
            if (w > 2 && h > 2) overlaps.push(['chart ' + labels[i].getAttribute('class').split(' ')[0],
                                               labels[j].getAttribute('class').split(' ')[0] + ': ' +
                                               (labels[j].textContent || '').slice(0, 30), Math.round(r.top + dy)]);
        }
    }
    const block = document.querySelector('[data-testid="stMainBlockContainer"]');
    return {overlaps, cut, page_height: Math.round(block.getBoundingClientRect().height)};
}"""


def wait_page(pg, key: str | None, timeout_ms: int = 120_000) -> bool:
    """Wait until the page's title is shown and no run is going, then (up to 30 s more) for its main
    chart to be drawn; returns whether it was (a page that never draws it is reported, not waited on)."""
    idle = """() => {
        const h = document.querySelector('[data-testid="stMainBlockContainer"] h1');
        const w = document.querySelector('[data-testid="stStatusWidget"]');
        return h && !(w && /Running|Stop/.test(w.innerText));
    }"""
    pg.wait_for_function(idle, timeout=timeout_ms)
    if key is not None:
        try:
            pg.wait_for_selector(f".st-key-{key} .main-svg", timeout=30_000)
        except Exception:  # playwright's TimeoutError
            return False
        pg.wait_for_function(idle, timeout=timeout_ms)
    pg.wait_for_timeout(400)  # plotly lays out once more after its first draw
    return True


def chart_top(pg, path: str) -> float | None:
    return pg.evaluate(CHART_TOP_JS, MAIN_CHART[path])


def measure(browser, url: str, path: str, size: tuple, shots: Path | None, query: str = "") -> dict:
    width, height = size
    ctx = browser.new_context(viewport={"width": width, "height": height})
    pg = ctx.new_page()
    start = time.perf_counter()
    pg.goto(f"{url}/{path}{query}")
    drawn = wait_page(pg, MAIN_CHART[path], 300_000 if path == "tiny_gpt" else 120_000)
    out = {"load_s": round(time.perf_counter() - start, 2)}
    if not drawn:
        out["missing"] = "the main chart was not drawn within 30 s of the page's run"
    top = chart_top(pg, path)
    out.update({"chart": MAIN_CHART[path], "chart_top": None if top is None else round(top),
                "screens": None if top is None else round(top / height, 2)}, **pg.evaluate(LAYOUT_JS))
    errors = pg.locator('[data-testid="stException"]').count()
    if errors:
        out["exceptions"] = errors
    if shots is not None:
        stem = f"{path or 'home'}-{width}{'-presenter' if query else ''}"
        pg.screenshot(path=str(shots / f"{stem}-first-screen.png"))
        full = min(max(out["page_height"] + 200, height), 8000)
        pg.set_viewport_size({"width": width, "height": full})
        pg.wait_for_timeout(700)
        pg.screenshot(path=str(shots / f"{stem}-whole.png"))
    ctx.close()
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", default=",".join(p or "home" for p in MAIN_CHART),
                        help="comma-separated url paths (home for /)")
    parser.add_argument("--widths", default=",".join(VIEWPORTS), help="comma-separated WxH viewports")
    parser.add_argument("--presenter", action="store_true", help="open every page with ?presenter=1")
    parser.add_argument("--shots", default=str(ROOT / "test-artifacts" / "layout"), help="'' for none")
    args = parser.parse_args(argv)
    from test_browser import app_in_chromium

    pages = ["" if p == "home" else p for p in args.pages.split(",")]
    unknown = [p for p in pages if p not in MAIN_CHART]
    if unknown:
        parser.error(f"unknown page(s) {unknown}; choose from {[p or 'home' for p in MAIN_CHART]}")
    sizes = {w: tuple(int(x) for x in w.split("x")) for w in args.widths.split(",")}
    shots = Path(args.shots) if args.shots else None
    if shots is not None:
        shots.mkdir(parents=True, exist_ok=True)
    results = {}
    with app_in_chromium() as (url, browser):
        for path in pages:
            for label, size in sizes.items():
                results.setdefault(path or "home", {})[label] = measure(
                    browser, url, path, size, shots, "?presenter=1" if args.presenter else "")
                print(path or "home", label, json.dumps(results[path or "home"][label]), file=sys.stderr)
    print(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
