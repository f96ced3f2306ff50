"""The training recipe behind the shipped weights, stage by stage.

Stages, in order:

* ``target``: a fresh target, cross-entropy on the *base* corpus (the 117
  top-level stdlib files, ``corpus``), ``target_steps`` steps;
* ``target_more``: a second phase from those weights on the whole corpus
  (base plus the package files), ``more_steps`` steps with a new warm-up and
  cosine decay;
* ``draft_trained``: the drafter preset, cross-entropy on the whole corpus;
* ``draft_distilled``: starts from ``draft_trained`` and is then trained for
  ``distill_steps`` on the loss KL(p || q) against the target. Its notes
  also record a *control*: the same start, steps, windows and learning rate
  with cross-entropy instead, so that what distillation adds is told apart
  from what more steps add;
* ``exit_heads``: one small ``ExitHead`` per K = 1 .. n_layer - 1 for the
  early-exit drafter, KL(p || q_K) with the target frozen;
* ``eagle``: the EAGLE drafter's layer (``specsim.gpt.train.eagle.train_eagle``),
  smooth L1 on the target's final features plus ``eagle_kl_weight`` x KL(p || q)
  of its read-out, the target frozen, every slot also trained as the 2nd and
  3rd draft of a chain on the layer's own predicted features (``eagle_unroll``,
  EAGLE-3's training-time test); its notes record the teacher-forced alpha with a
  standard error over validation windows, beside the distilled drafter's on
  the same windows.

Each stage writes its safetensors file and updates the manifest in
``out_dir``; later stages load the target from there. Every stage saves a
checkpoint (``out_dir/STAGE.ckpt``) as it goes and resumes from it when run
again after an interruption; the checkpoint is deleted once the stage's
weights are written. The validation files are the same for every stage (the
held-out base files), so losses are comparable across the corpus change.
The defaults are the ones the shipped weights were made with.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import torch

from . import corpus
from ..config import PRESETS
from ..tokenizer import ASCII_VOCAB, CharTokenizer
from .loop import teacher_forced_alpha, train_exit_heads, train_lm
from ..weights import load_gpt, read_manifest, save_eagle, save_exit_heads, save_model, update_manifest

STAGES = ("target", "target_more", "draft_trained", "draft_distilled", "exit_heads", "eagle")


@dataclass(frozen=True)
class Recipe:
    target_steps: int = 1600
    more_steps: int = 1900
    draft_steps: int = 3000
    distill_steps: int = 800
    exit_steps: int = 400
    target_batch: int = 8
    draft_batch: int = 8
    target_lr: float = 1.5e-3
    more_lr: float = 1e-3
    draft_lr: float = 2e-3
    distill_lr: float = 1e-3
    exit_lr: float = 2e-3
    exit_rank: int = 64
    eagle_steps: int = 2500
    eagle_lr: float = 2e-3
    eagle_width: int = 128
    eagle_heads: int = 4
    eagle_kl_weight: float = 4.0
    eagle_noise: float = 0.0
    eagle_unroll: int = 3
    seed: int = 0
    target_preset: str = "target"
    draft_preset: str = "draft"


def corpus_tensors(files=None, base_only: bool = False):
    """(train ids, validation ids) of the shipped corpus (or of ``files``) as int64 tensors.

    ``base_only``: the base files alone (the first phase of the target)."""
    tok = CharTokenizer(ASCII_VOCAB)
    if files is None:
        files, base = corpus.load_files(), corpus.metadata().get("base_files")
        train_text, val_text = corpus.splits(files[:base] if base_only else files, base)
    else:
        train_text, val_text = corpus.splits(files)
    return torch.tensor(tok.encode(train_text)), torch.tensor(tok.encode(val_text))


def _target_phases(out_dir: str) -> list:
    """The training phases of the target in ``out_dir`` (weights from before phases were
    recorded count as one phase on the base corpus)."""
    if not os.path.lexists(os.path.join(out_dir, "manifest.json")):
        return []
    manifest = read_manifest(out_dir)  # one line (CheckpointError) if it is not a manifest
    try:
        notes = manifest["models"]["target"]["notes"]
    except (KeyError, TypeError):  # no target yet
        return []
    if not isinstance(notes, dict):
        return []
    phases = notes.get("phases") or [{k: v for k, v in notes.items() if k != "recipe"} | {"data": "base corpus"}]
    if not isinstance(phases, list) or not all(isinstance(p, dict) for p in phases):
        return []
    return [{k: v for k, v in p.items() if k != "phases"} for p in phases]


def run_stage(stage: str, out_dir: str, recipe: Recipe = Recipe(), device="cpu", progress=True,
              data=None) -> dict:
    """Train one stage, save it into ``out_dir`` and return its manifest entry.

    ``data`` (train ids, validation ids) replaces the shipped corpus (tests)."""
    if stage not in STAGES:
        raise ValueError(f"unknown stage {stage!r}; choose from {', '.join(STAGES)}")
    os.makedirs(out_dir, exist_ok=True)
    ckpt = os.path.join(out_dir, f"{stage}.ckpt")
    train_ids, val_ids = data if data is not None else corpus_tensors(base_only=stage == "target")
    draft_cfg = PRESETS[recipe.draft_preset]
    if stage == "target":
        r = train_lm(PRESETS[recipe.target_preset], train_ids, val_ids, recipe.target_steps, recipe.target_batch,
                     lr=recipe.target_lr, seed=recipe.seed, device=device, progress=progress, desc=stage,
                     checkpoint=ckpt)
        notes = r.notes() | {"data": "base corpus"}
        notes["phases"] = [dict(notes, recipe=dict(recipe.__dict__))]
        name = "target"
    elif stage == "target_more":
        phases = _target_phases(out_dir)
        if len(phases) != 1:
            raise ValueError(f"target_more continues a target that had one phase; {out_dir} has "
                             f"{len(phases)} recorded (run --stage target first)")
        init = load_gpt("target", out_dir, device=device)
        r = train_lm(init.config, train_ids, val_ids, recipe.more_steps, recipe.target_batch,
                     lr=recipe.more_lr, seed=recipe.seed, device=device, progress=progress, desc=stage,
                     init=init, checkpoint=ckpt)
        notes = r.notes() | {"data": "whole corpus: base and package files"}
        notes["phases"] = phases + [dict(notes, recipe=dict(recipe.__dict__))]
        notes["steps"] = sum(p["steps"] for p in notes["phases"])
        notes["seconds"] = round(sum(p["seconds"] for p in notes["phases"]), 1)
        name = "target"
    elif stage == "exit_heads":
        target = load_gpt("target", out_dir, device=device)
        heads, notes = train_exit_heads(target, train_ids, val_ids, recipe.exit_steps, recipe.target_batch,
                                        lr=recipe.exit_lr, seed=recipe.seed, rank=recipe.exit_rank,
                                        device=device, progress=progress)
        entry = save_exit_heads(heads, out_dir, notes | {"recipe": dict(recipe.__dict__)})
        update_manifest(out_dir, ASCII_VOCAB, {"exit_heads": entry}, {"corpus_sha256": corpus.metadata()["sha256"]})
        return entry
    elif stage == "eagle":
        return _eagle_stage(out_dir, recipe, device, progress, train_ids, val_ids, ckpt)
    else:
        target = load_gpt("target", out_dir, device=device)
        if stage == "draft_distilled":
            init = load_gpt("draft_trained", out_dir, device=device)
            r = train_lm(draft_cfg, train_ids, val_ids, recipe.distill_steps, recipe.draft_batch,
                         lr=recipe.distill_lr, seed=recipe.seed, device=device, teacher=target,
                         progress=progress, desc=stage, init=init, checkpoint=ckpt)
            notes = r.notes() | {"loss": "KL(p || q) against the target", "init": "draft_trained"}
            control = train_lm(draft_cfg, train_ids, val_ids, recipe.distill_steps, recipe.draft_batch,
                               lr=recipe.distill_lr, seed=recipe.seed, device=device, progress=progress,
                               desc="control", init=init)
            notes["control"] = {"loss": "cross-entropy", "init": "draft_trained", "steps": recipe.distill_steps,
                                "val_loss": round(control.val_loss, 4),
                                "teacher_forced_alpha": round(teacher_forced_alpha(
                                    target, control.model, val_ids, draft_cfg.block_size, device=device), 4)}
        else:
            r = train_lm(draft_cfg, train_ids, val_ids, recipe.draft_steps, recipe.draft_batch,
                         lr=recipe.draft_lr, seed=recipe.seed, device=device, progress=progress, desc=stage,
                         checkpoint=ckpt)
            notes = r.notes() | {"loss": "cross-entropy"}
        notes["teacher_forced_alpha"] = round(teacher_forced_alpha(
            target, r.model, val_ids, draft_cfg.block_size, device=device), 4)
        name = stage
    notes["recipe"] = dict(recipe.__dict__)
    entry = save_model(r.model, out_dir, name, notes)
    update_manifest(out_dir, ASCII_VOCAB, {name: entry}, {"corpus_sha256": corpus.metadata()["sha256"]})
    if os.path.exists(ckpt):
        os.remove(ckpt)
    return entry


def _eagle_stage(out_dir, recipe: Recipe, device, progress, train_ids, val_ids, ckpt) -> dict:
    """The ``eagle`` stage: train, measure alpha +- SE (and the distilled drafter's, when present), save."""
    from ...stats import mean_se
    from ..eagle import Eagle
    from .eagle import train_eagle, window_alphas
    target = load_gpt("target", out_dir, device=device)
    layer, notes = train_eagle(target, train_ids, val_ids, recipe.eagle_steps, recipe.target_batch,
                               lr=recipe.eagle_lr, seed=recipe.seed, width=recipe.eagle_width,
                               n_head=recipe.eagle_heads, kl_weight=recipe.eagle_kl_weight,
                               noise=recipe.eagle_noise, unroll=recipe.eagle_unroll, device=device,
                               progress=progress, checkpoint=ckpt)
    block = target.config.block_size
    alphas = window_alphas(target, Eagle(target, layer).eval(), val_ids, block, device=device)
    est = mean_se(alphas)
    mean, se = est.value, est.se
    notes["teacher_forced_alpha"] = round(mean, 4)
    notes["teacher_forced_alpha_se"] = round(se, 4)
    notes["alpha_windows"] = len(alphas)
    if "draft_distilled" in read_manifest(out_dir)["models"]:
        d = mean_se(window_alphas(target, load_gpt("draft_distilled", out_dir, device=device), val_ids, block,
                                  device=device))
        notes["distilled_same_windows"] = {"teacher_forced_alpha": round(d.value, 4),
                                           "teacher_forced_alpha_se": round(d.se, 4)}
    notes["recipe"] = dict(recipe.__dict__)
    entry = save_eagle(layer, out_dir, notes)
    update_manifest(out_dir, ASCII_VOCAB, {"eagle": entry}, {"corpus_sha256": corpus.metadata()["sha256"]})
    if os.path.exists(ckpt):
        os.remove(ckpt)
    return entry
