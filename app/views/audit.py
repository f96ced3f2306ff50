"""Audit: an engine judged by the tokens it emits (specsim.gpt.audit), emitted beside exact probabilities."""
from pathlib import Path

import streamlit as st

import specsim
from parts import heavy, memory, plain, presenter
from sections import tryit
from specsim.labs.audit_limits import MAX_JOINT, MAX_TOKENS  # the CLI's own limits (no numpy: the page stays light)

EXAMPLES = Path(specsim.__file__).parent / "gpt" / "audit_engines.py"  # the example engines, a user's file

ENGINES = {  # label -> (--engine value, what it is)
    "specsim's decoder": ("specsim", "specsim's own speculative decoder on the tiny GPT, any scheme"),
    "transformers' assisted generation": ("hf", "generate(..., assistant_model=..., do_sample=True) on the "
                                                "shipped pair, converted to Hugging Face models in memory"),
    "textbook rule (example file)": ("Textbook", "the papers' rule, written as a user's engine: exact"),
    "sample and match (llama.cpp server)": ("SampleAndMatch", "greedy drafts kept while the target's own "
                                                              "samples match them: exact"),
    "keep every draft (bug)": ("EmitDraft", "accepts every draft: the drafter's distribution"),
    "replacement from p (bug)": ("ResampleFromTarget", "a rejected draft replaced from p, not the residual"),
    "raw q under top-k (bug)": ("RawQUnderTopK", "drafts from the top-k q, ratio with the raw q: lossy when "
                                                 "top-k cuts q"),
}

RUNS, SCHEMES = [100, 200, 500, 1000, 2000], ["chain:4", "block:4", "tree:2,1", "tree:2,2,1"]
TOP_K = [0, 5, 20]  # 0: off (a selectbox shows its placeholder, not an option, for a value of None)
LONG = range(MAX_JOINT + 1, MAX_TOKENS + 1)  # K judged token by token, as the CLI's --tokens allows
SEQUENTIAL_HELP = ("Watch a mixture likelihood-ratio test while the runs arrive and stop as soon as it reaches "
                   "1/alpha ('not the target'; Ville's inequality keeps the false-alarm rate); it never stops early "
                   "to say 'consistent' (the CLI's --sequential)")


def kept(key: str, default, choices=None) -> str:
    """The widget key ``key``, its value remembered across pages and reloads (``parts.memory``)."""
    memory.remember(key, default, valid=None if choices is None else (lambda v: v in choices))
    return key


def show_result(r: dict) -> None:
    """The verdict, what the engine emitted (joint) or the three PIT tests (token by token), the figures behind
    it, and where the audit sits on the detectability curves."""
    joint = r.get("mode", "joint") == "joint"
    how = f" ({plain.cell(r['scheme'])})" if r.get("scheme") else ""
    runs = f"{r['samples']:,} runs" + ("" if joint else f" of {r['tokens']} tokens ({r['tokens_judged']:,} judged)")
    if r["samples"] < r.get("runs_planned", r["samples"]):  # the sequential test stopped the audit
        runs += f", stopped by the sequential test ({r['runs_planned']:,} planned)"
    (st.success if r["verdict"] == "consistent with the target" else st.error)(
        f"**{r['verdict'].capitalize()}**: {plain.cell(r['engine'].rsplit('/', 1)[-1])}{how} after {runs} "
        f"(false-alarm rate {r['alpha']:g})")
    if joint:
        from specsim.plots.audit import emitted_vs_exact
        presenter.chart(emitted_vs_exact(r["top"]), key="audit-emitted", width="stretch")
    metrics(r, joint)
    if not joint:  # the three tests, as the CLI prints them
        st.markdown(plain.markdown([{"test": t["name"], "Pearson": f"{t['statistic']:.1f}", "cells": t["cells"],
                                     "values": t["values"], "p-value": f"{t['p_value']:.3g}", "TV": t["tv"]}
                                    for t in r["tests"]]))
    if r.get("sequential"):
        s = r["sequential"]
        st.caption("Sequential test (mixture likelihood ratio, Ville's inequality): " + (
            f"decided 'not the target' at run {s['decided_at']:,} of {r['runs_planned']:,}." if s["decided_at"]
            else f"undecided after {r['samples']:,} runs (largest e-value {s['e_value']:.3g}, 1/alpha = "
                 f"{1 / r['alpha']:.3g}); the verdict is the sequential test's."))
    scheme = f"scheme {plain.cell(r['scheme'])}" if r.get("scheme") else "the engine's own decoding"
    st.caption(f"Engine {plain.cell(r['engine'].rsplit('/', 1)[-1])} ({scheme}, top-k "
               f"{'off' if r.get('top_k') is None else r['top_k']}), prompt {plain.cell(repr(r['prompt']))}, "
               f"first {r['tokens']} token(s), seed {r.get('seed', 0)}.")  # the prompt is the user's text: shown inert
    if r.get("isolation"):  # what the verdict is worth: did the engine run out of the judge's reach
        from specsim.labs.isolation import describe
        worth = describe(r["isolation"]["isolated"], r["isolation"]["why"])
        st.caption(plain.cell(worth[:1].upper() + worth[1:] + "."))
    from specsim.labs.audit import detectable_curves
    from specsim.plots.audit import detectable_tv
    mark = (r["samples"], r["detectable_tv"], f"this audit ({r['cells']} cells)") if joint else None
    presenter.chart(detectable_tv(detectable_curves(), mark=mark), key="audit-curves", width="stretch")
    st.caption("This audit, placed on the curves: four times the runs halve the detectable TV." if joint else
               "The curves are for joint audits (runs of K <= 3 tokens); a token-by-token audit's figures are above.")


