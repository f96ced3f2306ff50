"""specsim's Streamlit app: `streamlit run app` from the repository root.

The pages live in ``app/views/`` (one thin page per topic); this file only
sets the page config and the navigation.

plotly is imported here, once, before any session runs a page: three sessions
opening a chart page at once on a fresh server would otherwise import it
concurrently and one of them could see a half-imported module.

The shared widgets are in ``app/parts/``, the pieces of one page in ``app/sections/``; they are
imported as ``from parts import widgets``, with ``app/`` on ``sys.path`` (``streamlit run`` puts the
script's folder there; the line below does it for any other runner).
"""
import html
import sys
from pathlib import Path

if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))

import plotly.colors  # noqa: F401  (see above)
import plotly.graph_objects as go
import plotly.io
import plotly.subplots
import streamlit as st

from parts import guard, memory, nav, presenter, viewbar, warmup  # noqa: E402

guard.install()  # a widget value of the wrong type is ignored (parts.guard)


@st.cache_resource(max_entries=1, show_spinner=False)
def warm_plotly() -> int:
    """Build and serialize one figure with every trace type the pages draw, once per server (plotly
    imports its trace classes lazily, on first use: here, before sessions race for them)."""
    fig = plotly.subplots.make_subplots(rows=1, cols=2)
    for trace in (go.Bar(x=[1], y=[1]), go.Scatter(x=[1], y=[1]), go.Heatmap(z=[[1]]), go.Contour(z=[[1, 2]])):
        fig.add_trace(trace, row=1, col=1)
    fig.add_annotation(x=1, y=1, text="a")
    fig.add_hline(y=1)
    fig.add_vline(x=1)
    fig.add_hrect(y0=0, y1=1)
    return len(plotly.io.to_json(fig)) + len(plotly.io.to_json(go.Figure(go.Sunburst(labels=["a"], parents=[""]))))


# A table wider than its column (a phone) scrolls sideways inside its own box instead of being cut off; its first
# (key) column stays in view while it scrolls, and a shadow at an edge says there is more that way
TABLE_CSS = ("[data-testid='stMarkdownContainer'] table{display:block;max-width:100%;overflow-x:auto;"
             "background:linear-gradient(to right,#fff 30%,rgba(255,255,255,0)) left/2.5rem 100% no-repeat local,"
             "linear-gradient(to left,#fff 30%,rgba(255,255,255,0)) right/2.5rem 100% no-repeat local,"
             "radial-gradient(farthest-side at 0 50%,rgba(0,0,0,.22),rgba(0,0,0,0)) left/0.9rem 100% no-repeat scroll,"
             "radial-gradient(farthest-side at 100% 50%,rgba(0,0,0,.22),rgba(0,0,0,0)) right/0.9rem 100% no-repeat "
             "scroll}"
             "[data-testid='stMarkdownContainer'] table :is(th,td):first-child{position:sticky;left:0;background:#fff;"
             "z-index:1;box-shadow:1px 0 0 rgba(49,51,63,.15)}")
# On a phone plotly's toolbar (zoom, pan) covered the charts' titles when a chart was touched: none there;
# and a row of controls and a chart stacks chart first (parts.widgets.chart_first_on_phone)
PHONE_CSS = ("@media (max-width:640px){.js-plotly-plot .modebar-container{display:none!important}"
             "[class*='st-key-chart-first-']>[data-testid='stLayoutWrapper']>[data-testid='stHorizontalBlock']"
             "{flex-direction:column-reverse}}")
# A spinner from the first paint: a page's own imports (Tiny GPT: PyTorch) or first computation can take
# seconds on a fresh server before its title is drawn; the spinner stands above it and goes (CSS) as soon as
# the page's title is there
LOADING_HTML = ("<div class='page-loading' role='status'><span class='page-spinner'></span>"
                "Loading {title}…</div>")
LOADING_CSS = (".page-loading{display:flex;gap:.6rem;align-items:center;color:#555;font-size:1rem;margin-top:1rem}"
               ".page-spinner{width:1.1rem;height:1.1rem;border:3px solid #ddd;border-top-color:#ff4b4b;"
               "border-radius:50%;animation:page-spin .8s linear infinite}"
               "@keyframes page-spin{to{transform:rotate(360deg)}}"
               "[data-testid='stMain']:has(h1) .st-key-page-loading{display:none}")


def main() -> None:
    memory.restore()  # a reload is a new session: this browser's settings come back (parts.memory)
    presenting = presenter.from_link()  # ?presenter=1: a projector (parts.presenter)
    st.set_page_config(page_title="specsim: speculative decoding", page_icon="🎯", layout="wide",
                       initial_sidebar_state="collapsed" if presenting else "auto")
    warm_plotly()
    # less blank space above a page's title than Streamlit's 6rem (3rem and the view bar's 1rem gap: the bar
    # itself is fixed at the top right, parts.viewbar): at 1280×720 the main chart starts higher;
    # a table wider than the screen (a phone) scrolls sideways inside its own box instead of being cut off
    st.html("<style>[data-testid='stMainBlockContainer']{padding-top:3rem}" + TABLE_CSS + PHONE_CSS + LOADING_CSS
            + "</style>")
    sections = {}
    for page in nav.PAGES:
        sections.setdefault(page.section, []).append(
            st.Page(page.path, title=page.title, icon=page.icon, default=page.path == nav.PAGES[0].path))
    page = st.navigation(sections, expanded=True)  # every page listed, none behind "View 3 more"
    memory.begin(page.url_path)  # the settings this run remembers make the link to this view
    with st.container(key="page-loading"):  # from the first paint until the page's title is drawn
        st.html(LOADING_HTML.format(title=html.escape(getattr(page, "title", None) or "the page")))
    link_slot, shown = viewbar.show(page)  # top right: link to this view, presenter mode, clicker (parts.viewbar)
    try:
        page.run()
        viewbar.finish(link_slot, shown)
    finally:  # after the first page has run (never competing with it): the library's imports and the pages'
        warmup.start()  # fixed work, once per server, in the background (parts.warmup)


if __name__ != "__mp_main__":  # not in a child the server spawns (parts.heavy): it re-runs this file as its main
    main()
