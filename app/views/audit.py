"""Audit: an engine judged by the tokens it emits (specsim.gpt.audit), emitted beside exact probabilities."""
from pathlib import Path

import streamlit as st

import specsim
from parts import heavy, memory, plain, presenter
from sections import tryit

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

RUNS, SCHEMES, TOP_K = [100, 200, 500, 1000, 2000], ["chain:4", "block:4", "tree:2,1", "tree:2,2,1"], [None, 5, 20]


def kept(key: str, default, choices=None) -> str:
    """The widget key ``key``, its value remembered across pages and reloads (``parts.memory``)."""
    memory.remember(key, default, valid=None if choices is None else (lambda v: v in choices))
    return key


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
    tokens = st.radio("First tokens judged (K)", [1, 2, 3], horizontal=True, key=kept("audit-k", 2, (1, 2, 3)),
                      help="K = 1 judges one token: transformers drafts nothing then, so its audit needs K >= 2")
    samples = st.select_slider("Runs (N)", RUNS, key=kept("audit-n", 500, RUNS))
    scheme = st.selectbox("Scheme (specsim's decoder)", SCHEMES, key=kept("audit-scheme", SCHEMES[0], SCHEMES))
    top_k = st.selectbox("top-k", TOP_K, format_func=lambda k: "off" if k is None else str(k),
                         key=kept("audit-topk", None, TOP_K))
    seed = int(st.number_input("Seed (run i uses seed + i)", 0, 10**6, key=kept("audit-seed", 0, range(10**6 + 1))))

value = ENGINES[label][0]
engine = value if value in ("specsim", "hf") else f"{EXAMPLES}:{value}"
if st.button("Run the audit", type="primary"):
    bar = st.progress(0.0, text="starting the engine (loading torch and the weights)")
    from specsim.gpt import audit  # torch loads when an audit runs, not with the page
    try:
        with heavy.slot(on_wait=lambda: bar.progress(0.0, text="queued behind another heavy computation")):
            st.session_state["audit-result"] = audit.audit(
                engine, prompt, tokens, samples, scheme, temperature=1.0, top_k=top_k, seed=seed, timeout=900,
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
    how = f" ({plain.cell(r['scheme'])})" if r.get("scheme") else ""
    (st.success if r["verdict"] == "consistent with the target" else st.error)(
        f"**{r['verdict'].capitalize()}**: {plain.cell(r['engine'].rsplit('/', 1)[-1])}{how} after {r['samples']:,} "
        f"runs (false-alarm rate {r['alpha']:g})")
    from specsim.plots.audit import emitted_vs_exact
    presenter.chart(emitted_vs_exact(r["top"]), key="audit-emitted", width="stretch")
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("p-value", "0" if r["p_value"] == 0 else f"{r['p_value']:.3g}",
              help=f"Pearson chi-square over {r['cells']} cells, {r['df']} degrees of freedom")
    c2.metric("TV seen", f"{r['tv']:.3f}", help=f"95% interval {r['tv_ci'][0]:.3f} to {r['tv_ci'][1]:.3f}; an "
              f"exact engine shows about {r['tv_exact_engine']:.3f} with this many runs")
    c3.metric("Detectable TV", f"{r['detectable_tv']:.3f}", help="the TV over the cells this budget detects with "
              f"probability 0.8; a TV of {r['detect_tv']:g} needs {r['samples_to_detect']:,} runs")
    c4.metric("Runs per second", f"{r['samples_per_s']}")
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
    presenter.chart(detectable_tv(detectable_curves(), mark=(r["samples"], r["detectable_tv"],
                                                             f"this audit ({r['cells']} cells)")),
                    key="audit-curves", width="stretch")
    st.caption("This audit, placed on the curves: four times the runs halve the detectable TV.")
