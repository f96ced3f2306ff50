"""The lessons (lessons/*.md) in order, the app pages each one opens, and a lesson cut into the pieces
the Lessons page draws (text, folded answers and code, live figures, the check-yourself section, the
Going deeper part). The course's data (metadata, reading time, checks) is ``specsim.views.course``."""
from __future__ import annotations

import re
from pathlib import Path

import streamlit as st

from parts.nav import PAGE
from specsim.views import course

LESSONS_DIR = Path(__file__).resolve().parents[2] / "lessons"
NOT_LESSONS = {"readme.md", "writing.md"}  # the course map and the authors' guide (lessons/WRITING.md)

# Which page a lesson opens, by words in its file name or title (first match wins).
LESSON_PAGES = [
    (("tree", "block", "multi-draft", "multiple-drafts"), "trees"),
    (("pitfall", "mistake", "broken", "wrong", "myth"), "pitfalls"),
    (("gpt", "mask", "cache", "kv", "rollback", "torch", "real"), "tiny_gpt"),
    (("speedup", "speed", "cost", "best-gamma", "choosing", "tuning"), "speedup"),
    (("exact", "proof", "theorem", "prove", "distribution", "joint"), "exactness"),
    (("residual", "reject", "correct", "one-position", "position"), "residual"),
    (("round", "accept", "rule", "draft", "verify", "bonus", "step"), "stepper"),
]


def lessons() -> list:
    """(path, title) of every lessons/*.md in file-name order; title from the first heading."""
    out = []
    for path in sorted(LESSONS_DIR.glob("*.md")):
        if path.name.lower() in NOT_LESSONS:
            continue
        title = path.stem
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("# "):
                title = line[2:].strip()
                break
        out.append((path, title))
    return out


def lesson_pages(path: Path, title: str) -> list:
    """Short names of the pages a lesson links to ("[Speedup](/speedup)"), in order.

    A lesson without such links gets the page its file name or title suggests.
    """
    text = path.read_text(encoding="utf-8", errors="replace")
    linked = []
    for slug in re.findall(r"\]\((?:/|http://localhost:8501/)([a-z_]+)(?:\?[^)\s]*)?\)", text):
        if slug in PAGE and slug not in linked:
            linked.append(slug)
    if linked:
        return linked
    words = (path.stem + " " + title).lower()
    for keys, page in LESSON_PAGES:
        if any(k in words for k in keys):
            return [page]
    return []


# [label](http://localhost:8501/page?x=1) in lesson text (the app's address: it works from GitHub too), or the
# older [label](/page?x=1); both become in-app page links
INTERNAL_LINK = re.compile(r"\[([^\]\n]+)\]\((?:" + re.escape(course.APP_URL) + r"|/)([^)\s]*)\)")
ANSWER = re.compile(r"^#{4,}\s+Answers?\b", re.IGNORECASE)
FOLD_LINES = 8  # a code block longer than this is folded into an expander


def internal_links(text: str) -> list:
    """(label, target) of every link into the app (``[label](http://localhost:8501/page?x=1)`` or
    ``[label](/page?x=1)``), target without the address: "page?x=1" ("" for Home)."""
    return INTERNAL_LINK.findall(text)


def link_params(target: str) -> dict:
    """The query parameters an internal link carries ("speedup?alpha=0.6&c=0.2" -> {"alpha": "0.6", "c": "0.2"}).

    The target page reads each one strictly (``tryit``), so a lesson can open a page on its example.
    """
    from urllib.parse import parse_qsl

    query = target.split("#")[0].partition("?")[2]
    return dict(parse_qsl(query, keep_blank_values=False))


def link_page(target: str):
    """The PageInfo an internal link goes to ("home", "" (Home), "stepper", "stepper?x=1"), or None."""
    return PAGE.get(target.split("?")[0].split("#")[0].rstrip("/") or "home")


def split_lesson(text: str) -> list:
    """A lesson as segments: ("text", md), ("answer", md) for each exercise answer and each ``<details>``
    block, ("code", md, lines), ("figure", course.Figure) for each figure line.

    An answer runs from a "#### Answer" heading to the next heading of level
    1-3, or is a ``<details>`` block (its summary dropped); a fenced block
    outside answers longer than ``FOLD_LINES`` is its own "code" segment (the
    page folds both). A figure on a line of its own (``![alt](figures/x.svg)``)
    is its own segment (the page draws it live). HTML comments (the metadata,
    the checks' kinds) are not shown. A paragraph with an internal link ends
    its segment, so the page can put the link's button right below it.
    """
    text = re.sub(r"<!--.*?-->[ \t]*\n?", "", text, flags=re.S)
    splitter = _LessonSplitter()
    for line in text.splitlines():
        splitter.read(line)
    return splitter.end()


