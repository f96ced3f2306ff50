"""Serving: the roofline of a served model pair (``specsim.serving``): speedup over batch × γ, the
crossover batch, the verify pass turning compute-bound as the batch grows (played in the browser), and the
tiny GPT's measured serve-bench beside the model.

Query parameters (read strictly, as ``sections.tryit`` does): ``hardware``, ``target``, ``draft``,
``dtype`` (preset names), ``context`` (1 .. 131,072), ``alpha`` (0 .. 1), ``window`` (the drafter's KV
window, 0 = all), ``devices`` (1 .. 8), ``gamma`` (the Play's γ, 1 .. 10). A parameter that is present but
not valid is named in one ``st.error`` line and its default used.
"""
import streamlit as st

from parts import memory, nav, presenter
from sections import serving_bench_section, tryit
from specsim.plots import serving as plots
from specsim.serving import measure_cpu
from specsim.views import serving_view as sv

KEY = "srv"
CPU = sv.CPU  # this server's CPU, measured once (fp32 only, memory not checked)
DEFAULT_CONTEXT = 128  # short context: the crossover is on the chart (at 1,024 there is none to see)


@st.cache_resource(max_entries=1, show_spinner="Measuring this CPU's bandwidth and matmul rate (1 s)…")
def _this_cpu():
    return measure_cpu(1.0)


@st.cache_data(max_entries=32, show_spinner=False)
def _grid(s: sv.Settings) -> dict:
    return sv.grid(s)


@st.cache_data(max_entries=32, show_spinner=False)
def _play(s: sv.Settings, gamma: int) -> dict:
    return sv.play_frames(s, gamma)


def _params() -> tuple:
    """The query's settings ({name: value} of the valid ones) and the names of the invalid ones."""
    names = sv.preset_names()
    names["hardware"].append(CPU)
    q = st.query_params
    read = {"hardware": lambda: tryit.choice("hardware", names["hardware"]),
            "target": lambda: tryit.choice("target", names["models"]),
            "draft": lambda: tryit.choice("draft", names["models"]),
            "dtype": lambda: tryit.choice("dtype", names["dtypes"]),
            "context": lambda: tryit.integer("context", 1, sv.MAX_CONTEXT),
            "alpha": lambda: tryit.number("alpha", 0.0, 1.0),
            "window": lambda: tryit.integer("window", 0, sv.MAX_CONTEXT),
            "devices": lambda: tryit.integer("devices", 1, sv.MAX_DEVICES),
            "gamma": lambda: tryit.integer("gamma", 1, max(sv.GAMMAS))}
    good, bad = {}, []
    for name, parse in read.items():
        if name in q:
            value = parse()
            if value is None:
                bad.append(name)
            else:
                good[name] = value
    return good, bad


st.title("Serving: when speculation stops paying")
tryit.back_to_lesson()
st.caption("The roofline of a served model pair: speedup at each batch and γ (settings in the sidebar); "
           "how it is computed is told below the chart.")

query, bad_params = _params()
if bad_params:
    st.error(f"Ignored query parameter(s) {', '.join(bad_params)}: not a preset name or a number in range.")
names = sv.preset_names()
names["hardware"].append(CPU)
d = sv.Settings(context=DEFAULT_CONTEXT)
for name, default, valid in (("hw", d.hardware, memory.among(names["hardware"])),
                             ("target", d.target, memory.among(names["models"])),
                             ("draft", d.draft, memory.among(names["models"])),
                             ("context", d.context, memory.within(1, sv.MAX_CONTEXT)), ("alpha", d.alpha, memory.within(0, 1)),
                             ("window", 0, memory.within(0, sv.MAX_CONTEXT)), ("devices", 1, memory.within(1, sv.MAX_DEVICES)),
                             ("gamma", 4, memory.within(1, max(sv.GAMMAS)))):
    link = query.get({"hw": "hardware"}.get(name, name))  # a link's setting wins once (parts.memory)
    memory.remember(f"{KEY}-{name}", default, link, valid)

