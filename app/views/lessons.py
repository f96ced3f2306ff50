"""Lessons: step through lessons/*.md in order, each linked to its interactive pages."""
import streamlit as st

import lesson_index
import nav

st.title("Lessons")
lessons = lesson_index.lessons()
if not lessons:
    st.info(f"No lessons yet: add Markdown files to `{lesson_index.LESSONS_DIR.name}/` (named `NN-slug.md`).")
    st.stop()

titles = [t for _, t in lessons]
wanted = st.query_params.get("lesson")  # ?lesson=3 opens the third lesson (links from Home)
if wanted is not None and wanted != st.session_state.get("lesson-query"):
    st.session_state["lesson-query"] = wanted
    if wanted.isdigit() and 1 <= int(wanted) <= len(lessons):
        st.session_state["lesson-index"] = int(wanted) - 1
    else:
        st.error(f"There is no lesson {wanted!r}; there are {len(lessons)}.")
if st.session_state.get("lesson-index", 0) >= len(lessons):
    st.session_state["lesson-index"] = 0
st.session_state.setdefault("lesson-index", 0)


def go(delta: int) -> None:
    st.session_state["lesson-index"] = min(max(st.session_state["lesson-index"] + delta, 0), len(lessons) - 1)


i = st.selectbox("lesson", range(len(lessons)), key="lesson-index", format_func=lambda k: titles[k])
st.progress((i + 1) / len(lessons), text=f"lesson {i + 1} of {len(lessons)}")
st.query_params["lesson"] = str(i + 1)
st.session_state["lesson-query"] = str(i + 1)

path, title = lessons[i]
pages = lesson_index.lesson_pages(path, title)
with st.container(border=True):
    st.markdown(path.read_text(encoding="utf-8", errors="replace"))
if pages:
    st.markdown("**Try it in the app:**")
    for page in pages:
        nav.page_link(page)

prev_col, _, next_col = st.columns([1, 3, 1])
prev_col.button("← Previous", on_click=go, args=(-1,), disabled=i == 0, key="lesson-prev", width="stretch")
next_col.button("Next →", on_click=go, args=(1,), disabled=i == len(lessons) - 1, key="lesson-next",
                width="stretch")
