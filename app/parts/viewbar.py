"""The bar at the top right of every page: "Copy link to this view", presenter mode and, while it is on,
the projector's height and the clicker's keys.

It stays in the page's top right corner (fixed, beside Streamlit's own menu), so every control in it is
reachable with the sidebar closed, as presenter mode opens each page.

The browser's side is one small component (``STAGE_JS``, Streamlit's components v2: plain JavaScript in
the page, no iframe) mounted once per run:

- in presenter mode it tells the server the window's height (``screen``; again after a resize), so "fit
  this window" sizes presenter charts for the screen in use (off, it tells nothing: a report reruns the page);
- in presenter mode it steps with a clicker or the keyboard: → PageDown Space Enter forward, ← PageUp
  back. The step goes to the stepper or the animation most on screen: a stepper's Next step / Previous
  buttons are clicked (``stepper.CLICKER``: the buttons' container), an animation moves one frame along
  its own slider. Keys typed in a text box, a select or a slider are left alone, and so are Space and
  Enter on a focused button (they press it already).

The link button is a second component (``COPY_JS``): it copies the page's address with this view's
query (``memory.view_params``) to the clipboard, or, where the page is not a secure context and the
clipboard is closed, selects the link in a box beside it to copy by hand.
"""
from __future__ import annotations

import streamlit as st

from parts import links, memory, presenter

KEY = "viewbar"
STAGE = "stage"  # the component's key; its state holds the window's height
HINT = "Clicker: → PgDn Space Enter step · ← PgUp back"

STAGE_JS = """
export default function(component) {
  const { data, setStateValue } = component;
  if (!data.keys) return;  // presenter mode off: nothing to report (a report reruns the page), no keys
  // the report reruns the page: sent only once the page's run is over (a rerun that cut a first run short
  // could leave a slider drawn at its minimum while the page used its remembered value)
  const idle = () => {
    const w = document.querySelector('[data-testid="stStatusWidget"]');
    return !w || !/Running|Stop/.test(w.innerText);
  };
  let timer = null;
  const report = (calm = 0) => {
    clearTimeout(timer);
    if (calm < 3) { timer = setTimeout(() => report(idle() ? calm + 1 : 0), 150); return; }
    const h = Math.round(window.innerHeight);
    if (h > 0 && h !== data.screen) setStateValue("screen", h);
  };
  report();
  const onResize = () => report();
  window.addEventListener("resize", onResize);

  const FORWARD = new Set(["ArrowRight", "PageDown", " ", "Spacebar", "Enter"]);
  const BACK = new Set(["ArrowLeft", "PageUp"]);
  const shown = (el) => {  // px of el's box inside the window
    const r = el.getBoundingClientRect();
    return Math.max(0, Math.min(r.bottom, window.innerHeight) - Math.max(r.top, 0)) * (r.width > 0 ? 1 : 0);
  };
  const targets = () => {
    const out = [];
    document.querySelectorAll('[data-testid="stMain"] [class*="-clicker"]').forEach((box) => {
      const next = box.querySelector('[class*="-next"] button'), prev = box.querySelector('[class*="-prev"] button');
      // a stepper's chart is below its buttons: count the next screenful as its place
      const r = box.getBoundingClientRect();
      const area = Math.max(0, Math.min(r.top + window.innerHeight * 0.8, window.innerHeight) - Math.max(r.top, 0));
      if (next) out.push({ area, top: r.top, step: (d) => { const b = d > 0 ? next : prev; if (b && !b.disabled) b.click(); } });
    });
    document.querySelectorAll('[data-testid="stMain"] .js-plotly-plot').forEach((gd) => {
      const s = gd._fullLayout && gd._fullLayout.sliders && gd._fullLayout.sliders[0];
      if (!s || !s.steps || !s.steps.length || !window.Plotly) return;
      out.push({ area: shown(gd), top: gd.getBoundingClientRect().top, step: (d) => {
        const i = Math.min(Math.max((s.active || 0) + d, 0), s.steps.length - 1);
        if (i === (s.active || 0)) return;
        const args = s.steps[i].args;
        window.Plotly.animate(gd, args[0], Object.assign({}, args[1] || {}, { mode: "immediate" }));
      } });
    });
    return out.filter((t) => t.area > 0).sort((a, b) => b.area - a.area || a.top - b.top);
  };
  const onKey = (e) => {
    if (e.altKey || e.ctrlKey || e.metaKey || e.defaultPrevented) return;
    const forward = FORWARD.has(e.key), back = BACK.has(e.key);
    if (!forward && !back) return;
    const t = e.target;
    if (t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName)
              || t.getAttribute && t.getAttribute("role") === "slider")) return;
    if (t && t.tagName === "BUTTON" && (e.key === " " || e.key === "Enter")) return;
    const best = targets()[0];
    if (!best) return;
    e.preventDefault();
    best.step(forward ? 1 : -1);
  };
  document.addEventListener("keydown", onKey);
  return () => {
    clearTimeout(timer);
    document.removeEventListener("keydown", onKey);
    window.removeEventListener("resize", onResize);
  };
}
"""

