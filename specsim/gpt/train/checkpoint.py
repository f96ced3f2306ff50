"""A training run's checkpoint: saved every few steps, checked field by field before a run resumes from it.

``save`` writes the whole state of a run (weights, optimizer, window
generator, losses, the run's settings as its ``key``) to a temporary file and
moves it over the checkpoint, so a run killed mid-save keeps the previous one.
``resume`` loads it back; the file may be anything a user left in the output
directory, so it is read with ``torch.load(weights_only=True)`` (tensors,
numbers and containers only: a pickle's code is refused, never run) and each
field is checked (this run's settings, a step in range, one loss per step,
finite weights that fit the model). Anything else is a ``CheckpointError``
(one line); the file is left for the user to inspect or delete.
"""
from __future__ import annotations

import math
import os
import pickle
import warnings

import torch

from ..checkpoint_checks import CheckpointError, check_finite, one_line


def run_key(config, steps, batch_size, block, lr, warmup, seed, teacher, tv_weight: float = 0.0) -> dict:
    """The settings that make a run: a checkpoint resumes only the run with the same key."""
    key = {"config": config.to_dict(), "steps": steps, "batch_size": batch_size, "block": block,
           "lr": lr, "warmup": warmup, "seed": seed, "distilled": teacher is not None}
    return key | ({"tv_weight": tv_weight} if tv_weight else {})  # runs from before the term keep their keys


def save(path, key, step, model, opt, gen, losses, curve, seconds) -> None:
    """Write the run's whole state to ``path`` (through a temporary file: never half written)."""
    state = {"key": key, "step": step, "model": model.state_dict(), "opt": opt.state_dict(),
             "gen": gen.get_state(), "losses": losses, "curve": curve, "seconds": seconds}
    tmp = f"{path}.tmp"
    torch.save(state, tmp)
    os.replace(tmp, path)  # a run killed mid-save keeps the previous checkpoint


def load(path, key) -> dict:
    """The saved state of this run, its fields checked; anything else is one line (``CheckpointError``)."""
    try:  # weights_only: tensors, numbers and containers only; a pickle's code is refused, never run
        with warnings.catch_warnings():  # torch warns about unusual pickle protocols: the refusal says enough
            warnings.simplefilter("ignore")
            state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # UnpicklingError, EOFError, RuntimeError (not a zip): whatever the bytes are
        why = ("it holds objects other than tensors and numbers (a pickle that could run code)"
               if isinstance(e, pickle.UnpicklingError) else one_line(e, 120))
        raise CheckpointError(f"checkpoint {path} is not a training checkpoint specsim reads: {why}; "
                              "delete it to start afresh") from None
    if not isinstance(state, dict) or not isinstance(state.get("key"), dict):
        raise CheckpointError(f"checkpoint {path} is not a training checkpoint (it holds a {type(state).__name__} "
                              "without a run key); delete it to start afresh")
    if state["key"] != key:
        diff = sorted(k for k in key if state["key"].get(k) != key[k])
        raise CheckpointError(f"checkpoint {path} is from a different run (differs in {', '.join(diff)}); "
                              "delete it or pass the same settings")
    number = (int, float)
    checks = {  # field: (its test, what it must be)
        "step": (lambda v: isinstance(v, int) and 0 <= v <= key["steps"], f"a step from 0 to {key['steps']}"),
        "model": (lambda v: isinstance(v, dict) and all(isinstance(t, torch.Tensor) for t in v.values()),
                  "a dict of tensors"),
        "opt": (lambda v: isinstance(v, dict), "an optimizer state dict"),
        "gen": (lambda v: isinstance(v, torch.Tensor) and v.dtype == torch.uint8, "a generator state"),
        "losses": (lambda v: isinstance(v, list) and len(v) == state.get("step")
                   and all(isinstance(x, number) for x in v), "a list of one loss per step"),
        "curve": (lambda v: isinstance(v, list) and all(isinstance(c, (list, tuple)) and len(c) == 2
                                                        and all(isinstance(x, number) for x in c) for c in v),
                  "a list of (step, loss) points"),
        "seconds": (lambda v: isinstance(v, number) and math.isfinite(v) and v >= 0, "a time in seconds"),
    }
    for name, (ok, what) in checks.items():
        if name not in state or not ok(state[name]):
            raise CheckpointError(f"checkpoint {path}: its {name} is not {what}; delete it to start afresh")
    check_finite(state["model"].items(), f"checkpoint {path}")
    return state


def resume(path, key, model, opt, gen) -> tuple:
    """Load the checkpoint into model, optimizer and generator: (losses, curve, step, seconds), or one line."""
    state = load(path, key)
    parts = (("model weights", model.load_state_dict, state["model"]),
             ("optimizer state", opt.load_state_dict, state["opt"]), ("generator state", gen.set_state, state["gen"]))
    for what, put, value in parts:
        try:
            put(value)
        except Exception as e:  # missing or mis-shaped tensors: torch's message is many lines
            raise CheckpointError(f"checkpoint {path}: its {what} do not fit this run ({one_line(e, 120)}); "
                                  "delete it to start afresh") from None
    return list(state["losses"]), [tuple(c) for c in state["curve"]], state["step"], state["seconds"]
