"""Round stepper: play seeded rounds forward one event at a time.

The rounds are ``specsim.replay.next_round`` calls on one
``numpy.random.default_rng(seed)`` from the chosen context, which chains them
exactly as ``specsim.sampling.generate`` does, so the same seed gives the
same rounds as the library (and the CLI).
"""
import streamlit as st

import cached
import tokens
import widgets
from specsim import bounds, plots_rounds, replay, sampling

KEY = "stepper"

st.title("Round stepper")
st.markdown("Each round: the drafter proposes γ tokens from **q**, one target pass computes **p**, "
            "drafts are kept left to right while **u < min(1, p/q)**, the first rejected one is replaced "
            "by a draw from the **residual**, and a full acceptance earns a **bonus** token.")

with st.sidebar:
    model = widgets.model_picker(KEY)
    if model is not None:
        context = widgets.context_picker(model, f"{KEY}-ctx", label="start context")
        gamma = int(st.number_input("γ: draft length", 1, 8, 3, key=f"{KEY}-gamma"))
        seed = int(st.number_input("seed", 0, 2**31 - 1, 0, key=f"{KEY}-seed"))
        speed = st.select_slider("play speed (seconds per event)", [0.3, 0.6, 1.0, 2.0], 0.6, key=f"{KEY}-speed")
if model is None:
    st.stop()

settings = (model.to_json(), context, gamma, seed)


def fresh() -> dict:
    return {"settings": settings, "rng": sampling.make_rng(seed), "rounds": [], "round": 0, "event": 0}


def state() -> dict:
    s = st.session_state.get(KEY)
    if s is None or s["settings"] != settings:
        s = st.session_state[KEY] = fresh()
        s["playing"] = False
    while len(s["rounds"]) <= s["round"]:  # extend the chain lazily, one round per block of uniforms
        s["rounds"].append(replay.next_round(model, context, s["rounds"], gamma, s["rng"]))
    return s


def expected_tokens(ctx, g):
    """The exact engine's E[tokens per round] from ``ctx``, cached by the model's state of it."""
    return cached.expected_tokens(settings[0], model.state(ctx), g)


def next_step():
    s = state()
    s["clicked"] = True
    if s["event"] + 1 < len(s["rounds"][s["round"]].events()):
        s["event"] += 1
    else:
        s["round"], s["event"] = s["round"] + 1, 0
        state()


def next_round():
    s = state()
    s["clicked"] = True
    last = len(s["rounds"][s["round"]].events()) - 1
    if s["event"] == last:
        s["round"] += 1
        state()
    s["event"] = len(s["rounds"][s["round"]].events()) - 1


def reset():
    playing = st.session_state.get(KEY, {}).get("playing", False)
    st.session_state[KEY] = fresh()
    st.session_state[KEY].update(clicked=True, playing=playing)


def play_pause():
    s = state()
    s["playing"] = not s["playing"]
    s["clicked"] = s["rerun_app"] = True


@st.fragment(run_every=speed if state().get("playing") else None)
def stepper():
    s = state()
    if s.pop("rerun_app", False):
        st.rerun(scope="app")  # play/pause changes the fragment's timer
    if s.get("playing") and not s.pop("clicked", False):
        next_step()
        s.pop("clicked", None)
    s.pop("clicked", None)
    b1, b2, b3, b4 = st.columns(4)
    b1.button("Next step", on_click=next_step, icon=":material/skip_next:", key=f"{KEY}-next", width="stretch")
    b2.button("Next round", on_click=next_round, icon=":material/fast_forward:", key=f"{KEY}-round", width="stretch")
    b3.button("Pause" if s.get("playing") else "Play", on_click=play_pause, key=f"{KEY}-play", width="stretch",
              icon=":material/pause:" if s.get("playing") else ":material/play_arrow:")
    b4.button("Reset", on_click=reset, icon=":material/restart_alt:", key=f"{KEY}-reset", width="stretch")

    trace, e = s["rounds"][s["round"]], s["event"]
    events = trace.events()
    st.markdown(f"round {s['round'] + 1} · event {e + 1} of {len(events)} · "
                + tokens.describe_event(events[e], gamma))
    st.markdown(tokens.stream_html(context, s["rounds"][:s["round"]], trace, e), unsafe_allow_html=True)
    st.markdown(tokens.legend_html(["context", "draft", "correct", "bonus", "pending", "rejected", "discarded"]),
                unsafe_allow_html=True)
    left, right = st.columns([3, 2])
    with left:
        st.plotly_chart(plots_rounds.event_figure(trace, e), key=f"{KEY}-event")
    finished = s["rounds"][:s["round"] + (1 if e == len(events) - 1 else 0)]
    with right:
        if finished and widgets.within_bounds(bounds.check_round, model, gamma):
            totals = replay.running_tokens_per_pass(model, finished, expected_tokens=expected_tokens)
            st.plotly_chart(plots_rounds.tokens_per_pass([t["sampled"] for t in totals],
                                                         [t["expected"] for t in totals], gamma), key=f"{KEY}-tpp")
            st.caption(f"{len(finished)} round(s): {totals[-1]['tokens']} tokens for "
                       f"{totals[-1]['target_passes']} target passes. Exact expectation from the exact engine, "
                       "averaged over the contexts the rounds started from.")
        elif not finished:
            st.info("Tokens per target pass appear here once the first round is finished.")


stepper()
