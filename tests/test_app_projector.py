"""The app in front of a class, under AppTest: settings that take effect, presenter charts a room
can read, links that carry a view, and the smaller defects seen on the screen, each pinned.

The same items in a real browser (keys, clipboard, layout at 1280×720, 420 px and 1920×1080): tests/test_browser_class.py.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from fractions import Fraction

import pytest
from streamlit.testing.v1 import AppTest

from tests.apptest import ENTRY, ROOT, open_page  # noqa: F401 (puts app/ on sys.path)
from parts import links, memory, nav  # noqa: E402

WEIGHTS = (ROOT / "specsim" / "gpt" / "weights" / "manifest.json").exists()
CHART_PAGES = [p.path for p in nav.PAGES if p.path not in ("views/lessons.py", "views/glossary.py")]


def specs(at) -> list:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


# -- 1. settings take effect ------------------------------------------------------------------------

@pytest.mark.skipif(not WEIGHTS, reason="no shipped weights")
def test_tiny_gpt_settings_take_effect_as_they_change_and_show_only_their_own_inputs():
    at = open_page("views/tiny_gpt.py", timeout=300)
    assert not [b for b in at.button if b.label == "Generate"]  # no form waiting for a button
    keys = {w.key for kind in ("slider", "text_input", "radio", "number_input") for w in at.get(kind)}
    assert "gpt-gamma" in keys and not keys & {"gpt-shape", "gpt-drafts", "gpt-budget", "gpt-depth", "gpt-topk"}
    at.radio(key="gpt-kind").set_value("block").run(timeout=300)  # no button: the next run is block's
    assert not at.exception and not at.error
    assert any("(block:4)" in m.value.replace("\\", "") for m in at.markdown)
    at.radio(key="gpt-kind").set_value("tree").run(timeout=300)
    keys = {w.key for kind in ("slider", "text_input", "radio", "number_input") for w in at.get(kind)}
    assert {"gpt-shape", "gpt-drafts"} <= keys and "gpt-gamma" not in keys and "gpt-budget" not in keys
    at.radio(key="gpt-kind").set_value("dynamic").run(timeout=300)
    labels = [w.label for w in at.number_input if w.key in ("gpt-budget", "gpt-depth", "gpt-topk")]
    # the scheme's own labels, never prefixed by its kind ("dynamic: nodes")
    assert len(labels) == 3 and not any(re.search(r"dynamic\w*:", label) for label in labels), labels
    assert not at.exception and not at.error


@pytest.mark.skipif(not WEIGHTS, reason="no shipped weights")
def test_tiny_gpt_metric_labels_fit_their_column_and_the_delta_arrow_follows_the_gap():
    at = open_page("views/tiny_gpt.py", timeout=300)
    labels = [m.label for m in at.metric]
    assert labels and max(map(len, labels)) <= 28, labels  # three to a row at 1280×720: no "…at the meas…"
    formula = next(m for m in at.metric if m.label == "tokens per round, formula")
    gap = float(formula.proto.delta.split(" ")[0])  # Streamlit points the arrow by the delta's leading sign
    assert formula.proto.delta.startswith("-" if gap < 0 else "+")


# -- 2. presenter charts ------------------------------------------------------------------------------

def _font_sizes(node, where=""):
    """(where, size) of every font size set anywhere in a figure's JSON."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k in ("font", "textfont", "tickfont", "insidetextfont", "outsidetextfont") and isinstance(v, dict) \
                    and "size" in v:
                sizes = v["size"] if isinstance(v["size"], list) else [v["size"]]
                yield from ((f"{where}.{k}", s) for s in sizes)
            yield from _font_sizes(v, f"{where}.{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _font_sizes(v, f"{where}[{i}]")


@pytest.mark.parametrize("path", CHART_PAGES)
def test_presenter_mode_sets_every_chart_text_to_20_px_and_fits_the_screen(path):
    """Every font size in every chart (each frame of an animation too) is at least 20 px, the ticks and axis
    titles are set explicitly (the app's theme sets them smaller), and a chart is 0.75 of a 1080 px screen."""
    at = open_page(path, {"presenter": "1"}, timeout=300)
    at.selectbox(key="presenter-screen").set_value(1080).run(timeout=300)
    assert not at.exception
    figures = specs(at)
    if not figures:
        pytest.skip(f"{path} draws no chart with its defaults")
    for fig in figures:
        if fig["layout"].get("meta") == "placeholder":
            continue
        small = [(w, s) for w, s in _font_sizes(fig) if s < 20]
        assert not small, (path, small[:5])
        layout = fig["layout"]
        assert layout["font"]["size"] >= 20 and layout["height"] >= 810
        for name, axis in layout.items():
            if re.fullmatch(r"[xy]axis\d*", name):
                assert axis["tickfont"]["size"] >= 20 and axis["title"]["font"]["size"] >= 20, (path, name)
        assert all(menu["font"]["size"] >= 20 for menu in layout.get("sliders", []) + layout.get("updatemenus", []))


def test_the_screen_height_is_reachable_with_the_sidebar_closed():
    """The toggle and the screen height are in the main area's view bar (presenter mode closes the sidebar)."""
    at = open_page("views/speedup.py", {"presenter": "1"})
    assert not [w for w in at.sidebar.toggle if w.key == "presenter"]
    assert at.main.toggle(key="presenter").value is True and at.main.selectbox(key="presenter-screen")
    assert at.selectbox(key="presenter-screen").value == "fit this window"


def test_fit_this_window_uses_the_height_the_browser_told_and_ignores_nonsense():
    from parts import presenter
    at = open_page("views/speedup.py", {"presenter": "1"})
    at.session_state[presenter.REPORTED] = 1000
    at.run()
    assert min(json.loads(c.proto.spec)["layout"]["height"] for c in at.get("plotly_chart")) == 750
    told = AppTest.from_string(
        f"import sys; sys.path.insert(0, {str(ROOT / 'app')!r})\nfrom parts import presenter\nimport streamlit as st\n"
        "for h in (10**9, '1080', True, -5, 1080.5, 900, 'x' * 99):\n    presenter.report(h)\n"
        "st.session_state['got'] = presenter.reported()").run()
    assert not told.exception and told.session_state["got"] == 900  # a forged component message changes nothing


# -- 4. links that carry a view ------------------------------------------------------------------

CHANGES = {  # page: settings a visitor changed (widget kind, key, new value)
    "views/stepper.py": [("number_input", "stepper-seed", 7), ("radio", "stepper-kind", "block")],
    "views/residual.py": [("text_input", "res-p", "1/2, 1/4, 1/4")],
    "views/exactness.py": [("number_input", "exact-n", 2), ("slider", "exact-gammas", (2, 3))],
    "views/speedup.py": [("slider", "sp-alpha", 0.6), ("slider", "sp-cost", 0.2)],
    "views/pitfalls.py": [("number_input", "pit-n", 1)],
    "views/workbench.py": [("number_input", "wb-gamma", 3), ("select_slider", "wb-lam", Fraction(1, 2))],
    "views/trees.py": [("number_input", "trees-seed", 5)],
    "views/serving.py": [("number_input", "srv-context", 1024), ("slider", "srv-alpha", 0.7)],
    "views/audit.py": [("number_input", "audit-seed", 3), ("radio", "audit-k", 3)],
}
if WEIGHTS:
    CHANGES["views/tiny_gpt.py"] = [("radio", "gpt-kind", "block"), ("number_input", "gpt-gamma", 3)]


def link_of(at) -> dict:
    """The link to the view as the page's "Copy link" button holds it (``memory.view_params`` of this run)."""
    out = {}
    for name, text in at.session_state["memory-run"].items():
        if text is None:
            value = at.session_state[name] if name in at.session_state else at.session_state[memory.PREFIX + name]
            text = links.text_of(value) if memory.storable(value) else None
        if text is not None:
            out[name] = text
    return out


@pytest.mark.parametrize("path", list(CHANGES))
def test_a_link_to_the_view_opens_the_same_view_in_another_session(path):
    at = open_page(path, timeout=300)
    for kind, key, value in CHANGES[path]:
        getattr(at, kind)(key=key).set_value(value).run(timeout=300)
    assert not at.exception
    params = link_of(at)
    assert all(k in params for _, k, _ in CHANGES[path]), params
    other = AppTest.from_file(str(ENTRY), default_timeout=300)  # another browser: an empty session
    other.query_params.update(params)
    other.run()
    other.switch_page(path).run()
    assert not other.exception and not other.error
    for kind, key, value in CHANGES[path]:
        assert getattr(other, kind)(key=key).value == value, key
    same = {k: at.session_state[k] for k in params if k in at.session_state}
    assert {k: other.session_state[k] for k in same if k in other.session_state} == \
        {k: v for k, v in same.items() if k in other.session_state}
    assert link_of(other) == params  # the link made there is the same link


def test_an_edited_model_travels_in_the_link():
    from parts import model_editor
    from specsim import toy
    at = open_page("views/stepper.py")
    edited = toy.loads_model(toy.load_model("seed").to_json().replace('"3/5"', '"1/2"', 1).replace(
        '"3/10",\n   "1/10"', '"3/10",\n   "1/5"', 1))
    at.session_state[model_editor.EDITED_JSON] = edited.to_json()
    at.session_state[model_editor.CHOICE] = model_editor.EDITED
    at.run()
    params = link_of(at)
    assert "model-json" in params and "model" not in params
    other = AppTest.from_file(str(ENTRY), default_timeout=120)
    other.query_params.update(params)
    other.run()
    other.switch_page("views/stepper.py").run()
    assert not other.exception and not other.error
    assert toy.loads_model(other.session_state[model_editor.EDITED_JSON]).to_json() == edited.to_json()


@pytest.mark.parametrize("query", [
    {"stepper-seed": "1e3", "stepper-kind": "<b>chain</b>", "stepper-speed": "99", "stepper-gamma": "9" * 400},
    {"stepper-seed": "-1", "stepper-ctx": "a a a a a a a a a a a a a a a a a a", "model": "../seed"},
    {"stepper-seed": " 7", "stepper-speed": "0.6e0", "model-json": "{" * 5000},
    {"model-json": '{"name": "x", "vocab": ["a"], "order": 1}'}])
def test_a_bad_link_is_read_strictly_and_opens_the_defaults(query):
    at = open_page("views/stepper.py", query)
    assert not at.exception
    assert at.number_input(key="stepper-seed").value == 0 and at.radio(key="stepper-kind").value == "chain"
    assert at.select_slider(key="stepper-speed").value == 0.6 and at.selectbox(key="stepper-model").value == "seed"
    assert all("\n" not in e.value and len(e.value) < 300 for e in at.error)  # a bad model: one line


def test_links_parse_only_their_own_kind():
    assert links.parse("7", 0) == 7 and links.parse("0.25", 0.8) == 0.25 and links.parse("1/2", Fraction(1)) == \
        Fraction(1, 2)
    for text, default in (("7.5", 0), ("1e2", 0.5), ("1/0", Fraction(1)), ("2", True), ("a", (1, 4)), ("1,2,3", (1, 4)),
                          ("x" * 1001, "s"), ("", "s"), ("a  b", ("a",))):
        assert links.parse(text, default) is links.BAD, (text, default)
    assert links.text_of(1e-05) is None and links.text_of(float("inf")) is None and links.text_of(None) is None


# -- 5. every page in the sidebar ------------------------------------------------------------------

def test_the_navigation_is_expanded():
    """``st.navigation(..., expanded=True)``: Streamlit lists every page (no "View N more"); the browser test
    checks that all of them are on the first screen at 1280×720."""
    source = (ROOT / "app" / "streamlit_app.py").read_text()
    assert re.search(r"st\.navigation\(\w+, expanded=True\)", source)


# -- 6. the smaller defects ------------------------------------------------------------------------

def test_the_stepper_title_names_min_1_p_over_q_whole_and_its_right_panel_has_no_axis_title():
    from specsim.plots import rounds
    from specsim.sampling import trace_round
    from specsim.schemes import Chain
    from specsim.toy import load_model
    seen = 0
    for seed in range(6):
        t = trace_round(load_model("seed"), ("a",), Chain(3), seed=seed)
        for i in range(len(t.events())):
            fig = rounds.event_figure(t, i)
            if fig.layout.meta in ("accept", "reject"):
                title = fig.layout.title.text.replace("<br>", " ").replace("\u00a0", " ")
                assert "(min(1, p/q) = " in title and "(min(1, =" not in title, title
                assert not fig.layout.yaxis2.title.text  # it sat on the left panel's outside labels
                seen += 1
    assert seen >= 4


def test_the_plotly_toolbar_is_hidden_on_a_phone_and_wide_tables_keep_their_key_column():
    from streamlit_app import PHONE_CSS, TABLE_CSS  # noqa: the entry file's CSS (checked in Chromium too)
    assert "modebar-container{display:none" in PHONE_CSS and "max-width:640px" in PHONE_CSS
    assert ":first-child{position:sticky;left:0" in TABLE_CSS
    at = open_page("views/pitfalls.py")
    table = next(m.value for m in at.markdown if m.value.startswith("| rule |"))
    assert table.splitlines()[0].split("|")[1:3] == [" rule ", " exact "]  # the verdict next to its key


def test_residual_labels_sit_away_from_the_q_diamond():
    from specsim.plots import charts
    fig = charts.residual_stack(["a", "b"], [Fraction(3, 5), Fraction(2, 5)], [Fraction(1, 2), Fraction(1, 2)])
    assert [t.insidetextanchor for t in fig.data[:2]] == ["start", "end"]


@pytest.mark.skipif(not WEIGHTS, reason="no shipped weights")
def test_prompt_lookup_opens_on_a_round_that_drafted_and_says_so_for_one_that_did_not():
    at = open_page("views/tiny_gpt.py", timeout=300)
    at.selectbox(key="gpt-draft").set_value("lookup:3").run(timeout=300)
    assert not at.exception and not at.error
    j = at.slider(key="gpt-round").value
    assert any(f"Round {j} (" in m.value for m in at.markdown) and "gpt-mask" in [c.key for c in at.get("plotly_chart")]
    at.slider(key="gpt-round").set_value(1).run(timeout=300)
    if j != 1:  # round 1 drafted nothing: one line says so, no empty mask or cache
        assert any("proposed nothing" in i.value for i in at.info)
        assert "gpt-mask" not in [c.key for c in at.get("plotly_chart")]


def test_a_trees_drafter_cache_cells_are_named():
    from specsim.plots import gpt
    cache = {"target": {"start": 3, "before_verify": 3, "after_verify": 8, "after_crop": 5},
             "draft": {"start": 3, "before_verify": 6, "after_verify": 7, "after_crop": 5}}
    fig = gpt.cache_slots(cache, 4, 1, labels={3: "x", -1: "a", -2: "b", -3: "c", -4: "d"}, slots=[0, 1, 2, 3],
                          path=[0])
    trace = fig.data[0]
    row = list(trace.y).index("draft: after verify (7)")
    names = list(trace.colorbar.ticktext)
    drafted = [names[z] for z in trace.z[row][4:7]]
    assert drafted == [gpt.TREE_WORK] * 3 and list(trace.text[row][4:7]) == ["·"] * 3  # no unlabeled red cells


def test_the_stepper_and_exactness_open_with_something_drawn():
    at = open_page("views/stepper.py")
    tpp = next(s for s in specs(at) if s["layout"]["title"]["text"] == "tokens per target pass")
    expected = next(t for t in tpp["data"] if t["name"] == "exact expectation")
    from specsim import exact, schemes, toy
    want = exact.round_distribution(toy.load_model("seed"), ("a",), schemes.parse("chain:3")).expected_tokens
    assert len(expected["y"]) == 1 and float(expected["y"][0]) == pytest.approx(float(want), abs=1e-12)
    at = open_page("views/exactness.py")
    assert at.selectbox(key="exact-pitfall").value is not None
    assert any(m.label.startswith("TV(broken rule") for m in at.metric)


def test_usage_statistics_are_off_for_streamlit_run_app_from_the_repository_root():
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("STREAMLIT_")}
    out = subprocess.run([sys.executable, "-m", "streamlit", "config", "show"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=120)
    assert re.search(r"^gatherUsageStats = false$", out.stdout, re.M), out.stdout[-500:]


def test_the_speedup_animation_follows_each_frame_and_draws_its_marks_whole():
    from specsim.plots import anim
    from specsim.views import frames
    fig = anim.speedup_animation(frames.speedup_frames(Fraction(1, 20)))
    tops = [f.layout.yaxis.range[1] for f in fig.frames]
    highs = [max(float(y) for y in f.data[0].y) for f in fig.frames]
    assert all(h <= t <= max(h, 1) * 1.3 + 1e-9 for h, t in zip(highs, tops))  # every frame's marks in range
    assert len({round(t, 3) for t in tops}) > 3  # not one fixed range for the sweep
    marks = [t for t in fig.data if t.name in ("best γ", "α, c now")]
    assert len(marks) == 2 and all(t.cliponaxis is False for t in marks)


def test_animations_keep_slider_and_bar_labels_readable():
    from specsim.plots import anim
    from specsim.toy import load_model
    from specsim.views import frames
    model = load_model("seed")
    fig = anim.round_animation(frames.round_frames(model, ("a",), 3, 0, 1))
    assert fig.layout.sliders[0].font.size >= 12 and fig.layout.sliders[0].currentvalue.font.size >= 14
    bars = [t for t in fig.data if t.type == "bar" and t.textposition == "inside"]
    assert bars and all(t.constraintext == "none" for t in bars if t.orientation != "h")


def test_trees_defines_p_prime_q_prime_and_h_before_the_stepper_speaks():
    at = open_page("views/trees.py")
    texts = [(e.type, e.value) for e in at.main if e.type in ("markdown", "caption")]
    defined = next(i for i, (_, t) in enumerate(texts) if "**p'**, **q'**" in t and "**h**" in t)
    spoken = next(i for i, (_, t) in enumerate(texts) if re.match(r"round \d+ · event", t))
    assert defined < spoken


def test_a_whole_number_box_sends_int_value_and_is_kept():
    """The browser sends a number box of whole numbers as ``int_value`` (its declared field is
    ``double_value``): the guard lets it through (links of the stepper carried seed 0 when it did not)."""
    from tests.test_app_hardening import forge
    at = open_page("views/stepper.py")
    forge(at.number_input(key="stepper-seed"), "int_value", 7)
    at.run()
    assert not at.exception and at.number_input(key="stepper-seed").value == 7
