"""Tiny GPT: real speculative decoding with a GPT pair, its mask and its KV cache opened up.

The only page that imports torch (through ``specsim.gpt.api``). The model pair
loads once per (drafter, device) with ``st.cache_resource``. Set
``SPECSIM_WEIGHTS`` to a directory to use other weights than the shipped ones.
"""
import os

import streamlit as st

import tokens
from specsim import plots_gpt
from specsim.gpt import masks


def md(ch: str) -> str:
    """A character safe inside Markdown text."""
    return "\\" + ch if ch in "\\`*_{}[]()#+-.!|<>~$" else ch


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
                     help="distilled: trained to match the target's p; trained: trained on the corpus alone")
    device = st.radio("device", ["auto", "cpu", "cuda"], key="gpt-device", horizontal=True)
    seed = int(st.number_input("seed", 0, 2**31 - 1, 0, key="gpt-seed"))
    st.form_submit_button("Generate", type="primary", width="stretch")


@st.cache_resource(show_spinner="Loading the tiny GPT pair…")
def get_pair(draft: str, device: str, weights_dir):
    from specsim.gpt import api, bench

    pair = api.load_pair(draft, device, weights_dir)
    bench.prepare(pair)
    return pair


@st.cache_resource(max_entries=16, show_spinner="Generating, then timing plain decoding and one step of each model…")
def run(draft, device, weights_dir, prompt, n_tokens, gamma, temperature, seed):
    from specsim.gpt import bench

    pair = get_pair(draft, device, weights_dir)
    return pair, bench.quick_measure(pair, prompt, n_tokens, gamma, temperature, seed)


weights_dir = os.environ.get("SPECSIM_WEIGHTS") or None
try:
    pair, result = run(draft, device, weights_dir, prompt, n_tokens, gamma, temperature, seed)
except (ValueError, OSError) as e:  # bad prompt, unknown device, missing or damaged weights
    st.error(f"Cannot run the tiny GPT: {e}")
    st.stop()
gen, seconds, costs, rates = result.generation, result.seconds, result.costs, result.rates

vocab = pair.vocab
pieces = []
for r in gen.rounds:
    pieces.append(("".join(vocab[t] for t in r.drafts[:r.accepted]), "draft"))
    pieces.append((vocab[r.closing_token], "correct" if r.correction == "residual" else "bonus"))
st.markdown(tokens.text_html(prompt, pieces), unsafe_allow_html=True)
st.markdown(tokens.legend_html(["draft", "correct", "bonus"]), unsafe_allow_html=True)

# -- live numbers: measured against the formula ----------------------------------
alpha, cost, verify_ratio = gen.alpha, rates["cost"], rates["verify_ratio"]
tokens_per_round = rates["tokens_per_round"]
m = st.columns(6)
m[0].metric("α measured", f"{alpha:.3f}" if alpha is not None else "—", help="accepted drafts / checked drafts")
m[1].metric("tokens per round", f"{tokens_per_round:.2f}",
            help=f"{len(gen.rounds)} rounds, {gen.target_passes} target passes")
m[2].metric("c measured", f"{cost:.3f}", help=f"drafter step {costs['draft'][gamma] * 1e3:.2f} ms / target step "
                                              f"{costs['target'] * 1e3:.2f} ms; verifying γ + 1 positions costs "
                                              f"{verify_ratio:.2f} target steps")
m[3].metric("speedup measured", f"{result.speedup:.2f}×",
            help=f"plain {seconds['plain'] * 1000:.0f} ms / speculative {seconds['speculative'] * 1000:.0f} ms "
                 f"for {n_tokens} characters on {pair.device} (fastest of {result.runs} runs each)")
if alpha is not None:
    m[4].metric("speedup, formula", f"{rates['formula_speedup']:.2f}×",
                help="(1 − α^(γ+1)) / ((1 − α)(γc + 1)) with the measured α and c (verification = 1 target step)")
m[5].metric("speedup, refined", f"{rates['refined_speedup']:.2f}×",
            help="measured tokens per round / (γc + measured verification cost): what the measured acceptance "
                 "and costs allow; the gap to the measured speedup is the decoding loop's own overhead")
st.plotly_chart(plots_gpt.tokens_per_round([len(r.emitted) for r in gen.rounds], gen.accepted_per_round, gamma),
                key="gpt-rounds")

# -- one round, opened up -----------------------------------------------------------
st.subheader("One round, opened up")
j = st.slider("round", 1, len(gen.rounds), 1, key="gpt-round") - 1 if len(gen.rounds) > 1 else 0
r = gen.rounds[j]
n = r.cache["target"]["start"]
chars = [plots_gpt.show_char(vocab[t]) for t in r.drafts]
last = plots_gpt.show_char(vocab[r.last_token])


st.markdown(f"Round {j + 1}: the cache holds **n = {n}** keys; the last token **{md(last)}** and the "
            f"drafts **{' '.join(md(c) for c in chars)}** are fed to the target as {gamma + 1} queries. "
            f"**k = {r.accepted}** accepted, then a {'bonus' if r.correction == 'bonus' else 'replacement'} "
            f"**{md(plots_gpt.show_char(vocab[r.closing_token]))}**." + (" (The context window slid before this round.)" if r.slid else ""))
queries = [f"{last} (last)"] + [f"{c} (draft {i + 1})" for i, c in enumerate(chars)]
st.plotly_chart(plots_gpt.mask_pair(masks.lower_right_grid(n, gamma), masks.upper_left_grid(n, gamma), n,
                                    queries), key="gpt-mask")
labels = {n: vocab[r.last_token], **{n + 1 + i: vocab[t] for i, t in enumerate(r.drafts)}}
if not any(x.slid for x in gen.rounds[:j + 1]):  # cache slot j holds sequence position j
    seq = gen.prompt_ids + gen.tokens
    labels.update({i: vocab[t] for i, t in enumerate(seq[:n])})
st.plotly_chart(plots_gpt.cache_slots(r.cache, gamma, r.accepted, labels=labels), key="gpt-cache")
st.plotly_chart(plots_gpt.draft_rows(vocab, r.p_rows.tolist(), r.q_rows.tolist(), r.drafts, r.acceptance, r.u,
                                     r.accepted_flags), key="gpt-rows")
with st.expander("Which logit row of the verify pass scored which draft"):
    st.dataframe([{"row": s["row"], "query token": plots_gpt.show_char(vocab[s["query_token"]]), "position": s["query_position"],
                   "scores": s["scores"], "used": "✓" if s["used"] else ""} for s in r.scored_by()],
                 hide_index=True)
