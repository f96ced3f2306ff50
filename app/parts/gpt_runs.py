"""The Tiny GPT page's runs: model pairs loaded once per choice and finished runs kept per settings, for
every session, each computed once (``heavy.Store``) and at most ``heavy.HEAVY_SLOTS`` at a time.

Bounds: at most ``MAX_PAIRS`` loaded pairs (a shipped pair is ~20 MB, a gpt2-sized pair of your
own ~0.8 GB) and ``MAX_RUNS`` finished runs (a run keeps its rounds: well under 1 MB), least
recently used evicted first. A pair of your own is keyed by its checkpoints' resolved paths, so
one checkpoint is loaded once however it is reached.

"Your own model pair" is off unless the operator sets ``SPECSIM_PAIRS_DIR`` to a directory; a
visitor then picks a target and a draft among that directory's subdirectories that hold a
``config.json`` (``own_choices``) and nothing else: no path is typed, no message says anything
about other paths.
"""
from __future__ import annotations

import os

import streamlit as st

from parts import heavy
from specsim.gpt.specs import GALLERY

PAIRS_ENV = "SPECSIM_PAIRS_DIR"
MAX_PAIRS, MAX_RUNS = 3, 16
MAX_CHOICES = 100  # subdirectories listed at most
DEFAULTS = {"gpt-prompt": "def ", "gpt-n": 80, "gpt-gamma": 4, "gpt-temp": 1.0, "gpt-draft": GALLERY[0],
            "gpt-device": "auto", "gpt-seed": 0, "gpt-kind": "chain", "gpt-shape": "2,2,1", "gpt-drafts": "iid",
            "gpt-budget": 6, "gpt-depth": 3, "gpt-topk": 2}  # the Tiny GPT page's settings as it opens


@st.cache_resource(max_entries=1, show_spinner=False)
def store() -> dict:
    """Loaded pairs and finished runs, shared by every session and bounded (see the module docstring)."""
    return {"pairs": heavy.Store(MAX_PAIRS), "runs": heavy.Store(MAX_RUNS), "gens": heavy.Store(MAX_RUNS)}


def pairs_dir() -> str | None:
    """The operator's directory of checkpoints (resolved), or None when "your own pair" is off."""
    root = os.environ.get(PAIRS_ENV, "").strip()
    if not root:
        return None
    root = os.path.realpath(os.path.expanduser(root))
    return root if os.path.isdir(root) else None


def own_choices() -> list[str]:
    """The checkpoint directories a visitor may pick: names of ``pairs_dir()``'s subdirectories with a
    config.json whose real path stays inside it (a symlink out of it is not offered)."""
    root = pairs_dir()
    if root is None:
        return []
    names = []
    with os.scandir(root) as entries:
        for entry in entries:
            path = os.path.realpath(entry.path)
            if (not entry.name.startswith(".") and os.path.dirname(path) == root and os.path.isdir(path)
                    and os.path.isfile(os.path.join(path, "config.json"))):
                names.append(entry.name)
    return sorted(names)[:MAX_CHOICES]


def own_path(name: str) -> str | None:
    """The resolved checkpoint directory of a listed ``name``, or None for anything not listed."""
    return os.path.realpath(os.path.join(pairs_dir(), name)) if name in own_choices() else None


def queued() -> None:
    st.info(f"Waiting for the server: {heavy.running()} heavy computation(s) running, "
            f"at most {heavy.HEAVY_SLOTS} at a time. This page continues when it is done.")


def _load(draft, device: str, weights_dir, bar=None):
    """Import torch and the decoder, read the pair's weights, warm both models up (``bar``: a progress bar)."""
    step = bar.progress if bar is not None else (lambda f, text: None)
    step(0.0, "importing PyTorch")
    from specsim.gpt import api
    from specsim.gpt.measure import bench

    step(0.4, "reading the weights of the target and the drafter")
    if isinstance(draft, tuple):
        from specsim.gpt.hf import pair as hf_pair
        pair = hf_pair.load_hf_pair(*draft, device)
    else:
        pair = api.load_pair(draft, device, weights_dir)
    step(0.8, "warming both models up")
    bench.prepare(pair)
    step(1.0, "loaded")
    return pair


def get_pair(draft, device: str, weights_dir):
    """``draft`` is a shipped drafter, or a (target path, draft path) pair from ``own_path``."""
    def load():
        with st.status("Loading the tiny GPT pair…", expanded=True) as status:
            pair = _load(draft, device, weights_dir, st.progress(0.0, "starting"))
            status.update(label="Tiny GPT pair loaded", state="complete", expanded=False)
        return pair

    return store()["pairs"].get_or_compute((draft, device, weights_dir), load, heavy=True, on_wait=queued)


def _generation(pair, key: tuple, on_wait=None):
    """The seeded generation for ``key``, computed once; a visitor's (``on_wait`` given) takes a heavy slot."""
    draft, device, weights_dir, prompt, n_tokens, scheme, temperature, seed = key

    def make():
        from specsim.gpt import api

        return api.speculative_generate(pair, prompt, n_tokens, scheme, temperature=temperature, seed=seed)

    return store()["gens"].get_or_compute(key, make, heavy=on_wait is not None, on_wait=on_wait)


def generate(draft, device, weights_dir, prompt, n_tokens, scheme, temperature, seed):
    """(pair, one speculative generation): the tokens the page shows first, before anything is timed.
    Seeded, so it is the very generation ``run`` times afterwards (``bench.quick_measure`` makes the same
    call with a clock, and a clock changes no token)."""
    pair = get_pair(draft, device, weights_dir)
    return pair, _generation(pair, (draft, device, weights_dir, prompt, n_tokens, scheme, temperature, seed),
                             queued)


def preload() -> None:
    """The warm-up's part (``parts.warmup``): the pair and seeded generation the page opens with (``DEFAULTS``)
    put in the shared stores with no widget. Nothing is timed here (the page times its run itself, in the
    foreground), and no heavy slot is taken: no visitor is told to wait for work they did not ask for."""
    d, weights_dir = DEFAULTS, os.environ.get("SPECSIM_WEIGHTS") or None
    key = (d["gpt-draft"], d["gpt-device"], weights_dir)
    pair = store()["pairs"].get_or_compute(key, lambda: _load(*key))
    _generation(pair, key + (d["gpt-prompt"], d["gpt-n"], f"{d['gpt-kind']}:{d['gpt-gamma']}", d["gpt-temp"],
                             d["gpt-seed"]))


def run(draft, device, weights_dir, prompt, n_tokens, gamma, temperature, seed):
    """(pair, ``bench.quick_measure`` result), computed once per settings for every session."""
    key = (draft, device, weights_dir, prompt, n_tokens, gamma, temperature, seed)
    pair = get_pair(draft, device, weights_dir)

    def measure():
        from specsim.gpt.measure import bench

        with st.status("Generating, then timing plain decoding and one step of each model…") as status:
            bar = st.progress(0.0, "starting")
            result = bench.quick_measure(pair, prompt, n_tokens, gamma, temperature, seed,
                                         progress=lambda f, text: bar.progress(f, text))
            status.update(label="Generated and timed", state="complete", expanded=False)
        return result

    return pair, store()["runs"].get_or_compute(key, measure, heavy=True, on_wait=queued)
