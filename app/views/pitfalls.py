"""Pitfalls lab: a broken rule against the target, with the exact total variation."""
import inspect
from functools import partial

import streamlit as st

from parts import cached, memory, plain, presenter, toy_setup, widgets
from sections import tryit
from specsim.labs import pitfalls
from specsim.plots import charts as plots
from specsim.plots import rounds as plots_rounds
from specsim.rule import RoundRule


def title(name: str) -> str:
    """The rule's readable title from pitfalls.json (its slug when a new rule has none yet)."""
    return pitfalls.DESCRIPTIONS.get(name, {}).get("title") or name

st.title("Pitfalls lab")
tryit.back_to_lesson()
st.markdown("Each broken rule is a variant of the same round, run through the exact engine. The damage is "
            "the **total variation distance** between the distribution of the next N tokens it produces and "
            "the one it should produce: an exact fraction, 0 when the output is still the intended one on this model and context.")

with st.sidebar:
    model, context, scheme = toy_setup.pick("pit", scheme=dict(default="chain:2", kinds=pitfalls.families(), max_gamma=4))
    if model is not None:
        memory.remember("pit-n", 2, valid=memory.within(1, 3))
        n_tokens = int(st.number_input("N: tokens compared", 1, 3, key="pit-n"))
if model is None or scheme is None or not widgets.within_bounds(pitfalls.check_lab, model, scheme, n_tokens):
    st.stop()  # pitfalls.check_lab: the same guard as `specsim pitfalls`

table = pitfalls.applicable(scheme)  # every chain rule on a chain; the tree rules on a tree
names = [n for n in table if n != "correct"] + ["correct"]
wanted = st.query_params.get("rule")  # ?rule=<a known rule name>; anything else is ignored
memory.remember("pit-rule", names[0], wanted if wanted in names else None, valid=lambda n: n in names)
with widgets.chart_first_on_phone("pit"):  # the chart beside the rule and its numbers: on a projector all fit
    controls, chart = st.columns([1, 2])  # one screen
name = controls.selectbox("rule", names, key="pit-rule", format_func=title,
                          help="every broken rule for this scheme, and the correct one to compare")
pit, ran = pitfalls.cases(scheme, [name])[0]  # ``ran``: the scheme as the lab runs this rule (its drafting mode)
lab = {r.name: r for r in cached.compute(pitfalls.run_lab, model, context, scheme, n_tokens,
                                         guard=partial(pitfalls.check_lab, model, scheme, n_tokens))}
result, correct = lab[name], lab["correct"]

controls.metric(f"TV to the intended distribution (N = {n_tokens})", plots.exact_dec(result.total_variation),
                help=f"≈ {float(result.total_variation):.4f}")
controls.metric("E[tokens per round]", plots.exact_dec(result.expected_tokens),
                delta=None if result.expected_tokens == correct.expected_tokens else
                f"{float(result.expected_tokens - correct.expected_tokens):+.3f} vs the correct rule", delta_color="off", help=f"≈ {float(result.expected_tokens):.4f}")
controls.metric("still exact?", "yes ✓" if result.exact else "no ✗")

produced, wanted = cached.compute(pitfalls.joints, pit, model, context, ran, n_tokens,
                                  guard=partial(pitfalls.check_lab, model, ran, n_tokens, [name]))
outcomes = sorted(set(produced) | set(wanted))
presenter.chart(plots_rounds.distribution_vs_target(
    outcomes, produced, wanted,
    f"{title(name)}: next {n_tokens} token(s) after \"{plots.shorten(' '.join(context))}\", {ran.name}, "
    f"TV = {plots.exact_dec(result.total_variation)}"),
    key="pit-bars", where=chart)

(st.success if result.exact else st.warning)(pit.description)  # below the chart: on a projector the chart fits
source_text = pitfalls.DESCRIPTIONS.get(name, {}).get("source_text")
if source_text:
    st.caption(f"Where this comes from: {source_text}")

with st.expander("What the rule changes (its source)"):
    cls = type(pit.rule)
    if cls is RoundRule:
        st.markdown("The rule itself is the correct one; this pitfall changes what p or q the round is given.")
    plain.code(inspect.getsource(cls))

st.subheader("Every rule on this model")
plain.table([{"rule": title(r.name), "exact": "✓" if r.exact else "✗", "TV": widgets.fmt(r.total_variation),
             "TV ≈": f"{float(r.total_variation):.4f}", "E[tokens per round]": f"{float(r.expected_tokens):.3f}"}
            for r in lab.values()])
