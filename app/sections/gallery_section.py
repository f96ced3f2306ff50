"""The Tiny GPT page's drafter gallery: every drafter on the same target, measured side by side.

Runs ``specsim.gpt.gallery.gallery`` on request (it times real generations, so
it takes a while: a progress bar per prompt set) and shows its table and the
α / c landscape of ``specsim.plots.gallery.alpha_cost_map``. Results are kept
per settings for every session, like the page's other runs.
"""
from __future__ import annotations

import streamlit as st

from parts import gpt_runs, heavy, memory, plain, presenter, widgets
from specsim.gpt import specs
from specsim.plots import gallery as plots_gallery
from specsim.views.words import number_word

COLUMNS = {"drafter": "drafter", "alpha": "α", "alpha_se": "± SE", "cost": "c", "verify_ratio": "v",
           "tokens_per_pass": "tokens / pass",
           "drafted_per_round": "drafted / round", "best_gamma": "best γ (formula)",
           "formula_speedup": "formula speedup", "speedup": "measured speedup",
           "speedup_interval": "[min, max] over repeats"}
SETS = {"heldout": "held-out corpus files", "repetitive": "repetitive code (a block written twice)"}


MAX_RESULTS = 8  # galleries kept for every session (each a few small tables)


@st.cache_resource(max_entries=1, show_spinner=False)
def _results() -> heavy.Store:
    """Finished galleries per settings, shared by every session, at most MAX_RESULTS, each measured once."""
    return heavy.Store(MAX_RESULTS)


def table_rows(rows) -> list:
    """The gallery's rows with readable column names and rounded numbers (display only)."""
    out = []
    for r in rows:
        shown = {}
        for key, label in COLUMNS.items():
            v = r.get(key)
            if isinstance(v, list):  # an interval
                v = f"{v[0]:.2f}–{v[1]:.2f}"
            shown[label] = round(v, 3) if isinstance(v, float) and v == v else v
        out.append(shown)
    return out


def show(device: str) -> None:
    drafters = specs.gallery()  # read when drawn: a drafter registered after this module loaded is listed too
    st.header("Drafter gallery")
    st.markdown(f"{number_word(len(drafters)).capitalize()} ways to draft for the **same target**: the two small GPTs (distilled to the target's p, or "
                "trained on the corpus alone), **EAGLE** (one narrow layer that reads the target's own last "
                "hidden state and the next character's embedding, predicts the next hidden state and reads it "
                "out through the target's final norm and head: the target's understanding of the context for "
                "the price of one small layer, so it accepts more than a small GPT of its size), **prompt "
                "lookup** (copy what followed the last 3 characters the "
                "last time they occurred: no model, c ≈ 0, a one-hot q) and **early exit** (the target's own "
                "first 2 layers, on the target's KV cache, with its final norm and head, or with a small exit "
                "head trained to match p: `+head`). Each is measured at γ = 4 against plain decoding "
                "of the target, interleaved in the same run.")
    for key, default, lo, hi in (("gallery-n", 60, 20, 200), ("gallery-repeats", 1, 1, 5), ("gallery-prompts", 1, 1, 3)):
        memory.remember(key, default, valid=memory.within(lo, hi))  # kept across pages
    with st.form("gallery-form"):
        c1, c2, c3 = st.columns(3)
        n_tokens = c1.slider("characters per prompt", 20, 200, step=10, key="gallery-n")
        repeats = c2.slider("timed repeats (the fastest counts)", 1, 5, key="gallery-repeats")
        n_prompts = c3.slider("prompts per set", 1, 3, key="gallery-prompts")
        go = st.form_submit_button("Measure every drafter", width="stretch")
    key = (device, n_tokens, repeats, n_prompts)
    results = _results()
    if go and key not in results:
        def measure():  # in a child process, imported there: torch would hold the server's interpreter
            with st.status("Timing plain decoding and every drafter…", expanded=True) as status:
                out = heavy.in_child("specsim.gpt.gallery:gallery", drafters, tuple(SETS), n_tokens, 4, 1.0, repeats,
                                     0, device, n_prompts)
                status.update(label="Drafter gallery measured", state="complete", expanded=False)
            return out
        try:
            results.get_or_compute(key, measure, heavy=True, on_wait=gpt_runs.queued)
        except Exception as e:  # noqa: BLE001  a failed load or device: one line
            st.error(f"Cannot measure the drafters: {widgets.one_line(e)}")
            return
    result = results.get(key)
    if result is None:
        st.info("Press **Measure every drafter**: it decodes each set's prompts plainly and with every drafter on one "
                "CPU thread; more characters, repeats or prompts take proportionally longer.")
        return
    for name, rows in result["sets"].items():
        st.subheader(SETS.get(name, name))
        plain.table(table_rows(rows))
        presenter.chart(plots_gallery.alpha_cost_map(rows, title=f"Drafters on the α / c landscape: {SETS[name]}"),
                        key=f"gallery-map-{name}")
    st.caption(f"T = 1, γ = 4, {result['settings']['threads']} torch thread(s) on {result['settings']['device']}; "
               "α = accepted / verified drafts with its standard error over rounds; c = drafter time per drafted "
               "token and v = one verify pass, both timed inside the speculative rounds, in plain decoding's time "
               "per token; the contours are the i.i.d. formula's best speedup, a rough guide for lookup, whose "
               "drafts are neither i.i.d. nor always γ long. Each timing is the fastest of the repeats (load only "
               "adds time): raise the repeats for steadier figures.")
