"""The Trees page's tiny-GPT section: one real tree round's mask and path, and every scheme measured.

torch is imported only when a button is pressed (``specsim.gpt.api.speculative_generate``,
``specsim.gpt.measure.bench_schemes.bench_schemes``); results are kept per settings for
every session, like the Tiny GPT page's runs: at most ``MAX_RUNS`` generations and
one bench (it has no settings), each computed once however many sessions ask at
the same time (``heavy.Store``), one heavy computation at a time in the server.
"""
from __future__ import annotations

import streamlit as st

from parts import gpt_runs, heavy, memory, plain, presenter, widgets
from specsim.plots import gpt as plots_gpt
from specsim.plots import tree as plots_tree
from specsim.views import tree_view, words

SCHEMES = ("chain:4;block:4;tree:1,1,1,1;tree:2,1;tree:2,1:distinct;tree:4;"
           "chain:max=4,stop=0.45;tree:dynamic,budget=4,depth=3,topk=2")  # 4 drafted tokens each (the last two: at most)
MAX_CHARS = 120
MAX_RUNS = 16  # tree generations kept (each a few rounds of small lists)
BENCH_HELP = "plain decoding and each scheme, two held-out prompts of 60 characters, one repeat, in a child process"


@st.cache_resource(max_entries=1, show_spinner=False)
def _store() -> dict:
    """Shared by every session: at most MAX_RUNS tree generations and the one scheme bench."""
    return {"runs": heavy.Store(MAX_RUNS), "benches": heavy.Store(1)}


def _pair():
    """The shipped pair with the distilled drafter on CPU, from the Tiny GPT page's bounded store."""
    return gpt_runs.get_pair(gpt_runs.Choice("distilled", "cpu"))


def show(scheme) -> None:
    """The section for a tree scheme (``specsim.schemes.Tree``): the one GPT decoder runs it."""
    st.header("On the tiny GPT")
    st.markdown("The same walk on the real character-level pair (distilled drafter, T = 1, CPU): the drafter "
                "drafts the tree level by level, the target scores **every node in one pass** through the tree "
                "mask with tree position ids, and both KV caches keep only the accepted path.")
    for key, default, valid in (("tree-gpt-prompt", "def main(", None), ("tree-gpt-n", 40, memory.within(8, MAX_CHARS)),
                                ("tree-gpt-seed", 0, memory.within(0, 10**6))):
        memory.remember(key, default, valid=valid)  # kept across pages
    with st.form("tree-gpt-form"):
        c1, c2, c3 = st.columns([3, 1, 1])
        prompt = c1.text_input("prompt", key="tree-gpt-prompt")
        n_tokens = c2.number_input("characters", 8, MAX_CHARS, key="tree-gpt-n")
        seed = c3.number_input("seed", 0, 10**6, key="tree-gpt-seed")
        go = st.form_submit_button(f"Generate with {scheme.name}", width="stretch")
    if widgets.capped_text(prompt, "the prompt") is None:
        return
    store, key = _store(), (prompt, int(n_tokens), int(seed), scheme.name)
    if go and key not in store["runs"]:
        def generate():
            from specsim.gpt import api
            return api.speculative_generate(pair, prompt, int(n_tokens), scheme, temperature=1.0, seed=int(seed))
        try:
            pair = _pair()  # loaded first: a computation never waits on another store (no lock-order deadlock)
            with st.spinner("Generating…"):
                store["runs"].get_or_compute(key, generate, heavy=True, on_wait=gpt_runs.queued)
        except Exception as e:  # noqa: BLE001  a character outside the vocabulary, a too large tree, a load failure
            st.error(f"Cannot run the tiny GPT: {widgets.one_line(e)}")
            return
    gen = store["runs"].get(key)
    if gen is not None:
        _round_view(gen)
    _bench_view(store)


