"""Glossary: the course's symbols and words, each defined once (``specsim.views.glossary``), in the
project's notation; the same words are the hover help of the widgets that name a symbol."""
import streamlit as st

from parts import presenter
from specsim import toy
from specsim.plots import charts
from specsim.views import glossary

st.title("Glossary")
st.markdown("The symbols of the lessons and pages, in the order a reader meets them. Hover over a widget "
            "label that names one (γ, α, c, ...) for the same definition.")
MODEL, CONTEXT = toy.load_model("seed"), ("a",)
picture, words = st.columns([3, 2])
presenter.chart(charts.residual_stack(MODEL.vocab, MODEL.p(CONTEXT), MODEL.q(CONTEXT)), key="glossary-figure",
                where=picture)
words.markdown("**p, q, α and r in one picture** (the seed model after “a”): the black lines are **p**, the "
               "diamonds **q**; the green bars, min(p, q), are what is accepted as drafted, and they add up to "
               "**α**; the red bars are what the **residual r** supplies after a rejection, (1 − α)·r. Each "
               "column adds up to p.")
for row in range(0, len(glossary.ORDER), 2):  # two cards a row; a phone stacks them in order
    for col, symbol in zip(st.columns(2), glossary.ORDER[row:row + 2]):
        term = glossary.GLOSSARY[symbol]
        code = ", ".join(f"`{c.strip()}`" for c in term.code.split(",")) if term.code else ""
        with col.container(border=True, key=f"glossary-{glossary.ORDER.index(symbol)}", height="stretch"):
            st.markdown(f"#### {term.symbol} · {term.name}")
            st.markdown(term.text)
            if code:
                st.caption(f"in specsim's code: {code}")
