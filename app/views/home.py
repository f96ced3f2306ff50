"""Home: what speculative decoding is, one round replayed, a map of the app."""
import streamlit as st

from parts import event_text, memory, nav, presenter, tokens
from sections import lesson_index, tryit
from specsim import sampling, toy
from specsim.plots import rounds as plots_rounds

st.title("specsim: speculative decoding, simulated exactly")
tryit.back_to_lesson()  # a lesson's link to Home (?from_lesson=N) gets its way back
st.markdown("A small **drafter** guesses γ tokens ahead; the big **target** checks them all in one pass and keeps "
            "each, left to right, with probability **min(1, p/q)**: the output is exactly the target's, and it comes "
            "sooner when the drafter is cheap and often right. "
            "One round, replayed:")
MODEL, CONTEXT, GAMMA = toy.load_model("seed"), ("a",), 3


def new_round():
    st.session_state["home-seed"] = st.session_state.get("home-seed", 0) + 1
    for key in ("home-event", memory.PREFIX + "home-event"):  # show the new round whole; drag back to replay it
        st.session_state.pop(key, None)


memory.remember("home-seed", 0)  # the round shown survives a visit to another page
trace = sampling.trace_round(MODEL, CONTEXT, GAMMA, seed=st.session_state["home-seed"])
events = trace.events()
memory.remember("home-event", len(events), valid=lambda v: isinstance(v, int) and 1 <= v <= len(events))
# the chart first (at 1280×720 it is on the first screen, on a phone right under the slider); the words beside it
chart, words = st.columns([3, 2])
with chart:
    c1, c2 = st.columns([5, 2], vertical_alignment="bottom")
    step = c1.slider("replay the round: drag back to event 1 and forward again", 1, len(events), key="home-event")
    c2.button("New round", on_click=new_round, icon=":material/casino:", key="home-new", width="stretch")
    presenter.chart(plots_rounds.event_figure(trace, step - 1), key="home-figure")
with words:
    st.markdown(tokens.stream_html(CONTEXT, [], trace, step - 1), unsafe_allow_html=True)
    st.markdown(tokens.legend_html(["context", "pending", "draft", "rejected", "discarded", "correct", "bonus"]),
                unsafe_allow_html=True)
    for ev in events[:step]:
        st.markdown("- " + event_text.describe_event(ev, GAMMA))
    st.caption(f"The seed model (vocabulary a, b, c), context “a”, γ = {GAMMA}, seed {st.session_state['home-seed']}.")
nav.page_link("stepper", "Round stepper: more rounds, your seed")  # one line at 420 px

st.subheader("What speculative decoding is")
st.markdown(
    "A large **target** model is slow because it emits one token per forward pass. "
    "**Speculative decoding** lets a small **drafter** guess γ tokens ahead (distribution **q**); "
    "the target then scores all of them in **one** pass (distribution **p**) and keeps each draft x "
    "with probability **min(1, p(x)/q(x))**, left to right. At the first rejection it draws a "
    "replacement from the **residual r = max(0, p − q)**, normalized; if every draft survives it adds "
    "a **bonus** token from p. The result is exactly as if the target had sampled alone, "
    "and faster when the drafter is cheap and often right (slower when it is not): here you can check both claims.")

st.subheader("Where to go")
cols = st.columns(2)
for k, page in enumerate(p for p in nav.PAGES if p != nav.HOME):
    with cols[k % 2]:
        # a page link's label is one line, cut with "…" when too long: the blurb goes below it, wrapped
        st.page_link(page.path, label=f"**{page.title}**", icon=page.icon)
        st.caption(page.blurb)

lessons = lesson_index.lessons()
if lessons:
    st.subheader("Lessons")
    cols = st.columns(2)
    for k, (path, title) in enumerate(lessons):
        with cols[k * 2 // len(lessons)]:
            st.page_link("views/lessons.py", label=title, icon=":material/menu_book:",
                         query_params={"lesson": str(k + 1)})