def _round_view(gen) -> None:
    vocab = gen_vocab()
    st.markdown(f"**{len(gen.tokens)} characters in {gen.target_passes} target passes** "
                f"({len(gen.tokens) / gen.target_passes:.2f} per pass).")
    plain.code("".join(vocab[t] for t in gen.prompt_ids) + gen.text)
    # round 1 first (the last round of the default prompt drafts only spaces: an indent), kept across pages
    memory.remember("tree-gpt-round", 1, valid=lambda v: isinstance(v, int) and 1 <= v <= len(gen.rounds))
    j = st.slider("round", 1, len(gen.rounds), key="tree-gpt-round") - 1 if len(gen.rounds) > 1 else 0
    r = gen.rounds[j]
    show = lambda t: plots_gpt.show_char(vocab[t])  # noqa: E731  (a space or newline as a visible mark)
    cached = [show(t) for t in (gen.prompt_ids + gen.tokens)[:r.start]] if not r.slid else []
    mask = tree_view.round_mask(r.parents, [show(t) for t in r.drafts], show(r.last_token), cached)
    names = tree_view.sibling_paths(r.parents)
    path = " → ".join(f"{names[i]} {show(r.drafts[i])}" for i in r.accepted_nodes) or "no draft accepted"
    kind = "replacement" if r.closing_kind == "correct" else "bonus"
    st.markdown(f"Round {j + 1}: {words.count(len(r.drafts), 'drafted node')} after **n = {r.start}** cached characters; "
                f"accepted path: **{path}**, then a {kind} token **{show(r.closing_token)}**.")
    presenter.chart(plots_tree.mask_figure(mask["grid"], mask["rows"], mask["columns"],
                                           f"Round {j + 1}: the tree mask of its one target pass (last 8 cached keys)"),
                    key="tree-gpt-mask")


def gen_vocab() -> str:
    from specsim.gpt import api
    return api.load_pair("distilled", "cpu").vocab


def same_work_note(rows: list) -> str | None:
    """A caption for bench rows that did the same work (equal tokens per pass): their speedups differ by noise.

    ``rows`` are ``bench_schemes`` rows; None when no two rows keep the same tokens per pass.
    """
    groups = {}
    for r in rows:
        groups.setdefault(r["tokens_per_pass"], []).append(r)
    notes = []
    for per_pass, same in groups.items():
        if len(same) < 2:
            continue
        speedups = [r["speedup"] for r in same]
        spread = max(speedups) / min(speedups) - 1 if min(speedups) > 0 else float("inf")
        names = " and ".join(f"`{r['scheme']}`" for r in same)
        notes.append(f"{names} keep the same {per_pass} tokens per pass, so "
                     f"their speedups ({', '.join(f'{x:.2f}×' for x in speedups)}) differ only by timing noise and "
                     f"their verify passes' cost (a spread of {spread:.0%} between the same accepted tokens)")
    return ("; ".join(notes) + ". Read a speedup gap smaller than that as noise.") if notes else None


def _bench_view(store) -> None:
    st.markdown(f"Every scheme with a budget of 4 drafted tokens (`{SCHEMES}`; the confidence chain drafts at most 4, "
                "the dynamic tree keeps 4 nodes), interleaved with plain "
                "decoding of the same target: tokens per target pass, the cost of its verify pass in target "
                "steps, and the measured speedup (the same bench as `specsim gpt bench --schemes`). It takes "
                "tens of seconds on one CPU thread, once for every visitor.")
    if st.button("Measure every scheme", key="tree-gpt-bench", help=BENCH_HELP) and "rows" not in store["benches"]:
        def measure():  # in a child process, imported there: torch would hold the server's interpreter
            return heavy.in_child("specsim.gpt.measure.bench_schemes:bench_shipped", SCHEMES, n_tokens=60,
                                  repeats=1, n_prompts=2)
        try:  # every session that presses at the same time waits for the one bench
            with st.spinner("Timing plain decoding and every scheme…"):
                store["benches"].get_or_compute("rows", measure, heavy=True, on_wait=gpt_runs.queued)
        except Exception as e:  # noqa: BLE001  missing weights, a failed load: one line
            st.error(f"Cannot measure the schemes: {widgets.one_line(e)}")
    result = store["benches"].get("rows")
    if result:
        plain.table([{"scheme": r["scheme"], "drafted": r["drafted_tokens"], "tokens / pass": r["tokens_per_pass"],
                       "α": r["alpha"], "verify cost (target steps)": r["verify_cost"], "speedup": r["speedup"]}
                    for r in result["schemes"]])
        st.caption(f"{result['prompts']} held-out prompts × {result['tokens']} characters, one repeat, target step "
                   f"{result['target_step_ms']:.2f} ms (plain decoding's time per character; each verify cost "
                   "is timed inside the scheme's own rounds): tokens per pass are counts; the speedups are single "
                   "timings on a shared CPU (`specsim gpt bench --schemes` keeps the fastest of several, with "
                   "their range).")
        note = same_work_note(result["schemes"])
        if note:
            st.caption(note)
