"""Exactness: speculative joint == target joint, as an equality of fractions."""
import streamlit as st

import ui
from specsim import plots

st.title("Exactness: the proof, in fractions")
st.markdown(
    "Speculative decoding claims its output has **exactly** the target's distribution p. "
    "On a toy model every probability is a fraction, so the claim is checked by enumerating "
    "every outcome of chained rounds and comparing the joint distribution of the next N tokens "
    "with sampling from p token by token, for every context and every γ.")

with st.sidebar:
    model = ui.model_picker("exact")
if model is None:
    st.stop()

c1, c2 = st.columns(2)
n_tokens = c1.number_input("N: tokens to compare", min_value=1, max_value=5, value=3, key="exact-n")
gammas = c2.slider("γ range", min_value=1, max_value=6, value=(1, 4), key="exact-gammas")
gamma_list = tuple(range(gammas[0], gammas[1] + 1))
if not ui.check_size(model, max(n_tokens, gammas[1] + 1), "This check"):
    st.stop()

checks = ui.check_exactness(model.to_json(), int(n_tokens), gamma_list)
n_exact = sum(c.exact for c in checks)
if n_exact == len(checks):
    st.success(f"speculative = target exactly for all {len(checks)} (context, γ) pairs of "
               f"model **{model.name}**, N = {n_tokens} tokens.")
else:
    st.error(f"{len(checks) - n_exact} of {len(checks)} (context, γ) pairs differ.")

summary = [{"context": " ".join(c.context), "γ": c.gamma, "sequences": c.sequences,
            "max |speculative − target|": ui.fmt(c.max_abs_difference), "equal": "✓" if c.exact else "✗"}
           for c in checks]
st.dataframe(summary, hide_index=True, height=min(38 + 35 * len(summary), 300))

st.subheader("The joint table")
t1, t2 = st.columns(2)
with t1:
    context = ui.context_picker(model, "exact-ctx")
gamma = t2.selectbox("γ", gamma_list, key="exact-table-gamma")
check = next(c for c in checks if c.context == context and c.gamma == gamma)
seqs = sorted(set(check.speculative) | set(check.target))
table = [{"next tokens": " ".join(s), "speculative": ui.fmt(check.speculative.get(s, 0)),
          "target": ui.fmt(check.target.get(s, 0)),
          "equal": "✓" if check.speculative.get(s, 0) == check.target.get(s, 0) else "✗"}
         for s in seqs]
st.dataframe(table, hide_index=True, height=min(38 + 35 * len(table), 420))

st.subheader("One round, every outcome")
o1, o2 = st.columns(2)
with o1:
    round_ctx = ui.context_picker(model, "exact-round-ctx", label="round from context")
with o2:
    round_gamma = st.number_input("γ for the round", min_value=1, max_value=6, value=3, key="exact-round-gamma")
if not ui.check_size(model, int(round_gamma) + 1, "This round"):
    st.stop()
rd = ui.round_distribution(model.to_json(), round_ctx, int(round_gamma))
info = ui.exact_vs_iid(model.to_json(), round_ctx, (int(round_gamma),))[0]
m1, m2, m3 = st.columns(3)
m1.metric("distinct outcomes", len(rd.outcomes))
m2.metric("E[tokens per round], exact", ui.fmt(rd.expected_tokens), help=f"{float(rd.expected_tokens):.4f}")
m3.metric("i.i.d. formula with α of the first position", ui.fmt(info["iid_expected_tokens"]),
          help=f"α = {ui.fmt(info['alpha'])}")
f1, f2 = st.columns([3, 2])
with f1:
    st.plotly_chart(plots.outcome_sunburst(rd.outcomes, round_ctx), key="exact-sunburst")
with f2:
    st.plotly_chart(plots.accepted_distribution(rd.accepted, info["iid_accepted"]), key="exact-k")
    st.caption("The exact K distribution differs from the i.i.d. formula because α changes with "
               "the context after each accepted draft; the output distribution is exact either way.")
