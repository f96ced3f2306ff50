"""The app at classroom grade: presenter mode, defaults that show the page's point, wording,
legibility, settings kept across pages, traps."""
from __future__ import annotations

import json
import re

import pytest
from streamlit.testing.v1 import AppTest

from tests.apptest import ENTRY, ROOT, open_page, tables  # noqa: E402 (puts app/ on sys.path)


def heights(at) -> list:
    return [json.loads(c.proto.spec)["layout"].get("height") for c in at.get("plotly_chart")]


# -- presenter mode ------------------------------------------------------------------------------

def test_presenter_link_sizes_charts_for_the_screen_and_the_toggle_turns_it_off():
    plain = open_page("views/speedup.py")
    at = open_page("views/speedup.py", {"presenter": "1"})
    assert at.toggle(key="presenter").value is True
    big, small = heights(at), heights(plain)
    assert len(big) == len(small) and all(b >= 504 and b >= s for b, s in zip(big, small)), (big, small)
    assert any("font-size: 20px" in str(h.proto.body) for h in at.get("html"))
    at.selectbox(key="presenter-screen").set_value(1080).run()
    assert min(heights(at)) >= 810
    at.switch_page("views/residual.py").run()  # the mode is the session's: it stays on from page to page
    assert at.toggle(key="presenter").value is True and min(heights(at)) >= 810
    at.toggle(key="presenter").set_value(False).run()
    assert heights(at) == heights(open_page("views/residual.py"))
    assert not any("font-size: 20px" in str(h.proto.body) for h in at.get("html"))


def test_presenter_zero_turns_it_off_and_garbage_is_ignored():
    at = open_page("views/home.py", {"presenter": "<b>"})
    assert at.toggle(key="presenter").value is False and not at.error
    at = open_page("views/home.py", {"presenter": "1"})
    at.query_params["presenter"] = "0"
    at.run()
    assert at.toggle(key="presenter").value is False


# -- defaults that show the page's point ---------------------------------------------------------

def test_speedup_sweeps_say_none_where_the_metric_says_none():
    """α 0.6, c 0.2, up to γ 8 is slower for every γ: the metric says "none" and so do the animations'
    captions and cursor (they said "best γ = 1" beside it)."""
    at = open_page("views/speedup.py", {"alpha": "0.3", "c": "0.5"})
    assert {m.label: m.value for m in at.metric}["best γ"] == "none"
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    animated = [s for s in specs if s.get("frames")]
    assert animated
    frames_text = json.dumps([f for s in animated for f in s["frames"]] + [s["layout"] for s in animated],
                             ensure_ascii=False)
    assert "best γ: none" in frames_text and "best γ = 1, every" not in frames_text
    from specsim.views import frames
    from fractions import Fraction
    f = frames.speedup_frames(Fraction(1, 2), alphas=[Fraction(3, 10), Fraction(9, 10)])["frames"]
    assert f[0]["caption"].startswith("α = 3/10, c = 1/2: best γ: none, every γ is slower")
    assert f[1]["best_label"] == f"best γ = {f[1]['best_gamma']}"


# -- wording -------------------------------------------------------------------------------------

def test_counts_are_singular_for_one():
    from parts import event_text, tokens
    from specsim import sampling, schemes, toy
    from specsim.plots import gpt as plots_gpt
    from specsim.plots import rounds as plots_rounds
    model = toy.load_model("seed")
    tree = schemes.parse("tree:1")
    verify = next(ev for ev in sampling.trace_round(model, ("a",), tree, seed=0).events() if ev["kind"] == "verify")
    said = event_text.describe_event(verify, tree)
    assert "1 drafted node;" in said and "nodes" not in said
    for seed in range(40):  # a round that accepts exactly one draft of three, with a replacement
        trace = sampling.trace_round(model, ("a",), 3, seed=seed)
        if trace.accepted == 1:
            break
    emit = trace.events()[-1]
    assert ": 1 accepted draft + 1 replacement = 2 tokens" in event_text.describe_event(emit, 3)
    title = plots_rounds.emit_figure(trace).layout.title.text
    assert "1 accepted draft +" in title.replace("<br>", " ") and "(s)" not in title
    line = plots_rounds.tokens_per_pass([2, 3], [2.5, 2.5], 3).layout.annotations[0].text
    assert "γ + 1" not in line and line.startswith("4")  # also right for a tree's or a dynamic tree's depth
    # a draft after the first rejection is not checked: no coin is shown for it
    fig = plots_gpt.draft_rows(["a", "b"], [[0.5, 0.5]] * 2, [[0.9, 0.1]] * 2, [0, 0], [0.5], [0.7, 0.3], [False])
    titles = [a.text for a in fig.layout.annotations]
    assert "not checked" in titles[1] and "u –" in titles[1] and "u 0.70" in titles[0]


