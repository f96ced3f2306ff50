"""Tiny GPT: real speculative decoding with a GPT pair, its mask and its KV cache opened up.

The only page that imports torch (through ``specsim.gpt.api``). The model pair
loads once per (drafter, device) into a ``st.cache_resource`` store, with a progress bar. Set
``SPECSIM_WEIGHTS`` to a directory to use other weights than the shipped ones. "Your own model pair"
runs two Hugging Face causal-LM checkpoints (``specsim.gpt.hf.pair``) through the same decoder: off unless
the operator sets ``SPECSIM_PAIRS_DIR``, and then only checkpoints listed from that directory
(``gpt_runs.own_choices``). Every failure at the load boundary is one ``st.error`` line.
"""
import os

import streamlit as st

from parts import gpt_runs, memory, presenter, tokens, widgets
from sections import gallery_section, gpt_stats_section, tryit
from specsim import formulas
from specsim.plots import gpt as plots_gpt
from specsim.schemes import masks
from specsim.views import words
from specsim.gpt.specs import GALLERY as GALLERY_DRAFTERS


SHIPPED = "(the shipped pair)"
DRAFTS_PER_CHART = 3  # per-draft panels in one chart (more collide at 420 px)
md = tokens.md  # a character or name safe inside Markdown text


st.title("Tiny GPT")
tryit.back_to_lesson()
st.caption("A character-level GPT **target** and a much smaller **drafter** run real speculative decoding "
           "in PyTorch (settings in the sidebar). The drafter proposes γ characters, the target verifies them in "
           "one pass through a **lower-right** causal mask over its KV cache, and both caches are **rolled back** "
           "to the accepted prefix.")

DEFAULTS = {"gpt-prompt": "def ", "gpt-n": 80, "gpt-gamma": 4, "gpt-temp": 1.0, "gpt-draft": GALLERY_DRAFTERS[0],
            "gpt-device": "auto", "gpt-seed": 0}
for key, default in DEFAULTS.items():  # the settings survive a visit to another page (parts.memory)
    memory.remember(key, default)

with st.sidebar, st.form("gpt-form"):  # the sidebar: the generated text and its chart fill the first screen
    prompt = st.text_area("prompt", key="gpt-prompt", help="newline and printable ASCII", height=100)
    n_tokens = st.slider("characters to generate", 8, 400, key="gpt-n",
                         help="more characters give more rounds and smaller standard errors")
    gamma = st.slider("γ: draft length", 1, 8, key="gpt-gamma")
    temperature = st.number_input("temperature (0 = greedy)", 0.0, 2.0, step=0.1, key="gpt-temp")
    draft = st.selectbox("drafter", list(GALLERY_DRAFTERS), key="gpt-draft",
                         help="distilled: a small GPT trained to match the target's p; trained: the same small GPT "
                              "trained on the corpus alone; eagle: one narrow layer reading the target's own last "
                              "hidden state and the next character's embedding, read out through the target's "
                              "final norm and head (EAGLE); lookup:3: prompt lookup (copies what followed the last "
                              "3 characters earlier in the text; no model); early-exit:2: the target's first 2 "
                              "layers with its final norm and head; early-exit:2+head: the same layers with a "
                              "small trained exit head")
    device = st.radio("device", ["auto", "cpu", "cuda"], key="gpt-device", horizontal=True)
    seed = int(st.number_input("seed", 0, 2**31 - 1, key="gpt-seed"))
    st.form_submit_button("Generate", type="primary", width="stretch")
prompt = widgets.capped_text(prompt, "the prompt")

with st.sidebar.expander("Your own model pair"):
    own_target = own_draft = None
    own_names = gpt_runs.own_choices()
    if gpt_runs.pairs_dir() is None:
        st.caption("Off on this server. Whoever runs the app can offer Hugging Face causal-LM checkpoints by "
                   f"setting `{gpt_runs.PAIRS_ENV}` to a directory of checkpoint directories; visitors then pick "
                   "a target and a draft from that list (nothing else on the server is reachable).")
    elif not own_names:
        st.caption("The server's checkpoint directory holds no Hugging Face checkpoint (no subdirectory with a "
                   "config.json).")
    else:
        st.caption("Two Hugging Face causal-LM checkpoints offered by this server that share a tokenizer (for "
                   "example a gpt2 and a distilgpt2, or `specsim gpt export-hf` output). Nothing is downloaded. "
                   "Leave both on the shipped pair to use it; when set, the drafter choice above is ignored.")
        options = [SHIPPED] + own_names
        own_target = st.selectbox("target checkpoint", options, key="gpt-own-target")
        own_draft = st.selectbox("draft checkpoint", options, key="gpt-own-draft")
        own_target, own_draft = (None if x == SHIPPED else x for x in (own_target, own_draft))

