"""Load check for the app served to a class (not collected by pytest): `python tests/load_app.py`.

Starts `streamlit run app` bound to 127.0.0.1 on a free port and drives it with
headless Chromium pages (Playwright, Debian's /usr/bin/chromium):

1. a light page (Residual explorer) opened ``--samples`` times one after the other on
   an idle server: time until its chart is drawn;
2. ``--sessions`` sessions open the Trees page and press "Measure every scheme" at
   the same moment; meanwhile the light page is timed again, ``--samples`` times.
   Each session's time to its table is reported, and the bench's caption (it
   carries the measured target step in ms) from every session: one identical
   caption everywhere means one bench ran and every session got it.

Bounded: at most 16 sessions, 20 samples, every wait has a timeout and the whole
run stops after ``--deadline`` seconds. The machine is shared: the figures are
single runs on a busy 2-core box, read them as orders of magnitude.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
HOST = "127.0.0.1"  # never another interface


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def start_server(log_path: Path):
    port = free_port()
    exe = shutil.which("streamlit")
    cmd = ([exe] if exe else [sys.executable, "-m", "streamlit"]) + [
        "run", "app", "--server.headless", "true", "--server.address", HOST, "--server.port", str(port)]
    env = dict(os.environ, STREAMLIT_BROWSER_GATHER_USAGE_STATS="false")
    env.pop("SPECSIM_PAIRS_DIR", None)
    log = open(log_path, "w")
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://{HOST}:{port}"
    deadline = time.time() + 60
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited: {log_path.read_text()[-2000:]}")
        try:
            if urllib.request.urlopen(url + "/_stcore/health", timeout=1).read() == b"ok":
                return proc, url
        except OSError:
            time.sleep(0.3)
    proc.terminate()
    raise RuntimeError("streamlit did not answer within 60 s")


async def light_page(browser, url: str) -> float:
    """Seconds from opening the Residual explorer to its first chart drawn."""
    ctx = await browser.new_context(viewport={"width": 1200, "height": 800})
    page = await ctx.new_page()
    t = time.perf_counter()
    try:
        await page.goto(url + "/residual", wait_until="commit", timeout=180_000)
        await page.wait_for_selector(".js-plotly-plot", timeout=180_000)
        return time.perf_counter() - t
    finally:
        await ctx.close()


async def light_samples(browser, url: str, n: int, stop=None) -> list[float]:
    out = []
    for _ in range(n):
        if stop is not None and stop.is_set():
            break
        out.append(await light_page(browser, url))
    return out


async def bench_session(browser, url: str, start: asyncio.Event) -> tuple[float, str]:
    """Open the Trees page, wait for the common start, press Measure; (seconds to the table, its caption)."""
    ctx = await browser.new_context(viewport={"width": 1400, "height": 900})
    page = await ctx.new_page()
    await page.goto(url + "/trees", wait_until="commit", timeout=180_000)
    button = page.get_by_role("button", name="Measure every scheme")
    await button.wait_for(timeout=180_000)
    await page.wait_for_function(IDLE, timeout=180_000)  # a click during a script run can be dropped
    await start.wait()
    t = time.perf_counter()
    await button.click()
    caption = page.get_by_text("held-out prompts ×")
    await caption.wait_for(timeout=600_000)
    elapsed = time.perf_counter() - t
    text = await caption.inner_text()
    await ctx.close()
    return elapsed, text


IDLE = ("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')"
        " || !/Running|Stop/.test(document.querySelector('[data-testid=\"stStatusWidget\"]').innerText)")


def summary(xs: list[float]) -> str:
    if not xs:
        return "no samples"
    return (f"median {statistics.median(xs):.2f} s, min {min(xs):.2f}, max {max(xs):.2f} "
            f"(n = {len(xs)})")


async def main_async(args) -> None:
    from playwright.async_api import async_playwright
    with tempfile.TemporaryDirectory() as tmp:
        proc, url = start_server(Path(tmp) / "server.log")
        try:
            async with async_playwright() as pw:
                browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                await light_page(browser, url)  # first load: imports, not counted
                idle = await light_samples(browser, url, args.samples)
                print(f"light page (Residual explorer) on an idle server: {summary(idle)}", flush=True)
                start = asyncio.Event()
                sessions = [asyncio.create_task(bench_session(browser, url, start)) for _ in range(args.sessions)]
                await asyncio.sleep(args.settle)  # let every session reach its button
                start.set()
                done = asyncio.Event()
                await asyncio.sleep(1.0)  # the heavy work has started
                busy_task = asyncio.create_task(light_samples(browser, url, args.samples, stop=done))
                results = await asyncio.gather(*sessions, return_exceptions=True)
                done.set()
                busy = await busy_task
                ok = [r for r in results if isinstance(r, tuple)]
                failed = [r for r in results if not isinstance(r, tuple)]
                print(f"{args.sessions} sessions pressed 'Measure every scheme' at once: {len(ok)} got the table, "
                      f"{len(failed)} failed {[type(f).__name__ + ': ' + str(f)[:80] for f in failed]}")
                print(f"  seconds to the table per session: {sorted(round(r[0], 1) for r in ok)}")
                captions = {r[1] for r in ok}
                print(f"  distinct bench captions (one = one bench shared by all): {len(captions)}")
                for c in captions:
                    print("   ", c[:160])
                print(f"light page while the heavy work ran: {summary(busy)}")
                await browser.close()
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=8, help="concurrent sessions pressing the bench (1-16)")
    ap.add_argument("--samples", type=int, default=5, help="light-page loads per condition (1-20)")
    ap.add_argument("--settle", type=float, default=20.0, help="seconds for the sessions to open the Trees page")
    ap.add_argument("--deadline", type=float, default=900.0, help="stop the whole run after this many seconds")
    args = ap.parse_args()
    if not (1 <= args.sessions <= 16 and 1 <= args.samples <= 20):
        ap.error("--sessions must be 1-16 and --samples 1-20")
    if not Path(CHROMIUM).exists():
        sys.exit(f"{CHROMIUM} is not installed")
    try:
        asyncio.run(asyncio.wait_for(main_async(args), args.deadline))
    except asyncio.TimeoutError:
        sys.exit(f"stopped after the {args.deadline:.0f} s deadline")


if __name__ == "__main__":
    main()