WEIGHTS = (ROOT / "specsim" / "gpt" / "weights" / "manifest.json").exists()


@pytest.mark.skipif(not WEIGHTS, reason="no shipped weights")
def test_tiny_gpt_page_counts_its_drafters_and_keeps_its_round():
    from specsim.gpt.specs import GALLERY
    from specsim.views.words import number_word
    at = open_page("views/tiny_gpt.py", timeout=300)
    text = "\n".join(m.value for m in at.markdown)
    assert f"{number_word(len(GALLERY)).capitalize()} ways to draft" in text and "Five ways" not in text
    assert " 1 queries" not in text
    at.slider(key="gpt-round").set_value(3).run()
    at.switch_page("views/serving.py").run()
    at.switch_page("views/tiny_gpt.py").run()
    assert at.slider(key="gpt-round").value == 3 and not at.exception


@pytest.mark.skipif(not WEIGHTS, reason="no shipped weights")
def test_tiny_gpt_page_runs_the_target_in_bfloat16_when_asked():
    """The number-format choice reaches the loaded pair: the page's generation is the bfloat16 target's."""
    import torch
    from specsim.gpt import api
    from parts import gpt_runs
    at = AppTest.from_file(str(ENTRY), default_timeout=300)
    at.run()
    at.session_state["gpt-n"] = 24
    at.session_state["gpt-dtype"] = "bfloat16"
    at.switch_page("views/tiny_gpt.py").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    choice = gpt_runs.Choice("distilled", "auto", None, "bfloat16")
    pair = gpt_runs.store()["pairs"].get(choice)
    assert pair is not None and pair.target.wte.weight.dtype == torch.bfloat16
    gen = gpt_runs.store()["gens"].get((choice, "def ", 24, "chain:4", 1.0, 0))
    assert gen.text == api.speculative_generate(api.load_pair("distilled", "cpu", dtype="bfloat16"), "def ", 24,
                                                "chain:4", seed=0).text


@pytest.mark.skipif(not WEIGHTS, reason="no shipped weights")
def test_the_trees_tiny_gpt_round_opens_on_a_round_with_several_tokens():
    """The default tree round was the last one, an indent: ten drafted spaces."""
    at = open_page("views/trees.py", timeout=300)
    next(b for b in at.button if b.label.startswith("Generate with")).click().run()
    assert not at.exception and not at.error
    assert at.slider(key="tree-gpt-round").value == 1
    said = next(m.value for m in at.markdown if m.value.startswith("Round 1:"))
    assert "drafted nodes after" in said
    mask = next(json.loads(c.proto.spec) for c in at.get("plotly_chart") if "tree mask" in c.proto.spec)
    tokens = {row.split(" ")[-1] for row in mask["data"][0]["y"][1:]}
    assert len(tokens) > 2, tokens


# -- legibility ----------------------------------------------------------------------------------

def test_rejected_and_replacement_are_not_the_same_red():
    from specsim.plots import anim
    assert anim.STATUS_COLORS["rejected"] != anim.STATUS_COLORS["correct"]
    assert len(set(anim.STATUS_COLORS.values())) == len(anim.STATUS_COLORS)


def test_the_serving_play_has_no_stray_tick_below_batch_1():
    from specsim.plots import serving as plots
    from specsim.views import serving_view as sv
    fig = plots.play_animation(sv.play_frames(sv.Settings(context=128), 4))
    batch_axis = fig.layout.xaxis2
    assert batch_axis.type == "log" and batch_axis.dtick == 1 and batch_axis.range[0] > -0.3  # 10^-0.3 = 0.5


def test_axis_titles_fit_a_phone_and_marker_labels_stay_inside():
    from fractions import Fraction
    from specsim import formulas
    from specsim.plots import charts
    grid = formulas.best_gamma_grid(max_gamma=32)
    heat = charts.best_gamma_heatmaps(grid["alphas"], grid["costs"], grid["best_gamma"], grid["best_speedup"])
    assert all(len(ax.title.text or "") <= 20 for ax in (heat.layout.yaxis, heat.layout.yaxis2))
    assert len(charts.expected_tokens_curve([1, 2], [1, 2], [1, 2]).layout.yaxis.title.text) <= 20
    curve = formulas.speedup_curve(Fraction(99, 100), 0, 32)
    fig = charts.speedup_curve(curve["gammas"], curve["speedups"], (32, curve["speedups"][-1]))
    assert fig.data[-1].textposition == "top left"  # the best γ at the right edge: its label reads leftwards


