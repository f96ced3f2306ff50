"""Lessons: step through lessons/*.md in order, each linked to its page."""
import streamlit as st

import ui

st.title("Lessons")
lessons = ui.lessons()
if not lessons:
    st.info(f"No lessons yet: add Markdown files to `{ui.LESSONS_DIR.name}/` (named `NN-slug.md`).")
    st.stop()

titles = [t for _, t in lessons]
if st.session_state.get("lesson-index", 0) >= len(lessons):
    st.session_state["lesson-index"] = 0


def go(delta: int) -> None:
    st.session_state["lesson-index"] = min(max(st.session_state["lesson-index"] + delta, 0), len(lessons) - 1)


st.session_state.setdefault("lesson-index", 0)
i = st.selectbox("lesson", range(len(lessons)), key="lesson-index",
                 format_func=lambda k: f"{k + 1}. {titles[k]}")
st.progress((i + 1) / len(lessons), text=f"lesson {i + 1} of {len(lessons)}")

path, title = lessons[i]
page = ui.lesson_page(path, title)
if page is not None:
    ui.page_link(page, label=f"Try it: {ui.PAGE[page].title}")
st.markdown(path.read_text(encoding="utf-8", errors="replace"))

prev_col, _, next_col = st.columns([1, 4, 1])
prev_col.button("← Previous", on_click=go, args=(-1,), disabled=i == 0, key="lesson-prev")
next_col.button("Next →", on_click=go, args=(1,), disabled=i == len(lessons) - 1, key="lesson-next")
if page is not None:
    ui.page_link(page, label=f"Open the {ui.PAGE[page].title} page")
