"""The lessons (lessons/*.md) in order, and the app pages each one opens."""
from __future__ import annotations

import re
from pathlib import Path

from nav import PAGE

LESSONS_DIR = Path(__file__).resolve().parent.parent / "lessons"

# Which page a lesson opens, by words in its file name or title (first match wins).
LESSON_PAGES = [
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
    for slug in re.findall(r"\]\(/([a-z_]+)\)", text):
        if slug in PAGE and slug not in linked:
            linked.append(slug)
    if linked:
        return linked
    words = (path.stem + " " + title).lower()
    for keys, page in LESSON_PAGES:
        if any(k in words for k in keys):
            return [page]
    return []
