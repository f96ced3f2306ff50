"""The app under hostile or long-staying use: escaped tokens, strict query
parameters, bounded uploads, refusals worded like the CLI, lessons that remember, a stepper
that steps back and keeps rejected drafts visible."""
from __future__ import annotations

import html
import json
import sys
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from specsim import bounds, sampling, toy

ROOT = Path(__file__).resolve().parent.parent
ENTRY = ROOT / "app" / "streamlit_app.py"
sys.path.insert(0, str(ROOT / "app"))
from sections import lesson_index  # noqa: E402
from parts import nav  # noqa: E402
from parts import tokens  # noqa: E402
from parts import widgets  # noqa: E402

TOY_PAGES = [p.path for p in nav.PAGES if p.path != "views/tiny_gpt.py"]
HOSTILE_TOKENS = ["<b>bold</b>", "<script>alert(1)</script>", "&amp;", '"q\'', "<img/src=x/onerror=alert(1)>"]


def run(at):
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def open_page(path, params=None, timeout=30):
    at = AppTest.from_file(str(ENTRY), default_timeout=timeout)
    for k, v in (params or {}).items():
        at.query_params[k] = v
    run(at)
    if path != nav.PAGES[0].path:
        at.switch_page(path)
        run(at)
    return at


def markdown(at) -> str:
    return "\n".join(m.value for m in at.markdown)


def hostile_model_json() -> bytes:
    vocab = HOSTILE_TOKENS
    n = len(vocab)
    row = [f"1/{n}"] * n
    skew = ["1/2"] + [f"1/{2 * (n - 1)}"] * (n - 1)
    return json.dumps({"name": "<i>evil</i>", "vocab": vocab, "order": 1,
                       "target": {t: row for t in vocab}, "draft": {t: skew for t in vocab}}).encode()


def upload(at, key, name, data):
    at.selectbox(key=f"{key}-model").set_value(widgets.UPLOAD)
    run(at)
    at.file_uploader(key=f"{key}-upload").upload(name, data, "application/json")
    return run(at)


# -- markup injection ----------------------------------------------------------------

def test_hostile_tokens_are_escaped_in_the_stepper():
    at = open_page("views/stepper.py")
    upload(at, "stepper", "<b>m</b>.json", hostile_model_json())
    assert not at.error, [e.value for e in at.error]
    for _ in range(2):
        at.button(key="stepper-round").click()
        run(at)
    text = markdown(at)
    chips = [m.value for m in at.markdown if "<span" in m.value]
    assert chips, "no token chips drawn"
    shown = "".join(chips)
    seen = [t for t in HOSTILE_TOKENS if html.escape(t) in shown]
    assert len(seen) >= 2, "the rounds drew none of the hostile tokens"
    unescaped = text.replace("\\<", "")  # in Markdown "\<" is a literal "<"
    for t in HOSTILE_TOKENS:  # never raw, neither in chips nor in captions (Markdown)
        if "<" in t:
            assert t not in unescaped
    if "&amp;" in seen:
        assert "&amp;amp;" in shown  # the chip shows the five characters &amp;, not "&"
    assert "<script" not in unescaped and "<b>bold" not in unescaped and "<img" not in unescaped
    assert "<i>evil" not in unescaped


def test_token_chip_shows_the_token_literally():
    for t in HOSTILE_TOKENS + ["a\nb"]:
        chip = tokens.token_html(t, "draft")
        body = chip[chip.index(">") + 1:chip.rindex("</span>")]
        assert "<" not in body and html.unescape(body) == t


def test_markdown_escape_keeps_text_literal():
    assert tokens.md("<b>*x*</b> $y$") == r"\<b\>\*x\*\</b\> \$y\$"


# -- query parameters ----------------------------------------------------------------

GARBAGE = ["\u00b2", "9" * 5000, "-1", "0", "1e3", " 2", "", "\x00", "<script>", "%C2%B2"]


@pytest.mark.parametrize("path", TOY_PAGES)
def test_every_page_survives_garbage_query_parameters(path):
    params = {"lesson": "\u00b2", "nonsense": "9" * 5000, "x" * 300: "<b>"}
    at = open_page(path, params)
    assert at.title


@pytest.mark.parametrize("value", GARBAGE)
def test_lesson_parameter_read_strictly(value):
    at = open_page("views/lessons.py", {"lesson": value})
    assert at.selectbox(key="lesson-index").value == 0
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "There is no lesson" in errors[0] and len(errors[0]) < 200


