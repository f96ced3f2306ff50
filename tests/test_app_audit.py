"""The Audit page: an engine run from the app, its verdict, emitted beside exact, and the numbers behind it."""
from pathlib import Path

import pytest

pytest.importorskip("torch")
from streamlit.testing.v1 import AppTest  # noqa: E402

APP = str(Path(__file__).resolve().parent.parent / "app" / "streamlit_app.py")


def open_audit():
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    at.switch_page("views/audit.py").run()
    assert not at.exception
    return at


def test_the_page_opens_with_what_a_budget_can_detect():
    at = open_audit()
    (chart,) = at.get("plotly_chart")
    assert "detectable TV" in chart.proto.spec and "5 cells" in chart.proto.spec
    assert not at.error and at.button[0].label == "Run the audit"


@pytest.mark.parametrize("engine, verdict", [("keep every draft (bug)", "error"), ("specsim's decoder", "success")])
def test_an_audit_shows_its_verdict_chart_and_numbers(engine, verdict):
    at = open_audit()
    at.sidebar.selectbox(key="audit-engine").set_value(engine)
    at.sidebar.select_slider(key="audit-n").set_value(200)
    at.run()
    at.button[0].click().run()
    assert not at.exception
    shown = getattr(at, verdict)
    assert len(shown) == 1 and "after 200 runs (false-alarm rate 0.001)" in shown[0].value
    chart, curves = at.get("plotly_chart")
    assert "exact p (target)" in chart.proto.spec and "emitted (engine)" in chart.proto.spec
    assert [m.label for m in at.metric] == ["p-value", "TV seen", "Detectable TV", "Runs per second"]
    # the run placed on the detectability curves (they stay after a run), and the result names the scheme
    import json
    star = next(t for t in json.loads(curves.proto.spec)["data"] if t["name"].startswith("this audit"))
    assert star["x"] == [200] and "5 cells" in curves.proto.spec
    if engine == "specsim's decoder":
        shown_text = [t.replace("\\", "") for t in [shown[0].value] + [c.value for c in at.caption]]  # Markdown escapes
        assert "(chain:4)" in shown_text[0] and any("scheme chain:4" in c for c in shown_text[1:])
        from specsim.labs.isolation import describe
        from tests.test_isolation import WHY_NOT
        worth = describe(WHY_NOT is None, WHY_NOT or "")  # what the verdict is worth, as the CLI says it
        assert any(worth[1:40] in c for c in shown_text[1:]), shown_text


def test_a_bad_prompt_is_one_error_line():
    at = open_audit()
    at.sidebar.text_input(key="audit-prompt").set_value("é")
    at.run()
    at.button[0].click().run()
    assert not at.exception and len(at.error) == 1 and "\n" not in at.error[0].value


def test_the_prompt_is_shown_inert_and_presenter_mode_sizes_the_chart():
    """The prompt is the user's text: a caption shows it as written, with no emphasis, link or image made of it;
    presenter mode makes the page's chart as tall as most of a 720 px screen, as on every other page."""
    at = open_audit()
    at.sidebar.text_input(key="audit-prompt").set_value("**b** ![i](http://x/y.png)")
    at.sidebar.select_slider(key="audit-n").set_value(100)
    at.run()
    at.button[0].click().run()
    assert not at.exception and not at.error
    (caption,) = [c.value for c in at.caption if "prompt" in c.value]
    assert r"\*\*b\*\* \!\[i\]\(http\:" in caption, caption
    import json
    at.query_params["presenter"] = "1"
    at.run()
    assert all(json.loads(chart.proto.spec)["layout"]["height"] >= 504 for chart in at.get("plotly_chart"))

