"""Round stepper: play seeded rounds of any scheme (a chain, a block, a tree, a confidence-stopped chain, a
dynamic tree) forward (or back) one event at a time.

The stepper is ``parts.stepper`` (the Trees page uses the same one): the
rounds are ``specsim.sampling.trace_round`` calls on one
``numpy.random.default_rng(seed)`` from the chosen context, chained exactly as
``specsim.sampling.generate`` chains them, so the same seed gives the same
rounds as the library (and the CLI). Work per step is constant: the running
totals are extended, not recomputed, and the token stream shows the last
``stepper.HISTORY`` finished rounds. Query parameters:
``?scheme=block:3&context=a&seed=7&from_lesson=3`` (``?gamma=3`` is shorthand
for ``chain:3``).
"""
import streamlit as st

from parts import animations, cached, memory, presenter, scheme_picker, stepper, toy_setup, widgets
from sections import tryit
from specsim import bounds, exact
from specsim.plots import rounds as plots_rounds
from specsim.views import replay

KEY = "stepper"
MAX_GAMMA = 8
SPEEDS = (0.3, 0.6, 1.0, 2.0)  # seconds per event

st.title("Round stepper")
tryit.back_to_lesson()
st.caption("Seeded rounds, one event at a time: press **Next step** or **Play**; the settings are in the sidebar, "
           "and what a round does is told below the chart.")

with st.sidebar:
    wanted = st.query_params.get("context")  # ?context=a&scheme=chain:3 (a context the model lacks is ignored)
    every = scheme_picker.every_family("chain", "block", "confidence", "tree", "dynamic")  # a new one too
    model, context, scheme = toy_setup.pick(KEY, context="start context",
                                            context_link=tuple(wanted.split(" ")) if isinstance(wanted, str) else None,
                                            scheme=dict(default="chain:3", kinds=every, max_gamma=MAX_GAMMA))
    if model is not None:
        memory.remember(f"{KEY}-seed", 0, tryit.integer("seed", 0, 2**31 - 1), valid=memory.within(0, 2**31 - 1))
        seed = int(st.number_input("seed", 0, 2**31 - 1, key=f"{KEY}-seed"))
        memory.remember(f"{KEY}-speed", 0.6, valid=memory.among(SPEEDS))
        speed = st.select_slider("play speed (seconds per event)", SPEEDS, key=f"{KEY}-speed")
if model is None or scheme is None:
    stepper.stop(KEY)
    st.stop()


def expected_tokens(ctx, played):
    """The exact engine's E[tokens per round] of the scheme ``played`` from ``ctx``, cached by the model's state."""
    return cached.compute(exact.round_distribution, model, model.state(ctx), played,
                          work=lambda: bounds.exact_work(model, played, rounds=1)).expected_tokens


def tokens_per_pass(s: dict) -> None:
    """The running tokens per target pass of the finished rounds, against the exact expectation (drawn, empty,
    from the start: no chart appears mid-play and nothing below it moves)."""
    finished = s["player"].finished()
    if finished and not widgets.within_bounds(bounds.check_round, model, scheme):
        return
    s["totals"] = totals = replay.running_tokens_per_pass(
        model, finished, expected_tokens=expected_tokens, previous=s["totals"][:len(finished)]) if finished else []
    expected = tuple(t["expected"] for t in totals)
    if not finished:  # the first round's exact expectation alone: the chart opens with its reference
        try:
            bounds.check_round(model, scheme, limit=bounds.LIMITS.interactive_work)
            expected = (expected_tokens(tuple(context), scheme),)
        except bounds.WorkRefused:
            pass
    drawn = (tuple(t["sampled"] for t in totals), expected, scheme.depth)
    if s.get("tpp", (None,))[0] != drawn:  # built again only when a round ends, not at every event of Play
        s["tpp"] = (drawn, plots_rounds.tokens_per_pass(*drawn))
    presenter.chart(s["tpp"][1], key=f"{KEY}-tpp")
    if not finished:
        st.caption("Tokens per target pass are drawn here as rounds finish, against the exact expectation "
                   "(from the exact engine; the first round's is shown from the start).")
    else:
        st.caption(f"{len(finished)} round(s): {totals[-1]['tokens']} tokens for {totals[-1]['target_passes']} "
                   "target passes. Exact expectation from the exact engine, averaged over the contexts the rounds "
                   "started from.")


stepper.show(KEY, model, context, scheme, seed, speed, aside=tokens_per_pass)
st.markdown("Each round: the drafter proposes γ tokens from **q**, one target pass computes **p**, "
            "drafts are kept left to right while **u < min(1, p/q)**, the first rejected one is replaced "
            "by a draw from the **residual**, and a full acceptance earns a **bonus** token. Pick **block** "
            "to see the drafted chain judged as a whole, **tree** for several children per position, "
            "**confidence chain** for a chain that stops drafting when the drafter is unsure (its length varies "
            "from round to round), or **dynamic tree** for EAGLE-2's tree, grown each round from the drafter's "
            "rows (the Trees page compares them all within one drafting budget).")

if scheme.chain_gamma:  # chain:γ: the whole-round animation is a chain's
    st.subheader("The whole round, played in your browser")
    st.markdown("The same seeded rounds as above, from the start: every event at an even pace, stopping at the "
                "end of the first round (or of the last one chosen); scrub with the chart's own slider.")
    animations.show_round(model, context, scheme.chain_gamma, seed)
