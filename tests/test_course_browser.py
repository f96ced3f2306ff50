"""The course platform in a real browser (``streamlit run app`` and headless Chromium, as tests/test_browser.py):
a lesson's live figure and a check-yourself answer at 1280×720 and at a phone's 420 px, Home's lesson links
whole and its pages in the sidebar's order at 420 px, and Back from the Lessons page. Screenshots go to
``test-artifacts/course-*.png``. Skipped only when /usr/bin/chromium (or playwright) is absent."""
from __future__ import annotations

import re
import sys
from fractions import Fraction

import pytest

from specsim.plots import lesson_figs
from specsim.views import course
from tests.test_browser import (ARTIFACTS, ROOT, browser, no_exception, open_page, page, server,  # noqa: F401
                                sync_api, wait_idle)

VIEWPORTS = {"1280x720": (1280, 720), "420": (420, 900)}


def illustrated():
    """A lesson whose figures are registered and whose first check is well formed, preferring a number."""
    for _, les in course.load():
        figures = lesson_figs.registry({les.number})
        if les.figures and les.checks and not course.problems(les) and all(f.name in figures for f in les.figures):
            return les
    raise AssertionError("no lesson has both registered figures and well-formed checks yet")


def typed(check) -> str:
    value = check.expected
    if isinstance(value, Fraction) and value.denominator != 1:
        return f"{value.numerator}/{value.denominator}"
    return str(int(value)) if isinstance(value, Fraction) else repr(value)


@pytest.mark.parametrize("size", VIEWPORTS)
def test_a_lesson_shows_its_live_figure_and_answers_a_check(server, browser, size):  # noqa: F811
    les = illustrated()
    width, height = VIEWPORTS[size]
    ctx = browser.new_context(viewport={"width": width, "height": height})
    pg = ctx.new_page()
    open_page(pg, server, f"lessons?lesson={les.number}")
    first = les.figures[0]
    chart = pg.locator(f".st-key-fig-{first.name} .main-svg").first
    chart.wait_for(timeout=60_000)
    assert chart.bounding_box()["width"] <= width, "the figure fits the screen's width"
    sync_api.expect(pg.get_by_text(first.alt, exact=True).first).to_be_attached()
    k, check = next((k, c) for k, c in enumerate(les.checks, 1))
    box = pg.locator(f".st-key-check-{les.number}-{k}-box")
    if check.kind == "choice":
        box.get_by_text(check.expected, exact=True).click()
    else:
        box.locator("input").fill(typed(check))
    box.get_by_role("button", name="Check").click()
    right = pg.get_by_text(re.compile(r"^Right: ")).first
    right.wait_for(timeout=30_000)
    right.scroll_into_view_if_needed()
    wait_idle(pg)
    ARTIFACTS.mkdir(exist_ok=True)
    pg.screenshot(path=str(ARTIFACTS / f"course-lesson-{size}-check.png"))
    chart.scroll_into_view_if_needed()
    pg.wait_for_timeout(400)
    pg.screenshot(path=str(ARTIFACTS / f"course-lesson-{size}-figure.png"))
    no_exception(pg)
    ctx.close()


def test_home_at_a_phones_width_shows_whole_lesson_titles_in_the_sidebars_order(server, browser):  # noqa: F811
    sys.path.insert(0, str(ROOT / "app"))
    from parts import nav
    ctx = browser.new_context(viewport={"width": 420, "height": 900})
    pg = ctx.new_page()
    open_page(pg, server, "")
    links = pg.locator(".st-key-home-lessons [data-testid='stPageLink'] a")
    assert links.count() == len(course.PATHS["core"])
    cut = pg.evaluate("""() => [...document.querySelectorAll(".st-key-home-lessons [data-testid='stPageLink'] a *")]
        .filter(e => e.scrollWidth > e.clientWidth + 1 || e.getBoundingClientRect().right > innerWidth)
        .map(e => e.textContent)""")
    assert not cut, f"lesson labels cut at 420 px: {cut}"
    titles = {p.title for p in nav.PAGES}
    shown = pg.evaluate("""(titles) => [...document.querySelectorAll("[data-testid='stMain'] [data-testid='stPageLink'] a [data-testid='stMarkdownContainer']")]
        .map(a => [a.innerText.trim(), a.getBoundingClientRect().top]).filter(([t]) => titles.includes(t))
        .sort((a, b) => a[1] - b[1]).map(([t]) => t)""", sorted(titles))
    assert shown == [p.title for p in nav.PAGES if p != nav.HOME], "Where to go, top to bottom on a phone"
    ARTIFACTS.mkdir(exist_ok=True)
    pg.screenshot(path=str(ARTIFACTS / "course-home-420.png"))
    no_exception(pg)
    ctx.close()


