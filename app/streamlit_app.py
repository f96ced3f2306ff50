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
import sys
from pathlib import Path

if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))

import plotly.colors  # noqa: F401  (see above)
import plotly.graph_objects as go
import plotly.io
import plotly.subplots
import streamlit as st

from parts import guard, memory, nav, presenter, warmup  # noqa: E402

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


def main() -> None:
    memory.restore()  # a reload is a new session: this browser's settings come back (parts.memory)
    presenting = presenter.from_link()  # ?presenter=1: a projector (parts.presenter)
    st.set_page_config(page_title="specsim: speculative decoding", page_icon="🎯", layout="wide",
                       initial_sidebar_state="collapsed" if presenting else "auto")
    warm_plotly()
    # less blank space above a page's title than Streamlit's 6rem: at 1280×720 the main chart starts higher;
    # a table wider than the screen (a phone) scrolls sideways inside its own box instead of being cut off
    st.html("<style>[data-testid='stMainBlockContainer']{padding-top:4rem}"
            "[data-testid='stMarkdownContainer'] table{display:block;max-width:100%;overflow-x:auto}</style>")
    sections = {}
    for page in nav.PAGES:
        sections.setdefault(page.section, []).append(
            st.Page(page.path, title=page.title, icon=page.icon, default=page.path == nav.PAGES[0].path))
    page = st.navigation(sections)
    presenter.controls()  # the toggle, under the page list
    try:
        page.run()
    finally:  # after the first page has run (never competing with it): the library's imports and the pages'
        warmup.start()  # fixed work, once per server, in the background (parts.warmup)


main()
