"""A lesson's body on the Lessons page: Markdown with its links as page buttons, live figures with their
sliders, folded answers and code, and the check-yourself questions as checks that answer back.

The lesson's data (its figures, checks and their computed answers) comes from ``specsim.views.course``;
a figure is ``specsim.plots.lesson_figs``' ``LessonFigure`` of the same name, drawn with the sliders'
values. A figure that cannot be drawn shows one line, never a traceback.
"""
from __future__ import annotations

from fractions import Fraction

import streamlit as st

from parts import memory, nav, presenter
from sections import lesson_index
from specsim.plots import lesson_figs
from specsim.views import course, glossary


def links(text: str, lesson: int) -> None:
    """Markdown with each link into the app as a bold label, then one ``st.page_link`` per link (same tab),
    carrying the link's settings and ``from_lesson`` so the page opens on the example and links back."""
    st.markdown(lesson_index.INTERNAL_LINK.sub(lambda m: f"**{m.group(1)}**", text))
    for label, target in lesson_index.internal_links(text):
        page = lesson_index.link_page(target)
        if page is not None:
            params = {**lesson_index.link_params(target), "from_lesson": str(lesson)}
            st.page_link(page.path, label=label, icon=page.icon, query_params=params)


def segments(text: str, lesson: int, fold: bool = True) -> None:
    """Draw ``text`` segment by segment; ``fold``: answers and long code in expanders (else inline, boxed)."""
    for kind, body, *extra in lesson_index.split_lesson(text):
        if kind == "text":
            links(body, lesson)
        elif kind == "figure":
            figure(body, lesson)
        elif fold:
            with st.expander("Answer" if kind == "answer" else f"Code ({extra[0]} lines)",
                             icon=":material/lightbulb:" if kind == "answer" else ":material/code:"):
                links(body, lesson)
        else:
            with st.container(border=True):
                if kind == "answer":
                    st.caption("Answer")
                links(body, lesson)


@st.cache_resource(show_spinner=False, max_entries=64)
def _figures(lesson: int) -> dict:
    return lesson_figs.registry({lesson})


def figures_of(lesson: int) -> tuple:
    """(name -> LessonFigure of the lesson, error line or ""): a lesson module that fails to import is one line."""
    try:
        return _figures(lesson), ""
    except Exception as err:  # noqa: BLE001  another lesson's figure module, half written: one line
        return {}, f"{type(err).__name__}: {first_line(err)}"


def first_line(err: Exception) -> str:
    text = str(err).strip()
    return text.splitlines()[0][:200] if text else "(no message)"


def whole(control) -> bool:
    return all(float(v).is_integer() for v in (control.low, control.high, control.step, control.default))


def slider(control, key: str, where):
    """One slider for a figure's control, remembered across reruns and pages (``parts.memory``)."""
    if whole(control):
        lo, hi, step, default = (int(v) for v in (control.low, control.high, control.step, control.default))
    else:
        lo, hi, step, default = (float(v) for v in (control.low, control.high, control.step, control.default))
    memory.remember(key, default, valid=lambda v: lo <= v <= hi)
    return where.slider(control.label, lo, hi, step=step, key=key, help=glossary.label_help(control.label))


def figure(ref: course.Figure, lesson: int) -> None:
    """The live figure ``ref`` names: its sliders, the chart, the image's text as the caption."""
    known, error = figures_of(lesson)
    item = known.get(ref.name)
    if item is None:
        st.error(f"Figure {ref.name} cannot be drawn: " +
                 (error or f"no LessonFigure of that name in specsim/plots/lesson_figs/l{lesson:02d}.py") + ".")
        return
    values = {}
    with st.container(border=True):
        if item.controls:
            cols = st.columns(max(2, min(len(item.controls), 3)))  # a lone slider: half the width
            for k, control in enumerate(item.controls):
                values[control.name] = slider(control, f"fig-{ref.name}-{control.name}", cols[k % len(cols)])
        try:
            fig = item.figure(**values)
        except Exception as err:  # noqa: BLE001  a figure's own bug: one line, the lesson goes on
            st.error(f"Figure {ref.name} could not be drawn: {type(err).__name__}: {first_line(err)}")
            return
        presenter.chart(fig, key=f"fig-{ref.name}")
        st.caption(ref.alt)


def shown_answer(check: course.Check) -> str:
    """The computed answer as a reader reads it: "9/10 = 0.9", "3.318", "fall"."""
    value = check.expected
    if isinstance(value, Fraction) and value.denominator != 1:
        return f"{value.numerator}/{value.denominator} ≈ {float(value):.4g}"
    if isinstance(value, Fraction):
        return str(value.numerator)
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def check(item: course.Check, number: int, lesson: int) -> None:
    """One question: an input (a number: "9/10" or "0.9"; a choice: radio buttons), a Check button, then
    right or wrong with the reason (the answer's text after its doctest) and how specsim computes it."""
    key = f"check-{lesson}-{number}"
    with st.container(border=True, key=f"{key}-box"):
        st.markdown(f"**{number}. {item.question}**")
        if item.expected is None:  # a question the lesson has not finished: its answer, as written
            segments(f"<details>\n{item.answer}\n</details>" if item.answer else "", lesson)
            return
        with st.form(f"{key}-form", border=False):
            row = st.container(horizontal=True, vertical_alignment="bottom", wrap=True)
            if item.kind == "choice":
                typed = row.radio("your answer", item.options, index=None, key=key, horizontal=True, width="content")
            else:
                typed = row.text_input("your answer: a fraction (9/10) or a decimal (0.9)", key=key, max_chars=40,
                                       width=300)
            if row.form_submit_button("Check", icon=":material/task_alt:"):
                st.session_state[f"{key}-sent"] = typed
        sent = st.session_state.get(f"{key}-sent")
        if sent is None or sent == "":
            return
        right = course.is_right(item, sent)
        if right is None:
            st.warning("Type a number: a fraction such as 9/10 or a decimal such as 0.9." if item.kind == "number"
                       else "Pick one of the options.")
            return
        if right:
            st.success(f"Right: {shown_answer(item)}.", icon=":material/check_circle:")
        else:
            st.error(f"Not quite: specsim computes {shown_answer(item)}.", icon=":material/cancel:")
        if item.reason:
            links(item.reason, lesson)
        code = item.answer[:len(item.answer) - len(item.reason)].strip() if item.reason else item.answer
        if code:
            with st.expander("How specsim computes it", icon=":material/code:"):
                links(code, lesson)


def check_section(intro: str, checks: tuple, lesson: int) -> None:
    """``## Check yourself``: its heading and any words before the first question, then each question."""
    if intro.strip():
        links(intro, lesson)
    for k, item in enumerate(checks, 1):
        check(item, k, lesson)


def deeper(text: str, lesson: int) -> None:
    """``## Going deeper``, folded: its heading becomes the expander's label."""
    body = text.split("\n", 1)[1] if text.startswith("## ") else text
    title = text.split("\n", 1)[0].lstrip("# ").strip() if text.startswith("## ") else "Going deeper"
    with st.expander(title, icon=":material/expand_more:"):
        segments(body, lesson)


def try_it(path, title: str, text: str, lesson: int) -> None:
    """The pages a lesson suggests without linking them in its text, under "Try it in the app"."""
    linked = {lesson_index.link_page(t) for _, t in lesson_index.internal_links(text)}
    pages = [p for p in lesson_index.lesson_pages(path, title) if nav.PAGE[p] not in linked]
    if pages:
        st.markdown("**Try it in the app:**")
        for page in pages:
            nav.page_link(page, query_params={"from_lesson": str(lesson)})
