"""Widgets and cached library calls shared by the pages.

Everything a page needs twice lives here: the page list, the toy-model picker
(preset or uploaded JSON, with ``st.error`` on a bad file), number parsing
for text inputs, and ``st.cache_data`` wrappers around the exact engine.
No maths: every number comes from ``specsim``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import streamlit as st

from specsim import exact as exact_engine
from specsim import formulas, toy
from specsim.plots import exact as fmt  # noqa: F401  (re-exported: Fractions as "3/5")


@dataclass(frozen=True)
class PageInfo:
    path: str
    title: str
    icon: str
    section: str
    blurb: str


PAGES = [
    PageInfo("views/home.py", "Home", ":material/home:", "Start",
             "what speculative decoding is, one round replayed"),
    PageInfo("views/lessons.py", "Lessons", ":material/school:", "Start",
             "the lessons, in order, each linked to its page"),
    PageInfo("views/stepper.py", "Round stepper", ":material/play_circle:", "Toy models",
             "play rounds forward one event at a time"),
    PageInfo("views/residual.py", "Residual explorer", ":material/stacked_bar_chart:", "Toy models",
             "edit p and q, watch min(p, q), α and the residual r"),
    PageInfo("views/exactness.py", "Exactness", ":material/verified:", "Toy models",
             "prove speculative = target with exact fractions"),
    PageInfo("views/speedup.py", "Speedup", ":material/speed:", "Toy models",
             "speedup against γ, the best γ over α and c"),
    PageInfo("views/pitfalls.py", "Pitfalls lab", ":material/bug_report:", "Toy models",
             "break the rule on purpose, measure the damage"),
    PageInfo("views/tiny_gpt.py", "Tiny GPT", ":material/memory:", "Real model",
             "a real GPT pair: its mask, KV cache and speedup"),
]
PAGE = {p.path.split("/")[-1][:-3]: p for p in PAGES}  # "stepper" -> PageInfo

UPLOAD = "upload a JSON file…"


def page_link(name: str, label: str | None = None) -> None:
    """A link to another page by its short name ("stepper", "residual", ...)."""
    info = PAGE[name]
    st.page_link(info.path, label=label or info.title, icon=info.icon)


# -- toy models --------------------------------------------------------------

def model_picker(key: str, default: str = "seed", label: str = "toy model") -> toy.ToyModel | None:
    """Choose a preset or upload a JSON model; returns None (after ``st.error``) when invalid."""
    names = list(toy.PRESETS) + [UPLOAD]
    choice = st.selectbox(label, names, index=names.index(default), key=f"{key}-model",
                          help="presets ship with specsim; a JSON file follows the format below")
    if choice != UPLOAD:
        return toy.load_model(choice)
    uploaded = st.file_uploader("model JSON", type=["json"], key=f"{key}-upload")
    with st.expander("JSON format (the seed model)"):
        st.code(toy.load_model("seed").to_json(), language="json")
    if uploaded is None:
        st.info("Upload a model file to continue (see the format above).")
        return None
    try:
        return loads_cached(uploaded.getvalue(), uploaded.name)
    except toy.ModelError as e:
        st.error(f"**{uploaded.name}** is not a valid model: {e}")
        return None


@st.cache_data(max_entries=32, show_spinner=False)
def loads_cached(data: bytes, name: str) -> toy.ToyModel:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise toy.ModelError(f"{name} is not UTF-8 text") from None
    return toy.loads_model(text, source=name)


def context_picker(model: toy.ToyModel, key: str, label: str = "context", default=None) -> tuple:
    """Select one of the model's contexts (its last ``order`` tokens)."""
    contexts = model.contexts()
    index = contexts.index(default) if default in contexts else 0
    return st.selectbox(label, contexts, index=index, key=key, format_func=" ".join,
                        help="the previous token(s) the model looks at")


def work_estimate(model: toy.ToyModel, depth: int) -> int:
    """Rough number of sequences the enumeration walks: |vocab|^depth per context."""
    return len(model.vocab) ** depth * len(model.contexts())


MAX_WORK = 300_000