def test_query_int_is_strict():
    assert widgets.query_int("13", 1, 13) == 13
    for bad in GARBAGE + ["14", "013a", None, 3]:
        assert widgets.query_int(bad, 1, 13) is None


# -- lessons ---------------------------------------------------------------------

def test_lesson_is_remembered_across_pages():
    at = open_page("views/lessons.py")
    for _ in range(2):
        at.button(key="lesson-next").click()
        run(at)
    assert at.selectbox(key="lesson-index").value == 2 and at.query_params["lesson"] in ("3", ["3"])
    at.switch_page("views/stepper.py")
    run(at)
    at.switch_page("views/lessons.py")
    run(at)
    assert at.selectbox(key="lesson-index").value == 2


def test_lesson_from_url_wins_once_then_the_session_rules():
    at = open_page("views/lessons.py", {"lesson": "4"})
    assert at.selectbox(key="lesson-index").value == 3
    at.button(key="lesson-prev").click()
    run(at)
    assert at.selectbox(key="lesson-index").value == 2


def test_every_internal_lesson_link_is_a_real_page():
    paths = {p.path for p in nav.PAGES}
    for path, _ in lesson_index.lessons():
        for label, target in lesson_index.internal_links(path.read_text(encoding="utf-8")):
            page = lesson_index.link_page(target)
            assert page is not None and page.path in paths, f"{path.name}: [{label}](/{target})"


def test_lessons_render_links_in_the_same_tab_and_fold_answers():
    lessons = lesson_index.lessons()
    pages = {p.path.split("/")[-1][:-3] for p in nav.PAGES}
    at = open_page("views/lessons.py")
    for k, (path, _) in enumerate(lessons):
        text = path.read_text(encoding="utf-8")
        if k:
            at.button(key="lesson-next").click()
            run(at)
        shown = markdown(at)
        assert "](/" not in shown, f"{path.name}: an internal link left as a Markdown link (opens a new tab)"
        targets = [el.proto.page for el in at.get("page_link")]
        # Home is the default page: its URL path is empty
        assert all(t in pages or t == "" for t in targets), targets
        assert len(targets) >= len(lesson_index.internal_links(text))
        answers = text.count("#### Answer")
        assert sum(e.label == "Answer" for e in at.expander) == answers, path.name


def test_long_code_is_folded():
    text = "intro\n\n```python\n" + "\n".join(f">>> {i}" for i in range(30)) + "\n```\n\nafter\n"
    kinds = [s[0] for s in lesson_index.split_lesson(text)]
    assert kinds == ["text", "code", "text"]
    short = "```python\n>>> 1\n1\n```\n#### Answer\n\nyes\n\n### Exercise 2\n"
    assert [s[0] for s in lesson_index.split_lesson(short)] == ["text", "answer", "text"]


# -- hostile uploads and refused work ----------------------------------------------------

def _model(vocab, order, rows=None):
    import itertools
    keys = [" ".join(c) for c in itertools.product(vocab, repeat=order)] if rows is not None else []
    return json.dumps({"vocab": vocab, "order": order, "target": {k: rows for k in keys},
                       "draft": {k: rows[::-1] for k in keys}}).encode()


big = "1" * 4400
HOSTILE_UPLOADS = {
    "deep": ("[" * 100_000 + "]" * 100_000).encode(),
    "int5001": ('{"vocab": ["x"], "order": 1, "target": {"x": [' + "1" * 5001 + ']}, "draft": {}}').encode(),
    "explode": _model([f"t{i}" for i in range(64)], 3),  # 64^3 contexts in a few hundred bytes
    "order20": _model(["0", "1"], 20),
    "nan": b'{"vocab": ["x"], "order": 1, "target": {"x": [NaN]}, "draft": {"x": [1]}}',
    "frac4400": _model(["x", "y"], 1, [f"{big}/{big}1", "0"]),
    "strexp": _model(["x", "y"], 1, ["1e-100000000", "1"]),
    "oversize": b" " * (bounds.LIMITS.file_bytes + 1),
    "ansi": _model(["a\u001b[2J", "b"], 1, ["1/2", "1/2"]),
}


