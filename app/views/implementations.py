"""Implementations: the verification rules of real systems, each checked by the exact engine on a toy model.

Query parameters, read strictly: ``system`` (an entry of the gallery), ``preset`` (a preset name),
``context`` (one of the model's contexts, its tokens separated by spaces) and ``tokens`` (N, 1 to 3).
A ``system`` or ``preset`` that is not a known name is one ``st.error`` line; a context the model does
not have and a number out of range are ignored, as on every page.
"""
from functools import partial

import streamlit as st

from parts import cached, memory, model_editor, plain, presenter, toy_setup, widgets
from sections import tryit
from specsim import toy
from specsim.labs import implementations as impl
from specsim.labs.judge import joints
from specsim.plots import rounds as plots_rounds
from specsim.plots.charts import exact_dec, shorten

NAMES = list(impl.IMPLEMENTATIONS)
BILLION = 10**9
SEEN_PRESET = "impl-preset-link"  # the ?preset= value already applied (a link wins once, then the picker)


def next_tokens(model, context: tuple, n_tokens: int, entry) -> tuple:
    """(produced, wanted): the entry's next-N joint on its scheme, and the joint it means to produce."""
    return joints(model, context, impl.scheme_for(entry), entry.rule, n_tokens, entry.target(model))


def verdict(report, proof) -> bool:
    return report.exact and proof.exact


def per_billion(hazard) -> str:
    """Expected float-edge events in a billion rounds: "-" without uniforms, 3 significant digits."""
    if hazard is None:
        return "-"
    v = float(hazard) * BILLION
    return f"{v:,.0f}" if v >= 1000 else f"{v:.3g}"


st.title("Implementations")
tryit.back_to_lesson()
st.markdown("The systems people run do not all verify drafts the textbook way. Each entry below is one real "
            "system's verification rule, written from its code or paper, run through the **exact engine**: is "
            "its output still the distribution it means to produce, how many tokens does a round give, and what "
            "does its float arithmetic risk?")

system_link, preset_link = tryit.choice("system", NAMES), tryit.choice("preset", list(toy.PRESETS))
for param, link, known in (("system", system_link, NAMES), ("preset", preset_link, list(toy.PRESETS))):
    if st.query_params.get(param) is not None and link is None:
        st.error(f"?{param}={widgets.shown_param(st.query_params.get(param))} is not known; choose one of "
                 f"{', '.join(known)}")
if preset_link is not None and st.session_state.get(SEEN_PRESET) != preset_link:
    st.session_state[model_editor.CHOICE] = st.session_state[SEEN_PRESET] = preset_link  # the link wins once

with st.sidebar:
    raw_ctx = st.query_params.get("context")
    ctx_link = tuple(raw_ctx.split()) if isinstance(raw_ctx, str) and len(raw_ctx) <= 200 else None
    model, context, _ = toy_setup.pick("impl", context_link=ctx_link)
    if model is not None:
        memory.remember("impl-n", 2, tryit.integer("tokens", 1, 3), valid=lambda n: n in (1, 2, 3))
        n_tokens = int(st.number_input("N: tokens compared", 1, 3, key="impl-n",
                                       help="the TV is over the distribution of the next N tokens"))
if model is None or not widgets.within_bounds(impl.check, model, n_tokens):
    st.stop()  # implementations.check: the same guard as `specsim implementations`

memory.remember("impl-system", NAMES[0], system_link, valid=lambda n: n in NAMES)
name = st.selectbox("system", NAMES, key="impl-system", format_func=lambda n: f"{n} — {impl.get(n).system.split(' (')[0]}")
entry = impl.get(name)
with st.spinner("checking the gallery exactly (the first time for this model)…"):
    # every entry judged on this model and context, proved on the presets (``implementations.table``)
    reports = {r.name: r for r in cached.compute(impl.table, model, context, n_tokens, models=0,
                                                 guard=partial(impl.check, model, n_tokens, None, 0))}
    proofs = {n: cached.implementation_proof(n, n_tokens) for n in NAMES}  # the cache parts.warmup fills
r, proof = reports[name], proofs[name]
exact = verdict(r, proof)

