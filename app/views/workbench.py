"""Rule workbench: a family of rules on sliders, the exact TV and tokens per round, live."""
import streamlit as st

from parts import cached, memory, presenter, toy_setup, widgets
from parts.tokens import md_tokens
from sections import tryit
from specsim import bounds
from specsim.labs import family
from specsim.plots import family as plots_family

st.title("Rule workbench")
tryit.back_to_lesson()
st.markdown(
    "Invent a variant of the rule without writing code. Each member of the family below runs through the "
    "exact engine on the chosen toy model: the **total variation distance** between the next N tokens it "
    "emits and the target's is an exact fraction, 0 when the variant's output is still the target's here (a 0 on one model is evidence, not proof). To check a rule "
    "you wrote yourself, run `specsim check-rule PATH.py:ClassName` (lesson 17).")
f1, f2 = st.columns(2)  # two formulas, side by side on a wide screen, one under the other on a phone
f1.latex(r"a(x) = \min\left(1, \left(\tfrac{p(x)}{q(x)}\right)^{\beta}\right)")
f2.latex(r"m = \lambda\, r + (1 - \lambda)\, p")


def _grid(model, context: tuple, gamma: int, n_tokens: int, bonus: bool, comparison: str):
    cells = len(family.BETAS) * len(family.LAMBDAS)
    return cached.compute(family.grid, model, context, gamma, n_tokens, bonus, comparison,
                          work=lambda: bounds.exact_work(model, gamma, n_tokens, rounds=2 * cells, rules=cells))


with st.sidebar:
    model, context, gamma = toy_setup.pick("wb", gamma=toy_setup.Gamma("γ: draft length", 1, 4, 2))
    if model is not None:
        memory.remember("wb-n", 2, valid=memory.within(1, 3))
        n_tokens = int(st.number_input("N: tokens compared", 1, 3, key="wb-n"))
cells = len(family.BETAS) * len(family.LAMBDAS)
if model is None or not (widgets.within_bounds(bounds.check_round, model, gamma, rounds=2 * cells)
                         and widgets.within_bounds(bounds.check_joint, model, n_tokens, (gamma,), rules=cells)):
    st.stop()

with widgets.chart_first_on_phone("wb"):  # the map beside its controls: on a projector both fit one screen
    controls, chart = st.columns([2, 3])
memory.remember("wb-beta", 1, valid=memory.among(family.BETAS))
beta = controls.select_slider("β: acceptance exponent", family.BETAS, key="wb-beta",
                              help="β = 1 is min(1, p/q); β = 0 accepts every draft; β > 1 is stricter")
memory.remember("wb-lam", family.LAMBDAS[-1], valid=memory.among(family.LAMBDAS))
lam = controls.select_slider("λ: residual weight in the replacement", family.LAMBDAS,
                             format_func=widgets.fmt, key="wb-lam",
                             help="λ = 1 draws the replacement from the residual r; λ = 0 resamples from p")
memory.remember("wb-bonus", True)
bonus = controls.toggle("bonus token after full acceptance", key="wb-bonus")
memory.remember("wb-cmp", family.COMPARISONS[0], valid=memory.among(family.COMPARISONS))
comparison = controls.radio("keep the draft when", family.COMPARISONS, horizontal=True, key="wb-cmp",
                            format_func=lambda c: f"u {c} a(x)")

rule = family.RuleFamily(beta, lam, bonus, comparison)
rows = _grid(model, context, gamma, n_tokens, bonus, comparison)
mine = next(r for r in rows if (r["beta"], r["lam"]) == (beta, lam))
correct = next(r for r in _grid(model, context, gamma, n_tokens, True, "<")
               if (r["beta"], r["lam"]) == family.EXACT_POINT)

with chart:
    st.markdown("**The whole family on this model**")
    grid = plots_family.grid_figure(rows, (beta, lam))
    # each cell shows the TV to 3 decimals (an exact fraction such as 1369/62500 does not fit a cell on a
    # phone); the hover and the metrics below keep the exact fraction
    grid.update_traces(texttemplate="%{z:.3f}", textfont_size=11, selector=dict(type="heatmap"))
    grid.update_layout(height=380, yaxis_title="β", xaxis_title="λ (residual weight)")  # short: a phone cuts long titles
    for trace, size in (("your rule", 40), ("exact point", 50)):  # rings around the cell's number, not on it
        grid.update_traces(marker_size=size, selector=lambda t, name=trace: (t.name or "").startswith(name))
    presenter.chart(grid, key="wb-grid")
    st.caption("Exact TV for every (β, λ) with the bonus and comparison chosen; green: the exact point, "
               "red: your choice (hover a cell for its exact fraction). The comparison never changes a number: "
               "P(u < a) = P(u ≤ a) = a.")

m1, m2, m3 = st.columns(3)
m1.metric(f"TV to the target (N = {n_tokens})", widgets.fmt(mine["total_variation"]),
          help=f"≈ {float(mine['total_variation']):.4f}")
gain = mine["expected_tokens"] - correct["expected_tokens"]
m2.metric("E[tokens per round]", widgets.fmt(mine["expected_tokens"]),
          delta=None if gain == 0 else f"{float(gain):+.3f} vs the real rule", delta_color="off",
          help=f"≈ {float(mine['expected_tokens']):.4f}; the real rule: {widgets.fmt(correct['expected_tokens'])}")
m3.metric("still exact?", "yes ✓" if mine["exact"] else "no ✗")

if rule.is_correct:
    st.success("β = 1, λ = 1 with the bonus: this is the real rule, the one exact point of the family.")
elif mine["exact"]:
    why = ("the real rule's acceptance and residual without the bonus token: the same distribution, fewer tokens"
           if (beta, lam) == family.EXACT_POINT else
           "on this model and context only: a 0 here is evidence, not proof; only β = 1, λ = 1 is exact on "
           "every model" + ("" if bonus else ", and without the bonus token it also emits fewer tokens"))
    st.info(f"Exact here (β = {beta}, λ = {widgets.fmt(lam)}, bonus {'on' if bonus else 'off'}): {why}.")
else:
    st.warning(f"Not exact: the next {n_tokens} token(s) after \"{md_tokens(context)}\" are "
               f"{widgets.fmt(mine['total_variation'])} away from the target's. Only β = 1 and λ = 1 "
               "are exact on every model.")

others = [p for p in family.exact_points(rows) if p != family.EXACT_POINT]
if others:
    st.info("On this model and context some other points are also exact "
            f"({', '.join(f'β = {b}, λ = {widgets.fmt(lam_)}' for b, lam_ in others)}): "
            "a counter-example needs another model. Try the zeros preset, or `specsim check-rule`.")
