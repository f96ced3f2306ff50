"""The app under hostile or long-staying use (issue 18): escaped tokens, strict query
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
import lesson_index  # noqa: E402
import nav  # noqa: E402
import tokens  # noqa: E402
import widgets  # noqa: E402

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
