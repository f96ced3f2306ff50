"""The Serving page (AppTest) and its data and figures: the heatmap, the crossover, the memory limit, the Play's
frames and the tiny GPT's measured points, each against ``specsim.serving.roofline`` computed here."""
from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from specsim.plots import serving as plots
from specsim.serving import roofline
from specsim.views import serving_view as sv

from tests.apptest import ROOT, open_page as open_app_page  # noqa: E402 (puts app/ on sys.path)
PAGE = "views/serving.py"


def open_page(params: dict | None = None) -> AppTest:
    return open_app_page(PAGE, params)


def charts(at) -> dict:
    """The page's plotly figures by their widget key's suffix: heat, play, measured."""
    out = {}
    for c in at.get("plotly_chart"):
        spec = json.loads(c.proto.spec)
        key = "play" if spec.get("frames") else ("heat" if spec["data"][0]["type"] == "heatmap" else "measured")
        out[key] = spec
    return out


# -- the page ---------------------------------------------------------------------------------

def test_defaults_show_a_crossover_and_how_many_sequences_fit():
    """The page opens on its point: at context 128 the crossover is on the chart."""
    at = open_page()
    assert not at.error
    s = sv.Settings(context=128)
    fit = roofline.max_batch("llama-3-8b", "llama-3.2-1b", "h100-sxm", 128)
    cross = roofline.crossover_batch("llama-3-8b", "llama-3.2-1b", "h100-sxm", 128, 0.8)
    assert cross is not None and cross < fit
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["crossover batch"] == f"{cross:,}" and metrics["largest batch that fits"] == f"{fit:,}"
    assert f"Crossover at batch {cross:,}" in at.info[0].value
    c = charts(at)
    heat = c["heat"]["data"]
    assert heat[0]["x"] == [f"{b:,}" for b in sv.grid(s)["batches"]]
    assert [len(f["data"]) for f in c["play"]["frames"]] == [len(c["play"]["data"])] * len(sv.PLAY_BATCHES)
    assert [f["name"] for f in c["play"]["frames"]] == [f"{b:,}" for b in sv.PLAY_BATCHES]


def test_long_context_has_no_crossover_and_says_how_many_sequences_fit():
    at = open_page({"context": "1024"})
    fit = roofline.max_batch("llama-3-8b", "llama-3.2-1b", "h100-sxm", 1024)
    assert roofline.crossover_batch("llama-3-8b", "llama-3.2-1b", "h100-sxm", 1024, 0.8) is None
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["crossover batch"] == "none" and metrics["largest batch that fits"] == f"{fit:,}"
    assert f"at most {fit:,} sequences fit" in at.info[0].value


def test_query_params_set_every_setting_and_the_crossover_is_marked():
    at = open_page({"hardware": "h200", "target": "llama-3-8b", "draft": "llama-3.2-1b", "context": "128",
                    "alpha": "0.7", "dtype": "fp8", "gamma": "3"})
    assert not at.error
    assert (at.selectbox(key="srv-hw").value, at.number_input(key="srv-context").value,
            at.slider(key="srv-alpha").value, at.selectbox(key="srv-dtype").value,
            at.number_input(key="srv-gamma").value) == ("h200", 128, 0.7, "fp8", 3)
    want = roofline.crossover_batch("llama-3-8b", "llama-3.2-1b", "h200", 128, 0.7, dtype="fp8")
    assert want is not None
    assert {m.label: m.value for m in at.metric}["crossover batch"] == f"{want:,}"
    heat = charts(at)["heat"]["data"]
    [line] = [t for t in heat if t.get("name", "").startswith("crossover")]
    assert line["x"] == [f"{want:,}"] * 2


@pytest.mark.parametrize("params, named", [
    ({"context": "abc"}, "context"), ({"hardware": "tpu"}, "hardware"), ({"alpha": "1.5"}, "alpha"),
    ({"target": "x" * 500, "gamma": "99"}, "target, gamma"), ({"window": "-3"}, "window")])
def test_a_bad_query_parameter_is_one_error_line_and_the_page_still_draws(params, named):
    at = open_page(params)
    assert [e.value.count("\n") for e in at.error] == [0] and named in at.error[0].value
    assert set(charts(at)) == {"heat", "play"}