def check_size(model: toy.ToyModel, depth: int, what: str) -> bool:
    """st.error and False when an enumeration would be too large to be interactive."""
    if work_estimate(model, depth) > MAX_WORK:
        st.error(f"{what} would enumerate about {len(model.vocab)}^{depth} sequences for each of "
                 f"{len(model.contexts())} contexts; lower γ or the number of tokens.")
        return False
    return True


# -- numbers typed by the user ----------------------------------------------

def parse_number(text: str, name: str) -> Fraction:
    """A number typed as "3/5", "0.6" or "1"; ModelError names the field."""
    return toy.parse_probability(text.strip(), name)


def parse_row(text: str, name: str) -> list:
    """Comma- or space-separated probabilities as exact Fractions."""
    parts = [x for x in text.replace(",", " ").split() if x]
    if not parts:
        raise toy.ModelError(f"{name} is empty")
    return [parse_number(x, f"{name}[{i}]") for i, x in enumerate(parts)]


# -- cached library calls ----------------------------------------------------

@st.cache_data(max_entries=64, show_spinner=False)
def round_distribution(model_json: str, context: tuple, gamma: int):
    return exact_engine.round_distribution(toy.loads_model(model_json), context, gamma)


@st.cache_data(max_entries=64, show_spinner=False)
def check_exactness(model_json: str, n_tokens: int, gammas: tuple):
    return exact_engine.check_exactness(toy.loads_model(model_json), n_tokens, gammas)


@st.cache_data(max_entries=64, show_spinner=False)
def exact_vs_iid(model_json: str, context: tuple, gammas: tuple) -> list:
    model = toy.loads_model(model_json)
    return [formulas.exact_vs_iid(model, context, g) for g in gammas]


# -- lessons -----------------------------------------------------------------

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


# -- sampled rounds: words and coloured tokens -------------------------------

TOKEN_STYLE = {  # status -> (css, legend label)
    "context": ("background:#eceff3;color:#333", "context"),
    "draft": ("background:#3f9b58;color:white", "accepted draft"),
    "correct": ("background:#c8443f;color:white", "replacement (from the residual)"),
    "bonus": ("background:#8455b8;color:white", "bonus (from p)"),
    "pending": ("background:white;color:#b35c00;border:2px dashed #e8892b", "drafted, not yet verified"),
    "rejected": ("background:#f3d3d2;color:#7a2a27;text-decoration:line-through", "rejected draft"),
    "discarded": ("background:#eee;color:#999;text-decoration:line-through", "discarded draft"),
}


def token_html(token: str, status: str, size: str = "1.15rem") -> str:
    css, label = TOKEN_STYLE[status]
    return (f'<span title="{label}" style="{css};font-family:monospace;font-size:{size};'
            f'padding:0.1rem 0.45rem;margin:0.1rem;border-radius:0.3rem;display:inline-block">{token}</span>')


def legend_html(statuses) -> str:
    return " ".join(token_html(TOKEN_STYLE[s][1], s, size="0.8rem") for s in statuses)


def round_statuses(trace, event_index: int):
    """What is known about one round after ``event_index``: (draft statuses, final (kind, token) or None)."""
    statuses, final = [], None
    for ev in trace.events()[:event_index + 1]:
        kind = ev["kind"]
        if kind == "draft":
            statuses.append("pending")
        elif kind == "accept":
            statuses[ev["position"]] = "accepted"
        elif kind == "reject":
            pos = ev["position"]
            statuses[pos] = "rejected"
            statuses[pos + 1:] = ["discarded"] * (len(statuses) - pos - 1)
        elif kind in ("correct", "bonus"):
            final = (kind, ev["token"])
    return statuses, final


def stream_html(context, done: list, current=None, event_index: int = -1) -> str:
    """The context, every finished round's tokens by kind, and the current round so far."""
    parts = [token_html(t, "context") for t in context]
    for trace in done:
        parts += [token_html(t, k) for t, k in zip(trace.emitted, trace.kinds)]
    if current is not None:
        statuses, final = round_statuses(current, event_index)
        for t, s in zip(current.drafts, statuses):
            parts.append(token_html(t, "draft" if s == "accepted" else s))
        if final is not None:
            parts.append(token_html(final[1], final[0]))
    return '<div style="line-height:2.2rem">' + "".join(parts) + "</div>"


