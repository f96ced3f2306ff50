"""The app in front of a class in headless Chromium: settings that take effect, a spinner from
the first paint, presenter charts read from the back of a room (every chart text >= 20 px at 1920×1080), a
clicker that steps, a link that opens the same view in another browser, every page in the sidebar at
1280×720, and the first chart on a phone's first screen. Screenshots of what each test looked at go to
test-artifacts/class/ (open them: they are the review). The same items under AppTest:
tests/test_app_projector.py.
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_browser import (ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, WEIGHTS, browser, no_exception, server,  # noqa: F401
                                start_server, sync_api, wait_idle)
from tests.bench_layout import CHART_TOP_JS, MAIN_CHART, wait_page  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SHOTS = ARTIFACTS / "class"
sys.path.insert(0, str(ROOT / "app"))
from parts import nav  # noqa: E402

# every visible text drawn inside a plotly chart (ticks, titles, legends, annotations, bar labels, the
# animation's buttons and slider labels): [font size in px, text, chart]
CHART_TEXT_JS = """() => {
  const out = [];
  document.querySelectorAll('[data-testid="stMain"] .js-plotly-plot').forEach((gd) => {
    const box = gd.closest('[class*="st-key-"]');
    const key = box ? (box.className.match(/st-key-[\\w-]+/) || ['?'])[0] : '?';
    gd.querySelectorAll('svg text').forEach((t) => {
      const text = (t.textContent || '').trim();
      const st = getComputedStyle(t);
      if (!text || st.visibility === 'hidden' || st.display === 'none' || +st.opacity === 0
          || /rgba\\(0, 0, 0, 0\\)/.test(st.fill) || t.getBoundingClientRect().width === 0) return;
      out.push([parseFloat(st.fontSize), text.slice(0, 40), key]);
    });
  });
  return out;
}"""


def shoot(pg, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    pg.screenshot(path=str(SHOTS / f"{name}.png"))


def context(browser, width: int, height: int, **kw):
    return browser.new_context(viewport={"width": width, "height": height}, **kw)


def event_no(pg) -> int:
    text = pg.locator('[data-testid="stMain"] [data-testid="stMarkdownContainer"]',
                      has_text=re.compile(r"^round \d+ · event")).first.inner_text()
    return int(re.search(r"event (\d+)", text).group(1))


# -- 5. every page in the sidebar ------------------------------------------------------------------

def test_every_page_is_listed_on_the_first_screen_of_the_sidebar_at_1280x720(server, browser):
    ctx = context(browser, 1280, 720)
    pg = ctx.new_page()
    pg.goto(f"{server}/stepper")
    wait_page(pg, MAIN_CHART["stepper"])
    links = pg.locator('[data-testid="stSidebarNav"] a')
    titles = [links.nth(i).inner_text().strip().splitlines()[-1].strip() for i in range(links.count())]  # icon, title
    assert titles == [p.title for p in nav.PAGES], titles
    for i in range(links.count()):  # each on the first screen, none behind "View N more"
        box = links.nth(i).bounding_box()
        assert box and box["y"] + box["height"] <= 720, (titles[i], box)
    assert pg.get_by_text(re.compile(r"View \d+ more")).count() == 0
    shoot(pg, "sidebar-1280x720")
    ctx.close()


# -- 1. settings take effect, a spinner from the first paint ---------------------------------------

@pytest.mark.skipif(not WEIGHTS, reason="no shipped weights")
def test_a_tiny_gpt_setting_takes_effect_at_once(server, browser):
    ctx = context(browser, 1280, 720)
    pg = ctx.new_page()
    pg.goto(f"{server}/tiny_gpt")
    wait_page(pg, MAIN_CHART["tiny_gpt"], 300_000)
    wait_idle(pg, 300_000)
    side = pg.locator('[data-testid="stSidebar"]')
    assert side.get_by_role("button", name="Generate", exact=True).count() == 0  # nothing waits for a button
    assert pg.locator(".st-key-gpt-shape").count() == 0  # a chain shows no tree inputs
    side.locator(".st-key-gpt-kind label", has_text="block").first.click()
    sync_api.expect(pg.locator('[data-testid="stMain"]')).to_contain_text("(block:4)", timeout=300_000)
    wait_idle(pg, 300_000)
    no_exception(pg)
    shoot(pg, "tiny-gpt-block-1280x720")
    ctx.close()


# records, in the page, when each thing first appears in the main area: the app's loading spinner, the
# page's title, a Streamlit spinner or status, a chart
FIRST_PAINT_JS = """() => {
  window.__seen = {};
  const mark = (name) => { if (!(name in window.__seen)) window.__seen[name] = performance.now(); };
  const look = () => {
    const main = document.querySelector('[data-testid="stMain"]');
    if (!main) return;
    const shown = (el) => el && el.getBoundingClientRect().height > 0 && getComputedStyle(el).display !== 'none';
    if (shown(main.querySelector('.page-loading'))) mark('loading');
    if (main.querySelector('h1')) mark('title');
    if ([...main.querySelectorAll('[data-testid="stSpinner"], [data-testid="stExpander"] summary')]
        .some(shown)) mark('spinner');
    if (main.querySelector('.st-key-gpt-rounds .main-svg')) mark('chart');
    const text = (main.innerText || '').trim();
    if (text && !('content' in window.__seen)) window.__seen.first_text = text.slice(0, 80);
    if (text) mark('content');
  };
  new MutationObserver(look).observe(document, {subtree: true, childList: true, attributes: true});
}"""


@pytest.mark.skipif(not WEIGHTS, reason="no shipped weights")
def test_a_fresh_servers_tiny_gpt_page_shows_a_spinner_from_its_first_paint(tmp_path, browser):
    """The first thing the main area shows is the page's loading spinner or its title, never a blank wait
    for PyTorch; the title comes with a spinner (PyTorch, the pair) before the chart."""
    proc, url, _ = start_server(tmp_path)
    try:
        ctx = context(browser, 1280, 720)
        pg = ctx.new_page()
        pg.add_init_script(f"document.addEventListener('DOMContentLoaded', {FIRST_PAINT_JS})")
        pg.goto(f"{url}/tiny_gpt")
        wait_page(pg, MAIN_CHART["tiny_gpt"], 300_000)
        seen = pg.evaluate("() => window.__seen")
        print(f"\nFIRST PAINT on a fresh server (ms from navigation): {seen}")
        assert "content" in seen and "chart" in seen
        assert seen["first_text"].startswith(("Loading", "Tiny GPT")), seen  # a spinner or the title first
        assert min(seen.get("loading", 1e12), seen["title"]) <= seen["content"] + 1, seen
        assert "spinner" in seen and seen["spinner"] < seen["chart"], seen
        ctx.close()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        proc.log.close()


# -- 2. presenter mode -------------------------------------------------------------------------------

PRESENTER_PAGES = [p for p, key in MAIN_CHART.items() if key and (p != "tiny_gpt" or WEIGHTS)]


@pytest.mark.parametrize("path", PRESENTER_PAGES)
def test_presenter_mode_every_chart_text_is_at_least_20_px_at_1920x1080(server, browser, path):
    ctx = context(browser, 1920, 1080)
    pg = ctx.new_page()
    pg.goto(f"{server}/{path}?presenter=1")
    assert wait_page(pg, MAIN_CHART[path], 300_000 if path == "tiny_gpt" else 120_000)
    wait_idle(pg, 300_000)
    pg.wait_for_function("() => document.querySelectorAll('.js-plotly-plot .main-svg').length > 0")
    pg.wait_for_timeout(800)  # plotly lays out once more after a resize
    texts = pg.evaluate(CHART_TEXT_JS)
    small = [t for t in texts if t[0] < 20]
    shoot(pg, f"presenter-{path or 'home'}-1920x1080")
    assert texts and not small, small[:10]
    sidebar = pg.locator('[data-testid="stSidebar"]')
    assert sidebar.get_attribute("aria-expanded") == "false" or (sidebar.bounding_box() or {"x": -1, "width": 0})[
        "x"] + (sidebar.bounding_box() or {"width": 0})["width"] <= 1
    bar = pg.locator(".st-key-viewbar")  # the screen height and the toggle, with the sidebar closed
    assert bar.is_visible() and bar.locator(".st-key-presenter-screen").is_visible()
    assert bar.get_by_text(re.compile("Clicker")).is_visible()
    if path == "speedup":  # the sliders show the values the chart was drawn with (the report's rerun came
        # after the first run: one that cut it short left them drawn at their minimum)
        shown = pg.evaluate("() => [...document.querySelectorAll('[data-testid=stSliderThumbValue]')].map(e => e.innerText)")
        title = pg.locator(".st-key-sp-curve .gtitle").first.text_content()
        assert f"α = {shown[0]}, c = {shown[1]}" in title, (shown, title)
    main = pg.locator(f".st-key-{MAIN_CHART[path]} .main-svg").first.bounding_box()
    assert 0.7 * 1080 <= main["height"] <= 1080, main  # as tall as most of the screen, never taller
    no_exception(pg)
    ctx.close()


# -- 3. a clicker -------------------------------------------------------------------------------------

def test_a_clickers_keys_step_the_stepper_and_the_animation_on_screen(server, browser):
    ctx = context(browser, 1920, 1080)
    pg = ctx.new_page()
    pg.goto(f"{server}/stepper?presenter=1")
    wait_page(pg, MAIN_CHART["stepper"])
    wait_idle(pg)
    assert pg.get_by_text("Clicker: → PgDn Space Enter step · ← PgUp back").is_visible()
    expected = 1
    assert event_no(pg) == expected
    for key, step in (("ArrowRight", 1), ("PageDown", 1), ("Space", 1), ("Enter", 1), ("ArrowLeft", -1),
                      ("PageUp", -1)):
        expected += step
        pg.keyboard.press(key)
        pg.wait_for_function("(n) => [...document.querySelectorAll('[data-testid=stMain] [data-testid=stMarkdownContainer]')]"
                             ".some(e => new RegExp('^round \\\\d+ · event ' + n + ' of').test(e.innerText))",
                             arg=expected, timeout=30_000)
        wait_idle(pg)
        assert event_no(pg) == expected, key
    pg.evaluate("() => document.querySelector('.st-key-anim-round').scrollIntoView({block: 'start'})")
    pg.wait_for_timeout(400)
    active = "document.querySelector('.st-key-anim-round .js-plotly-plot')._fullLayout.sliders[0].active"
    assert pg.evaluate(f"() => {active}") == 0  # the animation, now the most on screen, takes the keys
    for key, want in (("ArrowRight", 1), ("PageDown", 2), ("ArrowLeft", 1)):
        pg.keyboard.press(key)
        pg.wait_for_function(f"() => {active} === {want}", timeout=10_000)
    assert event_no(pg) == expected  # the stepper off screen did not move
    shoot(pg, "clicker-animation-1920x1080")
    no_exception(pg)
    ctx.close()


def test_no_clicker_without_presenter_mode(server, browser):
    ctx = context(browser, 1280, 720)
    pg = ctx.new_page()
    pg.goto(f"{server}/stepper")
    wait_page(pg, MAIN_CHART["stepper"])
    wait_idle(pg)
    pg.keyboard.press("ArrowRight")
    pg.wait_for_timeout(1500)  # nothing to wait for: the key must change nothing
    wait_idle(pg)
    assert event_no(pg) == 1 and pg.get_by_text(re.compile("Clicker:")).count() == 0
    ctx.close()


# -- 4. a link to this view ----------------------------------------------------------------------------

def copied_link(pg) -> str:
    pg.locator(".st-key-viewbar button", has_text="Copy link").click()
    sync_api.expect(pg.locator(".st-key-viewbar")).to_contain_text("copied", timeout=10_000)
    return pg.evaluate("() => navigator.clipboard.readText()")


def test_a_copied_link_opens_the_same_view_in_another_browser(server, browser):
    ctx = context(browser, 1280, 720, permissions=["clipboard-read", "clipboard-write"])
    pg = ctx.new_page()
    pg.goto(f"{server}/stepper")
    wait_page(pg, MAIN_CHART["stepper"])
    seed = pg.locator(".st-key-stepper-seed input")
    seed.fill("7")
    seed.press("Enter")
    wait_idle(pg)
    pg.locator(".st-key-stepper-kind label", has_text="block").first.click()
    wait_idle(pg)
    link = copied_link(pg)
    assert link.startswith(f"{server}/stepper?") and "stepper-seed=7" in link and "stepper-kind=block" in link, link
    shoot(pg, "link-copied-1280x720")
    other = context(browser, 1280, 720)  # another browser: no cookie, no session, no remembered settings
    pg2 = other.new_page()
    pg2.goto(link)
    wait_page(pg2, MAIN_CHART["stepper"])
    assert pg2.locator(".st-key-stepper-seed input").input_value() == "7"
    checked = pg2.evaluate("() => [...document.querySelectorAll('.st-key-stepper-kind input')]"
                           ".filter(i => i.checked).map(i => i.closest('label').innerText.trim())")
    assert checked == ["block"]
    title = lambda p: p.locator(".st-key-stepper-event .gtitle").first.text_content()  # noqa: E731
    assert title(pg2) == title(pg)  # the same round drawn
    shoot(pg2, "link-opened-1280x720")
    # the speedup page: its sliders too
    pg.goto(f"{server}/speedup?sp-alpha=0.6&sp-cost=0.2")
    wait_page(pg, MAIN_CHART["speedup"])
    link = copied_link(pg)
    assert "sp-alpha=0.6" in link and "sp-cost=0.2" in link, link
    pg2.goto(link)
    wait_page(pg2, MAIN_CHART["speedup"])
    assert pg2.locator(".st-key-sp-curve .gtitle").first.text_content() == \
        pg.locator(".st-key-sp-curve .gtitle").first.text_content()
    no_exception(pg2)
    ctx.close()
    other.close()


# -- the phone -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("path", ["residual", "speedup", "workbench", "pitfalls", "stepper"])
def test_on_a_phone_the_first_chart_is_on_the_first_screen(server, browser, path):
    ctx = context(browser, 420, 900, has_touch=True, is_mobile=True)
    pg = ctx.new_page()
    pg.goto(f"{server}/{path}")
    assert wait_page(pg, MAIN_CHART[path])
    top = pg.evaluate(CHART_TOP_JS, MAIN_CHART[path])
    shoot(pg, f"phone-{path}-420x900")
    assert top < 900, f"{path}: the first chart starts at {top:.0f} px"
    chart = pg.locator(f".st-key-{MAIN_CHART[path]} .js-plotly-plot").first
    chart.tap()  # a touch shows plotly's toolbar over the title, unless it is hidden on a phone
    pg.wait_for_timeout(300)
    assert pg.evaluate("() => [...document.querySelectorAll('.modebar-container')]"
                       ".every(m => getComputedStyle(m).display === 'none')")
    bar = pg.locator(".st-key-viewbar").bounding_box()
    assert bar["height"] < 60 and bar["x"] + bar["width"] <= 420  # one row, inside the screen
    no_exception(pg)
    ctx.close()


def test_a_wide_table_keeps_its_key_column_in_view_while_it_scrolls(server, browser):
    ctx = context(browser, 420, 900)
    pg = ctx.new_page()
    pg.goto(f"{server}/pitfalls")
    wait_page(pg, MAIN_CHART["pitfalls"])
    table = pg.locator('[data-testid="stMarkdownContainer"] table', has_text="E[tokens per round]").first
    table.scroll_into_view_if_needed()
    wide = table.evaluate("t => t.scrollWidth > t.clientWidth")
    if wide:
        table.evaluate("t => { t.scrollLeft = t.scrollWidth; }")
        pg.wait_for_timeout(200)
        first = table.locator("td").first.bounding_box()
        box = table.bounding_box()
        assert abs(first["x"] - box["x"]) < 2  # the key column stuck at the left edge
    headers = [h.inner_text() for h in table.locator("th").all()]
    assert headers[:2] == ["rule", "exact"]
    shoot(pg, "phone-pitfalls-table-420x900")
    ctx.close()