def test_back_from_the_lessons_page_leaves_no_lesson_number_behind(server, page):  # noqa: F811
    """Home → Lessons (sidebar) → Next → Back → Back: lesson 2, then the lesson shown on arrival, then Home
    with a clean address (no ?lesson=N written while the browser went back)."""
    open_page(page, server, "")
    page.locator('[data-testid="stSidebarNav"] a', has_text="Lessons").click()
    sync_api.expect(page).to_have_url(re.compile(r"/lessons$"), timeout=30_000)
    progress = page.locator('[data-testid="stMain"] [data-testid="stProgress"]')
    sync_api.expect(progress).to_contain_text("lesson 1 of", timeout=30_000)
    wait_idle(page)
    page.get_by_role("button", name="Next →").click()
    sync_api.expect(page).to_have_url(re.compile(r"/lessons\?lesson=2$"), timeout=30_000)
    sync_api.expect(progress).to_contain_text("lesson 2 of", timeout=30_000)
    wait_idle(page)
    page.go_back()
    sync_api.expect(progress).to_contain_text("lesson 1 of", timeout=30_000)
    wait_idle(page)
    assert not re.search(r"lesson=", page.url), page.url
    page.go_back()
    page.locator('[data-testid="stMainBlockContainer"] h1', has_text="specsim").wait_for(timeout=30_000)
    wait_idle(page)
    assert page.url.rstrip("/").endswith(server.rsplit("/", 1)[-1]) and "lesson" not in page.url, page.url
    no_exception(page)


@pytest.mark.parametrize("size", VIEWPORTS)
def test_the_glossary_page(server, browser, size):  # noqa: F811
    width, height = VIEWPORTS[size]
    ctx = browser.new_context(viewport={"width": width, "height": height})
    pg = ctx.new_page()
    open_page(pg, server, "glossary")
    sync_api.expect(pg.get_by_text("total variation distance").first).to_be_visible()
    ARTIFACTS.mkdir(exist_ok=True)
    pg.screenshot(path=str(ARTIFACTS / f"course-glossary-{size}.png"))
    no_exception(pg)
    ctx.close()


def test_the_generator_writes_a_stamped_svg_the_same_each_time(tmp_path):
    """``python -m specsim.plots.lesson_figs`` (its ``render``): plotly.js in headless Chromium, the figure's hash
    in a comment at the top, valid XML, and the same bytes on a second run (seeded ids)."""
    import io
    import xml.dom.minidom

    import plotly.graph_objects as go

    from specsim.plots.lesson_figs.__main__ import render

    def draw(p_a=0.6):
        return go.Figure(go.Bar(x=["a", "b"], y=[p_a, 1 - p_a])).update_layout(title="p after a")

    figures = {"99-planted": lesson_figs.LessonFigure("99-planted", draw, width=500, height=300)}
    first = render(["99-planted"], figures, out=io.StringIO(), directory=tmp_path / "one")[0].read_bytes()
    again = render(["99-planted"], figures, out=io.StringIO(), directory=tmp_path / "two")[0].read_bytes()
    assert first == again
    text = first.decode("utf-8")
    assert text.startswith("<!-- specsim-figure 99-planted sha256=")
    assert lesson_figs.svg_hash(text) == lesson_figs.figure_hash(draw())
    svg = xml.dom.minidom.parseString(text).documentElement
    assert svg.tagName == "svg" and (svg.getAttribute("width"), svg.getAttribute("height")) == ("500", "300")
    assert "p after a" in text


def test_the_generator_renders_where_an_asyncio_loop_runs(tmp_path):
    """In a full test session an earlier test can leave an event loop running in this thread, where
    Playwright's synchronous API refuses to start: ``render`` then renders from a thread of its own."""
    import asyncio
    import io

    import plotly.graph_objects as go

    from specsim.plots.lesson_figs.__main__ import render

    figures = {"99-loop": lesson_figs.LessonFigure("99-loop", lambda: go.Figure(go.Bar(x=["a"], y=[1])),
                                                   width=300, height=200)}

    async def inside_a_loop():
        return render(["99-loop"], figures, out=io.StringIO(), directory=tmp_path)

    try:
        asyncio.get_running_loop()  # an earlier test of this session left one running: the case itself
        written = render(["99-loop"], figures, out=io.StringIO(), directory=tmp_path)
    except RuntimeError:
        written = asyncio.run(inside_a_loop())
    assert written[0].read_text(encoding="utf-8").startswith("<!-- specsim-figure 99-loop sha256=")
