"""The app's pages: the registry (``PAGES``), one line per page, and links between them.

A page is its file ``app/views/<name>.py`` and its line here: its title, icon, section, blurb (the Home
page's list) and the key of its main chart. Everything that lists pages derives from ``PAGES``: the
navigation (``streamlit_app``), the Home page's list, the lessons' links (``nav.PAGE``), the tests' and
benches' page lists (``tests/apptest.PAGES``, ``tests/bench_layout.MAIN_CHART``, ``tests/test_browser``).
"""
from __future__ import annotations

from dataclasses import dataclass

import streamlit as st


@dataclass(frozen=True)
class PageInfo:
    path: str
    title: str
    icon: str
    section: str
    blurb: str
    chart: str | None = None  # the Streamlit key of the page's main chart (None: its text is the point)

    @property
    def name(self) -> str:
        """The short name ("stepper"): its file's name, the page's address (``url``) and ``PAGE``'s key."""
        return self.path.split("/")[-1][:-3]

    @property
    def url(self) -> str:
        """The page's address after the server's root: its name, "" for the first page (Streamlit's default)."""
        return "" if self is PAGES[0] else self.name


PAGES = [
    PageInfo("views/home.py", "Home", ":material/home:", "Start",
             "what speculative decoding is, one round replayed", chart="home-figure"),
    PageInfo("views/lessons.py", "Lessons", ":material/school:", "Start",
             "the lessons, in order, each linked to its page"),
    PageInfo("views/glossary.py", "Glossary", ":material/dictionary:", "Start",
             "p, q, γ, α, c, v, K, TV, the residual, SE, cells, p-value: one definition each"),
    PageInfo("views/stepper.py", "Round stepper", ":material/play_circle:", "Toy models",
             "play rounds forward one event at a time", chart="stepper-event"),
    PageInfo("views/residual.py", "Residual explorer", ":material/stacked_bar_chart:", "Toy models",
             "edit p and q, watch min(p, q), α and the residual r", chart="res-stack"),
    PageInfo("views/exactness.py", "Exactness", ":material/verified:", "Toy models",
             "prove speculative = target with exact fractions", chart="exact-joint"),
    PageInfo("views/speedup.py", "Speedup", ":material/speed:", "Toy models",
             "speedup against γ, the best γ over α and c", chart="sp-curve"),
    PageInfo("views/pitfalls.py", "Pitfalls lab", ":material/bug_report:", "Toy models",
             "break the rule on purpose, measure the damage", chart="pit-bars"),
    PageInfo("views/implementations.py", "Implementations", ":material/fact_check:", "Toy models",
             "real systems' verification rules (vLLM, Medusa, llama.cpp, ...), checked exactly", chart="impl-bars"),
    PageInfo("views/workbench.py", "Rule workbench", ":material/tune:", "Toy models",
             "a family of rules on sliders: which one is exact?", chart="wb-grid"),
    PageInfo("views/trees.py", "Trees and blocks", ":material/account_tree:", "Toy models",
             "tree and block verification, every scheme within a drafting budget, the tree mask", chart="trees-event"),
    PageInfo("views/tiny_gpt.py", "Tiny GPT", ":material/memory:", "Real model",
             "a real GPT pair: its mask, KV cache and speedup", chart="gpt-rounds"),
    PageInfo("views/serving.py", "Serving", ":material/dns:", "Real model",
             "batches on real GPUs: when speculation stops paying", chart="srv-heat"),
    PageInfo("views/audit.py", "Audit", ":material/policy:", "Real model",
             "judge an engine (specsim, transformers, a buggy one) by the tokens it emits", chart="audit-curves"),
]
PAGE = {p.name: p for p in PAGES}  # "stepper" -> PageInfo
HOME = PAGES[0]


def page_link(name: str, label: str | None = None, query_params: dict | None = None) -> None:
    """A link to another page by its short name ("stepper", "residual", ...)."""
    info = PAGE[name]
    st.page_link(info.path, label=label or info.title, icon=info.icon, query_params=query_params)
