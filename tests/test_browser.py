"""The app in a real browser: `streamlit run app` and headless Chromium.

Starts the app exactly as the README says (``streamlit run app`` from the
repository root, headless, on a free port), opens every page in Debian's
Chromium through Playwright's sync API, waits for the page's main chart to be
drawn, asserts that no exception block appears, clicks through a round on
the stepper and saves a screenshot of every page under ``test-artifacts/``.
Skipped only when /usr/bin/chromium (or playwright) is absent.
"""
from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]

# url path -> (title shown in the sidebar, does the page draw a plotly chart?)
PAGES = {
    "": "Home",
    "lessons": "Lessons",
    "stepper": "Round stepper",
    "residual": "Residual explorer",
    "exactness": "Exactness",
    "speedup": "Speedup",
    "pitfalls": "Pitfalls lab",
    "tiny_gpt": "Tiny GPT",
}
WEIGHTS = (ROOT / "specsim" / "gpt" / "weights" / "manifest.json").exists()
CHARTS = {"stepper", "residual", "exactness", "speedup", "pitfalls", ""} | ({"tiny_gpt"} if WEIGHTS else set())
SLOW = {"tiny_gpt": 240_000}  # first model load (torch import, weights)

if not Path(CHROMIUM).exists():
    pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium)", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install playwright)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    port = free_port()
    exe = shutil.which("streamlit")
    cmd = ([exe] if exe else [sys.executable, "-m", "streamlit"]) + [
        "run", "app", "--server.headless", "true", "--server.port", str(port)]
    env = dict(os.environ, STREAMLIT_BROWSER_GATHER_USAGE_STATS="false")
    log_path = tmp_path_factory.mktemp("streamlit") / "server.log"
    log = open(log_path, "w")
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"`{' '.join(cmd)}` exited: {log_path.read_text()}")
        try:
            if urllib.request.urlopen(url + "/_stcore/health", timeout=1).read() == b"ok":
                break
        except OSError:
            time.sleep(0.3)
    else:
        proc.terminate()
        raise RuntimeError("streamlit did not answer on /_stcore/health within 60 s")
    yield url
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture()
def page(browser):
    ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    pg = ctx.new_page()
    yield pg
    ctx.close()


def wait_idle(pg, timeout=60_000) -> None:
    """Wait until the app's script run is over (the 'running' status widget is gone)."""
    pg.wait_for_selector('[data-testid="stApp"]', timeout=timeout)
    pg.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')"
        " || !document.querySelector('[data-testid=\"stStatusWidget\"]').innerText.includes('Running')",
        timeout=timeout)


def open_page(pg, server, path: str):
    timeout = SLOW.get(path, 60_000)
    pg.goto(f"{server}/{path}")
    pg.wait_for_selector('[data-testid="stMainBlockContainer"] h1', timeout=timeout)
    if path in CHARTS:
        pg.wait_for_selector('[data-testid="stPlotlyChart"] .main-svg', timeout=timeout)
    wait_idle(pg, timeout)
    return pg


def screenshot(pg, name: str) -> None:
    """The whole page: Streamlit scrolls inside its main block, so grow the viewport to fit it."""
    ARTIFACTS.mkdir(exist_ok=True)
    pg.wait_for_timeout(300)
    height = pg.evaluate("""() => {
        const main = document.querySelector('[data-testid="stMain"]');
        const block = document.querySelector('[data-testid="stMainBlockContainer"]');
        return Math.max(main.scrollHeight, block.getBoundingClientRect().height + 200);
    }""")
    pg.set_viewport_size({"width": 1400, "height": min(max(int(height), 900), 8000)})
    pg.wait_for_timeout(600)  # plotly re-lays out on resize
    pg.screenshot(path=str(ARTIFACTS / f"{name}.png"))
    pg.set_viewport_size({"width": 1400, "height": 900})


def no_exception(pg) -> None:
    blocks = pg.locator('[data-testid="stException"]')
    assert blocks.count() == 0, blocks.first.inner_text()


@pytest.mark.parametrize("path", list(PAGES))
def test_page_renders(server, page, path):
    open_page(page, server, path)
    no_exception(page)
    assert page.get_by_text(PAGES[path]).count() >= 1
    if path == "tiny_gpt" and not WEIGHTS:  # no shipped weights: a clear error, not a traceback
        assert page.get_by_text("Cannot run the tiny GPT").count() == 1
    screenshot(page, f"page-{path or 'home'}")


def test_stepper_round(server, page):
    """Click through one round on the stepper: each click shows the next event, no exception."""
    open_page(page, server, "stepper")
    status = page.locator('[data-testid="stMain"] [data-testid="stMarkdownContainer"]',
                          has_text=re.compile(r"^round \d+ · event")).first
    sync_api.expect(status).to_contain_text("round 1 · event 1 of")
    clicks = 0
    while "emit" not in status.inner_text() and clicks < 12:
        before = status.inner_text()
        page.get_by_role("button", name="Next step", exact=True).click()
        sync_api.expect(status).not_to_have_text(before)
        clicks += 1
        assert f"event {clicks + 1} of" in status.inner_text()
        no_exception(page)
    assert "emit" in status.inner_text()  # a whole round: drafts, verify, tests, correction, emit
    page.wait_for_selector('[data-testid="stPlotlyChart"] .main-svg')
    wait_idle(page)
    screenshot(page, "stepper-after-one-round")
    page.get_by_role("button", name="Next round", exact=True).click()
    sync_api.expect(status).to_contain_text("round 2 ·")
    no_exception(page)
    page.get_by_role("button", name="Reset", exact=True).click()
    sync_api.expect(status).to_contain_text("round 1 · event 1 of")
    no_exception(page)
    # Play advances on its own (one event per 0.6 s); Pause stops it.
    page.get_by_role("button", name="Play", exact=True).click()
    sync_api.expect(status).to_contain_text("event 3 of", timeout=15_000)
    page.get_by_role("button", name="Pause", exact=True).click()
    page.get_by_role("button", name="Play", exact=True).wait_for()
    wait_idle(page)
    paused = status.inner_text()
    page.wait_for_timeout(1500)
    assert status.inner_text() == paused
    no_exception(page)
