"""Home: what speculative decoding is, one round replayed, a map of the app."""
import streamlit as st

import ui

st.title("specsim: speculative decoding, simulated exactly")
st.markdown(
    "A large **target** model is slow because it emits one token per forward pass. "
    "**Speculative decoding** lets a small **drafter** guess γ tokens ahead (distribution **q**); "
    "the target then scores all of them in **one** pass (distribution **p**) and keeps each draft x "
    "with probability **min(1, p(x)/q(x))**, left to right. At the first rejection it draws a "
    "replacement from the **residual r = max(0, p − q)**, normalized; if every draft survives it adds "
    "a **bonus** token from p. The result is exactly as if the target had sampled alone, "
    "only faster: here you can check both claims.")

st.subheader("Where to go")
cols = st.columns(2)
for k, page in enumerate(p for p in ui.PAGES if p.path != "views/home.py"):
    with cols[k % 2]:
        st.page_link(page.path, label=f"**{page.title}**: {page.blurb}", icon=page.icon)

lessons = ui.lessons()
if lessons:
    st.subheader("Lessons")
    for path, title in lessons:
        st.markdown(f"- {title}")
