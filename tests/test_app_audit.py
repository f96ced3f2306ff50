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



def test_long_runs_take_the_clis_own_limit_and_are_judged_token_by_token():
    """The long-runs toggle offers K from MAX_JOINT + 1 to MAX_TOKENS (the CLI's --tokens limits); an audit of
    K = 6 shows the token-by-token verdict, its three tests and its TV and power figures."""
    from specsim.labs.audit_limits import MAX_JOINT, MAX_TOKENS
    at = open_audit()
    at.sidebar.toggle(key="audit-long").set_value(True)
    at.run()
    k = at.sidebar.number_input(key="audit-long-k")
    assert (k.min, k.max) == (MAX_JOINT + 1, MAX_TOKENS) and not at.sidebar.radio
    k.set_value(6)
    at.sidebar.select_slider(key="audit-n").set_value(100)
    at.run()
    at.button[0].click().run()
    assert not at.exception and not at.error
    (shown,) = at.success
    assert "after 100 runs of 6 tokens (600 judged)" in shown.value
    assert [m.label for m in at.metric] == ["p-value", "TV seen", "Detectable TV", "Runs per second"]
    assert "probability-rank PITs" in at.metric[1].help and "runs of 6 tokens" in at.metric[2].help
    table = next(m.value.replace("\\", "") for m in at.markdown if "consecutive pairs" in m.value)  # unescaped
    assert "pit, token-id order" in table and "likeliest first" in table
    (curves,) = at.get("plotly_chart")  # no emitted-vs-exact chart: no joint law to compare
    assert "this audit" not in curves.proto.spec


def test_the_sequential_toggle_stops_a_lossy_engine_early_as_the_cli_does():
    """--sequential on the page: the keep-every-draft bug is decided before the 2,000 runs planned, and the page
    says at which run; the verdict is the CLI's for the same settings."""
    at = open_audit()
    at.sidebar.selectbox(key="audit-engine").set_value("keep every draft (bug)")
    at.sidebar.select_slider(key="audit-n").set_value(2000)
    at.sidebar.toggle(key="audit-seq").set_value(True)
    at.run()
    at.button[0].click().run()
    assert not at.exception
    (shown,) = at.error
    assert "Not the target" in shown.value and "stopped by the sequential test (2,000 planned)" in shown.value
    (said,) = [c.value for c in at.caption if c.value.startswith("Sequential test")]
    import re
    run, planned = map(lambda t: int(t.replace(",", "")), re.search(r"at run ([\d,]+) of ([\d,]+)", said).groups())
    assert run < planned == 2000
    r = at.session_state["audit-result"]
    assert r["sequential"]["decided_at"] == run <= r["samples"] < 2000  # read every N / 100 runs, as the CLI does


def test_top_k_opens_on_off_and_a_chosen_k_reaches_the_audit(monkeypatch):
    """top-k shows "off" (an option), not the selectbox's empty placeholder, and passes None to the audit;
    a chosen k passes k."""
    at = open_audit()
    box = at.sidebar.selectbox(key="audit-topk")
    assert box.options[0] == "off" and box.value == 0 and box.format_func(box.value) == "off"
    from specsim.gpt import audit as engine_audit
    seen = []
    real = engine_audit.audit

    def spy(*args, **kw):
        seen.append(kw.get("top_k"))
        return real(*args, **kw)

    monkeypatch.setattr(engine_audit, "audit", spy)
    at.sidebar.select_slider(key="audit-n").set_value(100)
    at.run()
    at.button[0].click().run()
    box = at.sidebar.selectbox(key="audit-topk")
    box.set_value(5).run()
    at.button[0].click().run()
    assert not at.exception and seen == [None, 5]