if prompt is None:
    st.stop()
weights_dir = os.environ.get("SPECSIM_WEIGHTS") or None
if own_target or own_draft:
    if not (own_target and own_draft):
        st.error("Your own model pair needs both checkpoints: the target's and the draft's.")
        st.stop()
    draft = tuple(gpt_runs.own_path(x) for x in (own_target, own_draft))
    if None in draft:  # a name that left the server's list since this session picked it
        st.error("That checkpoint is no longer offered by this server: pick another.")
        st.stop()
    st.info(f"Running your own pair: target **{md(own_target)}**, draft **{md(own_draft)}**.")
try:
    pair, result = gpt_runs.run(draft, device, weights_dir, prompt, n_tokens, gamma, temperature, seed)
except Exception as e:  # noqa: BLE001  the load boundary: a bad prompt, device or checkpoint, never a traceback
    message = widgets.one_line(e).replace("use --device cpu or auto", 'choose device "cpu" or "auto" in the settings')
    root = gpt_runs.pairs_dir()
    if root:
        message = message.replace(root + os.sep, "")  # name the checkpoint, not where the server keeps it
    st.error(f"Cannot run the tiny GPT: {message}")
    st.stop()
gen, seconds, costs, rates = result.generation, result.seconds, result.costs, result.rates

vocab = pair.vocab
pieces = []
for r in gen.rounds:
    pieces.append(("".join(vocab[t] for t in r.drafts[:r.accepted]), "draft"))
    pieces.append((vocab[r.closing_token], "correct" if r.correction == "residual" else "bonus"))
st.markdown(tokens.text_html(prompt, pieces), unsafe_allow_html=True)
st.markdown(tokens.legend_html(["draft", "correct", "bonus"]), unsafe_allow_html=True)
presenter.chart(plots_gpt.tokens_per_round([len(r.emitted) for r in gen.rounds], gen.accepted_per_round, gamma),
                key="gpt-rounds")

# -- live numbers: measured against the formula ----------------------------------
alpha, cost, verify_ratio = gen.alpha, rates["cost"], rates["verify_ratio"]
check = gpt_stats_section.check(gen, gamma)  # the gap judged by its own SE; acceptance by position
a_se = f" ± {check['alpha'].se:.3f}" if check else ""
m = st.columns(3)
m[0].metric("α measured", f"{alpha:.3f}{a_se}" if alpha is not None else "—",
            help="accepted drafts / checked drafts, ± one standard error over rounds")
m[1].metric("tokens per round, measured", f"{check['tokens'].value:.2f} ± {check['tokens'].se:.2f}" if check else
            f"{rates['tokens_per_round']:.2f}", help=f"{len(gen.rounds)} rounds, {gen.target_passes} target passes; "
                                                      "± one standard error over rounds")
if check:
    m[2].metric("tokens per round, formula at the measured α", f"{check['formula_tokens']:.2f}",
                delta=f"gap {check['gap']:+.2f} = {check['gap_in_se']:+.1f} SE: {check['verdict']}", delta_color="off",
                help="(1 − α^(γ+1)) / (1 − α): what i.i.d. acceptances at the measured α would give")
m = st.columns(3)
host = costs["host"] / costs["target"]
m[0].metric("c and v measured", f"{cost:.3f} · {verify_ratio:.2f}",
            help=f"c: drafter step {costs['draft'][gamma] * 1e3:.2f} ms / target step {costs['target'] * 1e3:.2f} ms "
                 f"(plain decoding's time per character); v: verifying γ + 1 positions in one pass costs "
                 f"{verify_ratio:.2f} target steps; both timed inside this run's own rounds, where the rest of a round "
                 f"(the acceptance walk, cropping the caches) took {host:.3f} target steps")
runs_note = (f"the fastest of {result.runs} interleaved runs each; the median run was "
             f"{result.spreads['plain']:.0%} (plain) and {result.spreads['speculative']:.0%} (speculative) slower "
             "than the fastest"
             if result.runs > 1 else "one run each")