produced, wanted = cached.compute(next_tokens, model, context, n_tokens, entry)
chart, side = st.columns([3, 2])  # the chart beside its verdict: on a projector both are on the first screen
presenter.chart(plots_rounds.distribution_vs_target(
    sorted(set(produced) | set(wanted)), produced, wanted,
    f"{name}: next {n_tokens} token(s) after \"{shorten(' '.join(context))}\", target: {entry.intended}"),
    key="impl-bars", where=chart)
side.metric("exact?", "yes ✓" if exact else "no ✗",
          help=f"TV 0 here, on the presets and on {proof.models} models of the checker's random family "
               f"({proof.checks} contexts), for {r.scheme}, N = {n_tokens}; intended output: {entry.intended}")
side.metric(f"TV from {entry.intended} (N = {n_tokens})", exact_dec(r.total_variation),
          help=f"after \"{' '.join(context)}\" on {model.name}, ≈ {float(r.total_variation):.4f}")
side.metric("tokens per round", exact_dec(r.tokens_per_round),
          delta=None if r.tokens_per_round == r.textbook_tokens_per_round else
          f"{float(r.tokens_per_round - r.textbook_tokens_per_round):+.3f} vs textbook", delta_color="off",
          help=f"the textbook rule on {r.scheme}: {exact_dec(r.textbook_tokens_per_round)}")
(side.success if exact else side.warning)(
    f"**{entry.system}** on {r.scheme} after \"{shorten(' '.join(context))}\": "
    + (f"its output is exactly {entry.intended}" + (" in exact arithmetic (its floats: below)." if r.float_hazard
                                                     else ".") if exact else
       f"not exact: TV {exact_dec(r.total_variation)} here from {entry.intended}."))
st.markdown(entry.description)
st.caption(f"Source: {entry.source}")
st.markdown(f"**Uniforms:** {entry.uniforms}  \n**How a round closes:** {entry.closing}")

st.subheader("The float hazard")
if r.float_hazard is None:
    st.info("No uniform is compared with a ratio (see Uniforms above): this entry has no float edge of this kind.")
else:
    h1, h2 = st.columns(2)
    h1.metric("probability per round", f"{float(r.float_hazard):.3g}",
              help="a uniform exactly 0 lets a token with p = 0 through")
    h2.metric("per billion rounds", per_billion(r.float_hazard))
    st.markdown(f"Exactly {r.float_hazard} per round. What it emits then: {r.hazard_emits}." if r.float_hazard else
                f"{r.hazard_emits[0].upper()}{r.hazard_emits[1:]} (try the zeros preset).")
    st.caption(f"P(u = 0) per test: {entry.zero_probability}. {entry.zero_derivation}")

ce = r.counter_example or proof.counter_example
if ce is not None:
    st.subheader("The smallest counter-example")
    st.markdown(f"Model {ce.model.name!r} (vocabulary {' '.join(ce.model.vocab)}) after \"{' '.join(ce.context)}\", "
                f"γ = {ce.gamma}, N = {ce.n_tokens}: TV **{exact_dec(ce.total_variation)}**; tokens per round "
                f"{exact_dec(ce.tokens_rule)} against {exact_dec(ce.tokens_correct)} (found on {ce.found_on}).")
    plain.table([{"next tokens": " ".join(t), "target": widgets.fmt(a), "this rule": widgets.fmt(b)}
                for t, a, b in ce.differences], height=420)
    with st.expander("The counter-example's model (JSON)"):
        plain.code(ce.model.to_json())

st.subheader("The whole gallery on this model")
plain.table([{"entry": n, "verdict": "exact" if verdict(x, proofs[n]) else "NOT exact",
               "TV": widgets.fmt(x.total_variation), "tokens/round": f"{float(x.tokens_per_round):.3f}",
               "textbook": f"{float(x.textbook_tokens_per_round):.3f}",
               "hazard/round": "-" if x.float_hazard is None else f"{float(x.float_hazard):.3g}",
               "per 10⁹ rounds": per_billion(x.float_hazard), "scheme": x.scheme,
               "system": impl.get(n).system.split(" (")[0]} for n, x in reports.items()],
           height=600)
st.caption(f"Each verdict: TV 0 at this context, on the presets and on {impl.FAMILY_MODELS} random models of the "
           "checker's family. The same table: `specsim implementations --preset NAME`.")
