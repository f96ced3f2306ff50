"""Lessons: the course map and its paths, then one lesson, with live figures and checks that answer back.

The lesson shown is kept in the URL (``?lesson=N``, read strictly) and in the
session (``st.session_state["lesson"]``), so leaving the page and coming back,
or the browser's Back button, returns to it. A path (core, engineer,
researcher; every lesson by default) picks which lessons the list and
Previous/Next step through; a lesson asked for by number that is not on the
path picked brings its own path. In a lesson,
each figure line is the live figure with its sliders, the check-yourself
questions take an answer and say whether it is right, "Going deeper" is
folded, and links into the app become ``st.page_link`` buttons (same tab,
same session).
"""
import streamlit as st

from parts import memory, widgets
from sections import lesson_body, lesson_index
from specsim.views import course

st.title("Lessons")
entries = lesson_index.course_entries()
if not entries:
    st.info(f"No lessons yet: add Markdown files to `{lesson_index.LESSONS_DIR.name}/` (named `NN-slug.md`).")
    st.stop()

info = [les for _, les in entries]
titles = [les.title if not les.number else f"{les.number}. {les.title}" for les in info]
PATHS = ["all", *course.PATHS]
# A widget of this page still holds its state only when the session's last run was this page (Streamlit
# drops the state of widgets another page's run did not draw): a plain address then is Back or Forward
# within this visit, not an arrival from the sidebar.
same_visit = "lesson-index" in st.session_state
wanted = st.query_params.get("lesson")  # ?lesson=3 opens the third lesson (links from Home, Back)
if wanted is None and not same_visit:  # arrived without a number (the sidebar): remember what it showed
    st.session_state["lesson-arrival"] = st.session_state.get("lesson", 0)
elif wanted is None and st.session_state.get("lesson-url") is not None:  # Back to that arrival
    st.session_state["lesson"] = st.session_state.get("lesson-arrival", st.session_state.get("lesson", 0))
if wanted is None:
    st.session_state["lesson-url"] = None
elif wanted != st.session_state.get("lesson-url"):
    st.session_state["lesson-url"] = wanted
    number = widgets.query_int(wanted, 1, len(info))
    if number is None:
        st.error(f"There is no lesson {widgets.shown_param(wanted)}; there are {len(info)}: "
                 f"showing lesson {st.session_state.get('lesson', 0) + 1}.")
    else:
        st.session_state["lesson"] = number - 1
if not 0 <= st.session_state.get("lesson", 0) < len(info):
    st.session_state["lesson"] = 0
st.session_state.setdefault("lesson", 0)


def path_of(i: int) -> str:
    return course.path_of(info[i]) or "all"


def members(path: str) -> list:
    return [i for i in range(len(info)) if path == "all" or course.path_of(info[i]) == path]


# the path: every lesson in order unless the reader picks one (remembered); a lesson that is not on the
# path picked (asked for by number) brings its own
memory.remember("lesson-path", "all", valid=lambda v: v in PATHS)
if st.session_state["lesson"] not in members(st.session_state["lesson-path"]):
    st.session_state["lesson-path"] = path_of(st.session_state["lesson"])
st.session_state["lesson-index"] = st.session_state["lesson"]  # the selectbox follows the remembered lesson


def go(delta: int) -> None:
    st.session_state["lesson-moved"] = True
    on = members(st.session_state["lesson-path"])
    at = on.index(st.session_state["lesson"])
    st.session_state["lesson"] = on[min(max(at + delta, 0), len(on) - 1)]


def picked() -> None:
    st.session_state["lesson-moved"] = True
    st.session_state["lesson"] = st.session_state["lesson-index"]


def picked_path() -> None:
    st.session_state["lesson-moved"] = True
    on = members(st.session_state["lesson-path"])
    if st.session_state["lesson"] not in on:
        st.session_state["lesson"] = on[0]


def path_label(path: str) -> str:
    if path == "all":
        return f"All {len(info)} lessons"
    return f"{course.PATH_NAMES[path]} · {course.minutes_text(course.path_minutes(info, path))}"


with st.expander(f"Course map: start with the core path ({len(course.path_lessons(info, 'core'))} lessons, "
                 f"{course.minutes_text(course.path_minutes(info, 'core'))} of reading)", icon=":material/map:"):
    st.markdown(lesson_index.map_markdown(info, st.session_state["lesson"] + 1))

path = st.radio("path", PATHS, key="lesson-path", format_func=path_label, horizontal=True, on_change=picked_path,
                help="Which lessons the list and Previous/Next step through; the core path is what every "
                     "student needs, the others go deeper for engineers and researchers.")
on_path = members(path)
i = st.selectbox("lesson", on_path, key="lesson-index",
                 format_func=lambda k: f"{titles[k]} · {course.minutes_text(info[k].minutes)}", on_change=picked)
at = on_path.index(i)
where = "" if path == "all" else f" · {course.PATH_NAMES[path].lower()}: {at + 1} of {len(on_path)}"
st.progress((i + 1) / len(info), text=f"lesson {i + 1} of {len(info)}{where}")
# The address names the lesson the reader moved to (one history entry per lesson, so Back steps back
# through them) or a link's bad number corrected; an arrival without a number writes nothing, so Back
# leaves the page at once and no ?lesson=N is written while the browser goes back to another page.
if (st.session_state.pop("lesson-moved", False) or wanted is not None) and wanted != str(i + 1):
    st.query_params["lesson"] = str(i + 1)
    st.session_state["lesson-url"] = str(i + 1)

path_file, les = entries[i]
st.caption(lesson_index.lesson_line(les))
text = path_file.read_text(encoding="utf-8", errors="replace")
parts = lesson_index.lesson_parts(text)
with st.container(border=True):
    lesson_body.segments(parts["taught"], i + 1)
    if parts["checks"] and les.checks:
        lesson_body.check_section(parts["check"], les.checks, i + 1)
    elif parts["checks"]:
        lesson_body.segments(parts["checks"], i + 1)
    lesson_body.segments(parts["after"], i + 1)
    if parts["deeper"]:
        lesson_body.deeper(parts["deeper"], i + 1)
    lesson_body.segments(parts["rest"], i + 1)

lesson_body.try_it(path_file, titles[i], text, i + 1)

prev_col, _, next_col = st.columns([1, 3, 1])
prev_col.button("← Previous", on_click=go, args=(-1,), disabled=at == 0, key="lesson-prev", width="stretch")
next_col.button("Next →", on_click=go, args=(1,), disabled=at == len(on_path) - 1, key="lesson-next",
                width="stretch")
