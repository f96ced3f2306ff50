"""The Serving page's last part: the tiny GPT's batched decoding measured on this CPU (``specsim gpt
serve-bench``, run here once per server or uploaded as JSON) beside the calibrated roofline."""
import os

import streamlit as st

from parts import gpt_runs, presenter, widgets
from specsim.plots import serving as plots
from specsim.views import serving_view as sv

KEY = "srv"
BENCH = dict(batches=(1, 2, 4, 8, 16), gammas=(0, 2, 4), n_tokens=16, repeats=1, threads=(1,), seed=0)


def show() -> None:
    st.subheader("The tiny GPT, measured")
    st.markdown("`specsim gpt serve-bench` decodes batches of the shipped tiny pair on this CPU, plain and "
                "speculative, and prints the roofline's prediction (roofs measured, overhead calibrated at batch "
                "1) beside each measurement. Run a small one here (batches 1 to 16, γ 2 and 4, 16 tokens, one "
                "repeat, one thread: ten to thirty seconds, one at a time on this server, which keeps the result for every visitor), or upload the JSON of "
                "`specsim gpt serve-bench --json`. Timings are noisy on a shared machine.")
    b1, b2 = st.columns(2)
    run_it = b1.button("Run a small serve-bench", key=f"{KEY}-bench")
    upload = b2.file_uploader("or a serve-bench JSON", type=["json"], key=f"{KEY}-upload",
                              max_upload_size=sv.MAX_BENCH_BYTES // 2**20,  # the uploader's own limit matches read_bench's
                              help=f"at most {sv.MAX_BENCH_BYTES:,} bytes")
    points = result = None
    if upload is not None:
        try:
            points = sv.read_bench(upload.getvalue())
        except ValueError as e:
            st.error(f"Cannot read that file: {widgets.one_line(e, 200)}")
    elif run_it:
        weights_dir = os.environ.get("SPECSIM_WEIGHTS") or None
        try:
            pair = gpt_runs.get_pair(gpt_runs.Choice("distilled", "cpu", weights_dir))

            def bench():
                from specsim.gpt.measure import serve_bench
                with st.spinner("Timing batched plain and speculative decoding…"):
                    return serve_bench.serve_bench(pair, **BENCH)

            result = gpt_runs.store()["runs"].get_or_compute(("serve-bench", weights_dir, tuple(BENCH.items())), bench,
                                                             heavy=True, on_wait=gpt_runs.queued)
            st.session_state[f"{KEY}-result"] = result  # this session keeps its run (a few kB) across reruns
        except (OSError, ValueError, RuntimeError) as e:
            st.error(f"Cannot run the tiny GPT: {str(e).splitlines()[0][:200]}")
    else:
        result = st.session_state.get(f"{KEY}-result")
    if result is not None:
        try:
            points = sv.measured(result)
        except ValueError as e:
            st.error(str(e))
    if points is not None:
        presenter.chart(plots.measured_chart(points), key=f"{KEY}-measured", config={"displayModeBar": False})
        st.caption(f"context {points['context']:,} tokens per sequence; markers measured (median speedup over "
                   "the repeats), lines the calibrated roofline. The model's v assumes a pass as fast as the "
                   "roofs allow; small batches on a CPU pay fixed costs the roofline folds into one overhead.")
