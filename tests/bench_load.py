"""A light page's response while heavy work runs (a script, not collected by pytest).

    python tests/bench_load.py [--client ws|browser] [--sessions 8] [--switches 10] [--settle 1]

Starts ``streamlit run app`` on the loopback address, then:

1. idle: the light pages (Lessons and Home) are timed ``switches`` times each way:
   - ``browser``: one headless Chromium tab clicks between them; each switch is timed
     from the click until the page's title is shown and its run is over (as
     ``tests/bench_pages.py`` does): the latency a user sees;
   - ``ws``: one websocket session (``tests/st_ws_client.py``) asks for the same
     pages; each is timed from the request to ``script_finished``: the server alone.
   The two alternate, one at a time, so they never overlap.
2. loaded: ``sessions`` other sessions open Trees and press "Measure every scheme" at
   once (the tiny GPT bench, in a child process of the server); ``settle`` seconds
   later (with ``ws``: after every session shows its spinner, i.e. its rerun has
   reached the bench, then ``settle`` seconds) the same light timings are taken again,
   while the heavy work runs (the loop stops early when it is over).
3. the heavy sessions are waited for (bounded), each one's time to its table noted.

``--client`` chooses what the heavy sessions are: ``ws`` (default) websocket sessions
that render nothing, or ``browser`` Chromium tabs (as a class would be, but then the
8 tabs' rendering competes for the same CPU cores as the server: the load client, not
the server, is measured too).

Single-flight is checked from the server's side: the server's child processes are
watched (every 0.1 s) and the bench children (``multiprocessing`` spawn workers) counted,
with their lifetimes; a light sample counts as "during heavy work" when a bench child
was alive from its start to its end.

Prints JSON: the idle and loaded medians of both timings and their ratios (goal:
within 2x), the heavy sessions' times to their table, the bench children
seen, the server's and the children's CPU seconds, and the load average at each phase
(the machine is shared). Bounded in count and time (every wait has a timeout, the heavy
sessions at most 300 s); nothing leaves the loopback address.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))  # test_browser imports tests.bench_layout

LIGHT = ("Lessons", "Home")  # sidebar labels of the two light pages
LIGHT_PATHS = ("lessons", "")  # their url paths
HEAVY_BUTTON = "Measure every scheme"
HEAVY_WAIT_S = 300  # the longest a heavy session waits for its table
TICKS = os.sysconf("SC_CLK_TCK")


def _done(pg, title: str, timeout_ms: int = 120_000) -> None:
    pg.wait_for_function(
        """(title) => {
            const h = document.querySelector('[data-testid="stMainBlockContainer"] h1');
            const w = document.querySelector('[data-testid="stStatusWidget"]');
            return h && h.innerText.startsWith(title) && !(w && /Running|Stop/.test(w.innerText));
        }""", arg=title, timeout=timeout_ms)


def browser_switch(tab, k: int, titles: dict) -> float:
    """Switch ``tab`` to the ``k``-th light page (alternating); seconds until it is shown."""
    label = LIGHT[k % 2]
    link = tab.locator(f'[data-testid="stSidebarNav"] a:has-text("{label}")').first
    start = time.perf_counter()
    link.click()
    _done(tab, titles[label])
    return time.perf_counter() - start


def ws_switch(session, k: int) -> tuple:
    """Rerun ``session`` on the ``k``-th light page (alternating); seconds until its title (the first
    heading) arrives and until ``script_finished``."""
    run = session.run(LIGHT_PATHS[k % 2], timeout=120)
    return run.find("heading")[0], run.seconds


# -- the server's side: its bench children and CPU time ----------------------------------------
def _cpu_s(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` (0 if it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICKS


def _children(pid: int) -> set:
    out = set()
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            out.update(int(c) for c in (task / "children").read_text().split())
    except OSError:
        pass
    return out


class ChildWatch(threading.Thread):
    """Polls the server's child processes; keeps each bench child's first and last sighting and CPU time."""

    def __init__(self, server_pid: int, period: float = 0.1):
        super().__init__(daemon=True)
        self.server_pid, self.period = server_pid, period
        self.seen: dict = {}  # pid -> [first seen, last seen, cpu seconds]
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.wait(self.period):
            now = time.perf_counter()
            for pid in _children(self.server_pid):
                if pid not in self.seen:
                    try:
                        cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
                    except OSError:
                        continue
                    if b"spawn_main" not in cmd:  # not a multiprocessing worker (e.g. its resource tracker)
                        continue
                    self.seen[pid] = [now, now, 0.0]
                entry = self.seen[pid]
                entry[1], entry[2] = now, max(entry[2], _cpu_s(pid))

    def busy(self, t0: float, t1: float) -> bool:
        """Was a bench child alive over the whole of [t0, t1]?"""
        return any(a <= t0 and t1 <= b for a, b, _ in self.seen.values())


# -- the heavy sessions -------------------------------------------------------------------------
def heavy_ws(url: str, n: int):
    """``n`` websocket sessions on Trees; returns (press, results, waiting): ``press(start)`` presses the
    bench button in every session at once (one thread each) and returns the threads; ``results`` fills
    with each session's seconds to its table (the bench's caption, "held-out prompts", arrives with it);
    ``waiting[i]`` is set when session ``i`` shows its spinner (its rerun reached the bench: it computes
    or waits)."""
    from st_ws_client import Session

    sessions = [Session(url, timeout=60) for _ in range(n)]
    for s in sessions:
        found = s.run("trees", timeout=120).find("button", label=HEAVY_BUTTON)
        if found is None:
            raise RuntimeError(f"no {HEAVY_BUTTON!r} button on the Trees page")
    button = found[1].id
    results, barrier = [], threading.Barrier(n)
    waiting = [threading.Event() for _ in sessions]

    def one(i, start):
        done = []

        def seen(kind, element):
            if kind == "spinner":
                waiting[i].set()
            elif kind == "markdown" and "held-out prompts" in element.markdown.body and not done:
                done.append(round(time.perf_counter() - start, 1))

        barrier.wait(timeout=30)
        try:
            sessions[i].run("trees", triggers=(button,), timeout=HEAVY_WAIT_S, on_element=seen)
            results.append(done[0] if done else "no table")
        except TimeoutError:
            results.append("timeout")
        finally:
            waiting[i].set()
            sessions[i].close()

    def press(start):
        threads = [threading.Thread(target=one, args=(i, start), daemon=True) for i in range(n)]
        for t in threads:
            t.start()
        return threads

    return press, results, waiting


def heavy_browser(browser, url: str, n: int):
    """``n`` Chromium tabs on Trees; returns (press, results, finish). Playwright's sync API stays on
    this thread: ``press(start)`` clicks every tab, ``finish(start)`` waits for their tables (the
    bench's caption) and fills ``results``."""
    pages = []
    for _ in range(n):
        pg = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
        pg.goto(f"{url}/trees")
        pg.wait_for_selector('[data-testid="stMainBlockContainer"] h1', timeout=120_000)
        _done(pg, "", 120_000)
        pages.append(pg)
    results = []

    def press(start):
        for pg in pages:
            pg.get_by_role("button", name=HEAVY_BUTTON).click()
        return []

    def finish(start):
        for pg in pages:
            try:
                pg.wait_for_function("() => document.body.innerText.includes('held-out prompts')",  # its caption
                                     timeout=HEAVY_WAIT_S * 1000, polling=200)
                results.append(round(time.perf_counter() - start, 1))
            except Exception:  # noqa: BLE001  playwright's timeout: noted, not fatal
                results.append("timeout")

    return press, results, finish


def _load() -> list:
    return [round(x, 2) for x in os.getloadavg()]


def _median(xs: list):
    return round(statistics.median(xs), 3) if xs else None


def _ratio(a, b):
    return round(a / b, 2) if a is not None and b else None


def _summary(samples: list) -> dict:
    return {"median_s": _median(samples), "n": len(samples),
            "range_s": [round(min(samples), 3), round(max(samples), 3)] if samples else None}


KINDS = ("browser", "ws_title", "ws_finished")  # click to shown page; request to its title; to the run's end


def main(client: str, sessions: int, n: int, settle: float = 1.0) -> int:
    from playwright.sync_api import sync_playwright

    from st_ws_client import Session
    from test_browser import CHROMIUM, CHROMIUM_ARGS, start_server

    proc, url, _ = start_server(Path(tempfile.mkdtemp()))
    watch = ChildWatch(proc.pid)
    watch.start()
    load = {"start": _load()}
    idle, loaded, spans = ({k: [] for k in KINDS} for _ in range(3))
    all_waiting = None
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            tab = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
            titles = {}
            for label, path in zip(LIGHT, LIGHT_PATHS):  # each light page's own title
                tab.goto(f"{url}/{path}")
                tab.wait_for_selector('[data-testid="stMainBlockContainer"] h1', timeout=60_000)
                _done(tab, "", 60_000)
                titles[label] = tab.inner_text('[data-testid="stMainBlockContainer"] h1').strip()[:20]
            light = Session(url)

            def sample(k: int, into: dict) -> None:  # one browser switch, then one websocket rerun
                t0 = time.perf_counter()
                into["browser"].append(browser_switch(tab, k, titles))
                t1 = time.perf_counter()
                title, finished = ws_switch(light, k)
                into["ws_title"].append(title)
                into["ws_finished"].append(finished)
                for kind, span in (("browser", (t0, t1)), ("ws_title", (t1, t1 + title)),
                                   ("ws_finished", (t1, t1 + finished))):
                    spans[kind].append(span)

            for k in range(4):  # warm
                sample(k, {kk: [] for kk in KINDS})
            cpu0, t0 = _cpu_s(proc.pid), time.perf_counter()
            for k in range(n):
                sample(k, idle)
            phases = {"idle": {"wall_s": round(time.perf_counter() - t0, 1),
                               "server_cpu_s": round(_cpu_s(proc.pid) - cpu0, 1)}}
            load["idle_end"] = _load()
            if client == "ws":
                press, results, waiting = heavy_ws(url, sessions)
                finish = None
            else:
                (press, results, finish), waiting = heavy_browser(browser, url, sessions), None
            start = time.perf_counter()
            threads = press(start)
            if waiting is not None:  # every session's rerun has reached the bench (bounded)
                for w in waiting:
                    w.wait(timeout=max(0.0, start + 120 - time.perf_counter()))
                all_waiting = round(time.perf_counter() - start, 2)
            tab.wait_for_timeout(settle * 1000)
            for kind in KINDS:
                spans[kind].clear()
            cpu0, t0 = _cpu_s(proc.pid), time.perf_counter()
            for k in range(n):
                sample(k, loaded)
                if results or (watch.seen and not _children(proc.pid) & set(watch.seen)):
                    break  # the heavy work is over: later samples would be idle ones
            phases["loaded"] = {"wall_s": round(time.perf_counter() - t0, 1),
                                "server_cpu_s": round(_cpu_s(proc.pid) - cpu0, 1)}
            load["loaded_end"] = _load()
            light.close()
            if finish is not None:
                finish(start)
            for t in threads:
                t.join(timeout=HEAVY_WAIT_S + 30)
            browser.close()
    finally:
        watch.stop.set()
        proc.terminate()
        proc.wait(timeout=10)
    watch.join(timeout=5)
    out = {"client": client, "sessions": sessions, "switches": n, "settle_s": settle,
           "all_sessions_waiting_s": all_waiting}
    for kind in KINDS:
        during = [x for x, (t0, t1) in zip(loaded[kind], spans[kind]) if watch.busy(t0, t1)]
        i, l, d = _median(idle[kind]), _median(loaded[kind]), _median(during)
        out[kind] = {"idle": _summary(idle[kind]), "loaded": _summary(loaded[kind]), "ratio": _ratio(l, i),
                     "during_heavy": _summary(during), "during_heavy_ratio": _ratio(d, i)}
    out["heavy_done_s"] = sorted(results, key=str)
    out["bench_children"] = len(watch.seen)
    out["bench_children_alive_s"] = [round(b - a, 1) for a, b, _ in watch.seen.values()]
    out["bench_children_cpu_s"] = [round(c, 1) for _, _, c in watch.seen.values()]
    out["phases"] = phases  # the light samples' wall time and the server process's CPU seconds meanwhile
    out["loadavg"] = load
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--client", choices=("ws", "browser"), default="ws",
                        help="what the heavy sessions are: websocket sessions (default) or Chromium tabs")
    parser.add_argument("--sessions", type=int, default=8, choices=range(1, 17), metavar="1..16")
    parser.add_argument("--switches", type=int, default=10, choices=range(2, 41), metavar="2..40")
    parser.add_argument("--settle", type=float, default=1.0, metavar="SECONDS",
                        help="wait this long after the presses before timing (default 1; at most 10)")
    args = parser.parse_args()
    if not 0 <= args.settle <= 10:
        parser.error(f"--settle must be from 0 to 10 seconds, got {args.settle}")
    sys.exit(main(args.client, args.sessions, args.switches, args.settle))
