"""`specsim deps`: the installed versions of the libraries specsim leans on, against the tested ranges."""
from __future__ import annotations

from .. import __version__, deps
from .common import print_json, table


def register(sub) -> None:
    p = sub.add_parser("deps", help="installed torch, transformers, streamlit, plotly against the tested ranges",
                       description="The installed version of each library whose behaviour specsim's tests, "
                                   "gallery entries or pages encode, the range pyproject.toml requires and the "
                                   "releases the test suite passed on. Exit 0 when every library is installed "
                                   "inside its required range (an untested release is reported, not refused), "
                                   "1 otherwise.")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_deps)


def cmd_deps(args) -> int:
    rows = deps.report()
    code = 0 if all(d.ok for d in rows) else 1
    if args.json:
        print_json({"specsim": __version__, "ok": code == 0,
                    "libraries": [{"name": d.name, "installed": d.installed, "required": d.required,
                                   "tested": d.tested, "status": d.status} for d in rows]})
        return code
    print(f"specsim {__version__}")
    print(table([(d.name, d.installed or "-", d.required or "(any)", d.tested, d.status) for d in rows],
                ["library", "installed", "required", "tested", "status"]))
    return code
