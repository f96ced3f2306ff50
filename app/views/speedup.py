"""Speedup: (1 − α^(γ+1)) / ((1 − α)(γc + 1)) against γ, the best γ over α and c."""
from functools import partial

import streamlit as st

from parts import animations, cached, memory, plain, presenter, toy_setup, widgets
from sections import tryit
from specsim import bounds, formulas
from specsim.views.glossary import label_help
from specsim.plots import charts as plots


@st.cache_resource(max_entries=64, show_spinner=False)
def best_gamma_map(max_gamma: int, mark: tuple):
    """The two maps of the best γ over α and c, marked at ``mark``: built once per server and
    shared, read-only, by every session (plotly validates both grids each time it builds them)."""
    grid = cached.best_gamma_grid(max_gamma)  # the cache parts.warmup fills
    return plots.best_gamma_heatmaps(grid["alphas"], grid["costs"], grid["best_gamma"], grid["best_speedup"],
                                     mark=mark, max_gamma=max_gamma)


st.title("Speedup and the best γ")
tryit.back_to_lesson()
st.markdown(
    "A round drafts γ tokens (each costing **c** target steps) and verifies them in one target pass. "
    "If every draft is accepted independently with the same rate **α**, a round emits "
    "(1 − α^(γ+1)) / (1 − α) tokens on average; if the verification pass costs one target step, "
    "the round costs γc + 1 target steps, so against plain "
    "decoding the speedup is **(1 − α^(γ+1)) / ((1 − α)(γc + 1))**.")

with widgets.chart_first_on_phone("sp"):  # the curve beside its sliders: on a projector both fit one screen
    controls, chart = st.columns([1, 2])
a0, c0 = tryit.number("alpha", 0.0, 0.99), tryit.number("c", 0.0, float(max(formulas.GRID_COSTS)))  # ?alpha=&c=
memory.remember("sp-alpha", 0.8, a0, valid=memory.within(0.0, 0.99))
alpha_f = controls.slider("α: acceptance rate", 0.0, 0.99, step=0.01, key="sp-alpha",
                          help=label_help("α: acceptance rate"))
C_MAX = float(max(formulas.GRID_COSTS))  # the slider stops where the heatmaps stop
memory.remember("sp-cost", 0.05, c0, valid=memory.within(0.0, C_MAX))
cost_f = controls.slider("c: drafter step cost / target step", 0.0, C_MAX, step=0.01, key="sp-cost",
                         help=label_help("c: drafter step cost / target step"))
memory.remember("sp-max", formulas.DEFAULT_MAX_GAMMA, valid=memory.within(1, 64))
max_gamma = int(controls.number_input("largest γ searched", 1, 64, key="sp-max",
                                     help=label_help("largest γ searched")))
alpha, cost = widgets.exact_decimal(alpha_f, "α"), widgets.exact_decimal(cost_f, "c")

curve = cached.compute(formulas.speedup_curve, alpha, cost, max_gamma, max_entries=256, ttl=None)
verdict = formulas.best_gamma_verdict(alpha, cost, max_gamma)
best_g, best_s, kind = verdict["gamma"], verdict["speedup"], verdict["kind"]
with chart:
    presenter.chart(plots.speedup_curve(curve["gammas"], curve["speedups"],
                                        (best_g, best_s) if kind in ("speculate", "limit-reached") else None,
                                        f"Speedup against γ for α = {alpha_f:.2f}, c = {cost_f:.2f}"),
                    key="sp-curve")
m1, m2 = controls.columns(2)  # under the sliders, beside the curve
m1.metric("best γ", {"don't speculate": "none", "tie": "any"}.get(kind, f"{best_g}"),
          help="none: plain decoding is faster; any: every γ ties with plain decoding")
m2.metric("speedup at the best γ", f"{float(best_s):.2f}×")
controls.metric("E[tokens per round] at the best γ", f"{float(formulas.expected_tokens(alpha, best_g)):.3f}")
{"speculate": st.success, "limit-reached": st.warning, "don't speculate": st.error, "tie": st.info}[kind](
    verdict["message"])

st.subheader("Watch the curve move")
st.markdown("Press **Play** inside a chart: the first sweeps α at your c, the second sweeps c at your α. "
            "The best-γ marker travels along the curve and the cursor moves on the map of the best γ; "
            "drag the chart's own slider to any value, instantly.")
animations.show_speedup(alpha, cost)

st.subheader("Best γ over α and c")
presenter.chart(best_gamma_map(max_gamma, (alpha_f, cost_f)), key="sp-heat")

st.subheader("Two reference tables: the formula at c = 1/20 and c = 1/5")
for table in formulas.speedup_tables(max_gamma=max_gamma):
    st.markdown(f"**c = {table['cost']}** ({float(table['cost']):.2f})")
    rows = []
    for row in table["rows"]:
        cells = {"α": f"{float(row['alpha']):.1f}", "best γ": row["best_gamma"],  # the answer first: on a phone
                 "best speedup": f"{float(row['best_speedup']):.2f}×"}            # the γ columns scroll
        cells.update({f"γ = {g}": f"{float(s):.2f}×" for g, s in row["speedups"].items()})
        rows.append(cells)
    plain.table(rows)

st.subheader("A real (non-i.i.d.) toy model against the formula")
st.markdown("In a toy model α depends on the context, so acceptances are not i.i.d. The exact engine "
            "gives the true expected tokens per round; the formula uses α of the first position.")
model, context, top = toy_setup.pick("sp", where=st.columns(3), gamma=toy_setup.Gamma(
    "γ up to", 1, 6, 5, name="top", help=label_help("γ up to")))
if model is None:
    st.stop()
if not widgets.within_bounds(bounds.check_round, model, top):
    st.stop()
results = [cached.compute(formulas.exact_vs_iid, model, context, g, work=partial(bounds.exact_work, model, g, rounds=1))
           for g in range(1, top + 1)]
presenter.chart(plots.expected_tokens_curve(
    [r["gamma"] for r in results], [r["expected_tokens"] for r in results],
    [r["iid_expected_tokens"] for r in results],
    f"Expected tokens per round from \"{' '.join(context)}\" (α = {widgets.fmt(results[0]['alpha'])})"),
    key="sp-exact")
plain.table([{"γ": r["gamma"],
               "speedup, exact": f"{float(formulas.exact_speedup(r['expected_tokens'], r['gamma'], cost)):.3f}×",
               "speedup, formula": f"{float(formulas.speedup(r['alpha'], r['gamma'], cost)):.3f}×",
               "exact E[tokens]": widgets.fmt(r["expected_tokens"]),
               "i.i.d. E[tokens]": widgets.fmt(r["iid_expected_tokens"])}
              for r in results])
st.caption(f"Speedups at your c = {cost_f:.2f}; E[tokens] as exact fractions.")