with st.sidebar:
    hw_name = st.selectbox("hardware", names["hardware"], key=f"{KEY}-hw",
                           help="datasheet figures (`specsim serving --list`), or cpu: this server's CPU, "
                                "measured once (fp32, memory not checked)")
    target = st.selectbox("target model", names["models"], key=f"{KEY}-target")
    draft = st.selectbox("drafter", names["models"], key=f"{KEY}-draft")
    dtypes = sv.dtypes_for(hw_name)  # only the dtypes this hardware has a figure for
    memory.remember(f"{KEY}-dtype", d.dtype if d.dtype in dtypes else dtypes[0], query.get("dtype"),
                    valid=lambda x: x in dtypes)
    dtype = st.selectbox("dtype", dtypes, key=f"{KEY}-dtype")
    context = int(st.number_input("context length", 1, sv.MAX_CONTEXT, key=f"{KEY}-context",
                                  help="cached tokens per sequence"))
    alpha = st.slider("α: acceptance rate", 0.0, 1.0, step=0.01, key=f"{KEY}-alpha")
    window = int(st.number_input("drafter KV window (0 = all)", 0, sv.MAX_CONTEXT, key=f"{KEY}-window",
                                 help="a drafter that keeps only its last N cache entries (StreamingLLM-style, "
                                      "as MagicDec assumes) reads less KV at long context"))
    devices = int(st.number_input("GPUs", 1, sv.MAX_DEVICES, key=f"{KEY}-devices",
                                  help="splitting both models: ideal tensor parallelism, all-reduces not counted"))
    gamma = int(st.number_input("γ shown in the Play", 1, max(sv.GAMMAS), key=f"{KEY}-gamma"))

hw = _this_cpu() if hw_name == CPU else hw_name
settings = sv.Settings(target, draft, hw, context, alpha, dtype, window or None, devices)
try:
    if hw_name == CPU and devices > 1:
        raise ValueError("GPUs is for the GPU presets, not cpu")
    g = _grid(settings)
    play = _play(settings, gamma)
except ValueError as e:
    st.error(str(e).splitlines()[0])
    st.stop()

if hw_name == CPU:
    st.caption(hw.source)
m1, m2, m3 = st.columns(3)
m1.metric("crossover batch", "none" if g["crossover"] is None else f"{g['crossover']:,}",
          help=f"the first batch at which no γ from 1 to {max(sv.GAMMAS)} beats plain decoding "
               f"(searched up to {g['crossover_limit']:,})")
m2.metric("largest batch that fits", "unknown" if g["max_batch"] is None else f"{g['max_batch']:,}",
          help="both models' weights and every sequence's two caches in the GPUs' memory")
m3.metric("best at batch 1", f"γ = {g['best_gamma'][0]}, {g['best_speedup'][0]:.2f}×")
presenter.chart(plots.speedup_heatmap(g), key=f"{KEY}-heat", config={"displayModeBar": False})
(st.warning if g["crossover"] == 1 or g["max_batch"] == 0 else st.info)(sv.verdict(g))
if max(sv.GAMMAS) in g["best_gamma"]:
    st.caption(f"γ = {max(sv.GAMMAS)} is the largest searched: at some batch a longer chain may pay more.")
if g["crossover"] is None and context >= 512:
    st.markdown("At long context every sequence reads its own KV cache on every pass, so the plain step "
                "stays memory-bound however large the batch: verification never becomes γ + 1 times a step "
                f"(MagicDec's long-context case). Try a context of {DEFAULT_CONTEXT} to see a crossover.")
st.markdown(
    "A server decodes a **batch** of sequences together. One forward pass reads the weights once for the "
    "whole batch and each sequence's own KV cache, and does the arithmetic of every position: its time is "
    "**max(bytes / bandwidth, FLOPs / peak)** plus a fixed overhead on a GPU, which overlaps the two (on "
    "`cpu`, one core takes turns, so the two times add). At batch 1 the pass is memory-bound, "
    "so verifying γ + 1 positions costs about one step and speculation pays; as the batch grows the pass "
    "turns compute-bound, verification costs up to γ + 1 steps and the gain goes. Every figure comes from "
    "the roofline of `specsim serving` (model shapes and hardware datasheets, cited in `specsim serving --list`).")

st.subheader("Play: grow the batch")
st.markdown(f"Press **▶ Play** inside the chart: the batch doubles every two frames. The bars are the time "
            f"each pass would take **per sequence** from its bytes alone and from its FLOPs alone; the longer "
            f"bar bounds the pass (the ridge of {settings.hw.name} in {dtype} is {play['ridge']:.0f} FLOPs per byte). "
            f"The verify pass feeds γ + 1 = {gamma + 1} positions per sequence.")
presenter.chart(plots.play_animation(play), key=f"{KEY}-play", config={"displayModeBar": False})

serving_bench_section.show()

nav.page_link("speedup", "The speedup at a fixed c, on the toy models")