@pytest.mark.parametrize("name", HOSTILE_UPLOADS)
@pytest.mark.parametrize("page, key", [("views/stepper.py", "stepper"), ("views/exactness.py", "exact")])
def test_hostile_upload_is_one_error_line(page, key, name):
    at = open_page(page)
    t = time.perf_counter()
    upload(at, key, f"{name}.json", HOSTILE_UPLOADS[name])
    elapsed = time.perf_counter() - t
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "\n" not in errors[0] and len(errors[0]) < 300, errors
    assert f"{name}.json" in errors[0]
    assert elapsed < 10, f"{name}: {elapsed:.1f} s"


def order12_json() -> bytes:
    return _model(["0", "1"], 12, ["1/3", "2/3"])


def test_refused_work_shows_the_cli_line(tmp_path, capsys):
    """Exactness, order 12 over 2 tokens at N = 5: refused with the same line the CLI prints."""
    from specsim.cli import main
    path = tmp_path / "order12.json"
    path.write_bytes(order12_json())
    model = toy.load_model(str(path))
    with pytest.raises(bounds.WorkRefused) as e:
        bounds.check_joint(model, 5, range(1, 5), contexts=len(model.contexts()),
                           limit=bounds.LIMITS.interactive_work)
    line = str(e.value)
    assert main(["prove", str(path), "--tokens", "5", "--gammas", "1-4", "--max-work", "200000"]) == 2  # the app's limit
    assert line in capsys.readouterr().err
    at = open_page("views/exactness.py")
    upload(at, "exact", "order12.json", order12_json())
    at.number_input(key="exact-n").set_value(5)
    run(at)
    assert line in [x.value for x in at.error]


def test_residual_refuses_a_huge_exponent():
    at = open_page("views/residual.py")
    at.text_input(key="res-p").set_value("1e-100000000, 1/2, 1/2")
    t = time.perf_counter()
    run(at)
    assert time.perf_counter() - t < 5
    assert any("exponent" in e.value for e in at.error), [e.value for e in at.error]


def test_gamma_widget_range_matches_the_estimator():
    at = open_page("views/stepper.py")
    model = toy.load_model("seed")
    top = int(at.number_input(key="stepper-gamma").max)
    bounds.check_round(model, top, limit=bounds.LIMITS.interactive_work)  # the maximum is allowed
    if top < 8:
        with pytest.raises(bounds.WorkRefused):
            bounds.check_round(model, top + 1, limit=bounds.LIMITS.interactive_work)
    assert widgets.UPLOAD_MB * 2**20 >= bounds.LIMITS.file_bytes > (widgets.UPLOAD_MB - 1) * 2**20


# -- the stepper: back, slider, Play by the clock, rejected drafts kept ----------------------

def stepper_state(at):
    pl = at.session_state["stepper"]["player"]
    return pl.round, pl.event


def test_previous_step_crosses_rounds_and_the_slider_jumps():
    at = open_page("views/stepper.py")
    at.button(key="stepper-round").click()
    run(at)
    at.button(key="stepper-next").click()
    run(at)
    assert stepper_state(at) == (1, 0)
    at.button(key="stepper-prev").click()
    run(at)
    r0 = at.session_state["stepper"]["player"].rounds[0]
    assert stepper_state(at) == (0, len(r0.events()) - 1)
    at.slider(key="stepper-slider-0").set_value(2)
    run(at)
    assert stepper_state(at) == (0, 1)
    assert "event 2 of" in markdown(at)


def test_finished_rounds_keep_rejected_drafts_struck_through_and_marked():
    at = open_page("views/stepper.py")
    gen = sampling.generate(toy.load_model("seed"), ("a",), 3, 40, seed=0)
    j = next(k for k, r in enumerate(gen.rounds) if r.accepted < r.gamma)  # a round with a rejection
    for _ in range(j + 2):
        at.button(key="stepper-round").click()
        run(at)
    stream = next(m.value for m in at.markdown if "line-through" in m.value and "round 1 starts" in m.value)
    rejected = gen.rounds[j].drafts[gen.rounds[j].accepted]
    assert f"round {j + 1} starts" in stream
    assert f'title="rejected draft"' in stream and f">{html.escape(rejected)}</span>" in stream


def test_choosing_upload_stops_play():
    at = open_page("views/stepper.py")
    at.button(key="stepper-play").click()
    run(at)
    at.selectbox(key="stepper-model").set_value(widgets.UPLOAD)
    run(at)
    assert not at.session_state["stepper"]["playing"]
    at.selectbox(key="stepper-model").set_value("seed")
    run(at)
    assert not at.session_state["stepper"]["playing"] and any(b.label == "Play" for b in at.button)
