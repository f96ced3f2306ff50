"""The Audit page after a run, in headless Chromium (a script, not collected by pytest): screenshots to look at.

    python tests/bench_audit_page.py [--shots DIR] [--query "audit-long=1&audit-long-k=6&audit-n=100"]

Opens the page with its settings in the address (``parts.memory``'s links), clicks "Run the audit", waits for the
verdict (a success or error box; at most 10 minutes) and saves the first screen, the sidebar's settings and the whole main column
(``--widths 1280x720,420x900``). Nothing leaves the loopback address.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

from tests.bench_layout import VIEWPORTS  # noqa: E402
from tests.test_browser import app_in_chromium  # noqa: E402

VERDICT = '[data-testid="stAlertContentSuccess"], [data-testid="stAlertContentError"]'


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shots", default=str(ROOT / "test-artifacts" / "audit-page"))
    ap.add_argument("--query", default="audit-long=1&audit-long-k=6&audit-n=100&audit-seq=1")
    ap.add_argument("--widths", default="1280x720")
    args = ap.parse_args(argv)
    shots = Path(args.shots)
    shots.mkdir(parents=True, exist_ok=True)
    with app_in_chromium() as (url, browser):
        for name in args.widths.split(","):
            width, height = VIEWPORTS[name]
            page = browser.new_page(viewport={"width": width, "height": height})
            page.goto(f"{url}/audit?{args.query}")
            page.get_by_role("button", name="Run the audit").click(timeout=120_000)
            page.wait_for_selector(VERDICT, timeout=600_000)
            page.wait_for_selector('[data-testid="stMetric"]', timeout=60_000)
            page.wait_for_selector(".st-key-audit-curves .main-svg", timeout=60_000)  # the curves drawn
            page.screenshot(path=str(shots / f"audit-{name}.png"))
            if width >= 640:  # narrower, the sidebar starts collapsed
                page.locator('[data-testid="stSidebarUserContent"]').screenshot(
                    path=str(shots / f"audit-{name}-side.png"))
            page.locator('[data-testid="stMainBlockContainer"]').screenshot(path=str(shots / f"audit-{name}-main.png"))
            print(name, page.inner_text(VERDICT))
            page.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
