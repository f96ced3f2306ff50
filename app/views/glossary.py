"""Glossary: the course's symbols and words, each defined once (``specsim.views.glossary``), in the
project's notation; the same words are the hover help of the widgets that name a symbol."""
import streamlit as st

from specsim.views import glossary

st.title("Glossary")
st.markdown("The symbols of the lessons and pages, in the order a reader meets them. Hover over a widget "
            "label that names one (γ, α, c, ...) for the same definition.")
for row in range(0, len(glossary.ORDER), 2):  # two cards a row; a phone stacks them in order
    for col, symbol in zip(st.columns(2), glossary.ORDER[row:row + 2]):
        term = glossary.GLOSSARY[symbol]
        code = ", ".join(f"`{c.strip()}`" for c in term.code.split(",")) if term.code else ""
        with col.container(border=True, key=f"glossary-{glossary.ORDER.index(symbol)}", height="stretch"):
            st.markdown(f"#### {term.symbol} · {term.name}")
            st.markdown(term.text)
            if code:
                st.caption(f"in specsim's code: {code}")
