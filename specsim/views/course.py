"""The course as data: each lesson's metadata, reading time, figures and check-yourself questions.

A lesson is Markdown (``lessons/NN-slug.md``). Under its title sits one line
of metadata, ``<!-- course: core; needs: 2, 3 -->``: the path it belongs to
and the lessons a reader must have read. Reading time is never typed: it is
the words of the taught part over ``WORDS_PER_MINUTE``, where the taught
part leaves out code, answers (``#### Answer`` sections, ``<details>``
blocks), HTML comments, the ``Exercises`` and ``References`` sections and
everything from ``## Going deeper`` on.

>>> text = '''# 2. Draft and verify
... <!-- course: core; needs: 1 -->
...
... ## What you will learn
...
... One round, drawn:
...
... ![A round](figures/02-round.svg)
...
... ```python
... >>> 1 + 1
... 2
...
... ```
...
... ## Going deeper
...
... Many more words here that no reading time counts.
... '''
>>> lesson = parse(text)
>>> lesson.number, lesson.title, lesson.meta
(2, 'Draft and verify', Meta(course='core', needs=(1,)))
>>> prose_words(text), [f.name for f in lesson.figures]
(13, ['02-round'])

Pure functions on text: no Streamlit, no plotly (the Lessons page, the tests
and ``python -m specsim.views.course`` share them).
"""
from __future__ import annotations

import ast
import doctest
import re
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

LESSONS_DIR = Path(__file__).resolve().parents[2] / "lessons"
WORDS_PER_MINUTE = 200
CORE_MINUTES = 90                 # the core path's reading time, at most
APP_URL = "http://localhost:8501/"
PATHS = {                         # fixed by the course's contract: which lessons each path holds
    "core": (1, 2, 3, 4, 5, 8, 9, 18, 19),
    "engineer": (6, 7, 10, 11, 13, 14, 16, 22, 23, 26),
    "researcher": (12, 15, 17, 20, 21, 24, 25, 27),
}
PATH_NAMES = {"core": "Core path", "engineer": "Engineer's path", "researcher": "Researcher's path"}
PATH_BLURBS = {
    "core": "what every student needs: the round, the rule, why the output is exact, tokens per round, "
            "the speedup and the best γ, blocks and trees",
    "engineer": "masks, caches, drafters, measurement, serving, latency",
    "researcher": "statistics, pitfalls, checking a rule, real implementations, auditing, point-mass "
                  "verification, tokenizers",
}

TITLE = re.compile(r"^# (\d+)\.\s+(.+?)\s*$")
META = re.compile(r"^<!--\s*course:\s*([a-z]+)\s*;\s*needs:\s*([^>]*?)\s*-->\s*$")
FIGURE = re.compile(r"!\[([^\]\n]*)\]\(figures/([A-Za-z0-9_-]+)\.svg\)")   # anywhere in a line
FIGURE_LINE = re.compile(r"^\s*!\[([^\]\n]*)\]\(figures/([A-Za-z0-9_-]+)\.svg\)\s*$")
CHECK = re.compile(r"^<!--\s*check:\s*(number|choice)\s*(?::\s*(.*?))?\s*-->\s*$")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
NUMBER_ANSWER = re.compile(r"^(?:-?\d+|-?\d*\.\d+(?:e-?\d+)?|-?\d+e-?\d+|Fraction\(-?\d+, \d+\))$")


@dataclass(frozen=True)
class Meta:
    course: str                   # core | engineer | researcher
    needs: tuple                  # lesson numbers to read first


@dataclass(frozen=True)
class Figure:
    alt: str                      # the image's text: the caption under the live figure
    name: str                     # "02-round": a LessonFigure's name, lessons/figures/<name>.svg


@dataclass(frozen=True)
class Check:
    """One check-yourself question: asked as a number or a choice, answered by specsim."""
    question: str                 # the heading's text, without its number
    kind: str                     # "number" | "choice" | "" (no valid check comment)
    options: tuple                # a choice's options, in order
    answer: str                   # the <details> block's Markdown (code and reason), without its summary
    want: str | None              # the output of the block's last doctest, as printed
    reason: str                   # the Markdown after the last code block: why

    @property
    def expected(self):
        """The answer as a value (a Fraction, int or float for a number; the option for a choice), or None
        when the last doctest's output is not well-formed for the question's kind."""
        return expected_value(self.kind, self.want, self.options)


