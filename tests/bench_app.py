"""Benchmark the app in AppTest (a script, not collected by pytest).

    python tests/bench_app.py [--repeats 5]

Prints JSON: for every page the median first render (a fresh AppTest session
on that page, module imports already warm in this process), the one-off cold
start of the very first page (imports included), and the median time of one
"Next step" on the Round stepper into the last event of rounds 1, 50 and 100 (goal: the step at
round 100 within 1.5x of the step at round 1: constant work per step).
Targets: a page < 1 s (the Tiny GPT page's first model load excepted), a
step < 100 ms.
"""
from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent
ENTRY = str(ROOT / "app" / "streamlit_app.py")
sys.path.insert(0, str(ROOT / "app"))
for name in list(logging.root.manager.loggerDict):  # AppTest's bare-mode warnings are noise here
    if name.startswith("streamlit"):
        logging.getLogger(name).setLevel(logging.ERROR)
from parts import nav  # noqa: E402


def first_render(path: str) -> float:
    """Seconds for a new session's first run of ``path`` (Home's run is not counted)."""
    at = AppTest.from_file(ENTRY, default_timeout=600)
    if path == nav.PAGES[0].path:
        t = time.perf_counter()
        at.run()
        return time.perf_counter() - t
    at.run()
    at.switch_page(path)
    t = time.perf_counter()
    at.run()
    elapsed = time.perf_counter() - t
    assert not at.exception, [e.value for e in at.exception]
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--steps", type=int, default=15)
    parser.add_argument("--stepper-only", action="store_true", help="skip the page render times")
    args = parser.parse_args()

    t = time.perf_counter()
    AppTest.from_file(ENTRY, default_timeout=600).run()
    cold = time.perf_counter() - t

    pages = {}
    for page in [] if args.stepper_only else nav.PAGES:
        times = [first_render(page.path) for _ in range(args.repeats)]
        pages[page.title] = {"first_render_s": round(times[0], 4), "median_s": round(statistics.median(times), 4)}

    at = AppTest.from_file(ENTRY, default_timeout=600).run()
    at.switch_page("views/stepper.py").run()
    by_round = {}
    for target in (1, 50, 100):
        # "Next round" goes to the end of the round shown, then to the end of the next one
        while (lambda pl: (pl.round + 1, pl.event))(at.session_state["stepper"]["player"]) < (target, 1):
            at.button(key="stepper-round").click().run()
        steps = []
        for _ in range(args.steps):  # the same step each time: into the round's last event (its emit)
            at.button(key="stepper-prev").click().run()
            t = time.perf_counter()
            at.button(key="stepper-next").click().run()
            steps.append(time.perf_counter() - t)
        assert at.session_state["stepper"]["player"].round + 1 == target and not at.exception
        by_round[target] = round(statistics.median(steps), 4)
    print(json.dumps({
        "cold_start_home_s": round(cold, 4),
        "pages": pages,
        "stepper_step_s": {"median_at_round": by_round, "steps_each": args.steps,
                           "round_100_over_round_1": round(by_round[100] / by_round[1], 2)},
        "notes": "first_render_s: the first fresh session in this process (for Tiny GPT: includes loading "
                 "torch and the model pair); median_s: median over repeats (caches warm).",
    }, indent=2))


if __name__ == "__main__":
    main()
