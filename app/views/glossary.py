"""Glossary: the course's symbols and words, each defined once (``specsim.views.glossary``), in the
project's notation; the same words are the hover help of the widgets that name a symbol."""
import streamlit as st

from specsim.views import glossary

st.title("Glossary")
st.markdown("The symbols of the lessons and pages, in the order a reader meets them. Hover over a widget "
            "label that names one (γ, α, c, ...) for the same definition.")
rows = ["| symbol | in words | definition | in specsim's code |", "| --- | --- | --- | --- |"]
for symbol in glossary.ORDER:
    term = glossary.GLOSSARY[symbol]
    code = ", ".join(f"`{c.strip()}`" for c in term.code.split(",")) if term.code else ""
    rows.append(f"| **{term.symbol}** | {term.name} | {term.text} | {code} |")
st.markdown("\n".join(rows))