@dataclass(frozen=True)
class Lesson:
    number: int
    title: str
    meta: Meta | None             # None when the metadata line is missing or malformed
    meta_error: str               # why it is missing or malformed ("" when fine)
    words: int                    # prose words of the taught part
    figures: tuple                # Figure, in order of appearance
    checks: tuple                 # Check, in order
    has_check_section: bool

    @property
    def minutes(self) -> Fraction:
        """Reading time of the taught part, exactly: words / WORDS_PER_MINUTE."""
        return Fraction(self.words, WORDS_PER_MINUTE)


# ---- reading the text -----------------------------------------------------------------------------

def title_of(text: str) -> tuple:
    """(number, title) from the first line, "# N. Title"; (None, first heading's text) otherwise."""
    for line in text.splitlines():
        if line.startswith("# "):
            m = TITLE.match(line)
            return (int(m.group(1)), m.group(2)) if m else (None, line[2:].strip())
    return None, ""


def parse_meta(text: str) -> Meta:
    """The metadata line right under the title; ValueError (one line) when absent or malformed.

    >>> parse_meta("# 3. The rule\\n<!-- course: core; needs: 2 -->\\n")
    Meta(course='core', needs=(2,))
    >>> parse_meta("# 1. Why\\n<!-- course: core; needs: none -->")
    Meta(course='core', needs=())
    """
    lines = text.splitlines()
    at = next((i for i, line in enumerate(lines) if line.startswith("# ")), None)
    if at is None:
        raise ValueError("no '# N. Title' line")
    below = next((line for line in lines[at + 1:] if line.strip()), "")
    m = META.match(below.strip())
    if not m:
        raise ValueError("no '<!-- course: core|engineer|researcher; needs: N, M | none -->' line under the title")
    course, needs = m.group(1), m.group(2).strip()
    if course not in PATHS:
        raise ValueError(f"course {course!r} is not one of {', '.join(PATHS)}")
    if needs == "none":
        return Meta(course, ())
    if not re.fullmatch(r"\d+(?:\s*,\s*\d+)*", needs):
        raise ValueError(f"needs {needs!r} is not 'none' or lesson numbers separated by commas")
    return Meta(course, tuple(int(n) for n in needs.split(",")))


def _is_answer_heading(title: str) -> bool:
    return bool(re.match(r"answers?\b", title, re.IGNORECASE))


def split_parts(text: str) -> tuple:
    """(taught, deeper, rest): the text before ``## Going deeper``, the Going deeper section (up to the
    next ``## Exercises`` or ``## References``), and what follows it. Fences are respected."""
    lines = text.splitlines()
    start = end = None
    fence = False
    for i, line in enumerate(lines):
        if line.strip().startswith("```"):
            fence = not fence
        if fence:
            continue
        m = HEADING.match(line)
        if not m or len(m.group(1)) != 2:
            continue
        name = m.group(2).lower()
        if start is None and name.startswith("going deeper"):
            start = i
        elif start is not None and name in ("exercises", "references"):
            end = i
            break
    if start is None:
        return text, "", ""
    end = len(lines) if end is None else end
    return "\n".join(lines[:start]), "\n".join(lines[start:end]), "\n".join(lines[end:])


def taught_prose(text: str) -> str:
    """The Markdown a reader reads in the taught part: no code, answers, comments, Exercises,
    References, nor anything from ``## Going deeper`` on (see the module's docstring)."""
    text = re.sub(r"<!--.*?-->", " ", text, flags=re.S)
    out, fence, skip, details = [], False, None, 0
    for line in text.splitlines():
        s = line.strip()
        if fence:
            fence = not s.startswith("```")
            continue
        if s.startswith("```"):
            fence = True
            continue
        m = HEADING.match(s)
        if m and not details:
            level, name = len(m.group(1)), m.group(2).strip().lower()
            if level == 2 and name.startswith("going deeper"):
                break
            if skip is not None and (level <= 2 or (skip > 2 and level <= 3)):
                skip = None
            if level == 2 and name in ("exercises", "references"):
                skip = 2
            elif level >= 4 and _is_answer_heading(name):
                skip = level
        if skip is not None:
            continue
        opens, closes = len(re.findall(r"<details\b", s, re.I)), len(re.findall(r"</details\s*>", s, re.I))
        if details or opens:
            details = max(details + opens - closes, 0)
            continue
        out.append(line)
    return "\n".join(out)


