"""Shipped weights: safetensors files, a JSON manifest, checksums verified at load.

``weights/manifest.json`` holds the tokenizer vocabulary and, per model
(``target``, ``draft_distilled``, ``draft_trained``), the file name, its
sha256, the ``GPTConfig`` and training notes; ``exit_heads`` holds the
trained exit heads of the early-exit drafter, one per K, in one file; ``eagle`` the
EAGLE drafter's own layer (``specsim.gpt.eagle``). Tensors are stored in float16
(half the bytes) and loaded as float32; the tied head is stored once (as the
token embedding). Nothing is unpickled: safetensors holds raw tensors only.

>>> sorted(read_manifest()["models"])
['draft_distilled', 'draft_trained', 'eagle', 'exit_heads', 'target']
"""
from __future__ import annotations

import hashlib
import json
import os
from importlib import resources

import torch
from safetensors.torch import load as st_load
from safetensors.torch import save as st_save

from .checkpoint_checks import CheckpointError, atomic_write, check_finite, one_line, read_json
from .config import GPTConfig
from .model import GPT

MANIFEST = "manifest.json"
MODEL_NAMES = ("target", "draft_distilled", "draft_trained")


class WeightsError(CheckpointError):
    """Missing, tampered or mismatched weight files (one line, like every ``CheckpointError``)."""


def default_dir():
    return resources.files("specsim.gpt").joinpath("weights")


def read_manifest(weights_dir=None) -> dict:
    d = weights_dir if weights_dir is not None else default_dir()
    path = d / MANIFEST if hasattr(d, "joinpath") else os.path.join(d, MANIFEST)
    if not os.path.lexists(path):
        raise WeightsError(f"no weights manifest at {path}")
    try:  # bounded and flat-scanned: a training directory's manifest is the user's file
        manifest = read_json(os.fspath(path))
    except CheckpointError as e:
        raise WeightsError(str(e)) from None
    if not isinstance(manifest.get("models"), dict) or not isinstance(manifest.get("vocab"), str):
        raise WeightsError(f"{path} has no models and vocabulary: not a specsim weights manifest")
    return manifest


def _read_bytes(weights_dir, file: str) -> bytes:
    d = weights_dir if weights_dir is not None else default_dir()
    path = d / file if hasattr(d, "joinpath") else os.path.join(d, file)
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        raise WeightsError(f"weight file {file} is missing") from None


def _checked(weights_dir, name: str) -> tuple[dict, bytes]:
    manifest = read_manifest(weights_dir)
    if name not in manifest["models"]:
        raise WeightsError(f"no model named {name!r}; the manifest has {sorted(manifest['models'])}")
    entry = manifest["models"][name]
    file = entry.get("file") if isinstance(entry, dict) else None
    if not isinstance(file, str) or os.path.basename(file) != file or not isinstance(entry.get("sha256"), str):
        raise WeightsError(f"the manifest's entry for {name!r} names no weight file in its directory and checksum")
    data = _read_bytes(weights_dir, file)
    digest = hashlib.sha256(data).hexdigest()
    if digest != entry["sha256"]:
        raise WeightsError(f"checksum mismatch for {entry['file']}: expected {entry['sha256'][:16]}..., "
                           f"got {digest[:16]}... (the file was modified or corrupted)")
    return entry, data


def _write(out_dir: str, file: str, state: dict) -> tuple[bytes, str]:
    data = st_save({k: v.detach().to("cpu", torch.float16).contiguous() for k, v in state.items()})
    atomic_write(os.path.join(out_dir, file), data)
    return data, hashlib.sha256(data).hexdigest()


def save_exit_heads(heads: dict, out_dir: str, notes: dict | None = None) -> dict:
    """Write ``exit_heads.safetensors`` ({K: ExitHead}, float16) and return its manifest entry."""
    state = {f"k{k}.{name}": t for k, h in heads.items() for name, t in h.state_dict().items()}
    data, digest = _write(out_dir, "exit_heads.safetensors", state)
    any_head = next(iter(heads.values()))
    config = {"layers": sorted(heads), "n_embd": any_head.ln.normalized_shape[0],
              "rank": any_head.down.out_features}
    return {"file": "exit_heads.safetensors", "sha256": digest, "bytes": len(data), "dtype": "float16",
            "config": config, "parameters": sum(p.numel() for h in heads.values() for p in h.parameters()),
            "notes": notes or {}}


