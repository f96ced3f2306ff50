"""Work every first visitor of a page would otherwise wait for, done once per server in the background.

A fresh server imports the library's modules on the first page that needs them, and a page's
first visitor computes what no setting changes: the implementations gallery's proofs on the
random family, the speedup page's best-γ grid, and last the Tiny GPT page's opening state (torch,
the shipped pair, the seeded generation its default settings show: ``gpt_runs.preload``; no
timing, which that page does in the foreground). ``start`` runs it all in one daemon thread once
the first page of the server's first visitor has run, so it never competes with that page; the
library's part comes first, torch last. It computes only through the same cached functions and
stores the pages use, so a page either finds the result or computes it as before. A failure here
is swallowed: the page that needs the result computes it itself. ``SPECSIM_WARM_GPT=0`` leaves
torch out (a server that never shows the Tiny GPT page saves its memory).
"""
from __future__ import annotations

import importlib
import os
import threading

import streamlit as st

MODULES = ("specsim.exact", "specsim.sampling", "specsim.formulas", "specsim.labs.implementations",
           "specsim.labs.pitfalls", "specsim.labs.judge", "specsim.plots.charts", "specsim.plots.rounds",
           "specsim.plots.anim", "specsim.views.frames", "specsim.serving", "specsim.views.serving_view")
N_TOKENS = 2  # the Implementations page's default N


def _work() -> None:
    from specsim import formulas
    from specsim.labs import implementations as impl

    from parts import cached

    for name in MODULES:
        importlib.import_module(name)
    cached.best_gamma_grid(formulas.DEFAULT_MAX_GAMMA)
    for name in impl.IMPLEMENTATIONS:
        cached.implementation_proof(name, N_TOKENS)
    if os.environ.get("SPECSIM_WARM_GPT", "1") != "0":
        from parts import gpt_runs

        gpt_runs.preload()


def _quietly() -> None:
    try:
        _work()
    except Exception:  # noqa: BLE001  (see the module docstring)
        pass


@st.cache_resource(max_entries=1, show_spinner=False)
def start() -> threading.Thread:
    """Start the warm-up thread, once per server; returns it (tests join it)."""
    thread = threading.Thread(target=_quietly, name="specsim-warmup", daemon=True)
    thread.start()
    return thread