def count_words(markdown: str) -> int:
    """Words a reader reads: a link or image counts its text, not its address; tags and markup count nothing."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", markdown)
    text = re.sub(r"<[^>]+>", " ", text)
    return len(WORD.findall(text))


def prose_words(text: str) -> int:
    """Words of the taught part (``taught_prose``)."""
    return count_words(taught_prose(text))


def figures(text: str) -> tuple:
    """Every ``![alt](figures/NAME.svg)`` in the text, in order (code blocks aside)."""
    out, fence = [], False
    for line in text.splitlines():
        if line.strip().startswith("```"):
            fence = not fence
            continue
        if not fence:
            out += [Figure(alt.strip(), name) for alt, name in FIGURE.findall(line)]
    return tuple(out)


def headings(text: str, level: int = 2) -> list:
    """The text of every heading of ``level`` outside code blocks, in order."""
    out, fence = [], False
    for line in text.splitlines():
        if line.strip().startswith("```"):
            fence = not fence
            continue
        m = None if fence else HEADING.match(line)
        if m and len(m.group(1)) == level:
            out.append(m.group(2).strip())
    return out


def section(text: str, name: str) -> str:
    """The level-2 section named ``name`` (heading included, up to the next level-1/2 heading), or ""."""
    lines, out, inside, fence = text.splitlines(), [], False, False
    for line in lines:
        if line.strip().startswith("```"):
            fence = not fence
        m = None if fence else HEADING.match(line)
        if m and len(m.group(1)) <= 2:
            if inside:
                break
            inside = len(m.group(1)) == 2 and m.group(2).strip().lower() == name.lower()
        if inside:
            out.append(line)
    return "\n".join(out)


def _details_body(block: str) -> str:
    """The inside of a <details> block, its <summary> removed."""
    body = re.sub(r"^\s*<details[^>]*>", "", block, flags=re.I)
    body = re.sub(r"</details\s*>\s*$", "", body.rstrip(), flags=re.I)
    return re.sub(r"<summary>.*?</summary>", "", body, count=1, flags=re.I | re.S).strip("\n")


def checks(text: str) -> tuple:
    """The questions of ``## Check yourself``: each a ``### N. Question`` heading, a ``<!-- check: ... -->``
    line and a ``<details>`` answer whose last doctest prints the expected answer."""
    body = section(text, "Check yourself")
    if not body:
        return ()
    parts = re.split(r"^###\s+", body, flags=re.M)[1:]
    out = []
    for part in parts:
        heading, _, rest = part.partition("\n")
        question = re.sub(r"^\d+[.)]\s*", "", heading.strip())
        kind, options = "", ()
        m = next((CHECK.match(line.strip()) for line in rest.splitlines() if CHECK.match(line.strip())), None)
        if m:
            kind = m.group(1)
            if kind == "choice":
                options = tuple(o.strip() for o in (m.group(2) or "").split("|") if o.strip())
        block = re.search(r"<details\b.*?</details\s*>", rest, flags=re.S | re.I)
        answer = _details_body(block.group(0)) if block else ""
        examples = doctest.DocTestParser().get_examples(answer)
        want = examples[-1].want.strip() if examples else None
        last_fence = answer.rfind("```")
        reason = answer[last_fence + 3:].strip() if last_fence >= 0 else answer.strip()
        out.append(Check(question, kind, options, answer, want, reason))
    return tuple(out)


def expected_value(kind: str, want: str | None, options: tuple = ()):
    """The expected answer from a doctest's printed output: a number (int, float or ``Fraction(n, d)``)
    for a number check, an option (a quoted string) for a choice; None when ill-formed.

    >>> expected_value("number", "Fraction(9, 10)"), expected_value("number", "3.318")
    (Fraction(9, 10), 3.318)
    >>> expected_value("choice", "'fall'", ("rise", "fall")), expected_value("choice", "'up'", ("rise", "fall"))
    ('fall', None)
    """
    if want is None:
        return None
    want = want.strip()
    if kind == "number":
        if not NUMBER_ANSWER.match(want):
            return None
        if want.startswith("Fraction("):
            n, d = re.findall(r"-?\d+", want)
            return Fraction(int(n), int(d)) if int(d) else None
        value = ast.literal_eval(want)
        return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    if kind == "choice":
        try:
            value = ast.literal_eval(want)
        except (ValueError, SyntaxError):
            return None
        return value if isinstance(value, str) and value in options else None
    return None


def read_number(typed: str) -> Fraction | None:
    """What a reader typed as a number: "9/10", "0.9", "-3", "1e-3", "90%" (a percent); None if unreadable.

    >>> read_number("9/10"), read_number(" 0.9 "), read_number("90%"), read_number("nine")
    (Fraction(9, 10), Fraction(9, 10), Fraction(9, 10), None)
    """
    s = (typed or "").strip().replace(" ", "").replace("−", "-").replace(",", "")
    scale = 1
    if s.endswith("%"):
        s, scale = s[:-1], Fraction(1, 100)
    if not s or len(s) > 40:
        return None
    try:
        return Fraction(s) * scale
    except (ValueError, ZeroDivisionError):
        return None


def is_right(check: Check, typed) -> bool | None:
    """Whether ``typed`` answers ``check``; None when it cannot be read (or the question has no answer).

    A number is right when it equals the answer, or (typed as a decimal) when it is the answer rounded to
    the decimals typed (0.33 for 1/3); a choice when it is the option.

    >>> c = Check("α?", "number", (), "", "Fraction(1, 3)", "")
    >>> is_right(c, "1/3"), is_right(c, "0.333"), is_right(c, "0.3"), is_right(c, "0.34"), is_right(c, "x")
    (True, True, True, False, None)
    """
    expected = check.expected
    if expected is None:
        return None
    if check.kind == "choice":
        return None if typed is None else typed == expected
    value = read_number(str(typed))
    if value is None:
        return None
    target = Fraction(expected)
    if value == target or abs(value - target) <= Fraction(1, 10**9) * max(1, abs(target)):
        return True
    decimal = re.fullmatch(r"-?\d*\.(\d+)", str(typed).strip())
    if not decimal:
        return False
    decimals = len(decimal.group(1))
    return abs(value - target) <= Fraction(1, 2 * 10**decimals)


def parse(text: str) -> Lesson:
    """A lesson's metadata, reading time, figures and checks (never raises: see ``problems``)."""
    number, title = title_of(text)
    try:
        meta, error = parse_meta(text), ""
    except ValueError as err:
        meta, error = None, str(err)
    return Lesson(number or 0, title, meta, error, prose_words(text), figures(text), checks(text),
                  bool(section(text, "Check yourself")))


