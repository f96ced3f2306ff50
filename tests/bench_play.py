"""Time the round stepper's Play in headless Chromium, as a viewer sees it (a script, not collected by pytest).

    PYTHONPATH=. python tests/bench_play.py [--seconds 15] [--speeds 0.3 0.6]

Starts ``streamlit run app`` on a free port (as ``tests/test_browser.py`` does), opens the Round
stepper at 1280x720, picks each play speed in the sidebar, presses Play and watches the page itself:
a MutationObserver in the page stamps every change of the caption's "step N" (what the viewer reads)
and of the chart's title (what the chart shows). Prints JSON per speed:

- ``events``: steps seen while playing; ``skipped``: steps never shown (0 is the goal);
- ``caption_ms`` / ``chart_ms``: how long each event was shown (from one change to the next; the
  event Play was pressed on and the last one are left out): ``median``, ``p10``/``p90``, ``min``/``max``,
  and ``within_20pct``, the share shown for the chosen time +-20 % (goal: all), also for the events
  after the first round (``after_first_round``), once the browser has drawn each kind of chart once;
- ``chart_lag_ms``: how long after its caption each event's chart was drawn (its spread is what moves
  ``chart_ms`` away from the caption's times);
- ``left_page``: Play left running, the Speedup page opened for 3 s, then the stepper again: the step
  before leaving and after coming back (equal: Play stopped when the page was left) and the button's
  label (``Play``).

Goal: every event shown, each for the chosen time +-20 %, and Play stops when the page
is left. It is a benchmark: the machine is shared, so run it when nothing else runs.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))  # test_browser imports tests.bench_layout

SIZE = {"width": 1280, "height": 720}
WATCH = """() => {
    window.__cap = []; window.__chart = []; window.__round = {};
    const stamp = (list, value) => {
        const last = list[list.length - 1];
        if (value !== null && (!last || last[1] !== value)) list.push([performance.now(), value]);
    };
    const read = () => {
        const cap = [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stMarkdownContainer"]')]
            .find(e => /^round \\d+ · event/.test(e.innerText));
        const m = cap && cap.innerText.match(/step (\\d+)/);
        stamp(window.__cap, m ? +m[1] : null);
        const r = cap && cap.innerText.match(/^round (\\d+)/);
        if (m && r) window.__round[m[1]] = +r[1];
        const title = document.querySelector('[data-testid="stPlotlyChart"] .gtitle');
        stamp(window.__chart, title ? title.textContent : null);
    };
    new MutationObserver(read).observe(document.querySelector('[data-testid="stMain"]'),
                                       {subtree: true, childList: true, characterData: true, attributes: true});
    read();
}"""
STEP = """() => {
    const cap = [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stMarkdownContainer"]')]
        .find(e => /^round \\d+ · event/.test(e.innerText));
    const m = cap && cap.innerText.match(/step (\\d+)/);
    return m ? +m[1] : null;
}"""


def shown_for(stamps: list, speed: float, first_round_steps: int = 0) -> dict:
    """Display times (ms) of the events between the first change and the last one."""
    ms = [b[0] - a[0] for a, b in zip(stamps[1:], stamps[2:])]
    later = ms[first_round_steps:]

    def share(xs):
        return round(sum(abs(x - 1000 * speed) <= 200 * speed for x in xs) / len(xs), 3) if xs else None
    if not ms:
        return {"n": 0}
    q = statistics.quantiles(ms, n=10) if len(ms) > 1 else ms * 9
    return {"n": len(ms), "median": round(statistics.median(ms)), "p10": round(q[0]), "p90": round(q[-1]),
            "min": round(min(ms)), "max": round(max(ms)), "within_20pct": share(ms),
            "after_first_round": {"n": len(later), "within_20pct": share(later)}}


def play(pg, url: str, speed: float, seconds: float) -> dict:
    from playwright.sync_api import expect
    from test_browser import open_page, toggle, wait_idle
    open_page(pg, url, "stepper")
    pace = pg.locator('[data-testid="stSidebar"] [data-testid="stSlider"] input[type="range"]').last
    pace.focus()
    for _ in range(4):  # the speed slider's steps are 0.3, 0.6, 1.0, 2.0: go to the left end, then right
        pace.press("ArrowLeft")
    for _ in range([0.3, 0.6, 1.0, 2.0].index(speed)):
        pace.press("ArrowRight")
    expect(pace).to_have_attribute("aria-valuetext", str(speed))  # the slider writes 0.3, 0.6, 1.0, 2.0
    wait_idle(pg)
    pg.evaluate(WATCH)
    toggle(pg, "Play", "Pause")
    pg.wait_for_timeout(int(1000 * seconds))
    toggle(pg, "Pause", "Play")
    cap, chart, rounds = pg.evaluate("() => [window.__cap, window.__chart, window.__round]")
    steps = [n for _, n in cap]
    first = sum(1 for n in steps[1:-1] if rounds.get(str(n)) == rounds.get(str(steps[0])))  # Play's first round
    return {"events": len(steps), "skipped": sorted(set(range(steps[0], steps[-1] + 1)) - set(steps)),
            "caption_ms": shown_for(cap, speed, first), "chart_ms": shown_for(chart, speed, first),
            "chart_lag_ms": lag(cap, chart)}


def lag(cap: list, chart: list) -> dict:
    """How long after its caption each event's chart was drawn (ms): the k-th change of each, the first left out."""
    ms = [b[0] - a[0] for a, b in zip(cap[1:], chart[1:])]
    if len(ms) < 2:
        return {"n": len(ms)}
    q = statistics.quantiles(ms, n=10)
    return {"n": len(ms), "median": round(statistics.median(ms)), "p10": round(q[0]), "p90": round(q[-1]),
            "max": round(max(ms))}


def left_page(pg, url: str) -> dict:
    """Play, leave for the Speedup page for 3 s, come back: Play stopped where it was."""
    from test_browser import open_page, toggle
    open_page(pg, url, "stepper")
    toggle(pg, "Play", "Pause")
    pg.wait_for_timeout(1500)
    left_at = pg.evaluate(STEP)
    pg.locator('[data-testid="stSidebarNav"] a', has_text="Speedup").first.click()
    pg.wait_for_selector('[data-testid="stMainBlockContainer"] h1:has-text("Speedup")')
    pg.wait_for_timeout(3000)
    pg.locator('[data-testid="stSidebarNav"] a', has_text="Round stepper").first.click()
    pg.wait_for_selector('[data-testid="stMainBlockContainer"] h1:has-text("Round stepper")')
    pg.wait_for_timeout(2000)
    after = pg.evaluate(STEP)
    pg.wait_for_timeout(2000)
    later = pg.evaluate(STEP)
    label = "Play" if pg.get_by_role("button", name="Play", exact=True).count() else "Pause"
    return {"step_when_left": left_at, "step_on_return": after, "step_2s_later": later, "button": label,
            "stopped": after == later and after - left_at <= 1}


def main(seconds: float, speeds: list) -> int:
    from test_browser import app_in_chromium
    with app_in_chromium() as (url, browser):
        result = {"viewport": f"{SIZE['width']}x{SIZE['height']}", "seconds": seconds, "speeds": {}}
        for speed in speeds:
            ctx = browser.new_context(viewport=SIZE)
            result["speeds"][f"{speed:g}"] = play(ctx.new_page(), url, speed, seconds)
            ctx.close()
        ctx = browser.new_context(viewport=SIZE)
        result["left_page"] = left_page(ctx.new_page(), url)
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=15.0, help="how long each speed plays (2..120)")
    parser.add_argument("--speeds", type=float, nargs="+", default=[0.3, 0.6], choices=[0.3, 0.6, 1.0, 2.0])
    args = parser.parse_args()
    if not 2 <= args.seconds <= 120:
        parser.error("--seconds must be between 2 and 120")
    sys.exit(main(args.seconds, args.speeds))
