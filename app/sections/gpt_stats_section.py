"""The Tiny GPT page's statistics: measured tokens per round against the formula, and acceptance by position.

The gap D = measured tokens per round − formula(α̂) is judged by its own standard error
(``specsim.formulas.measured_vs_formula``: α̂ comes from the same rounds as the mean, so most of
their noise cancels in D). The per-position table is the direct look at the i.i.d. assumption:
the acceptance rate of draft i among the rounds that judged it (``specsim.stats.position_acceptance``).
"""
from __future__ import annotations

import streamlit as st

from parts import plain
from specsim import formulas


def check(gen, gamma: int) -> dict | None:
    """``measured_vs_formula`` over the generation's rounds; None if fewer than 2 rounds or no draft was judged."""
    checked = [len(r.accepted_flags) for r in gen.rounds]  # prompt lookup may draft nothing in a round
    if len(gen.rounds) < 2 or not sum(checked):
        return None
    return formulas.measured_vs_formula(gen.accepted_per_round, gamma, checked=checked)


def position_rows(result: dict) -> list:
    """One display row per draft position: rounds that judged it, accepted, rate ± SE."""
    return [{"draft position": i, "rounds that judged it": e.n, "accepted": round(e.value * e.n),
             "rate": round(e.value, 3), "± SE": round(e.se, 3)}
            for i, e in enumerate(result["positions"], start=1)]


def show(result: dict | None) -> None:
    """The verdict on the gap, then the per-position acceptance table."""
    if not result:
        return
    noise = ("within noise: these rounds cannot tell the i.i.d. formula wrong" if result["verdict"] == "within noise"
             else "beyond noise: a sign that acceptances here are not i.i.d. (they vary with the context), "
             "though a run can also land this far out by chance")
    head = f"Measured against the formula over {result['rounds']} rounds: the gap in tokens per round is "
    if result["gap_se"]:
        ratio = result["tokens"].se / result["gap_se"]
        st.caption(head + f"{result['gap']:+.3f} ± {result['gap_se']:.3f}, {abs(result['gap_in_se']):.1f} standard "
                   f"errors of the gap, {noise}. The gap has its own standard error ({ratio:.1f}× smaller than the "
                   "measured mean's here: α comes from the same rounds, so much of their luck cancels), and it "
                   "shrinks as 1/√rounds. Rounds of one generation share their text, so these standard errors can "
                   "understate the spread (lesson 12).")
    else:  # gamma = 1 (tokens = 1 + alpha exactly) or rounds that all went the same way
        st.caption(head + f"{result['gap']:+.3f} and every round counts alike, so there is no spread to judge it "
                   "by: generate more characters or choose γ > 1 for a test.")
    with st.expander("Acceptance at each draft position: the direct look at the i.i.d. assumption"):
        plain.table(position_rows(result))
        st.caption("Draft i is judged only if drafts 1..i−1 were accepted. Under i.i.d. acceptance every "
                   "position has the same rate α; rates that differ by more than about two standard errors "
                   "show acceptance varying with the text (a round reaches a deep position only in an easy stretch).")
