"""Tiny GPT: real speculative decoding with a GPT pair, its mask and its KV cache opened up.

The only page that imports torch (through ``specsim.gpt.api``), after its title, under a spinner: a
fresh server's first visit sees the page and what it waits for at once. The model pair loads once per
(drafter, device) into a ``st.cache_resource`` store, with a progress bar. Set ``SPECSIM_WEIGHTS`` to a
directory to use other weights than the shipped ones. "Your own model pair" runs two Hugging Face
causal-LM checkpoints (``specsim.gpt.hf.pair``) through the same decoder: off unless the operator sets
``SPECSIM_PAIRS_DIR``, and then only checkpoints listed from that directory (``own_pairs.own_choices``).
Every failure at the load boundary is one ``st.error`` line.

Every setting takes effect when it changes (a run is computed once per settings for every visitor and
kept, ``parts.gpt_runs``); only the inputs of the chosen verification are shown. The scheme comes from the
shared picker (``parts.scheme_picker``, ``?scheme=`` too): every registered family the tiny GPT lays out.
"""
import os

import streamlit as st

from parts import gpt_runs, memory, own_pairs, presenter, scheme_picker, tokens, widgets
from sections import tryit

SHIPPED = "(the shipped pair)"
md = tokens.md  # a character or name safe inside Markdown text


st.title("Tiny GPT")
tryit.back_to_lesson()
st.caption("A character-level GPT **target** and a much smaller **drafter** run real speculative decoding "
           "in PyTorch (settings in the sidebar: each takes effect as it changes). The drafter proposes γ "
           "characters, the target verifies them in one pass through a **lower-right** causal mask over its KV "
           "cache, and both caches are **rolled back** to the accepted prefix.")
with st.spinner("Loading PyTorch and the tiny GPT page…"):  # seconds on a fresh server: shown, not blank
    from sections import gallery_section, gpt_numbers_section, gpt_round_section, gpt_text_section
    from specsim import schemes
    from specsim.gpt import specs
    from specsim.gpt.rounds import ROUNDS
    from specsim.plots import gpt as plots_gpt

# every registered family whose round the tiny GPT lays out (``scheme.gpt_round``): a family registered later
# with a GPT layout is offered here with no edit
FAMILIES = tuple(k for k, cls in schemes.families().items() if cls.gpt_round in ROUNDS)
CHOICES = {"gpt-draft": list(specs.gallery()), "gpt-device": ["auto", "cpu", "cuda"],
           "gpt-dtype": ["float32", "bfloat16"]}
RANGES = {"gpt-n": (8, 400), "gpt-temp": (0.0, 2.0), "gpt-seed": (0, 2**31 - 1)}
for key in ("gpt-prompt", *CHOICES, *RANGES):  # the settings survive a visit to another page (parts.memory)
    valid = memory.among(CHOICES[key]) if key in CHOICES else memory.within(*RANGES[key]) if key in RANGES else None
    memory.remember(key, gpt_runs.DEFAULTS[key], valid=valid)


def most(cls, param) -> int:
    """The most a scheme's whole-number setting takes on this page (the picker's ``top``): a budget of nodes
    16, any other (γ, depth, top-k, a confidence chain's most drafts) 8, the ranges the page always had."""
    return 16 if param.key == "nodes" else 8


with st.sidebar:  # the generated text and its chart fill the first screen
    # the scheme (``?scheme=`` or ``?gamma=`` too): the shared picker, its keys those this page's links always had
    scheme = scheme_picker.scheme_picker("gpt", None, f"chain:{gpt_runs.DEFAULTS['gpt-gamma']}", FAMILIES,
                                         top=most, keys={"nodes": "budget"})
    draft = st.selectbox("drafter", CHOICES["gpt-draft"], key="gpt-draft", help=specs.page_help())  # the registry's
    prompt = st.text_area("prompt", key="gpt-prompt", height=80,
                          help="newline and printable ASCII; Ctrl+Enter (or leaving the box) applies it")
    n_tokens = st.slider("characters to generate", 8, 400, key="gpt-n",
                         help="more characters give more rounds and smaller standard errors")
    temperature = st.number_input("temperature (0 = greedy)", 0.0, 2.0, step=0.1, key="gpt-temp")
    seed = int(st.number_input("seed", 0, 2**31 - 1, key="gpt-seed"))
    device = st.radio("device", ["auto", "cpu", "cuda"], key="gpt-device", horizontal=True)
    dtype = st.radio("target's number format", ["float32", "bfloat16"], key="gpt-dtype", horizontal=True,
                     help="bfloat16: the target's weights and its cached keys and values in bfloat16 (plain "
                          "decoding too), the drafter in float32. On a CPU with AVX-512 BF16 or AMX a verify pass over "
                          "γ + 1 positions then costs less than in float32 (a smaller v); greedy text may part "
                          "from float32's at near-ties (lesson 16)")
