"""Residual explorer: edit p and q, see min(p, q), α, max(0, p − q) and r."""
import inspect

import streamlit as st

from parts import animations, memory, model_editor, plain, presenter, toy_setup, widgets
from sections import tryit
from specsim import rows, rule, toy
from specsim.views.glossary import label_help
from specsim.plots import charts as plots

MAX_VOCAB = 6


def examples(model) -> dict:
    """Rows to start from: the session's model after each context (when it is small enough), then the presets'."""
    seed, zeros = toy.load_model("seed"), toy.load_model("zeros")
    out = {}
    if model is not None and len(model.vocab) <= MAX_VOCAB and len(model.contexts()) <= 12:
        for c in model.contexts():
            out[f"the model “{model.name[:30]}” after “{' '.join(c)}”"] = (model.vocab, model.p(c), model.q(c))
    for c in seed.contexts():
        out[f"seed model after \"{c[0]}\""] = (seed.vocab, seed.p(c), seed.q(c))
    out["zeros model after \"x\" (q = 1/2 where p = 0)"] = (zeros.vocab, zeros.p(("x",)), zeros.q(("x",)))
    out["zeros model after \"y\" (q = 0 where p = 2/3)"] = (zeros.vocab, zeros.p(("y",)), zeros.q(("y",)))
    out["p = q (nothing is ever rejected)"] = (zeros.vocab, zeros.p(("z",)), zeros.q(("z",)))
    return out


with st.sidebar:
    model = toy_setup.pick("res", context=None).model  # the rows' context is chosen where they are promoted
EXAMPLES = examples(model)


def load_example():
    vocab, p, q = EXAMPLES[st.session_state["res-example"]]
    st.session_state["res-tokens"] = " ".join(vocab)
    st.session_state["res-p"] = ", ".join(str(x) for x in p)
    st.session_state["res-q"] = ", ".join(str(x) for x in q)


def tokens_changed():
    """A new number of tokens: restart p and q as uniform rows, so the charts never go blank."""
    if max(len(st.session_state[k]) for k in ("res-tokens", "res-p")) > widgets.MAX_TEXT:
        return  # too long: the page says so, in one line
    n = len(st.session_state["res-tokens"].split())
    if 0 < n <= MAX_VOCAB and n != len(st.session_state["res-p"].split(",")):
        st.session_state["res-p"] = st.session_state["res-q"] = ", ".join([f"1/{n}"] * n)
        st.session_state["res-reset"] = n


def promote(context) -> None:
    """The rows shown become the session's model (after ``context``; a new model for other tokens)."""
    vocab, p, q = st.session_state["res-last-good"]
    model_editor.use(model_editor.with_rows(model, vocab, p, q, context))
    st.session_state["res-promoted"] = True


first = next(iter(EXAMPLES))  # the rows of the first example, unless this session typed others
memory.remember("res-example", first, valid=lambda e: e in EXAMPLES)
for key, text in zip(("res-tokens", "res-p", "res-q"), (" ".join(EXAMPLES[first][0]), *(
        ", ".join(str(x) for x in row) for row in EXAMPLES[first][1:]))):
    memory.remember(key, text)
memory.remember("res-norm", False)

st.title("Residual explorer")
tryit.back_to_lesson()
st.markdown(
    "One position of one round. The drafter proposes x ~ **q**; the target keeps it with "
    "probability **min(1, p(x)/q(x))**; on a rejection the replacement is drawn from the "
    "**residual r = max(0, p − q) / Σ max(0, p − q)**. Type exact fractions (`3/5`) or "
    f"decimals (`0.25`), up to {MAX_VOCAB} tokens.")

with widgets.chart_first_on_phone("res"):
    left, right = st.columns([1, 2])
