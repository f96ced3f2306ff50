"""Exactness: speculative joint == target joint, as an equality of fractions."""
from functools import partial

import streamlit as st

from parts import animations, cached, memory, plain, presenter, toy_setup, widgets
from parts.tokens import md
from sections import tryit
from specsim import bounds, exact, formulas, schemes
from specsim.labs import pitfalls
from specsim.plots import charts as plots
from specsim.plots import rounds as plots_rounds

st.title("Exactness: the proof, in fractions")
tryit.back_to_lesson()
st.caption("Speculative decoding claims its output has **exactly** the target's distribution p: here every "
           "outcome of chained rounds is enumerated in exact fractions and compared (settings in the sidebar).")

with st.sidebar:
    model = toy_setup.pick("exact", context=None).model  # its contexts are chosen beside the charts
    if model is not None:
        memory.remember("exact-n", 3, valid=memory.within(1, 5))
        n_tokens = st.number_input("N: tokens to compare", min_value=1, max_value=5, key="exact-n")
        memory.remember("exact-gammas", (1, 4), valid=memory.within(1, 6))
        gammas = st.slider("γ range", min_value=1, max_value=6, key="exact-gammas")
if model is None:
    st.stop()
gamma_list = tuple(range(gammas[0], gammas[1] + 1))
if not widgets.within_bounds(bounds.check_joint, model, int(n_tokens), gamma_list, len(model.contexts())):
    st.stop()

checks = cached.compute(exact.check_exactness, model, int(n_tokens), gamma_list, work=lambda: bounds.exact_work(
    model, n_tokens=int(n_tokens), schemes=gamma_list, contexts=len(model.contexts())))
differ = [c for c in checks if not c.exact]
t1, t2 = st.columns(2)
with t1:
    context = widgets.context_picker(model, "exact-ctx")
memory.remember("exact-table-gamma", gamma_list[0], valid=lambda g: g in gamma_list)
gamma = t2.selectbox("γ", gamma_list, key="exact-table-gamma")
check = next(c for c in checks if c.context == context and c.gamma == gamma)
seqs = sorted(set(check.speculative) | set(check.target))
presenter.chart(plots_rounds.distribution_vs_target(
    seqs, check.speculative, check.target,
    f"The next {n_tokens} tokens after “{plots.shorten(' '.join(context))}”, γ = {gamma}: "
    + ("equal" if check.exact else "not equal"), names=("speculative decoding", "target alone")), key="exact-joint")
if not differ:
    st.success(f"speculative = target exactly for all {len(checks)} (context, γ) pairs of "
               f"model **{md(model.name)}**, N = {n_tokens} tokens.")
else:
    st.error(f"{len(differ)} of {len(checks)} (context, γ) pairs differ.")
st.markdown(
    "Speculative decoding claims its output has **exactly** the target's distribution p. "
    "On a toy model every probability is a fraction, so the claim is checked by enumerating "
    "every outcome of chained rounds and comparing the joint distribution of the next N tokens "
    "with sampling from p token by token, for every context and every γ. The bars above are one "
    "(context, γ) pair; the table below lists every pair, then the joint table of the pair chosen above.")

summary = [{"context": " ".join(c.context), "γ": c.gamma, "sequences": c.sequences,
            "max |Δ|": widgets.fmt(c.max_abs_difference), "equal": "✓" if c.exact else "✗"}
           for c in checks]
plain.table(summary, height=300)
st.caption("max |Δ|: the largest |speculative − target| over the sequences of N tokens.")

st.subheader("The joint table")
rows = [{"next tokens": " ".join(s), "speculative": widgets.fmt(check.speculative.get(s, 0)),
          "target": widgets.fmt(check.target.get(s, 0)),
          "equal": "✓" if check.speculative.get(s, 0) == check.target.get(s, 0) else "✗"}
         for s in seqs]
plain.table(rows, height=420)

st.subheader("One round, every outcome")
o1, o2 = st.columns(2)
with o1:
    round_ctx = widgets.context_picker(model, "exact-round-ctx", label="round from context")
with o2:
    memory.remember("exact-round-gamma", 3, valid=memory.within(1, 6))
    round_gamma = st.number_input("γ for the round", min_value=1, max_value=6, key="exact-round-gamma")
if not widgets.within_bounds(bounds.check_round, model, int(round_gamma)):
    st.stop()