def test_the_proof_animations_p_labels_sit_on_a_white_ground():
    from specsim.plots import anim
    from specsim.views import frames
    from specsim import toy
    from parts.animations import _OneRow
    seed = toy.load_model("seed")
    data = frames.proof_frames(_OneRow(seed.vocab, seed.p(("a",)), seed.q(("a",))), (), 1, 50, 0)
    fig = anim.proof_animation(data)
    labels = [a for a in fig.layout.annotations if a.text.startswith("p = ")]
    assert len(labels) == len(seed.vocab) and all(a.bgcolor for a in labels)
    captions = " ".join(f["caption"] for f in data["frames"])
    assert "1 accepted draft +" in captions and not re.search(r"(?<![\d,])1 (accepted drafts|replacements)", captions)


# -- the Tiny GPT page runs every scheme of the GPT decoder --------------------------------------

@pytest.mark.skipif(not WEIGHTS, reason="no shipped weights")
@pytest.mark.parametrize("kind, settings, name", [
    ("block", {"gpt-gamma": 3}, "block:3"),
    ("tree", {"gpt-shape": "2,1", "gpt-drafts": "distinct"}, "tree:2,1:distinct"),
    ("dynamic", {"gpt-budget": 4, "gpt-depth": 2, "gpt-topk": 2}, "tree:dynamic,budget=4,depth=2,topk=2")])
def test_tiny_gpt_page_runs_every_scheme_with_its_mask_and_cache(kind, settings, name):
    from specsim.gpt import api
    from specsim.schemes import masks
    at = AppTest.from_file(str(ENTRY), default_timeout=300)
    at.run()
    at.session_state["gpt-n"] = 24
    at.session_state["gpt-kind"] = kind
    for key, value in settings.items():
        at.session_state[key] = value
    at.switch_page("views/tiny_gpt.py").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    gen = api.speculative_generate(api.load_pair("distilled", "cpu"), "def ", 24, name, seed=0)
    assert any(f"Round 1 ({name})" in m.value.replace("\\", "") for m in at.markdown)
    specs = {json.loads(c.proto.spec)["layout"].get("meta"): json.loads(c.proto.spec) for c in at.get("plotly_chart")}
    cache = specs["cache"]["data"][0]
    r = gen.rounds[0]
    n = r.cache["target"]["start"]
    assert cache["y"][1] == f"target: after verify ({r.cache['target']['after_verify']})"
    if kind == "block":  # a path: the chain's masks, the first k drafts kept
        assert "keys seen per query" in json.dumps(specs, ensure_ascii=False)
    else:  # a tree: its own mask, one row per node and the root; the pass's slots coloured by the path
        mask = next(s for s in specs.values() if "tree mask" in json.dumps(s["layout"].get("title", "")))
        assert len(mask["data"][0]["y"]) == 1 + len(r.drafts)
        assert [row[-(1 + len(r.drafts)):] for row in mask["data"][0]["z"]] == \
            masks.tree_grid(r.parents, 0).astype(int).tolist()
        from specsim.gpt import tree_decode
        order = tree_decode.flatten(r.parents, "dfs")
        verify_row = cache["customdata"][1]
        first = cache["x"][0]
        kinds = [verify_row[n + 1 + i - first] for i in range(len(order))]
        assert kinds == ["accepted draft" if node in r.accepted_nodes else "rejected draft" for node in order]
    tests = next(t for t in tables(at) if "u" in t.columns)
    assert len(tests) == len(r.verdict.tests)


# -- speed: the server's set-up for cold loads (the figures: tests/bench_pages.py) ----------------

def test_the_server_skips_work_a_cold_load_would_wait_for():
    """Three settings cut a cold page load on a 2-core machine: no source watching per session (it walked
    every loaded module), no forced collection after every run, and uvicorn's compiled HTTP parser and
    event loop (pure-Python h11 served each of the ~70 script files of a first visit several times slower)."""
    import sys
    import tomllib  # how streamlit itself reads this very file

    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    conf = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert conf["server"]["fileWatcherType"] == "none"
    assert conf["runner"]["postScriptGC"] is False
    assert AutoHTTPProtocol.__name__ == "HttpToolsProtocol"  # what uvicorn's http="auto" serves with
    if sys.platform != "win32":
        from uvicorn.loops.auto import auto_loop_factory
        loop = auto_loop_factory()()
        try:
            assert type(loop).__module__.startswith("uvloop")
        finally:
            loop.close()
