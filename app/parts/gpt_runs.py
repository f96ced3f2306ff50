"""The Tiny GPT page's runs: model pairs loaded once per choice and finished runs kept per settings, for
every session, each computed once (``heavy.Store``) and at most ``heavy.HEAVY_SLOTS`` at a time.

Bounds: at most ``MAX_PAIRS`` loaded pairs (a shipped pair is ~20 MB, a gpt2-sized pair of your
own ~0.8 GB) and ``MAX_RUNS`` finished runs (a run keeps its rounds: well under 1 MB), least
recently used evicted first. A pair of your own is keyed by its checkpoints' resolved paths, so
one checkpoint is loaded once however it is reached.

"Your own model pair": ``parts.own_pairs`` (off unless the operator sets ``SPECSIM_PAIRS_DIR``).
"""
from __future__ import annotations

import os
from typing import NamedTuple

import streamlit as st

from parts import heavy
from specsim.gpt.specs import gallery

MAX_PAIRS, MAX_RUNS = 3, 16
DEFAULTS = {"gpt-prompt": "def ", "gpt-n": 80, "gpt-gamma": 4, "gpt-temp": 1.0, "gpt-draft": gallery()[0],
            "gpt-device": "auto", "gpt-seed": 0, "gpt-kind": "chain", "gpt-shape": "2,2,1", "gpt-drafts": "iid",
            "gpt-budget": 6, "gpt-depth": 3, "gpt-topk": 2, "gpt-dtype": "float32"}  # the page's settings as it opens


@st.cache_resource(max_entries=1, show_spinner=False)
def store() -> dict:
    """Loaded pairs and finished runs, shared by every session and bounded (see the module docstring)."""
    return {"pairs": heavy.Store(MAX_PAIRS), "runs": heavy.Store(MAX_RUNS), "gens": heavy.Store(MAX_RUNS)}


def queued() -> None:
    """The page waits: for a heavy slot (others' computations running), or for this very computation, under
    way for another visitor or the server's warm-up (``heavy.Store``: computed once)."""
    running = heavy.running()
    if running:
        st.info(f"Waiting for the server: {running} heavy computation(s) running, at most {heavy.HEAVY_SLOTS} "
                "at a time. This page continues when it is done.")
    else:
        st.info("Waiting for the server: it is computing this very run already (for another visitor, or warming "
                "up). This page continues when it is done.")


class Choice(NamedTuple):
    """Which pair: a shipped drafter, or a (target path, draft path) pair from ``own_path``; the device; the
    weights directory; the target's number format (``api.load_pair``; a pair of your own stays float32)."""
    draft: object
    device: str = "auto"
    weights_dir: str | None = None
    dtype: str = "float32"


def _load(choice: Choice, bar=None):
    """Import torch and the decoder, read the pair's weights, warm both models up (``bar``: a progress bar)."""
    step = bar.progress if bar is not None else (lambda f, text: None)
    step(0.0, "importing PyTorch")
    from specsim.gpt import api
    from specsim.gpt.measure import bench

    step(0.4, "reading the weights of the target and the drafter")
    if isinstance(choice.draft, tuple):
        from specsim.gpt.hf import pair as hf_pair
        pair = hf_pair.load_hf_pair(*choice.draft, choice.device)
    else:
        pair = api.load_pair(choice.draft, choice.device, choice.weights_dir, dtype=choice.dtype)
    step(0.8, "warming both models up")
    bench.prepare(pair)
    step(1.0, "loaded")
    return pair


def get_pair(choice: Choice):
    def load():
        with st.status("Loading the tiny GPT pair…", expanded=True) as status:
            pair = _load(choice, st.progress(0.0, "starting"))
            status.update(label="Tiny GPT pair loaded", state="complete", expanded=False)
        return pair

    return store()["pairs"].get_or_compute(choice, load, heavy=True, on_wait=queued)


def _generation(pair, key: tuple, on_wait=None):
    """The seeded generation for ``key``, computed once; a visitor's (``on_wait`` given) takes a heavy slot."""
    _, prompt, n_tokens, scheme, temperature, seed = key

    def make():
        from specsim.gpt import api

        return api.speculative_generate(pair, prompt, n_tokens, scheme, temperature=temperature, seed=seed)

    return store()["gens"].get_or_compute(key, make, heavy=on_wait is not None, on_wait=on_wait)


def generate(choice: Choice, prompt, n_tokens, scheme, temperature, seed):
    """(pair, one speculative generation): the tokens the page shows first, before anything is timed.
    Seeded, so it is the very generation ``run`` times afterwards (``bench.quick_measure`` makes the same
    call with a clock, and a clock changes no token)."""
    pair = get_pair(choice)
    return pair, _generation(pair, (choice, prompt, n_tokens, scheme, temperature, seed), queued)


def preload() -> None:
    """The warm-up's part (``parts.warmup``): the pair and seeded generation the page opens with (``DEFAULTS``)
    put in the shared stores with no widget. Nothing is timed here (the page times its run itself, in the
    foreground), and no heavy slot is taken: no visitor is told to wait for work they did not ask for."""
    d = DEFAULTS
    choice = Choice(d["gpt-draft"], d["gpt-device"], os.environ.get("SPECSIM_WEIGHTS") or None, d["gpt-dtype"])
    pair = store()["pairs"].get_or_compute(choice, lambda: _load(choice))
    _generation(pair, (choice, d["gpt-prompt"], d["gpt-n"], f"{d['gpt-kind']}:{d['gpt-gamma']}", d["gpt-temp"],
                       d["gpt-seed"]))


def run(choice: Choice, prompt, n_tokens, scheme, temperature, seed):
    """(pair, ``bench.quick_measure`` result), computed once per settings for every session."""
    pair = get_pair(choice)

    def measure():
        from specsim.gpt.measure import bench

        with st.status("Generating, then timing plain decoding and one step of each model…") as status:
            bar = st.progress(0.0, "starting")
            result = bench.quick_measure(pair, prompt, n_tokens, scheme, temperature, seed,
                                         progress=lambda f, text: bar.progress(f, text))
            status.update(label="Generated and timed", state="complete", expanded=False)
        return result

    key = (choice, prompt, n_tokens, scheme, temperature, seed)
    return pair, store()["runs"].get_or_compute(key, measure, heavy=True, on_wait=queued)