def load_exit_heads(weights_dir=None, device="cpu") -> dict:
    """The trained exit heads as {K: ExitHead} (float32, eval mode), checksum verified."""
    from .drafters import ExitHead
    entry, data = _checked(weights_dir, "exit_heads")
    heads = {}
    try:  # as in load_gpt: a broken entry or file is one line
        state = st_load(data)
        for k in entry["config"]["layers"]:
            head = ExitHead(entry["config"]["n_embd"], entry["config"]["rank"])
            prefix = f"k{k}."
            head.load_state_dict({n[len(prefix):]: t.float() for n, t in state.items() if n.startswith(prefix)})
            heads[int(k)] = head.to(device).eval()
    except Exception as e:
        raise WeightsError(f"{entry['file']} does not load with its manifest's config: {one_line(e)}") from None
    check_finite(state.items(), entry["file"])
    return heads


def save_eagle(layer, out_dir: str, notes: dict | None = None) -> dict:
    """Write ``eagle.safetensors`` (the EAGLE drafter's own layer, float16) and return its manifest entry."""
    data, digest = _write(out_dir, "eagle.safetensors", layer.state_dict())
    return {"file": "eagle.safetensors", "sha256": digest, "bytes": len(data), "dtype": "float16",
            "config": layer.config.to_dict(), "parameters": sum(p.numel() for p in layer.parameters()),
            "notes": notes or {}}


def load_eagle(weights_dir=None, device="cpu"):
    """The EAGLE drafter's trained layer (``specsim.gpt.eagle.EagleLayer``, float32, eval mode), checksum verified."""
    from .eagle import EagleConfig, EagleLayer
    entry, data = _checked(weights_dir, "eagle")
    try:  # as in load_gpt: a broken entry or file is one line
        layer = EagleLayer(EagleConfig.from_dict(entry["config"]))
        state = {k: v.float() for k, v in st_load(data).items()}
        layer.load_state_dict(state)
    except Exception as e:
        raise WeightsError(f"{entry['file']} does not load with its manifest's config: {one_line(e)}") from None
    check_finite(state.items(), entry["file"])
    return layer.to(device).eval()


def save_model(model: GPT, out_dir: str, name: str, notes: dict | None = None) -> dict:
    """Write ``name.safetensors`` (float16) and return its manifest entry."""
    state = {k: v for k, v in model.state_dict().items() if k != "lm_head.weight"}  # tied to wte
    file = f"{name}.safetensors"
    data, digest = _write(out_dir, file, state)
    return {"file": file, "sha256": digest, "bytes": len(data),
            "dtype": "float16", "config": model.config.to_dict(),
            "parameters": model.num_parameters(), "notes": notes or {}}


def update_manifest(out_dir: str, vocab: str, entries: dict, extra: dict | None = None) -> dict:
    """Merge model entries into ``out_dir/manifest.json`` (created if absent)."""
    path = os.path.join(out_dir, MANIFEST)
    manifest = {"format": 1, "vocab": vocab, "models": {}}
    if os.path.lexists(path):
        manifest = read_manifest(out_dir)
    if manifest["vocab"] != vocab:
        raise WeightsError("the vocabulary differs from the one in the existing manifest")
    manifest["models"].update(entries)
    manifest.update(extra or {})
    atomic_write(path, json.dumps(manifest, indent=1).encode())
    return manifest


def load_gpt(name: str, weights_dir=None, device="cpu") -> GPT:
    """Load one model in float32, eval mode, after checking the file's sha256."""
    entry, data = _checked(weights_dir, name)
    try:  # a training directory's manifest and files are the user's: any failure is one line
        model = GPT(GPTConfig.from_dict(entry["config"]))
        state = {k: v.float() for k, v in st_load(data).items()}
        missing, unexpected = model.load_state_dict(state, strict=False)
    except Exception as e:
        raise WeightsError(f"{entry['file']} does not load with its manifest's config: {one_line(e)}") from None
    if unexpected or set(missing) - {"lm_head.weight"}:
        raise WeightsError(f"{entry['file']} does not fit its config (missing {missing}, unexpected {unexpected})")
    check_finite(state.items(), entry["file"])
    return model.to(device).eval()
