"""Opening the app under AppTest: the one helper the page tests (``tests/test_app_*.py``) share."""
from __future__ import annotations

import sys
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent
ENTRY = ROOT / "app" / "streamlit_app.py"
sys.path.insert(0, str(ROOT / "app"))  # the app's own packages (parts, views, sections), as `streamlit run app` has

from parts import nav  # noqa: E402

PAGES = [p.path for p in nav.PAGES]  # every page, from the registry (``parts.nav.PAGES``): a new page is in it
HOME = nav.HOME.path  # the first page: the app opens on it


def open_page(path: str = HOME, params: dict | None = None, timeout: float = 60) -> AppTest:
    """The app opened on ``path`` with the query ``params`` set before its first run; asserts no exception."""
    at = AppTest.from_file(str(ENTRY), default_timeout=timeout)
    at.query_params.update(params or {})
    at.run()
    if path != HOME:
        at.switch_page(path).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def chart_with(at: AppTest, trace: str) -> dict:
    """The figure (plotly JSON) of the page's first chart with a trace named ``trace``."""
    import json
    return next(json.loads(c.proto.spec) for c in at.get("plotly_chart")
                if any(t.get("name") == trace for t in json.loads(c.proto.spec)["data"]))


def assert_budget_chart(at: AppTest, rows: list, budget: int, trace: str) -> None:
    """The Trees page's best-by-budget chart (the one with a trace named ``trace``) draws
    ``scheme_view.best_by_budget`` of ``rows``, every family."""
    from specsim.views import scheme_view
    curve = scheme_view.best_by_budget(rows, budget)
    shown = {t["name"]: t["y"] for t in chart_with(at, trace)["data"]}
    assert shown == {k: [float(v) for v in curve[k]] for k in scheme_view.FAMILIES + scheme_view.ADAPTIVE_FAMILIES}


def stepped(seed: int, gamma: int, clicks: int, button: str = "stepper-next", timeout: float = 60) -> AppTest:
    """The stepper page with ``seed`` and ``gamma`` set, then ``button`` ("stepper-next": one event,
    "stepper-round": one round) pressed ``clicks`` times."""
    at = open_page("views/stepper.py", timeout=timeout)
    at.number_input(key="stepper-seed").set_value(seed).run()
    at.number_input(key="stepper-gamma").set_value(gamma).run()
    for _ in range(clicks):
        at.button(key=button).click().run()
    return at


def tables(at: AppTest) -> list:
    """The page's tables (``parts.plain.table``: Markdown tables) as pandas DataFrames of the cells' text, in order."""
    import re

    import pandas as pd

    def cells(line: str) -> list:
        parts = re.split(r"(?<!\\)\|", line.strip())[1:-1]
        return [re.sub(r"\\(.)", r"\1", p.strip()).replace("&nbsp;", "") for p in parts]
    found = []
    for m in at.markdown:
        lines = m.value.splitlines()
        if len(lines) >= 2 and lines[0].startswith("| ") and re.fullmatch(r"\|(?:(?:---:|:---)\|)+", lines[1]):
            found.append(pd.DataFrame([cells(x) for x in lines[2:]], columns=cells(lines[0])))
    return found
