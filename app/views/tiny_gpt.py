"""Tiny GPT: real speculative decoding with a GPT pair, its mask and its KV cache opened up.

The only page that imports torch (through ``specsim.gpt.api``). The model pair
loads once per (drafter, device) with ``st.cache_resource``. Set
``SPECSIM_WEIGHTS`` to a directory to use other weights than the shipped ones.
"""
import dataclasses
import os
import time

import streamlit as st

import ui
from specsim import formulas, plots_gpt
from specsim.gpt import masks

st.title("Tiny GPT")
st.markdown("A character-level GPT **target** and a much smaller **drafter** run real speculative decoding "
            "in PyTorch. The drafter proposes γ characters, the target verifies them in one pass through a "
            "**lower-right** causal mask over its KV cache, and both caches are **rolled back** to the "
            "accepted prefix.")

with st.sidebar.form("gpt-form"):
    prompt = st.text_area("prompt", "def ", key="gpt-prompt", help="newline and printable ASCII")
    n_tokens = st.slider("characters to generate", 8, 200, 80, key="gpt-n")
    gamma = st.slider("γ: draft length", 1, 8, 4, key="gpt-gamma")
    temperature = st.number_input("temperature (0 = greedy)", 0.0, 2.0, 1.0, 0.1, key="gpt-temp")
    draft = st.radio("drafter", ["distilled", "trained"], key="gpt-draft", horizontal=True,
                     help="distilled: trained to match the target's q; trained: trained on the corpus alone")
    device = st.radio("device", ["auto", "cpu", "cuda"], key="gpt-device", horizontal=True)
    seed = int(st.number_input("seed", 0, 2**31 - 1, 0, key="gpt-seed"))
    st.form_submit_button("Generate", type="primary", width="stretch")


@st.cache_resource(show_spinner="Loading the tiny GPT pair…")
def get_pair(draft: str, device: str, weights_dir):
    from specsim.gpt import api

    pair = api.load_pair(draft, device, weights_dir)
    api.plain_generate(pair, "x", 4)  # warm-up of both paths, so the first timing is not the slowest
    api.speculative_generate(pair, "x", 8, 2)
    return pair


@st.cache_resource(max_entries=16, show_spinner="Generating (speculative, then plain for the timing)…")
def run(draft, device, weights_dir, prompt, n_tokens, gamma, temperature, seed):
    """Speculative and plain generation of the same length, timed; and the drafter alone, for c."""
    from specsim.gpt import api

    pair = get_pair(draft, device, weights_dir)
    opts = dict(temperature=temperature or 1.0, greedy=temperature == 0, seed=seed)
    t0 = time.perf_counter()
    spec = api.speculative_generate(pair, prompt, n_tokens, gamma, **opts)
    t1 = time.perf_counter()
    api.plain_generate(pair, prompt, n_tokens, **opts)
    t2 = time.perf_counter()
    api.plain_generate(dataclasses.replace(pair, target=pair.draft), prompt, n_tokens, **opts)
    t3 = time.perf_counter()
    return pair, spec, {"speculative": t1 - t0, "plain": t2 - t1, "drafter": t3 - t2}


weights_dir = os.environ.get("SPECSIM_WEIGHTS") or None
try:
    pair, gen, seconds = run(draft, device, weights_dir, prompt, n_tokens, gamma, temperature, seed)
except (ValueError, OSError) as e:  # bad prompt, unknown device, missing or damaged weights
    st.error(f"Cannot run the tiny GPT: {e}")
    st.stop()

vocab = pair.vocab
pieces = []
for r in gen.rounds:
    pieces.append(("".join(vocab[t] for t in r.drafts[:r.k]), "draft"))
    pieces.append((vocab[r.correction_token], "correct" if r.correction == "residual" else "bonus"))
st.markdown(ui.text_html(prompt, pieces), unsafe_allow_html=True)
st.markdown(ui.legend_html(["draft", "correct", "bonus"]), unsafe_allow_html=True)

# -- live numbers: measured against the formula ----------------------------------
alpha = gen.alpha
cost = seconds["drafter"] / seconds["plain"]  # measured: one drafter step / one target step
tokens_per_round = sum(len(r.emitted) for r in gen.rounds) / len(gen.rounds)
m = st.columns(5)
m[0].metric("α measured", f"{alpha:.3f}" if alpha is not None else "—", help="accepted drafts / checked drafts")
m[1].metric("tokens per round", f"{tokens_per_round:.2f}", help=f"{len(gen.rounds)} rounds, {gen.target_passes} target passes")
m[2].metric("c measured", f"{cost:.3f}", help="drafter step time / target step time, from plain decoding with each")
m[3].metric("speedup measured", f"{seconds['plain'] / seconds['speculative']:.2f}×",
            help=f"plain {seconds['plain'] * 1000:.0f} ms / speculative {seconds['speculative'] * 1000:.0f} ms "
                 f"for {n_tokens} characters on {pair.device}")
if alpha is not None:
    m[4].metric("speedup, formula", f"{float(formulas.speedup(min(alpha, 1.0), gamma, cost)):.2f}×",
                help="(1 − α^(γ+1)) / ((1 − α)(γc + 1)) with the measured α and c; the formula assumes "
                     "verifying γ + 1 positions costs one target step")
st.plotly_chart(plots_gpt.tokens_per_round([len(r.emitted) for r in gen.rounds], gen.accepted_per_round, gamma),
                key="gpt-rounds")

# -- one round, opened up -----------------------------------------------------------
st.subheader("One round, opened up")
j = st.slider("round", 1, len(gen.rounds), 1, key="gpt-round") - 1 if len(gen.rounds) > 1 else 0
r = gen.rounds[j]
n = r.cache["target"]["start"]
chars = [vocab[t] for t in r.drafts]
st.markdown(f"Round {j + 1}: the cache holds **n = {n}** keys; the last token **{vocab[r.last_token]!r}** and the "
            f"drafts **{' '.join(repr(c) for c in chars)}** are fed to the target as {gamma + 1} queries. "
            f"**k = {r.k}** accepted, then a {'bonus' if r.correction == 'bonus' else 'replacement'} "
            f"**{vocab[r.correction_token]!r}**." + (" (The context window slid before this round.)" if r.slid else ""))
queries = [f"{vocab[r.last_token]!r} (last)"] + [f"{c!r} (draft {i + 1})" for i, c in enumerate(chars)]
st.plotly_chart(plots_gpt.mask_pair(masks.lower_right_grid(n, gamma), masks.upper_left_grid(n, gamma), n,
                                    queries), key="gpt-mask")
labels = {n: vocab[r.last_token], **{n + 1 + i: c for i, c in enumerate(chars)}}
if not any(x.slid for x in gen.rounds[:j + 1]):  # cache slot j holds sequence position j
    seq = gen.prompt_ids + gen.tokens
    labels.update({i: vocab[t] for i, t in enumerate(seq[:n])})
st.plotly_chart(plots_gpt.cache_slots(r.cache, gamma, r.k, labels=labels), key="gpt-cache")
st.plotly_chart(plots_gpt.draft_rows(vocab, r.p_rows.tolist(), r.q_rows.tolist(), r.drafts, r.accept_prob, r.u,
                                     r.accepted), key="gpt-rows")
with st.expander("Which logit row of the verify pass scored which draft"):
    st.dataframe([{"row": s["row"], "query token": repr(vocab[s["query_token"]]), "position": s["query_position"],
                   "scores": s["scores"], "used": "✓" if s["used"] else ""} for s in r.scored_by()],
                 hide_index=True)
