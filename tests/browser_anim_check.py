"""Play every animated figure in headless Chromium; count the frames drawn and time them.

Not collected by pytest (no ``test_`` prefix): run it by hand,
``python tests/browser_anim_check.py [OUTDIR [FIGURE ...]]``. For each figure of
``specsim.plots.anim`` it writes a self-contained HTML file (plotly.js
inline: no network), opens it at 1400 px, clicks Play, records every
``plotly_animatingframe`` event with its time, waits for the end, times five
slider jumps (``Plotly.animate`` to a frame, as a slider step does; median),
checks that the chart after the jumps is the one a full redraw of the same
data draws (under 1 % of the subplots' pixels differ clearly: frames that skip the
redraw must not leave stale colours or labels), and screenshots the page at 1400 px and at 420 px. It
prints one line per figure: frames drawn / frames total, the median gap
between frames against the speed, the median jump and "faithful" or not. Bounded: every wait has a timeout.
"""
from __future__ import annotations

import io
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from PIL import Image, ImageChops
from playwright.sync_api import sync_playwright

from specsim.views import frames

from specsim.plots import anim as plots_anim
from specsim.toy import load_model

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
LISTEN = """() => {
  const gd = document.querySelector('.js-plotly-plot');
  window.__frames = []; window.__times = []; window.__done = false;
  gd.on('plotly_animatingframe', e => { window.__frames.push(e.name); window.__times.push(performance.now()); });
  gd.on('plotly_animated', () => { window.__done = true; });
}"""
JUMP = """async () => {
  const gd = document.querySelector('.js-plotly-plot');
  const steps = gd.layout.sliders[0].steps, took = [];
  for (const j of [1, 5, 2, 4, 3]) {  // five jumps across the slider, each with its step's own arguments
    const step = steps[Math.floor(j * (steps.length - 1) / 6)];
    const t0 = performance.now();
    await Plotly.animate(gd, step.args[0], step.args[1]);
    took.push(performance.now() - t0);
  }
  took.sort((a, b) => a - b);
  return took[2];
}"""


def figures():
    """(name, figure, speed) for one figure of each kind, small enough to play in seconds."""
    m = load_model("seed")
    a = ("a",)
    yield "round", plots_anim.round_animation(frames.round_frames(m, a, 3, seed=5), 0.5), 0.5
    yield "rounds", plots_anim.round_animation(frames.round_frames(m, a, 3, seed=5, rounds=3), 0.3), 0.3
    yield "morph", plots_anim.morph_animation(frames.morph_frames(m.vocab, m.p(a), m.q(("c",)), steps=20), 0.2), 0.2
    yield "proof", plots_anim.proof_animation(frames.proof_frames(m, ("b",), 1, 3000, seed=0), 0.15), 0.15
    yield "accept", plots_anim.acceptance_animation(frames.acceptance_frames(m, a, 3, 2000, seed=0), 0.15), 0.15
    yield "alpha", plots_anim.speedup_animation(frames.speedup_frames(), 0.1), 0.1
    yield "cost", plots_anim.speedup_animation(frames.cost_frames(), 0.1), 0.1


def check(page, path: Path, total: int, speed: float, out: Path) -> dict:
    page.goto(path.as_uri())
    page.wait_for_selector(".js-plotly-plot .main-svg", timeout=30_000)
    page.evaluate(LISTEN)
    page.locator("g.updatemenu-button").first.click()
    deadline = time.monotonic() + total * speed * 3 + 15
    while time.monotonic() < deadline and not page.evaluate("window.__done"):
        time.sleep(0.2)
    drawn, times = page.evaluate("[window.__frames, window.__times]")
    gaps = [b - a for a, b in zip(times, times[1:])]
    jump = page.evaluate(JUMP)
    chart = page.locator(".js-plotly-plot .cartesianlayer")  # the subplots and the caption, not the controls
    shown = Image.open(io.BytesIO(chart.screenshot()))
    page.evaluate("() => Plotly.redraw(document.querySelector('.js-plotly-plot'))")
    redrawn = Image.open(io.BytesIO(chart.screenshot()))
    diff = ImageChops.difference(shown.convert("RGB"), redrawn.convert("RGB")).convert("L").point(lambda v: v > 40)
    share = diff.histogram()[1] / (diff.width * diff.height)  # pixels that differ clearly, as a share of the chart
    box = diff.getbbox()
    if box is not None:  # keep both for a look
        shown.save(out.with_name(out.stem + "-jumped.png"))
        redrawn.save(out.with_name(out.stem + "-redrawn.png"))
    return {"faithful": share < 0.01, "diff_share": share, "diff_box": box,
            "total": total, "drawn": len(drawn), "distinct": len(set(drawn)), "done": page.evaluate("window.__done"),
            "median_gap_ms": statistics.median(gaps) if gaps else None, "speed_ms": speed * 1000,
            "max_gap_ms": max(gaps) if gaps else None, "jump_ms": jump}


def main(out: Path, only=()) -> int:
    out.mkdir(parents=True, exist_ok=True)
    results = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        try:
            for name, fig, speed in figures():
                if only and name not in only:
                    continue
                path = out / f"{name}.html"
                fig.write_html(path, include_plotlyjs=True, auto_play=False)
                for width in (1400, 420):
                    page = browser.new_page(viewport={"width": width, "height": 900})
                    try:
                        r = check(page, path, len(fig.frames), speed, out / f"{name}-{width}.png")
                        page.screenshot(path=str(out / f"{name}-{width}.png"), full_page=True)
                    finally:
                        page.close()
                    results[f"{name}@{width}"] = r
                    print(f"{name:7} {width:4}px: drawn {r['drawn']}/{r['total']} (distinct {r['distinct']}), "
                          f"median gap {r['median_gap_ms']:.0f} ms vs speed {r['speed_ms']:.0f} ms, "
                          f"max gap {r['max_gap_ms']:.0f} ms, median slider jump {r['jump_ms']:.0f} ms, "
                          f"{'faithful' if r['faithful'] else 'NOT faithful'} "
                          f"({100 * r['diff_share']:.2f}% of pixels differ "
                          f"from a full redraw, in {r['diff_box']})", flush=True)
        finally:
            browser.close()
    (out / "results.json").write_text(json.dumps(results, indent=1))
    return 0 if all(r["distinct"] == r["total"] and r["faithful"] for r in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="anim-")), sys.argv[2:]))