def load(directory: Path = LESSONS_DIR) -> list:
    """(path, Lesson) of every ``NN-slug.md`` of ``directory``, in order."""
    paths = sorted(p for p in Path(directory).glob("[0-9][0-9]-*.md"))
    return [(p, parse(p.read_text(encoding="utf-8", errors="replace"))) for p in paths]


def problems(lesson: Lesson, known: set | None = None) -> list:
    """What breaks the course's contract in a lesson, one line each ([] when none): its metadata, its path,
    what it needs, its checks (2-4 on a core lesson, each well-formed). ``known``: the lesson numbers there are."""
    out = []
    if lesson.meta is None:
        out.append(f"lesson {lesson.number}: {lesson.meta_error}")
    else:
        fixed = next((name for name, numbers in PATHS.items() if lesson.number in numbers), None)
        if fixed and lesson.meta.course != fixed:
            out.append(f"lesson {lesson.number}: course {lesson.meta.course!r}, but the course puts it on {fixed!r}")
        for n in lesson.meta.needs:
            if n >= lesson.number or (known is not None and n not in known):
                out.append(f"lesson {lesson.number}: needs lesson {n}, which is not an earlier lesson")
    core = lesson.number in PATHS["core"] or path_of(lesson) == "core"
    if core and not 2 <= len(lesson.checks) <= 4:
        out.append(f"lesson {lesson.number}: a core lesson asks 2-4 check-yourself questions, not "
                   f"{len(lesson.checks)}")
    for k, check in enumerate(lesson.checks, 1):
        where = f"lesson {lesson.number}, check {k} ({check.question[:40]})"
        if not check.kind:
            out.append(f"{where}: no '<!-- check: number -->' or '<!-- check: choice: A | B -->' line")
        elif check.kind == "choice" and len(check.options) < 2:
            out.append(f"{where}: a choice needs at least two options")
        elif not check.answer:
            out.append(f"{where}: no <details> answer")
        elif check.want is None:
            out.append(f"{where}: the answer has no doctest")
        elif check.expected is None:
            shown = check.want if len(check.want) < 60 else check.want[:57] + "..."
            out.append(f"{where}: the last doctest prints {shown!r}, not " +
                       ("a number" if check.kind == "number" else f"one of the options {list(check.options)}"))
    return out


