"""The Implementations page (AppTest): every figure is the gallery's own (``specsim.labs.implementations``)
computed here, links are read strictly, and the gallery table lists every entry with its verdict."""
from __future__ import annotations


import pytest
from streamlit.testing.v1 import AppTest

from specsim.labs import implementations as impl
from specsim.plots.charts import exact_dec
from specsim.toy import load_model

from tests.apptest import open_page as open_app_page, tables  # noqa: E402 (puts app/ on sys.path)
PAGE = "views/implementations.py"


def open_page(params: dict | None = None) -> AppTest:
    return open_app_page(PAGE, params, timeout=120)


def metrics(at) -> dict:
    return {m.label: m.value for m in at.metric}


def gallery_table(at) -> list:
    return tables(at)[-1].to_dict("records")


def test_defaults_render_the_first_entry_and_the_whole_gallery():
    at = open_page()
    assert not at.error
    model = load_model("seed")
    ctx = model.contexts()[0]
    r = impl.evaluate(impl.IMPLEMENTATIONS["hf-sampling"], model, ctx, 2)
    m = metrics(at)
    assert m["exact?"] == "yes ✓" and m["TV from p (N = 2)"] == exact_dec(r.total_variation)
    assert m["tokens per round"] == exact_dec(r.tokens_per_round)
    rows = gallery_table(at)
    assert [row["entry"] for row in rows] == list(impl.IMPLEMENTATIONS)
    assert {row["entry"]: row["verdict"] for row in rows} == {
        n: "exact" if e.expected_exact else "NOT exact" for n, e in impl.IMPLEMENTATIONS.items()}


def test_medusa_typical_on_zeros_after_z_is_not_exact_with_its_counter_example():
    at = open_page({"system": "medusa-typical", "preset": "zeros", "context": "z"})
    assert not at.error
    r = impl.evaluate(impl.IMPLEMENTATIONS["medusa-typical"], load_model("zeros"), ("z",), 2)
    m = metrics(at)
    assert m["exact?"] == "no ✗" and m["TV from p (N = 2)"] == exact_dec(r.total_variation) == "7/16"
    assert any("smallest counter-example" in s.value for s in at.subheader)
    ce = r.counter_example
    assert len(tables(at)[0]) == len(ce.differences)  # the counter-example's rows, then the gallery
    assert f"TV **{exact_dec(ce.total_variation)}**" in " ".join(md.value for md in at.markdown)


@pytest.mark.parametrize("name", ["gpt-fast", "vllm", "hf-sampling"])
def test_float_hazard_per_round_and_per_billion(name):
    at = open_page({"system": name, "preset": "zeros", "context": "x", "tokens": "1"})
    r = impl.evaluate(impl.IMPLEMENTATIONS[name], load_model("zeros"), ("x",), 1, models=0)
    assert r.float_hazard > 0
    m = metrics(at)
    assert m["probability per round"] == f"{float(r.float_hazard):.3g}"
    assert f"Exactly {r.float_hazard} per round." in " ".join(md.value for md in at.markdown)
    v = float(r.float_hazard) * 10**9
    assert m["per billion rounds"] == (f"{v:,.0f}" if v >= 1000 else f"{v:.3g}")


def test_an_entry_without_uniforms_says_so():
    at = open_page({"system": "specinfer"})
    assert "probability per round" not in metrics(at)
    assert any("no float edge" in i.value for i in at.info)


@pytest.mark.parametrize("params,wanted", [
    ({"system": "medusa"}, "?system='medusa' is not known"),
    ({"system": "x" * 5000}, "is not known"),
    ({"preset": "../etc"}, "?preset='../etc' is not known"),
])
def test_a_bad_name_is_one_error_and_the_page_still_renders(params, wanted):
    at = open_page(params)
    assert len(at.error) == 1 and wanted in at.error[0].value and len(at.error[0].value) < 400
    assert [row["entry"] for row in gallery_table(at)] == list(impl.IMPLEMENTATIONS)


def test_a_context_the_model_lacks_and_a_bad_number_are_ignored():
    at = open_page({"preset": "zeros", "context": "q q", "tokens": "9"})
    assert not at.error and metrics(at)["TV from p (N = 2)"] == "0"


def test_the_chart_is_the_entrys_joint_against_its_target():
    import json

    from specsim.labs.judge import joints
    at = open_page({"system": "medusa-typical", "preset": "zeros", "context": "z"})
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    model, e = load_model("zeros"), impl.IMPLEMENTATIONS["medusa-typical"]
    produced, wanted = joints(model, ("z",), e.scheme, e.rule, 2, e.target(model))
    outcomes = sorted(set(produced) | set(wanted))
    bars = {d["name"]: d["y"] for d in spec["data"]}
    assert bars["produced by the rule"] == [float(produced.get(t, 0)) for t in outcomes]
    assert bars["target"] == [float(wanted.get(t, 0)) for t in outcomes]
