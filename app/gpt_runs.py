"""The Tiny GPT page's runs: model pairs loaded once per (drafter, device, weights) and finished
runs kept per settings, for every session (``st.cache_resource``), each with a progress bar."""
from __future__ import annotations

import streamlit as st


@st.cache_resource
def store() -> dict:
    """Loaded pairs and finished runs, shared by every session (computed below, with progress bars)."""
    return {"pairs": {}, "runs": {}}


def get_pair(draft: str, device: str, weights_dir):
    """``draft`` is a shipped drafter, or a (target path, draft path) pair of your own checkpoints."""
    pairs, key = store()["pairs"], (draft, device, weights_dir)
    if key not in pairs:
        with st.status("Loading the tiny GPT pair…", expanded=True) as status:
            bar = st.progress(0.0, "importing PyTorch")
            from specsim.gpt import api, bench

            bar.progress(0.4, "reading the weights of the target and the drafter")
            if isinstance(draft, tuple):
                from specsim.gpt import hf_pair
                pair = hf_pair.load_hf_pair(*draft, device)
            else:
                pair = api.load_pair(draft, device, weights_dir)
            bar.progress(0.8, "warming both models up")
            bench.prepare(pair)
            bar.progress(1.0, "loaded")
            status.update(label="Tiny GPT pair loaded", state="complete", expanded=False)
        pairs[key] = pair
    return pairs[key]


def run(draft, device, weights_dir, prompt, n_tokens, gamma, temperature, seed):
    runs, key = store()["runs"], (draft, device, weights_dir, prompt, n_tokens, gamma, temperature, seed)
    pair = get_pair(draft, device, weights_dir)
    if key not in runs:
        from specsim.gpt import bench

        with st.status("Generating, then timing plain decoding and one step of each model…") as status:
            bar = st.progress(0.0, "starting")
            runs[key] = bench.quick_measure(pair, prompt, n_tokens, gamma, temperature, seed,
                                            progress=lambda f, text: bar.progress(f, text))
            status.update(label="Generated and timed", state="complete", expanded=False)
        while len(runs) > 16:
            runs.pop(next(iter(runs)))
    return pair, runs[key]
