"""Cold page loads on two app servers that differ in one setting, interleaved (a script, not collected by pytest).

    PYTHONPATH=. python tests/bench_server_ab.py --b-flags "--server.fileWatcherType auto"
    PYTHONPATH=. python tests/bench_server_ab.py --b-without httptools,uvloop [--rounds 3] [--pages home,stepper]
    PYTHONPATH=. python tests/bench_server_ab.py --b-root /tmp/base   # B: another checkout (git worktree add)

Starts ``streamlit run app`` twice: A as the repository sets it up, B with more command-line options
(``--b-flags``) or with some installed modules hidden from it (``--b-without``: a stub of each that
raises ModuleNotFoundError comes first on its path, so uvicorn, say, falls back to its pure-Python HTTP parser
and event loop), or run from another checkout of the repository (``--b-root``: its ``app`` and, first on its
path, its ``specsim``: an earlier commit against this one). Each round opens every page cold (a fresh browser context: empty cache, new session)
on A and on B, in alternating order, so both see the same load on a shared machine. A load ends when
the page's title is shown, its first chart is drawn (pages with charts) and no run is going, as in
``tests/bench_pages.py``. Prints JSON: per server the median and mean over all loads, and the paired
difference B - A per (round, page): its median and quartiles (positive: B is slower).

It is a benchmark: run it when nothing else runs, and read the quartiles.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))  # test_browser imports tests.bench_layout

PAGES = ["", "stepper", "residual", "speedup", "serving", "audit"]  # Home and five pages with charts on top


def hidden(modules: list) -> dict:
    """Environment for a server that cannot import ``modules``: a folder of stubs first on PYTHONPATH."""
    if not modules:
        return {}
    stubs = Path(tempfile.mkdtemp())
    for name in modules:
        (stubs / f"{name}.py").write_text(f"raise ModuleNotFoundError('{name} hidden by bench_server_ab')\n")
    return {"PYTHONPATH": os.pathsep.join([str(stubs), os.environ.get("PYTHONPATH", str(ROOT))])}


def cold_load(browser, url: str, page: str) -> float:
    import bench_pages
    ctx = browser.new_context(viewport=bench_pages.SIZE)
    try:
        tab = ctx.new_page()
        start = time.perf_counter()
        tab.goto(f"{url}/{page}")
        bench_pages._done(tab, "", True, 90_000)
        return time.perf_counter() - start
    finally:
        ctx.close()


def main(b_flags: list, b_without: list, rounds: int, pages: list, b_root: Path | None = None) -> int:
    from playwright.sync_api import sync_playwright
    from test_browser import CHROMIUM, CHROMIUM_ARGS, start_server

    b_env = hidden(b_without)
    if b_root is not None:
        b_env["PYTHONPATH"] = os.pathsep.join([str(b_root)] + [x for x in [b_env.get("PYTHONPATH")] if x])
    servers = [start_server(Path(tempfile.mkdtemp())),
               start_server(Path(tempfile.mkdtemp()), b_flags, b_env, b_root or ROOT)]
    loads = ([], [])
    try:
        urls = [url for _, url, _ in servers]
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            for url in urls:  # warm both servers (imports, caches) before anything is timed
                for page in pages:
                    cold_load(browser, url, page)
            for r in range(rounds):
                for page in pages:
                    for k in ((0, 1) if r % 2 == 0 else (1, 0)):
                        loads[k].append(cold_load(browser, urls[k], page))
            browser.close()
    finally:
        for proc, _, _ in servers:
            proc.terminate()
            proc.wait(timeout=10)
    diff = [b - a for a, b in zip(*loads)]
    summary = {name: {"median_s": round(statistics.median(xs), 3), "mean_s": round(statistics.mean(xs), 3)}
               for name, xs in zip("AB", loads)}
    print(json.dumps({"b_flags": b_flags, "b_without": b_without, "b_root": str(b_root) if b_root else None,
                      "rounds": rounds, "pages": pages,
                      "loads_each": len(diff), **summary,
                      "b_minus_a_s": {"median": round(statistics.median(diff), 3),
                                      "quartiles": [round(q, 3) for q in statistics.quantiles(diff, n=4)]}},
                     indent=1))
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--b-flags", default="", help="more options for server B, e.g. '--server.fileWatcherType auto'")
    parser.add_argument("--b-without", default="", help="modules server B cannot import, comma-separated")
    parser.add_argument("--b-root", default="", help="server B runs from this checkout (its app and specsim)")
    parser.add_argument("--rounds", type=int, default=3, choices=range(1, 11), metavar="1..10")
    parser.add_argument("--pages", default=",".join(p or "home" for p in PAGES), help="url paths (home: /)")
    args = parser.parse_args()
    without = [m for m in args.b_without.split(",") if m]
    if not args.b_flags and not without and not args.b_root:
        parser.error("give server B a difference: --b-flags, --b-without or --b-root")
    if args.b_root and not (Path(args.b_root) / "app" / "streamlit_app.py").exists():
        parser.error(f"--b-root {args.b_root!r} is not a checkout of this repository")
    if not all(m.isidentifier() for m in without):
        parser.error(f"--b-without takes module names: {args.b_without!r}")
    chosen = ["" if p == "home" else p for p in args.pages.split(",") if p]
    sys.exit(main(args.b_flags.split(), without, args.rounds, chosen, Path(args.b_root) if args.b_root else None))