# ---- the course map (lessons/README.md) ------------------------------------------------------------

def minutes_text(minutes: Fraction) -> str:
    """A reading time for people: whole minutes, at least 1 ("7 min")."""
    return f"{max(1, round(minutes))} min"


def path_of(lesson: Lesson) -> str | None:
    """The path a lesson is on: its metadata's (checked against ``PATHS`` for the lessons it names, by
    ``problems``), so a new lesson joins a path by its own metadata line."""
    if lesson.meta is not None:
        return lesson.meta.course
    return next((name for name, numbers in PATHS.items() if lesson.number in numbers), None)


def path_minutes(lessons: list, path: str) -> Fraction:
    """Total reading time of a path's lessons (those ``lessons`` holds), exactly."""
    return sum((les.minutes for les in lessons if path_of(les) == path), Fraction(0))


def path_lessons(lessons: list, path: str) -> list:
    """The lessons of a path, in order ("all": every lesson)."""
    return [les for les in lessons if path == "all" or path_of(les) == path]


def needs_text(lesson: Lesson) -> str:
    if lesson.meta is None:
        return "?"
    return ", ".join(str(n) for n in lesson.meta.needs) or "none"


def course_map(entries: list) -> str:
    """lessons/README.md: the three paths, each lesson with its reading time and what it needs.
    ``entries``: (path, Lesson) as ``load`` returns them."""
    lessons = [les for _, les in entries]
    files = {les.number: path.name for path, les in entries}
    out = [
        "# The course",
        "",
        "<!-- Generated from the lessons' metadata by specsim.views.course.course_map: do not edit by hand;",
        "     regenerate with `python -m specsim.views.course --write`. -->",
        "",
        "Speculative decoding, taught by checking it: every number in a lesson is computed by specsim and",
        "tested. Read the lessons here (the figures are drawn as SVG) or in the app, where each figure is",
        "live and each check-yourself question answers back: `streamlit run app` from the repository root,",
        f"then open the Lessons page. The \"Try it\" links open the app at {APP_URL.rstrip('/')} once it runs.",
        "",
        f"Reading times are computed: the words of a lesson's taught part over {WORDS_PER_MINUTE} a minute (code,",
        "answers, exercises and the \"Going deeper\" part are extra).",
        "",
    ]
    for path in PATHS:
        chosen = path_lessons(lessons, path)
        total = minutes_text(path_minutes(lessons, path))
        blurb = PATH_BLURBS[path][0].upper() + PATH_BLURBS[path][1:] + "."
        out += [f"## {PATH_NAMES[path]}: {len(chosen)} lessons, {total}", "",
                ("Start here, in order. " if path == "core" else "") + blurb, ""]
        out += ["| lesson | reading time | needs |", "| --- | ---: | --- |"]
        for les in chosen:
            link = f"[{les.number}. {les.title}]({files[les.number]})"
            out.append(f"| {link} | {minutes_text(les.minutes)} | {needs_text(les)} |")
        out.append("")
    return "\n".join(out)


def main(argv=None) -> int:
    import argparse
    import sys

    parser = argparse.ArgumentParser(prog="python -m specsim.views.course",
                                     description="Print (or --write) lessons/README.md, the course map.")
    parser.add_argument("--write", action="store_true", help="write lessons/README.md instead of printing it")
    args = parser.parse_args(argv)
    text = course_map(load())
    if args.write:
        (LESSONS_DIR / "README.md").write_text(text, encoding="utf-8")
        print(f"wrote {LESSONS_DIR / 'README.md'}")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