COPY_HTML = """<span class="copy"><button type="button" title="copy the address of this page with its settings">
<svg aria-hidden="true" viewBox="0 0 24 24" width="16" height="16"><path fill="currentColor" d="M3.9 12a3.1 3.1 0 0 1 3.1-3.1h4V7H7a5 5 0 0 0 0 10h4v-1.9H7A3.1 3.1 0 0 1 3.9 12zM8 13h8v-2H8v2zm9-6h-4v1.9h4a3.1 3.1 0 0 1 0 6.2h-4V17h4a5 5 0 0 0 0-10z"/></svg><span class="long">Copy link to this view</span><span class="short">Link</span></button><span class="done" role="status"></span>
<input class="link" readonly aria-label="link to this view" hidden></span>"""
COPY_CSS = """
.copy { display: inline-flex; gap: 0.4rem; align-items: center; font-family: var(--st-font); }
button { display: inline-flex; gap: 0.35rem; align-items: center; font: inherit; font-size: 0.875rem;
         line-height: 1.6; padding: 0.25rem 0.75rem; cursor: pointer; color: var(--st-text-color); background: var(--st-background-color);
         border: 1px solid var(--st-border-color, rgba(49, 51, 63, 0.2)); border-radius: 0.5rem; white-space: nowrap; }
button:hover { border-color: var(--st-primary-color); color: var(--st-primary-color); }
.done { font-size: 0.875rem; color: var(--st-text-color); white-space: nowrap; }
.link { font-size: 0.8rem; width: 14rem; }
.short { display: none; }
@media (max-width: 640px) { .long { display: none; } .short { display: inline; } .link { width: 9rem; } }
"""
COPY_JS = """
export default function(component) {
  const { data, parentElement } = component;
  const button = parentElement.querySelector("button"), done = parentElement.querySelector(".done");
  const box = parentElement.querySelector(".link");
  const link = () => window.location.origin + window.location.pathname + data.query;
  button.dataset.link = data.query;
  button.onclick = async () => {
    const url = link();
    try {
      await navigator.clipboard.writeText(url);
      box.hidden = true;
      done.textContent = "copied ✓";
    } catch (err) {  // no clipboard here (not a secure context): the link, selected, to copy by hand
      box.hidden = false;
      box.value = url;
      box.focus();
      box.select();
      done.textContent = "";
    }
    setTimeout(() => { done.textContent = ""; }, 2500);
  };
}
"""
STYLE = """<style>
.st-key-viewbar { position: fixed; top: 0.55rem; right: 3.75rem; z-index: 999991; width: auto !important;
                  max-width: calc(100vw - 7rem); background: var(--background-color, white);
                  flex-wrap: nowrap !important; }
.st-key-viewbar [data-testid="stElementContainer"], .st-key-viewbar [data-testid="stLayoutWrapper"],
.st-key-viewbar [data-testid="stVerticalBlock"] { width: auto !important; flex: 0 0 auto !important; }
.st-key-viewbar .stToggle label p, .st-key-viewbar p { font-size: 0.875rem; white-space: nowrap; }
@media (max-width: 640px) { .st-key-viewbar .viewbar-hint { display: none; } }
</style>"""


@st.cache_resource(max_entries=1, show_spinner=False)
def _components():
    """Both components, registered once per server."""
    stage = st.components.v2.component("specsim_stage", js=STAGE_JS)
    copy = st.components.v2.component("specsim_copy_link", html=COPY_HTML, css=COPY_CSS, js=COPY_JS)
    return stage, copy


def page_query(page) -> str:
    """The query of the link to this view as it stands (before the page runs: its last run's settings)."""
    return links.query(memory.view_params(memory.last_keys(page.url_path)))


def show(page) -> tuple:
    """Draw the bar for ``page`` (a ``st.Page``); returns (the placeholder of its link button, the query it
    holds), for ``finish``."""
    stage, _ = _components()
    st.html(STYLE)
    with st.container(key=KEY, horizontal=True, vertical_alignment="center", gap="small", width="content"):
        link_slot, query = st.empty(), page_query(page)
        _link_button(link_slot, query)
        presenter.controls()
        if presenter.on():
            st.markdown(f"<span class='viewbar-hint'>{HINT}</span>", unsafe_allow_html=True)
        result = stage(key=STAGE, data={"screen": presenter.reported(), "keys": presenter.on()},
                       on_screen_change=lambda: None, height=0, width="content")
        presenter.report(getattr(result, "screen", None))
    return link_slot, query


def _link_button(slot, query: str) -> None:
    _, copy = _components()
    with slot.container():
        copy(data={"query": query}, height="content", width="content")


def finish(slot, shown: str) -> None:
    """After the page's run: the link button again if this run's settings make another link than the
    ``shown`` one (a first visit, or a link's settings just applied)."""
    query = links.query(memory.view_params(memory.run_keys()))
    if query != shown:
        _link_button(slot, query)