class _LessonSplitter:
    """``split_lesson``'s walk through a lesson, line by line: the segments so far (``out``), the lines of the
    one being read (``buf``, of ``kind``), an open code fence's lines, whether the paragraph holds an
    internal link, whether a ``<details>`` block is open."""

    def __init__(self):
        self.out, self.buf, self.kind, self.fence, self.linked, self.details = [], [], "text", None, False, False

    def flush(self, new_kind: str) -> None:
        """The segment read so far into ``out`` (unless blank); a new one of ``new_kind`` starts."""
        body = "\n".join(self.buf).strip("\n")
        if body.strip():
            self.out.append((self.kind, body))
        self.buf, self.kind = [], new_kind

    def read(self, line: str) -> None:
        stripped = line.strip()
        if self.fence is not None:
            self.fenced(line, stripped)
            return
        if not self.details and not stripped and self.linked:
            self.flush(self.kind)
            self.linked = False
        self.linked = self.linked or bool(INTERNAL_LINK.search(line))
        figure = course.FIGURE_LINE.match(line)
        if stripped.startswith("```"):
            self.fence = [line]
        elif figure:
            resume = self.kind
            self.flush(self.kind)
            self.out.append(("figure", course.Figure(figure.group(1).strip(), figure.group(2))))
            self.kind = resume
        elif not self.details and re.match(r"<details\b", stripped, re.I):
            self.open_details(stripped)
        elif self.details:
            self.in_details(line, stripped)
        elif ANSWER.match(stripped):
            self.flush("answer")
        elif re.match(r"^#{1,3}\s", stripped) and self.kind == "answer":
            self.flush("text")
            self.buf.append(line)
        else:
            self.buf.append(line)

    def fenced(self, line: str, stripped: str) -> None:
        """A line inside a code fence; at its end, a long block outside answers becomes a "code" segment."""
        self.fence.append(line)
        if stripped.startswith("```"):
            if self.kind == "text" and len(self.fence) - 2 > FOLD_LINES:
                self.flush("text")
                self.out.append(("code", "\n".join(self.fence), len(self.fence) - 2))
            else:
                self.buf.extend(self.fence)
            self.fence = None

    def open_details(self, stripped: str) -> None:
        """A ``<details>`` line: an answer starts (its summary dropped; it may close on the same line)."""
        self.flush("answer")
        self.details = True
        rest = re.sub(r"^<details[^>]*>\s*(<summary>.*?</summary>)?", "", stripped, flags=re.I)
        if re.search(r"</details\s*>", rest, re.I):
            self.buf.append(re.sub(r"</details\s*>", "", rest, flags=re.I))
            self.flush("text")
            self.details = False
        elif rest:
            self.buf.append(rest)

    def in_details(self, line: str, stripped: str) -> None:
        """A line inside a ``<details>`` block: kept, but its summary; ``</details>`` ends the answer."""
        if re.search(r"</details\s*>", stripped, re.I):
            self.buf.append(re.sub(r"</details\s*>", "", line, flags=re.I))
            self.flush("text")
            self.details = False
        elif not re.fullmatch(r"<summary>.*</summary>", stripped, re.I):
            self.buf.append(line)

    def end(self) -> list:
        """The segments, an unclosed fence's lines kept as text."""
        if self.fence is not None:
            self.buf.extend(self.fence)
        self.flush("text")
        return self.out


def lesson_parts(text: str) -> dict:
    """A lesson cut where the page draws it differently: "taught" (up to ``## Check yourself``),
    "check" (that section's heading and any text before the first question; "checks": the whole section),
    "after" (the taught part
    after the checks), "deeper" (``## Going deeper``, folded) and "rest" (Exercises, References)."""
    taught, deeper, rest = course.split_parts(text)
    section = course.section(taught, "Check yourself")
    before, after, intro = taught, "", ""
    if section:
        at = taught.index(section)
        before, after = taught[:at], taught[at + len(section):]
        intro = re.split(r"^###\s", section, maxsplit=1, flags=re.M)[0]
    return {"taught": before, "check": intro, "checks": section, "after": after, "deeper": deeper, "rest": rest}


@st.cache_data(max_entries=64, show_spinner=False)
def _parsed(path: str, mtime: float) -> course.Lesson:
    return course.parse(Path(path).read_text(encoding="utf-8", errors="replace"))


def course_entries() -> list:
    """(path, course.Lesson) of every lesson, in order (parsed once per file version)."""
    return [(path, _parsed(str(path), path.stat().st_mtime)) for path, _ in lessons()]


def lesson_line(lesson: course.Lesson) -> str:
    """The line under a lesson's picker: its path, reading time and what to read first."""
    path = course.PATH_NAMES.get(lesson.meta.course, "") if lesson.meta else ""
    needs = course.needs_text(lesson)
    needs = "nothing before it" if needs == "none" else ("?" if needs == "?" else f"lessons {needs}")
    return " · ".join(x for x in (path, f"{course.minutes_text(lesson.minutes)} of reading",
                                  f"needs {needs}" if needs != "?" else "") if x)


def map_markdown(lessons: list, current: int) -> str:
    """The course map as the Lessons page shows it: each path a table (lesson, reading time, needs), the
    core path first and in bold, the lesson shown marked ▶."""
    out = []
    for path in course.PATHS:
        chosen = course.path_lessons(lessons, path)
        total = course.minutes_text(course.path_minutes(lessons, path))
        head = f"**{course.PATH_NAMES[path]}** ({len(chosen)} lessons, {total})"
        out += [("★ " + head + ": start here" if path == "core" else head) + f" · {course.PATH_BLURBS[path]}", "",
                "| # | lesson | reading | needs |", "| ---: | --- | ---: | --- |"]
        for les in chosen:
            name = f"**{les.title}**" if path == "core" else les.title
            mark = "▶ " if les.number == current else ""
            out.append(f"| {mark}{les.number} | {name} | {course.minutes_text(les.minutes)} | "
                       f"{course.needs_text(les)} |")
        out.append("")
    return "\n".join(out)
