"""Render the lessons' static figures: ``python -m specsim.plots.lesson_figs [NAME_OR_PREFIX ...] [--png]``.

Each registered ``LessonFigure`` is drawn with its controls' defaults and
turned into ``lessons/figures/<name>.svg`` by the plotly.js that ships inside
the plotly package (``Plotly.toImage``), run in headless Chromium through
Playwright: offline, no kaleido, no downloaded browser. The SVG starts with a
comment carrying the figure's hash (``figure_hash``), which the tests compare
with what the code draws now.

``Math.random`` is seeded in the page, so the ids plotly.js draws at random
(clip paths) come out the same on every run and a figure that did not change
gives the same file. ``--png`` also writes a PNG of each figure under
``/tmp/specsim-figures/`` (never committed) to look at.
"""
from __future__ import annotations

import argparse
import json
import sys
import urllib.parse
from pathlib import Path

from specsim.plots.lesson_figs import REGENERATE, figure_hash, lessons_named, registry, select, stamp, svg_path

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
PNG_DIR = Path("/tmp/specsim-figures")

# a small seeded generator in place of Math.random (mulberry32), before plotly.js loads
SEEDED_RANDOM = """
(() => { let s = 20240556;
  Math.random = () => { s |= 0; s = (s + 0x6D2B79F5) | 0; let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t; return ((t ^ (t >>> 14)) >>> 0) / 4294967296; }; })();
"""


def plotly_js() -> Path:
    """The plotly.js bundled with the installed plotly package (the one its figures are written for)."""
    import plotly

    path = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    if not path.exists():
        raise FileNotFoundError(f"plotly.js is not at {path}")
    return path


def to_data(url: str) -> bytes:
    """The bytes of a data: URL as Plotly.toImage returns it (URL-encoded SVG, base64 PNG)."""
    import base64

    head, _, body = url.partition(",")
    return base64.b64decode(body) if head.endswith(";base64") else urllib.parse.unquote(body).encode("utf-8")


def render(names: list, figures: dict, png: bool = False, out=sys.stdout, directory: Path | None = None) -> list:
    """Write lessons/figures/NAME.svg (or ``directory``/NAME.svg) for each of ``names``, and /tmp PNGs with
    ``png``; the paths written. Called where an asyncio loop runs (a notebook, a test session that started
    one), it renders from a thread of its own: Playwright's synchronous API refuses a running loop."""
    import asyncio
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _render(names, figures, png, out, directory)
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(_render, names, figures, png, out, directory).result()


def _render(names: list, figures: dict, png: bool, out, directory: Path | None) -> list:
    from playwright.sync_api import sync_playwright

    written = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.add_init_script(SEEDED_RANDOM)
            page.set_content("<!doctype html><html><head><meta charset='utf-8'></head><body></body></html>")
            page.add_script_tag(path=str(plotly_js()))
            for name in names:
                item = figures[name]
                try:
                    fig = item.figure()
                    digest = figure_hash(fig)
                    spec = json.loads(fig.to_json())
                    size = {"width": item.width, "height": item.height}
                    page.evaluate(SEEDED_RANDOM)  # the same random ids whatever was drawn before
                    svg = to_data(page.evaluate(
                        "([fig, size]) => Plotly.toImage(fig, {format: 'svg', ...size})", [spec, size])).decode()
                except Exception as err:
                    first = str(err).strip().splitlines()[0] if str(err).strip() else ""
                    raise RuntimeError(f"figure {name}: {type(err).__name__}: {first}") from err
                path = svg_path(name) if directory is None else Path(directory) / f"{name}.svg"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(stamp(name, digest) + "\n" + svg + "\n", encoding="utf-8")
                written.append(path)
                print(f"{path}  {item.width}x{item.height}  sha256={digest[:12]}", file=out)
                if png:
                    PNG_DIR.mkdir(parents=True, exist_ok=True)
                    data = to_data(page.evaluate(
                        "([fig, size]) => Plotly.toImage(fig, {format: 'png', scale: 1, ...size})", [spec, size]))
                    target = PNG_DIR / f"{name}.png"
                    target.write_bytes(data)
                    written.append(target)
                    print(f"  {target}", file=out)
        finally:
            browser.close()
    return written


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog=REGENERATE, description="Render the lessons' figures to lessons/figures/NAME.svg (headless Chromium).")
    parser.add_argument("names", nargs="*", metavar="NAME_OR_PREFIX",
                        help="figure names or prefixes (\"03-\", \"03-residual\"); all figures when none")
    parser.add_argument("--png", action="store_true", help=f"also write a PNG of each figure under {PNG_DIR}")
    parser.add_argument("--list", action="store_true", help="list the registered figures and whether each SVG is "
                                                            "up to date (no browser)")
    args = parser.parse_args(argv)
    try:
        figures = registry(lessons_named(args.names))
        names = select(args.names, figures)
    except (ValueError, ImportError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if args.list:
        from specsim.plots.lesson_figs import svg_hash

        for name in names:
            path = svg_path(name)
            state = ("missing" if not path.exists() else
                     "up to date" if svg_hash(path.read_text(encoding="utf-8")) == figure_hash(figures[name].figure())
                     else "stale")
            print(f"{name}: {state}")
        return 0
    if not names:
        print("no lesson figures are registered yet (specsim/plots/lesson_figs/lNN.py, list FIGURES)")
        return 0
    if not Path(CHROMIUM).exists():
        print(f"error: {CHROMIUM} is not installed (apt-get install chromium)", file=sys.stderr)
        return 2
    try:
        render(names, figures, png=args.png)
    except Exception as err:  # a figure that fails to draw or render: one line naming it
        first = str(err).strip().splitlines()[0] if str(err).strip() else ""
        print(f"error: {first if isinstance(err, RuntimeError) else type(err).__name__ + ': ' + first}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
