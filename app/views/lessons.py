"""Lessons: step through lessons/*.md in order, each linked to its interactive pages.

The lesson shown is kept in the URL (``?lesson=N``, read strictly) and in the
session (``st.session_state["lesson"]``), so leaving the page and coming back,
or the browser's Back button, returns to it. Links to app pages inside a
lesson become ``st.page_link`` buttons (same tab, same session); exercise
answers and long code blocks are folded.
"""
import streamlit as st

from parts import nav, widgets
from sections import lesson_index

st.title("Lessons")
lessons = lesson_index.lessons()
if not lessons:
    st.info(f"No lessons yet: add Markdown files to `{lesson_index.LESSONS_DIR.name}/` (named `NN-slug.md`).")
    st.stop()

titles = [t for _, t in lessons]
wanted = st.query_params.get("lesson")  # ?lesson=3 opens the third lesson (links from Home, Back)
if wanted is not None and wanted != st.session_state.get("lesson-url"):
    st.session_state["lesson-url"] = wanted
    number = widgets.query_int(wanted, 1, len(lessons))
    if number is None:
        st.error(f"There is no lesson {widgets.shown_param(wanted)}; there are {len(lessons)}: "
                 f"showing lesson {st.session_state.get('lesson', 0) + 1}.")
    else:
        st.session_state["lesson"] = number - 1
if not 0 <= st.session_state.get("lesson", 0) < len(lessons):
    st.session_state["lesson"] = 0
st.session_state.setdefault("lesson", 0)
st.session_state["lesson-index"] = st.session_state["lesson"]  # the selectbox follows the remembered lesson


def go(delta: int) -> None:
    st.session_state["lesson"] = min(max(st.session_state["lesson"] + delta, 0), len(lessons) - 1)


def picked() -> None:
    st.session_state["lesson"] = st.session_state["lesson-index"]


i = st.selectbox("lesson", range(len(lessons)), key="lesson-index", format_func=lambda k: titles[k],
                 on_change=picked)
st.progress((i + 1) / len(lessons), text=f"lesson {i + 1} of {len(lessons)}")
st.query_params["lesson"] = str(i + 1)
st.session_state["lesson-url"] = str(i + 1)


def show(text: str) -> None:
    """Markdown with each internal link as a bold label, then one ``st.page_link`` per link (same tab),
    carrying the link's settings and ``from_lesson`` so the page opens on the example and links back."""
    st.markdown(lesson_index.INTERNAL_LINK.sub(lambda m: f"**{m.group(1)}**", text))
    for label, target in lesson_index.internal_links(text):
        page = lesson_index.link_page(target)
        if page is not None:
            params = {**lesson_index.link_params(target), "from_lesson": str(i + 1)}
            st.page_link(page.path, label=label, icon=page.icon, query_params=params)


path, title = lessons[i]
text = path.read_text(encoding="utf-8", errors="replace")
with st.container(border=True):
    for kind, body, *extra in lesson_index.split_lesson(text):
        if kind == "text":
            show(body)
        else:
            with st.expander("Answer" if kind == "answer" else f"Code ({extra[0]} lines)",
                             icon=":material/lightbulb:" if kind == "answer" else ":material/code:"):
                show(body)

linked = {lesson_index.link_page(t) for _, t in lesson_index.internal_links(text)}
pages = [p for p in lesson_index.lesson_pages(path, title) if nav.PAGE[p] not in linked]
if pages:
    st.markdown("**Try it in the app:**")
    for page in pages:
        nav.page_link(page, query_params={"from_lesson": str(i + 1)})

prev_col, _, next_col = st.columns([1, 3, 1])
prev_col.button("← Previous", on_click=go, args=(-1,), disabled=i == 0, key="lesson-prev", width="stretch")
next_col.button("Next →", on_click=go, args=(1,), disabled=i == len(lessons) - 1, key="lesson-next",
                width="stretch")