with left:
    st.selectbox("start from", list(EXAMPLES), key="res-example", on_change=load_example)
    tokens_text = st.text_input("tokens (separated by spaces)", key="res-tokens", on_change=tokens_changed)
    if st.session_state.pop("res-reset", None):
        st.info("The number of tokens changed, so p and q restarted as uniform rows: edit them.")
    p_text = st.text_input("p: target distribution", key="res-p", help=label_help("p: target distribution"))
    q_text = st.text_input("q: drafter distribution", key="res-q", help=label_help("q: drafter distribution"))
    normalize = st.checkbox("renormalize p and q", key="res-norm", help="when a row does not sum to 1")


with right:  # every box's size is judged before anything parses it
    capped = [widgets.capped_text(t, name) for t, name in ((tokens_text, "the tokens"), (p_text, "p"), (q_text, "q"))]
try:
    if None in capped:  # over the size limit: one error line each, nothing parsed
        raise toy.ModelError("")
    vocab, p, q = rows.parse_rows(tokens_text, p_text, q_text, normalize, max_tokens=MAX_VOCAB)
    st.session_state["res-last-good"] = (vocab, p, q)
except toy.ModelError as e:
    with right:
        if str(e):
            st.error(str(e))
    if "res-last-good" not in st.session_state:
        st.stop()
    vocab, p, q = st.session_state["res-last-good"]
    with right:
        st.caption("The charts below show the last rows that were valid.")

with left:  # the rows shown, into the session's model (every toy page then uses them)
    same = model is not None and list(vocab) == list(model.vocab)
    into = widgets.context_picker(model, "res-promote-ctx", label="after context") if same else None
    st.button("use these rows in the model", on_click=promote, args=(into,), key="res-promote",
              icon=":material/upload:",
              help="p and q after this context in the current model" if same else
                   "a new model over these tokens with these rows after every token")
    if st.session_state.pop("res-promoted", False):
        st.success("Every toy page now uses the edited model with these rows.")

a, r = rule.alpha(p, q), rule.residual(p, q)
with right:
    m1, m2, m3 = st.columns(3)
    m1.metric("α = Σ min(p, q)", widgets.fmt(a), help="acceptance rate = 1 − TV(p, q)")
    m2.metric("TV(p, q)", widgets.fmt(rule.total_variation(p, q)), help="total variation distance")
    m3.metric("P(reject) = 1 − α", widgets.fmt(rule.residual_mass(p, q)),  # a short label: never cut
              help="= Σ max(0, p − q), the residual's mass before it is normalized")
    if r is None:
        st.info("p ≤ q everywhere (so p = q): no draft is ever rejected and the residual is never used.")
    presenter.chart(plots.residual_stack(vocab, p, q), key="res-stack")

presenter.chart(plots.residual_panels(vocab, p, q), key="res-panels")

st.subheader("In motion")
st.markdown("**Play** the first chart: q slides to p, and min(p, q), the residual and α move with it. "
            "**Play** the second: seeded rounds (γ = 1) drop their emitted token into a histogram, split by "
            "where it came from (an accepted draft or a replacement from the residual); it converges to p.")
animations.show_residual(vocab, p, q)

# one row per quantity, one column per token (at most MAX_VOCAB): narrow enough for a phone
quantities = {
    "p": [widgets.fmt(x) for x in p], "q": [widgets.fmt(x) for x in q],
    "keep: min(1, p/q)": [widgets.fmt(rule.acceptance_probability(a_, b_)) if b_ > 0 else "never drafted"
                          for a_, b_ in zip(p, q)],
    "min(p, q)": [widgets.fmt(x) for x in rule.overlap(p, q)],
    "max(0, p − q)": [widgets.fmt(x) for x in rule.excess(p, q)],
    "r": [widgets.fmt(x) for x in r] if r is not None else ["—"] * len(vocab),
}
plain.table([{"": name, **dict(zip(vocab, values))} for name, values in quantities.items()])

with st.expander("The rule's source (specsim/rule.py)"):
    plain.code(inspect.getsource(rule.acceptance_probability) + "\n" + inspect.getsource(rule.residual))