@pytest.mark.parametrize("raw", ["\u00b2", "9" * 5000, "-1", "0", "1e3", " 2", "", "\x00", "<script>", "%C2%B2"])
def test_garbage_in_every_parameter_is_named_once_and_never_echoed(raw):
    names = ["hardware", "target", "draft", "dtype", "context", "alpha", "window", "devices", "gamma"]
    at = open_page({name: raw for name in names})
    [error] = [e.value for e in at.error]
    named = error.split("parameter(s) ")[1].split(":")[0].split(", ")
    valid = {"0": {"alpha", "window"}}.get(raw, set())  # 0 is a fine α and a fine window
    assert set(named) == set(names) - valid and (not raw.strip() or raw not in error)
    assert set(charts(at)) == {"heat", "play"}


def test_this_cpu_is_measured_once_and_offers_only_fp32():
    """cpu once offered bf16 and then failed; the dtype box offers only what the hardware has a figure for."""
    at = open_page({"hardware": "cpu", "dtype": "fp32", "target": "tiny-target", "draft": "tiny-draft",
                    "context": "52"})
    assert not at.error
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["largest batch that fits"] == "unknown" and "measured here" in at.caption[1].value
    assert at.selectbox(key="srv-dtype").options == ["fp32"]
    at.selectbox(key="srv-hw").set_value("a100-80gb").run()
    assert at.selectbox(key="srv-dtype").options == ["bf16", "fp16"] and not at.error
    at.selectbox(key="srv-hw").set_value("cpu").run()
    assert at.selectbox(key="srv-dtype").value == "fp32" and not at.error
    at.number_input(key="srv-devices").set_value(2).run()
    assert [e.value for e in at.error] == ["GPUs is for the GPU presets, not cpu"]


def test_settings_survive_a_visit_to_another_page():
    at = open_page()
    at.selectbox(key="srv-hw").set_value("h200").run()
    at.number_input(key="srv-context").set_value(256).run()
    at.slider(key="srv-alpha").set_value(0.6).run()
    at.number_input(key="srv-gamma").set_value(3).run()
    at.switch_page("views/speedup.py").run()
    at.switch_page(PAGE).run()
    assert (at.selectbox(key="srv-hw").value, at.number_input(key="srv-context").value,
            at.slider(key="srv-alpha").value, at.number_input(key="srv-gamma").value) == ("h200", 256, 0.6, 3)


def test_a_model_too_large_for_one_gpu_is_a_warning_and_two_gpus_hold_it():
    at = open_page({"target": "llama-3-70b", "context": "128"})
    assert not at.error and "do not fit in memory: add GPUs" in at.warning[0].value
    at.number_input(key="srv-devices").set_value(2).run()
    fit = roofline.max_batch("llama-3-70b", "llama-3.2-1b", sv.Settings(devices=2).hw, 128)
    assert fit > 0 and not at.warning and not at.error
    assert {m.label: m.value for m in at.metric}["largest batch that fits"] == f"{fit:,}"
    assert sv.grid(sv.Settings("llama-3-70b", context=128, devices=2))["best_gamma"][0] == 10
    assert any("γ = 10 is the largest searched" in c.value for c in at.caption)


def test_settings_the_roofline_refuses_are_one_error_line():
    at = open_page({"target": "tiny-target"})  # the drafter llama-3.2-1b has another vocabulary
    assert [e.value for e in at.error] == ["llama-3.2-1b (128,256 tokens) and tiny-target (96) do not share a "
                                           "vocabulary"]
    assert not charts(at)
    at = open_page({"context": "131070"})  # + 11 positions is past the 131,072-position window
    assert len(at.error) == 1 and "exceeds" in at.error[0].value and not charts(at)


def test_an_uploaded_serve_bench_json_is_drawn_and_a_bad_one_is_one_line():
    at = open_page()
    at.file_uploader(key="srv-upload").upload("bench.json", json.dumps(BENCH).encode(), "application/json").run()
    assert not at.exception and not at.error
    fig = charts(at)["measured"]
    assert [t["name"] for t in fig["data"] if t.get("name")] == ["γ = 2 model", "γ = 2 measured"]
    at.file_uploader(key="srv-upload").upload("bad.json", b'{"runs": 3}', "application/json").run()
    assert not at.exception and [e.value.count("\n") for e in at.error] == [0]


WEIGHTS = (ROOT / "specsim" / "gpt" / "weights" / "manifest.json").exists()