def metrics(r: dict, joint: bool) -> None:
    """p-value, TV seen, detectable TV and runs per second, each with what it means in its help."""
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("p-value", "0" if r["p_value"] == 0 else f"{r['p_value']:.3g}",
              help=f"Pearson chi-square over {r['cells']} cells, {r['df']} degrees of freedom ({r['p_value_method']})"
              if joint else f"three tests' smallest p-value times 3 ({r['p_value_method']})")
    what = "the TV over the cells" if joint else r["tv_definition"]  # the library's own words
    interval = f"95% interval {r['tv_ci'][0]:.3f} to {r['tv_ci'][1]:.3f}; " if joint else ""
    c2.metric("TV seen", f"{r['tv']:.3f}", help=f"{what}: {interval}an exact engine shows about "
              f"{r['tv_exact_engine']:.3f} with this many runs")
    runs = "runs" if joint else f"runs of {r['tokens']} tokens"
    c3.metric("Detectable TV", f"{r['detectable_tv']:.3f}", help="the TV this budget detects with probability "
              f"0.8; a TV of {r['detect_tv']:g} needs {r['samples_to_detect']:,} {runs} (by seeded simulation)")
    c4.metric("Runs per second", f"{r['samples_per_s']}")


st.title("Audit an engine")
tryit.back_to_lesson()
st.markdown(
    "Run an engine many times from one prompt and test whether its first tokens follow the target's **exact** "
    "distribution, computed from the target's own forward passes. The engine runs in a separate process; the "
    "verdict is computed here. Samples can refute exactness, never prove it: a pass means no difference this "
    "budget could see (lesson 24).")

with st.sidebar:  # every setting is remembered across pages and reloads (parts.memory)
    label = st.selectbox("Engine", list(ENGINES), key=kept("audit-engine", next(iter(ENGINES)), ENGINES))
    st.caption(ENGINES[label][1])
    prompt = st.text_input("Prompt", max_chars=200, key=kept("audit-prompt", "def "))
    long = st.toggle(f"Long runs: K above {MAX_JOINT}, token by token", key=kept("audit-long", False),
                     help=f"Every emitted token judged against the target's exact conditional given its run's own "
                          f"prefix (randomized PITs: uniform for an exact engine; necessary, not sufficient), as the "
                          f"CLI's --tokens above {MAX_JOINT}")
    if long:
        tokens = int(st.number_input(f"Tokens judged (K, {LONG[0]} to {LONG[-1]})", LONG[0], LONG[-1],
                                     key=kept("audit-long-k", 30, LONG)))
    else:
        tokens = st.radio("First tokens judged (K)", [1, 2, 3], horizontal=True, key=kept("audit-k", 2, (1, 2, 3)),
                          help="K = 1 judges one token: transformers drafts nothing then, so its audit needs K >= 2")
    samples = st.select_slider("Runs (N)", RUNS, key=kept("audit-n", 500, RUNS))
    scheme = st.selectbox("Scheme (specsim's decoder)", SCHEMES, key=kept("audit-scheme", SCHEMES[0], SCHEMES))
    top_k = st.selectbox("top-k", TOP_K, format_func=lambda k: str(k) if k else "off",
                         key=kept("audit-topk", 0, TOP_K)) or None
    seed = int(st.number_input("Seed (run i uses seed + i)", 0, 10**6, key=kept("audit-seed", 0, range(10**6 + 1))))
    sequential = st.toggle("Stop once decided (sequential)", key=kept("audit-seq", False), help=SEQUENTIAL_HELP)

value = ENGINES[label][0]
engine = value if value in ("specsim", "hf") else f"{EXAMPLES}:{value}"
if st.button("Run the audit", type="primary"):
    bar = st.progress(0.0, text="starting the engine (loading torch and the weights)")
    from specsim.gpt import audit  # torch loads when an audit runs, not with the page
    try:
        with heavy.slot(on_wait=lambda: bar.progress(0.0, text="queued behind another heavy computation")):
            st.session_state["audit-result"] = audit.audit(
                engine, prompt, tokens, samples, scheme, temperature=1.0, top_k=top_k, seed=seed, timeout=900,
                sequential=sequential,
                progress=lambda done, total: bar.progress(done / total, text=f"{done}/{total} runs"))
    except ValueError as e:  # bad input, or an engine that gave no verdict: one line
        st.session_state.pop("audit-result", None)
        st.error(str(e).splitlines()[0][:300])
    bar.empty()

r = st.session_state.get("audit-result")
if r is None:  # before any run: what a budget can see, the page's first lesson
    from specsim.labs.audit import detectable_curves
    from specsim.plots.audit import detectable_tv
    presenter.chart(detectable_tv(detectable_curves()), key="audit-curves", width="stretch")
    st.caption("Each audit prints where it sits on these curves; four times the runs halve the detectable TV.")
else:
    show_result(r)
