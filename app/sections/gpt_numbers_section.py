"""The Tiny GPT page's numbers: what one run measured, set against the formula with the run's own c and v.

A chain gets α, tokens per round and the formula's tokens at the measured α (the gap judged by its own
standard error), c and v timed inside the run's rounds, the measured speedup and the formula's
prediction; any other scheme gets its measured α, characters per target pass and speedup only (the
formula, c and v are a chain's).
"""
import streamlit as st

from parts import plain
from sections import gpt_stats_section
from specsim import formulas
from specsim.gpt.measure.machine import describe


def machine(result) -> str:
    """The machine a measurement ran on, for a help text: its name is the system's, shown inert."""
    return plain.cell(describe(result.machine))


def show_other(gen, result, n_tokens: int, device) -> None:
    """A block, a tree or a dynamic tree: what was measured, no formula."""
    seconds, rates = result.seconds, result.rates
    m = st.columns(3)
    m[0].metric("α measured", f"{gen.alpha:.3f}" if gen.alpha is not None else "—",
                help="accepted drafts / tested drafts (a block: its coins)")
    m[1].metric("characters per target pass", f"{rates['tokens_per_pass']:.2f}",
                help=f"{len(gen.tokens)} characters in {gen.target_passes} target passes, {len(gen.rounds)} rounds")
    m[2].metric("speedup measured", f"{result.speedup:.2f}×",
                help=f"plain {seconds['plain'] * 1000:.0f} ms / speculative {seconds['speculative'] * 1000:.0f} ms of "
                     f"decoding for {n_tokens} characters on {device} ({machine(result)}), {result.clock}")
    st.caption(f"The formula (1 − α^(γ+1)) / ((1 − α)(γc + v)) is a chain's: pick chain to set it against the "
               f"measurement. The Trees page compares every scheme exactly on the toy models.")


def show_chain(gen, result, gamma: int, n_tokens: int, device) -> None:
    """A chain: measured against the formula with this run's c and v."""
    seconds, costs, rates = result.seconds, result.costs, result.rates
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
        m[2].metric("tokens per round, formula", f"{check['formula_tokens']:.2f}",  # a label that fits its column
                    delta=f"{check['gap']:+.2f} ({check['gap_in_se']:+.1f} SE): {check['verdict']}", delta_color="off",
                    help="(1 − α^(γ+1)) / (1 − α) at the measured α: what i.i.d. acceptances at that α would give. "
                         "Below it: the measured tokens per round minus this, in standard errors (the arrow "
                         "points the way of the gap's sign)")
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
                     f"decoding (the prompt's prefill apart) for {n_tokens} characters on {device} "
                     f"({machine(result)}), {result.clock}: "
                     f"{runs_note}")
    if check:
        def predicted(a):  # i.i.d. tokens per round at alpha, over this run's round cost
            return float(formulas.refined_speedup(formulas.expected_tokens(min(max(a, 0.0), 1.0), gamma), gamma, cost,
                                                  verify_ratio))
        a, se = check["alpha"].value, check["alpha"].se
        m[2].metric("speedup, formula", f"{predicted(a):.2f}× ({predicted(a - se):.2f}–{predicted(a + se):.2f})",
                    help="(1 − α^(γ+1)) / ((1 − α)(γc + v)) with this run's measured α, c and v (in brackets: α ± one "
                         "SE). "
                         f"The textbook formula, which takes v = 1: {rates['formula_speedup']:.2f}×. The measured speedup "
                         "falls short of the prediction by the loop's own work, which the formula does not count.")
    gpt_stats_section.show(check)
    if gen.rounds and any(len(r.drafts) != gamma for r in gen.rounds):
        st.caption(f"This drafter proposed fewer than γ = {gamma} drafts in some rounds (prompt lookup proposes only "
                   "when it finds a match): the formula assumes γ drafts every round, so read it as a rough guide.")