round_work = partial(bounds.exact_work, model, int(round_gamma), rounds=1)
rd = cached.compute(exact.round_distribution, model, round_ctx, int(round_gamma), work=round_work)
info = cached.compute(formulas.exact_vs_iid, model, round_ctx, int(round_gamma), work=round_work)
m1, m2, m3 = st.columns(3)
m1.metric("distinct outcomes", len(rd.outcomes))
m2.metric("E[tokens per round], exact", widgets.fmt(rd.expected_tokens), help=f"{float(rd.expected_tokens):.4f}")
m3.metric("i.i.d. formula with α of the first position", widgets.fmt(info["iid_expected_tokens"]),
          help=f"α = {widgets.fmt(info['alpha'])}")
memory.remember("exact-round-table", False)
as_table = st.toggle("show the outcomes as a table", key="exact-round-table")
f1, f2 = st.columns([3, 2])
with f1:
    if as_table:
        plain.table([{"emitted tokens": " ".join(seq), "tokens": len(seq), "probability": widgets.fmt(pr),
                     "≈": f"{float(pr):.4f}"} for seq, pr in sorted(rd.outcomes.items(), key=lambda kv: -kv[1])],
                   height=420)
    else:
        presenter.chart(plots.outcome_sunburst(rd.outcomes, round_ctx), key="exact-sunburst")
        st.caption("Read the sunburst from the centre out: the inner ring is the round's first emitted "
                   "token, the next ring its second, and so on; a slice's angle is its probability. "
                   f"{plots.STOP} marks a round that stops there although a longer outcome continues. "
                   "Hover a slice for its exact probability, or switch to the table.")
with f2:
    presenter.chart(plots.accepted_distribution(rd.accepted, info["iid_accepted"]), key="exact-k")
    st.caption("Bars show short fractions as they are and long ones as decimals (hover for the exact value). "
               "The exact K distribution can differ from the i.i.d. formula because α changes with "
               "the context after each accepted draft; the output distribution is exact either way.")

st.subheader("Acceptance, sampled round by round")
st.markdown("Seeded rounds of this γ from this context: press **Play** and the histogram of K fills toward "
            "the exact P(K) above, beside the i.i.d. formula's bars, while the rate at each draft position "
            "(accepted among the drafts that reached it) settles.")
animations.show_acceptance(model, round_ctx, int(round_gamma))

st.subheader("A broken rule beside the correct one")
st.markdown(f"Pick one of the Pitfalls lab's broken rules: its joint of the next N = {n_tokens} tokens after "
            f"“{md(' '.join(context))}” with γ = {gamma} (the joint table's settings above) is enumerated exactly "
            "and set beside the distribution it should produce; the correct rule's joint equals it, as the table shows.")
broken_names = [None] + [n for n in pitfalls.PITFALLS if n != "correct"]
# opens on the first broken rule (on "none" the section was empty); "none" stays a choice
if memory.remember("exact-pitfall", broken_names[1], valid=lambda n: n in broken_names) is None:
    del st.session_state["exact-pitfall"]  # None as a widget's state reads "no choice": let the widget show "none"
broken = st.selectbox("broken rule", broken_names, key="exact-pitfall",
                      format_func=lambda n: "none" if n is None else
                      pitfalls.DESCRIPTIONS.get(n, {}).get("title") or n)
if broken is not None and widgets.within_bounds(pitfalls.check_lab, model, gamma, int(n_tokens), [broken]):
    pit, ran = pitfalls.cases(schemes.as_scheme(gamma), [broken])[0]  # the rule's own drafting mode, as the lab
    produced, wanted = cached.compute(pitfalls.joints, pit, model, context, ran, int(n_tokens),
                                      guard=partial(pitfalls.check_lab, model, ran, int(n_tokens), [broken]))
    tv = exact.joint_total_variation(produced, wanted)  # an exact Fraction on a toy model
    st.metric(f"TV(broken rule, intended), N = {n_tokens}", widgets.fmt(tv), help=f"≈ {float(tv):.4f}")
    if tv == 0:
        st.success("Exact here: this variant produces the intended distribution on this model, context and γ "
                   "(TV 0 on one model is evidence, not proof).")
    else:
        st.warning(f"Not exact: the broken rule's output is {widgets.fmt(tv)} away in total variation.")
    outcomes = sorted(set(produced) | set(wanted))
    plain.table([{"next tokens": " ".join(s), "broken rule": widgets.fmt(produced.get(s, 0)),
                 "intended (target)": widgets.fmt(wanted.get(s, 0)),
                 "equal": "✓" if produced.get(s, 0) == wanted.get(s, 0) else "✗"} for s in outcomes], height=420)
    pit = pitfalls.get(broken)
    tempered = pit.target is not pitfalls.get("correct").target  # judged against p at the lab's temperature
    st.caption(pit.description + (f" The intended distribution here is the target at temperature "
                                  f"{pitfalls.LAB_TEMPERATURE}, as in the Pitfalls lab." if tempered else ""))