@pytest.mark.skipif(not WEIGHTS, reason="no shipped weights")
def test_the_small_serve_bench_runs_once_through_the_heavy_store_and_draws_every_gamma():
    at = open_page()
    at.button(key="srv-bench").click().run(timeout=300)
    assert not at.exception and not at.error
    names = [t.get("name") for t in charts(at)["measured"]["data"] if t.get("name")]
    assert names == ["γ = 2 model", "γ = 2 measured", "γ = 4 model", "γ = 4 measured"]
    at.run()  # a rerun shows the stored result again, without the button
    assert "measured" in charts(at)


# -- data and figures -------------------------------------------------------------------------

BENCH = {"context": 40, "runs": [{"threads": 1, "crossover_batch": 4, "predicted_crossover_batch": 8, "rows": [
    {"batch": b, "gamma": g, "speedup": s, "predicted_speedup": p}
    for b, g, s, p in [(1, 0, 1.0, 1.0), (1, 2, 1.4, 1.8), (4, 0, 1.0, 1.0), (4, 2, 0.9, 1.2), (8, 2, 0.7, 0.95)]]}]}


@pytest.mark.parametrize("s", [sv.Settings(context=128), sv.Settings(), sv.Settings(context=4096, draft_kv_window=256),
                               sv.Settings("llama-3-70b", "llama-3.2-1b", "h100-sxm", 512, 0.6, devices=2),
                               sv.Settings("tiny-target", "tiny-draft", "rtx-4090", 64, 0.8)])
def test_grid_stars_are_roofline_best_gamma_and_the_crossover_columns_are_right(s):
    g = sv.grid(s)
    for b, best in zip(g["batches"], g["best_gamma"]):
        assert best == roofline.best_gamma(s.target, s.draft, s.hw, b, s.context, s.alpha, gammas=sv.GAMMAS,
                                           **s.kw).gamma
    fig = plots.speedup_heatmap(g)
    stars = [t for t in fig.data if t.name == "best γ per batch"][0]
    assert list(stars.y) == g["best_gamma"] and list(stars.x) == [f"{b:,}" for b in g["batches"]]
    assert g["crossover"] == roofline.crossover_batch(s.target, s.draft, s.hw, s.context, s.alpha, **s.kw)
    if g["crossover"] not in (None, 1):  # the crossover column pays for no γ, the one before it does
        i = g["batches"].index(g["crossover"])
        assert g["best_gamma"][i] == 0 and g["best_gamma"][i - 1] > 0 and g["best_speedup"][i - 1] > 1
    if g["max_batch"]:
        assert g["fits"][g["batches"].index(g["max_batch"])] and not g["fits"][-1]


def test_the_play_turns_the_verify_pass_compute_bound_at_short_context_and_its_frames_match_the_roofline():
    s = sv.Settings(context=128)
    d = sv.play_frames(s, 4)
    bounds = [f["verify"]["bound"] for f in d["frames"]]
    assert bounds[0] == "memory" and bounds[-1] == "compute"
    assert bounds == sorted(bounds, key=["memory", "compute"].index)  # turns once, never back
    fig = plots.play_animation(d, speed=0.4)
    assert len(fig.frames) == len(sv.PLAY_BATCHES) == len(fig.layout.sliders[0].steps)
    for frame, f in zip(fig.frames, d["frames"]):
        b = f["batch"]
        verify = roofline.step_cost(s.target, s.hw, b, 128, 5)
        assert frame.data[0].x[1] == pytest.approx(verify.memory_s / b * 1e6, rel=1e-12)
        assert frame.data[1].x[1] == pytest.approx(verify.compute_s / b * 1e6, rel=1e-12)
        assert list(frame.data[3].x) == [b]


def test_long_context_keeps_the_plain_step_memory_bound_at_every_batch():
    """MagicDec's case: at context 1024 each sequence's KV read outweighs its FLOPs, so the plain step never
    turns compute-bound and v stays below γ + 1."""
    d = sv.play_frames(sv.Settings(), 4)
    assert {f["plain"]["bound"] for f in d["frames"]} == {"memory"}
    assert max(f["v"] for f in d["frames"]) < 3


