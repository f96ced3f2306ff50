"""Home: a first tour (one round of the reference toy model, step by step, each idea told before it
appears), why the output is exactly p (a picture), then a map of the app and the course."""
import streamlit as st

from parts import event_text, memory, nav, presenter, tokens
from sections import home_tour, lesson_index, tryit
from specsim import sampling, toy
from specsim.plots import charts
from specsim.plots import rounds as plots_rounds
from specsim.views import course

st.title("specsim: speculative decoding, simulated exactly")
tryit.back_to_lesson()  # a lesson's link to Home (?from_lesson=N) gets its way back
MODEL, CONTEXT, GAMMA = toy.load_model("seed"), ("a",), 3
LESSON_LINKS = "home-lessons"  # the container of the core lessons' links (their labels wrap)
st.markdown("A big language model writes one token per pass, and each pass is slow. **Speculative decoding** "
            "lets a small model guess a few tokens ahead and the big one check them all in one pass: the text "
            "comes out exactly as the big model alone would write it, only sooner. A first tour, one round "
            "step by step (the toy vocabulary is a, b, c; the text so far is “a”); press **Next step**:")


def new_round():
    st.session_state["home-seed"] = st.session_state.get("home-seed", 0) + 1
    for key in ("home-event", memory.PREFIX + "home-event"):  # the new round starts at its first step
        st.session_state.pop(key, None)


memory.remember("home-seed", 0)  # the round shown survives a visit to another page
seed = st.session_state["home-seed"]
trace = sampling.trace_round(MODEL, CONTEXT, GAMMA, seed=seed)
events = trace.events()
other = home_tour.other_seed(MODEL, CONTEXT, GAMMA, seed, bonus=trace.bonus is None)
steps = len(events) + (other is not None)  # the round's events, then the other way a round ends
memory.remember("home-event", 1, valid=lambda v: isinstance(v, int) and 1 <= v <= steps)


def move(delta: int) -> None:
    st.session_state["home-event"] = min(max(st.session_state["home-event"] + delta, 1), steps)


chart, words = st.columns([3, 2])
with chart:
    bar = st.container(horizontal=True, wrap=True)  # one row, on a phone too
    bar.button("Back", on_click=move, args=(-1,), icon=":material/arrow_back:", key="home-prev",
               disabled=st.session_state["home-event"] <= 1)
    bar.button("Next step", on_click=move, args=(1,), icon=":material/arrow_forward:", key="home-next",
               type="primary", disabled=st.session_state["home-event"] >= steps)
    bar.button("New round", on_click=new_round, icon=":material/casino:", key="home-new")
    step = st.slider("step of the tour (drag back to replay)", 1, steps, key="home-event",
                     help=f"Steps 1 to {len(events)}: the round's events; "
                          + (f"step {steps}: a round that ends the other way." if other is not None else ""))
    ending = step > len(events)
    if ending:
        shown = sampling.trace_round(MODEL, CONTEXT, GAMMA, seed=other)
        figure = plots_rounds.event_figure(shown, len(shown.events()) - 2)  # its bonus or its replacement
    else:
        figure = plots_rounds.event_figure(trace, step - 1)
    presenter.chart(figure, key="home-figure")
with words:
    if ending:
        st.markdown(home_tour.other_ending(shown))
        st.markdown(tokens.stream_html(CONTEXT, [], shown, -1), unsafe_allow_html=True)
        st.caption(f"The other ending: seed {other}. Press **Back** to return to the round, or **New round**.")
    else:
        kind = events[step - 1]["kind"]
        st.markdown(home_tour.NOW[kind if kind in home_tour.NOW else "emit"])
        teaser = home_tour.teaser(events, step - 1)
        if teaser:  # the idea the next step shows, told before it appears
            st.info(teaser, icon=":material/lightbulb:")
        st.markdown(tokens.stream_html(CONTEXT, [], trace, step - 1), unsafe_allow_html=True)
        st.markdown(tokens.legend_html(["context", "pending", "draft", "rejected", "discarded", "correct", "bonus"]),
                    unsafe_allow_html=True)
        for ev in events[:step]:
            st.markdown("- " + event_text.describe_event(ev, GAMMA))
        st.caption(f"The seed model (vocabulary a, b, c), context “a”, γ = {GAMMA}, seed {seed}.")
