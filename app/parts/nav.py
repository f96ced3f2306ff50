"""The app's pages: their order, titles, icons and sections, and links between them."""
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


PAGES = [
    PageInfo("views/home.py", "Home", ":material/home:", "Start",
             "what speculative decoding is, one round replayed"),
    PageInfo("views/lessons.py", "Lessons", ":material/school:", "Start",
             "the lessons, in order, each linked to its page"),
    PageInfo("views/glossary.py", "Glossary", ":material/dictionary:", "Start",
             "p, q, γ, α, c, v, K, TV, the residual, SE, cells, p-value: one definition each"),
    PageInfo("views/stepper.py", "Round stepper", ":material/play_circle:", "Toy models",
             "play rounds forward one event at a time"),
    PageInfo("views/residual.py", "Residual explorer", ":material/stacked_bar_chart:", "Toy models",
             "edit p and q, watch min(p, q), α and the residual r"),
    PageInfo("views/exactness.py", "Exactness", ":material/verified:", "Toy models",
             "prove speculative = target with exact fractions"),
    PageInfo("views/speedup.py", "Speedup", ":material/speed:", "Toy models",
             "speedup against γ, the best γ over α and c"),
    PageInfo("views/pitfalls.py", "Pitfalls lab", ":material/bug_report:", "Toy models",
             "break the rule on purpose, measure the damage"),
    PageInfo("views/implementations.py", "Implementations", ":material/fact_check:", "Toy models",
             "real systems' verification rules (vLLM, Medusa, llama.cpp, ...), checked exactly"),
    PageInfo("views/workbench.py", "Rule workbench", ":material/tune:", "Toy models",
             "a family of rules on sliders: which one is exact?"),
    PageInfo("views/trees.py", "Trees and blocks", ":material/account_tree:", "Toy models",
             "tree and block verification, every scheme within a drafting budget, the tree mask"),
    PageInfo("views/tiny_gpt.py", "Tiny GPT", ":material/memory:", "Real model",
             "a real GPT pair: its mask, KV cache and speedup"),
    PageInfo("views/serving.py", "Serving", ":material/dns:", "Real model",
             "batches on real GPUs: when speculation stops paying"),
    PageInfo("views/audit.py", "Audit", ":material/policy:", "Real model",
             "judge an engine (specsim, transformers, a buggy one) by the tokens it emits"),
]
PAGE = {p.path.split("/")[-1][:-3]: p for p in PAGES}  # "stepper" -> PageInfo
HOME = PAGES[0]


def page_link(name: str, label: str | None = None, query_params: dict | None = None) -> None:
    """A link to another page by its short name ("stepper", "residual", ...)."""
    info = PAGE[name]
    st.page_link(info.path, label=label or info.title, icon=info.icon, query_params=query_params)
