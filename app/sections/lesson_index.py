"""The lessons (lessons/*.md) in order, and the app pages each one opens."""
from __future__ import annotations

import re
from pathlib import Path

from parts.nav import PAGE

LESSONS_DIR = Path(__file__).resolve().parents[2] / "lessons"

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
        if path.name.lower() == "readme.md":
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
    for slug in re.findall(r"\]\(/([a-z_]+)(?:\?[^)\s]*)?\)", text):
        if slug in PAGE and slug not in linked:
            linked.append(slug)
    if linked:
        return linked
    words = (path.stem + " " + title).lower()
    for keys, page in LESSON_PAGES:
        if any(k in words for k in keys):
            return [page]
    return []


INTERNAL_LINK = re.compile(r"\[([^\]\n]+)\]\((/[^)\s]*)\)")  # [label](/page) in lesson text
ANSWER = re.compile(r"^#{4,}\s+Answers?\b", re.IGNORECASE)
FOLD_LINES = 8  # a code block longer than this is folded into an expander


def internal_links(text: str) -> list:
    """(label, target) of every ``[label](/page)`` link, target without the leading slash."""
    return [(label, target[1:]) for label, target in INTERNAL_LINK.findall(text)]


def link_params(target: str) -> dict:
    """The query parameters an internal link carries ("speedup?alpha=0.6&c=0.2" -> {"alpha": "0.6", "c": "0.2"}).

    The target page reads each one strictly (``tryit``), so a lesson can open a page on its example.
    """
    from urllib.parse import parse_qsl

    query = target.split("#")[0].partition("?")[2]
    return dict(parse_qsl(query, keep_blank_values=False))


def link_page(target: str):
    """The PageInfo an internal link goes to ("home", "stepper", "stepper?x=1"), or None."""
    return PAGE.get(target.split("?")[0].split("#")[0].rstrip("/"))


def split_lesson(text: str) -> list:
    """A lesson as segments: ("text", md), ("answer", md) for each exercise answer, ("code", md, lines).

    An answer runs from a "#### Answer" heading to the next heading of level
    1-3; a fenced block outside answers longer than ``FOLD_LINES`` is its own
    "code" segment (the page folds both). A paragraph with an internal link
    ends its segment, so the page can put the link's button right below it.
    """
    out, buf, kind, fence, linked = [], [], "text", None, False

    def flush(new_kind):
        nonlocal buf, kind
        body = "\n".join(buf).strip("\n")
        if body.strip():
            out.append((kind, body))
        buf, kind = [], new_kind

    for line in text.splitlines():
        stripped = line.strip()
        if fence is not None:
            fence.append(line)
            if stripped.startswith("```"):
                if kind == "text" and len(fence) - 2 > FOLD_LINES:
                    flush("text")
                    out.append(("code", "\n".join(fence), len(fence) - 2))
                else:
                    buf.extend(fence)
                fence = None
            continue
        if not stripped and linked:
            flush(kind)
            linked = False
        linked = linked or bool(INTERNAL_LINK.search(line))
        if stripped.startswith("```"):
            fence = [line]
        elif ANSWER.match(stripped):
            flush("answer")
        elif re.match(r"^#{1,3}\s", stripped) and kind == "answer":
            flush("text")
            buf.append(line)
        else:
            buf.append(line)
    if fence is not None:
        buf.extend(fence)
    flush("text")
    return out