m[1].metric("speedup measured", f"{result.speedup:.2f}×",
            help=f"plain {seconds['plain'] * 1000:.0f} ms / speculative {seconds['speculative'] * 1000:.0f} ms of "
                 f"decoding (the prompt's prefill apart) for {n_tokens} characters on {pair.device}, {result.clock}: "
                 f"{runs_note}")
if check:
    def predicted(a):  # i.i.d. tokens per round at alpha, over this run's round cost
        return float(formulas.refined_speedup(formulas.expected_tokens(min(max(a, 0.0), 1.0), gamma), gamma, cost,
                                              verify_ratio))
    a, se = check["alpha"].value, check["alpha"].se
    m[2].metric("speedup, formula with this run's c and v", f"{predicted(a):.2f}× ({predicted(a - se):.2f}–"
                f"{predicted(a + se):.2f})",
                help="(1 − α^(γ+1)) / ((1 − α)(γc + v)) with the measured α, c and v (in brackets: α ± one SE). "
                     f"The textbook formula, which takes v = 1: {rates['formula_speedup']:.2f}×. The measured speedup "
                     "falls short of the prediction by the loop's own work, which the formula does not count.")
gpt_stats_section.show(check)
if gen.rounds and any(len(r.drafts) != gamma for r in gen.rounds):
    st.caption(f"This drafter proposed fewer than γ = {gamma} drafts in some rounds (prompt lookup proposes only "
               "when it finds a match): the formula assumes γ drafts every round, so read it as a rough guide.")

# -- one round, opened up -----------------------------------------------------------
st.subheader("One round, opened up")
memory.remember("gpt-round", 1, valid=lambda v: isinstance(v, int) and 1 <= v <= len(gen.rounds))  # kept across pages
j = st.slider("round", 1, len(gen.rounds), key="gpt-round") - 1 if len(gen.rounds) > 1 else 0
r = gen.rounds[j]
n = r.cache["target"]["start"]
chars = [plots_gpt.show_char(vocab[t]) for t in r.drafts]
last = plots_gpt.show_char(vocab[r.last_token])


st.markdown(f"Round {j + 1}: the cache holds **n = {n}** keys; the last token **{md(last)}** and the "
            f"drafts **{' '.join(md(c) for c in chars) or '(none)'}** are fed to the target as {words.count(len(chars) + 1, 'query', 'queries')}. "
            f"**k = {r.accepted}** accepted, then a {'bonus' if r.correction == 'bonus' else 'replacement'} "
            f"**{md(plots_gpt.show_char(vocab[r.closing_token]))}**." + (" (The context window slid before this round.)" if r.slid else ""))
queries = [f"{last} (last)"] + [f"{c} (draft {i + 1})" for i, c in enumerate(chars)]
presenter.chart(plots_gpt.mask_pair(masks.lower_right_grid(n, len(chars)), masks.upper_left_grid(n, len(chars)), n,
                                    queries), key="gpt-mask")
labels = {n: vocab[r.last_token], **{n + 1 + i: vocab[t] for i, t in enumerate(r.drafts)}}
if not any(x.slid for x in gen.rounds[:j + 1]):  # cache slot j holds sequence position j
    seq = gen.prompt_ids + gen.tokens
    labels.update({i: vocab[t] for i, t in enumerate(seq[:n])})
presenter.chart(plots_gpt.cache_slots(r.cache, len(chars), r.accepted, labels=labels), key="gpt-cache")
p_rows, q_rows = r.p_rows.tolist(), r.q_rows.tolist()
for s in range(0, max(len(r.drafts), 1), DRAFTS_PER_CHART):  # at most 3 panels a chart: titles fit a phone
    e = s + DRAFTS_PER_CHART
    fig = plots_gpt.draft_rows(vocab, p_rows[s:e], q_rows[s:e], r.drafts[s:e], r.acceptance[s:e], r.u[s:e],
                               r.accepted_flags[s:e])
    if len(r.drafts) > DRAFTS_PER_CHART:
        fig.update_layout(title_text=f"{words.span('draft', s + 1, min(e, len(r.drafts)), len(r.drafts))}: p and q, "
                                     "the draft outlined")  # one line at 420 px
    presenter.chart(fig, key="gpt-rows" if s == 0 else f"gpt-rows-{s}")
with st.expander("Which logit row of the verify pass scored which draft"):
    st.dataframe([{"row": s["row"], "query token": plots_gpt.show_char(vocab[s["query_token"]]), "position": s["query_position"],
                   "scores": s["scores"], "used": "✓" if s["used"] else ""} for s in r.scored_by()],
                 hide_index=True)

gallery_section.show(device)