def test_measured_points_are_the_rows_and_garbage_is_refused():
    m = sv.measured(BENCH)
    assert m["points"] == {2: [(1, 1.4, 1.8), (4, 0.9, 1.2), (8, 0.7, 0.95)]}
    assert (m["crossover"], m["predicted_crossover"]) == (4, 8)
    for bad in ({}, {"runs": []}, {"context": 1, "runs": [{"rows": [{"batch": "1"}]}]}, [1], "x",
                {"context": 1, "runs": [{"threads": 1, "crossover_batch": None, "predicted_crossover_batch": None,
                                         "rows": [{"batch": 1, "gamma": 0, "speedup": 1, "predicted_speedup": 1}]}]}):
        with pytest.raises(ValueError):
            sv.measured(bad)


def test_bad_settings_and_gamma_are_refused_in_one_line():
    for s in (sv.Settings(alpha=1.5), sv.Settings(hardware="tpu"), sv.Settings(dtype="int4"),
              sv.Settings(devices=0)):
        with pytest.raises(ValueError) as e:
            sv.grid(s)
        assert "\n" not in str(e.value)
    with pytest.raises(ValueError, match="γ must be"):
        sv.play_frames(sv.Settings(), 11)


# -- uploads that were traps -----------------------------------------------------------------

def upload(at, name: str, data: bytes) -> AppTest:
    at.file_uploader(key="srv-upload").upload(name, data, "application/json").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_a_deeply_nested_upload_is_one_line_without_a_traceback():
    at = upload(open_page(), "deep.json", b"[" * 100_000 + b"]" * 100_000)
    assert [e.value for e in at.error] == ["Cannot read that file: the file is nested too deeply to be a serve-bench "
                                           "result"]


@pytest.mark.parametrize("field, value", [("crossover_batch", "4"), ("predicted_crossover_batch", 2.5),
                                          ("threads", "![x](http://example.invalid/x.png)"), ("crossover_batch", True)])
def test_a_run_field_of_the_wrong_kind_is_one_line(field, value):
    bench = json.loads(json.dumps(BENCH))
    bench["runs"][0][field] = value
    at = upload(open_page(), "bench.json", json.dumps(bench).encode())
    assert len(at.error) == 1 and "not a serve-bench result" in at.error[0].value
    assert "measured" not in charts(at)


@pytest.mark.parametrize("context", ["![img](http://example.invalid/x.png) [link](http://example.invalid)",
                                     "x" * 1_900_000, -3, 10**9])
def test_an_uploaded_context_is_never_markdown_and_never_shown_whole(context):
    bench = dict(BENCH, context=context)
    at = upload(open_page(), "bench.json", json.dumps(bench).encode())
    shown = " ".join(str(c.value) for c in at.caption) + " ".join(str(m.value) for m in at.markdown)
    assert "example.invalid" not in shown and "x" * 1000 not in shown
    assert len(at.error) == 1 and "not a serve-bench result" in at.error[0].value


def test_the_uploaders_limit_is_the_limit_it_says():
    """The uploader's own limit (Streamlit's MB are MiB), its help text and read_bench's check are one number."""
    at = open_page()
    uploader = at.file_uploader(key="srv-upload")
    assert uploader.proto.max_upload_size_mb * 2**20 == sv.MAX_BENCH_BYTES
    assert f"{sv.MAX_BENCH_BYTES:,} bytes" in uploader.proto.help
    with pytest.raises(ValueError, match=f"limit is {sv.MAX_BENCH_BYTES:,}"):
        sv.read_bench(b" " * (sv.MAX_BENCH_BYTES + 1))
    assert sv.read_bench(json.dumps(BENCH).encode() + b" " * (sv.MAX_BENCH_BYTES - len(json.dumps(BENCH))))


@pytest.mark.parametrize("s", [sv.Settings(context=128), sv.Settings(context=4096, draft_kv_window=256),
                               sv.Settings("tiny-target", "tiny-draft", "rtx-4090", 64, 0.8)])
def test_the_heatmaps_white_is_exactly_at_one_times(s):
    """Red is slower than plain decoding, blue faster: the colour scale's white maps to speedup 1 whatever
    the grid's range (plotly ignores zmid once zmin and zmax are set)."""
    heat = plots.speedup_heatmap(sv.grid(s)).data[0]
    white = [stop for stop, colour in heat.colorscale if colour == "#ffffff"]
    assert len(white) == 1 and heat.zmin <= 1 < heat.zmax
    assert abs(heat.zmin + white[0] * (heat.zmax - heat.zmin) - 1) < 1e-12
    assert heat.zmid is None