nav.page_link("stepper", "Round stepper: more rounds, your seed")  # one line at 420 px

st.subheader("Why the output is exactly p")
p, q = MODEL.p(CONTEXT), MODEL.q(CONTEXT)
picture, why = st.columns([3, 2])
with picture:
    presenter.chart(charts.residual_stack(MODEL.vocab, p, q), key="home-exact")
with why:
    st.markdown("After “a”, each token can come out of a round's first position in two ways: **drafted and "
                "kept** (green), or **rejected, then drawn from the residual** (red). Stacked, the two ways "
                "add up to the target's own chance p (the black line) for every token:")
    for line in home_tour.two_ways(MODEL.vocab, p, q):
        st.markdown("- " + line)
    st.markdown("So the drafter changes only how fast tokens come, never which ones. Lesson 4 shows why this "
                "holds at every position of a round, and the Exactness page checks it with exact fractions for "
                "whole sequences.")
nav.page_link("exactness", "Exactness: the proof, in fractions")

st.subheader("What speculative decoding is")
st.markdown(
    "A large **target** model is slow because it emits one token per forward pass. "
    "**Speculative decoding** lets a small **drafter** guess γ tokens ahead (distribution **q**); "
    "the target then scores all of them in **one** pass (distribution **p**) and keeps each draft x "
    "with probability **min(1, p(x)/q(x))**, left to right. At the first rejection it draws a "
    "replacement from the **residual r = max(0, p − q)**, normalized; if every draft survives it adds "
    "a **bonus** token from p. The result is exactly as if the target had sampled alone, "
    "and faster when the drafter is cheap and often right (slower when it is not): here you can check both claims.")
nav.page_link("glossary", "Glossary: p, q, γ, α, c and the other symbols, one definition each")

st.subheader("Where to go")
others = [p for p in nav.PAGES if p != nav.HOME]
for row in range(0, len(others), 2):  # row by row: on a phone the columns stack in the sidebar's order
    cols = st.columns(2)
    for col, page in zip(cols, others[row:row + 2]):
        with col:
            # a page link's label is one line, cut with "…" when too long: the blurb goes below it, wrapped
            st.page_link(page.path, label=f"**{page.title}**", icon=page.icon)
            st.caption(page.blurb)

entries = lesson_index.course_entries()
if entries:
    info = [les for _, les in entries]
    st.subheader("The course")
    core = course.path_minutes(info, "core")
    st.markdown(f"Start with the **core path** ({len(course.path_lessons(info, 'core'))} lessons, "
                f"{course.minutes_text(core)} of reading); the Lessons page shows the engineer's and the "
                "researcher's paths too, and draws every figure live.")
    core = [(k, les) for k, les in enumerate(info) if course.path_of(les) == "core"]
    # a page link's label is one line cut with "…": here it wraps instead, so every title is shown whole
    st.html(f"<style>.st-key-{LESSON_LINKS} [data-testid='stPageLink'] * "
            "{white-space: normal !important; overflow: visible !important; text-overflow: clip !important}</style>")
    with st.container(key=LESSON_LINKS):
        for row in range(0, len(core), 2):  # row by row: a phone stacks them in the path's order
            for col, (k, les) in zip(st.columns(2), core[row:row + 2]):
                col.page_link("views/lessons.py", label=f"{les.number}. {les.title} · {course.minutes_text(les.minutes)}",
                              icon=":material/menu_book:", query_params={"lesson": str(k + 1)})
    st.page_link("views/lessons.py", label="All lessons and the course map", icon=":material/map:")