def describe_event(ev: dict, gamma: int) -> str:
    """One sentence (Markdown) for one event of ``RoundTrace.events()``."""
    kind = ev["kind"]
    if kind == "draft":
        return (f"**draft {ev['position'] + 1} of {gamma}**: after “{' '.join(ev['context'])}” the drafter "
                f"samples **{ev['token']}** from q")
    if kind == "verify":
        return f"**verify**: one target pass computes p at all {gamma} draft positions and the bonus position"
    if kind in ("accept", "reject"):
        u, a = ev["u"], ev["acceptance"]
        x = ev["token"]
        why = f"min(1, p/q) = {a} (p({x}) = {ev['p_x']}, q({x}) = {ev['q_x']})"
        if kind == "accept":
            return f"**position {ev['position'] + 1}**: u = {u:.3f} < {why}: **keep {x}**"
        return f"**position {ev['position'] + 1}**: u = {u:.3f} ≥ {why}: **reject {x}**"
    if kind == "correct":
        dropped = f"; the later drafts {' '.join(ev['discarded'])} are discarded" if ev["discarded"] else ""
        return f"**correct**: draw **{ev['token']}** from the residual r = max(0, p − q), normalized{dropped}"
    if kind == "bonus":
        return f"**bonus**: all {gamma} drafts kept, so **{ev['token']}** is drawn from p at position {gamma + 1}"
    if kind == "emit":
        k = ev["accepted"]
        return (f"**emit** {' '.join(ev['tokens'])}: {k} accepted draft(s) + 1 "
                f"{'bonus' if k == gamma else 'replacement'} = {len(ev['tokens'])} token(s) for one target pass")
    return kind


def running_tokens_per_pass(model: toy.ToyModel, rounds: list):
    """After each finished round: sampled tokens per target pass so far, and the exact expectation.

    The expectation averages ``exact.round_distribution(...).expected_tokens`` over the
    contexts the rounds started from (a toy model's rounds are not i.i.d.).
    """
    from specsim.sampling import GenerationTrace

    gen = GenerationTrace(rounds[0].context, rounds[0].gamma, 1, rounds[0].rule, list(rounds))
    actual = [Fraction(t["tokens"], t["target_passes"]) for t in gen.running_totals()]
    expected, total = [], Fraction(0)
    for j, r in enumerate(rounds, start=1):
        total += round_distribution(model.to_json(), model.state(r.context), r.gamma).expected_tokens
        expected.append(total / j)
    return actual, expected


# -- pitfalls ----------------------------------------------------------------

@st.cache_data(max_entries=64, show_spinner=False)
def pitfall_lab(model_json: str, context: tuple, gamma: int, n_tokens: int) -> list:
    from specsim import pitfalls
    return pitfalls.run_lab(toy.loads_model(model_json), context, gamma, n_tokens)


@st.cache_data(max_entries=64, show_spinner=False)
def pitfall_joints(model_json: str, context: tuple, gamma: int, n_tokens: int, name: str):
    """(produced, wanted): the rule's next-N-token joint and the one it should produce."""
    from specsim import pitfalls
    model, pit = toy.loads_model(model_json), pitfalls.get(name)
    produced = exact_engine.speculative_joint(pit.speculative(model), context, gamma, n_tokens, pit.rule)
    return produced, exact_engine.target_joint(pit.target(model), context, n_tokens)


def text_html(prompt: str, pieces) -> str:
    """Generated text with each character tinted by how it was made.

    ``pieces`` is a sequence of (characters, status) with status "draft" (accepted
    draft), "correct" (replacement) or "bonus"; the prompt is shown plain.
    """
    import html

    tint = {"draft": "#d3ecd9", "correct": "#f6d0ce", "bonus": "#e2d4f3"}

    def show(text):
        return html.escape(text).replace("\n", "↵<br>")

    out = [f'<span style="color:#666">{show(prompt)}</span>']
    for chars, status in pieces:
        out.append(f'<span title="{TOKEN_STYLE[status][1]}" style="background:{tint[status]}">{show(chars)}</span>')
    return ('<div style="font-family:monospace;font-size:1.05rem;white-space:pre-wrap;line-height:1.6;'
            'border:1px solid #ddd;border-radius:0.4rem;padding:0.6rem">' + "".join(out) + "</div>")