prompt = widgets.capped_text(prompt, "the prompt")
if scheme is None:  # its one st.error line is in the sidebar
    st.stop()

with st.sidebar.expander("Your own model pair"):
    own_target = own_draft = None
    own_names = own_pairs.own_choices()
    if own_pairs.pairs_dir() is None:
        st.caption("Off on this server. Whoever runs the app can offer Hugging Face causal-LM checkpoints by "
                   f"setting `{own_pairs.PAIRS_ENV}` to a directory of checkpoint directories; visitors then pick "
                   "a target and a draft from that list (nothing else on the server is reachable).")
    elif not own_names:
        st.caption("The server's checkpoint directory holds no Hugging Face checkpoint (no subdirectory with a "
                   "config.json).")
    else:
        st.caption("Two Hugging Face causal-LM checkpoints offered by this server that share a tokenizer (for "
                   "example a gpt2 and a distilgpt2, or `specsim gpt export-hf` output). Nothing is downloaded. "
                   "Leave both on the shipped pair to use it; when set, the drafter choice above is ignored.")
        options = [SHIPPED] + own_names
        own_target = st.selectbox("target checkpoint", options, key="gpt-own-target")
        own_draft = st.selectbox("draft checkpoint", options, key="gpt-own-draft")
        own_target, own_draft = (None if x == SHIPPED else x for x in (own_target, own_draft))

if prompt is None:
    st.stop()
weights_dir = os.environ.get("SPECSIM_WEIGHTS") or None
if own_target or own_draft:
    if not (own_target and own_draft):
        st.error("Your own model pair needs both checkpoints: the target's and the draft's.")
        st.stop()
    draft = tuple(own_pairs.own_path(x) for x in (own_target, own_draft))
    if None in draft:  # a name that left the server's list since this session picked it
        st.error("That checkpoint is no longer offered by this server: pick another.")
        st.stop()
    st.info(f"Running your own pair: target **{md(own_target)}**, draft **{md(own_draft)}**.")


def at_the_boundary(compute, placeholder=None):
    """``compute()``, or one ``st.error`` line (``placeholder`` emptied) and a stop: a bad prompt, device or
    checkpoint, never a traceback."""
    try:
        return compute()
    except Exception as e:  # noqa: BLE001  the load boundary
        if placeholder is not None:
            placeholder.empty()
        message = widgets.one_line(e).replace("use --device cpu or auto",
                                              'choose device "cpu" or "auto" in the settings')
        root = own_pairs.pairs_dir()
        if root:
            message = message.replace(root + os.sep, "")  # name the checkpoint, not where the server keeps it
        st.error(f"Cannot run the tiny GPT: {message}")
        st.stop()


# the generation first (text and chart on the screen), then the timing that the numbers below need; the chart's
# place holds a placeholder meanwhile, so a new browser loads its chart library while the models load
text_slot, chart_slot = st.empty(), st.empty()
chart_slot.plotly_chart(plots_gpt.placeholder("generating…"), key="gpt-rounds-placeholder")
choice = gpt_runs.Choice(draft, device, weights_dir, dtype)
pair, gen = at_the_boundary(lambda: gpt_runs.generate(choice, prompt, n_tokens, scheme.name, temperature, seed),
                            chart_slot)
vocab = pair.vocab
with text_slot.container():
    gpt_text_section.show(prompt, gen, vocab)
presenter.chart(plots_gpt.tokens_per_round([len(r.emitted) for r in gen.rounds], gen.accepted_per_round,
                                          scheme.depth), key="gpt-rounds", where=chart_slot)
_, result = at_the_boundary(lambda: gpt_runs.run(choice, prompt, n_tokens, scheme.name, temperature, seed))
gen = result.generation
if scheme.chain_gamma is None:  # the i.i.d. formula, c and v are chain:γ's: another scheme's numbers stand alone
    gpt_numbers_section.show_other(gen, result, n_tokens, pair.device)
    gpt_round_section.show(gen, vocab)
    gallery_section.show(device)
    st.stop()
gpt_numbers_section.show_chain(gen, result, scheme.chain_gamma, n_tokens, pair.device)
gpt_round_section.show(gen, vocab)
gallery_section.show(device)
