"""The training recipe behind the shipped weights, stage by stage.

Stages: ``target`` (cross-entropy on the corpus), ``draft_trained`` (the
drafter preset, cross-entropy on the corpus) and ``draft_distilled`` (the same
preset, same seed, same windows, but the loss is KL(p || q) against the
target). Each stage writes its safetensors file and updates the manifest in
``out_dir``; the drafter stages load the target from there. The defaults are
the ones the shipped weights were made with (see ``specsim/gpt/README.md``).
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import torch

from . import corpus
from .config import PRESETS
from .tokenizer import ASCII_VOCAB, CharTokenizer
from .train import teacher_forced_alpha, train_lm
from .weights import load_gpt, save_model, update_manifest

STAGES = ("target", "draft_trained", "draft_distilled")


@dataclass(frozen=True)
class Recipe:
    target_steps: int = 1600
    draft_steps: int = 3000
    target_batch: int = 8
    draft_batch: int = 8
    target_lr: float = 1.5e-3
    draft_lr: float = 2e-3
    seed: int = 0
    target_preset: str = "target"
    draft_preset: str = "draft"


def corpus_tensors(files=None):
    """(train ids, validation ids) of the shipped corpus as int64 tensors."""
    tok = CharTokenizer(ASCII_VOCAB)
    train_text, val_text = corpus.splits(files if files is not None else corpus.load_files())
    return torch.tensor(tok.encode(train_text)), torch.tensor(tok.encode(val_text))


def run_stage(stage: str, out_dir: str, recipe: Recipe = Recipe(), device="cpu", progress=True,
              data=None) -> dict:
    """Train one stage, save it into ``out_dir`` and return its manifest entry."""
    if stage not in STAGES:
        raise ValueError(f"unknown stage {stage!r}; choose from {', '.join(STAGES)}")
    os.makedirs(out_dir, exist_ok=True)
    train_ids, val_ids = data if data is not None else corpus_tensors()
    if stage == "target":
        r = train_lm(PRESETS[recipe.target_preset], train_ids, val_ids, recipe.target_steps, recipe.target_batch,
                     lr=recipe.target_lr, seed=recipe.seed, device=device, progress=progress, desc=stage)
        notes = r.notes()
    else:
        target = load_gpt("target", out_dir, device=device)
        teacher = target if stage == "draft_distilled" else None
        r = train_lm(PRESETS[recipe.draft_preset], train_ids, val_ids, recipe.draft_steps, recipe.draft_batch,
                     lr=recipe.draft_lr, seed=recipe.seed, device=device, teacher=teacher,
                     progress=progress, desc=stage)
        notes = r.notes()
        notes["loss"] = "KL(p || q) against the target" if teacher is not None else "cross-entropy"
        notes["teacher_forced_alpha"] = round(teacher_forced_alpha(
            target, r.model, val_ids, PRESETS[recipe.draft_preset].block_size, device=device), 4)
    notes["recipe"] = {k: v for k, v in recipe.__dict__.items()}
    entry = save_model(r.model, out_dir, stage, notes)
    update_manifest(out_dir, ASCII_VOCAB, {stage: entry}, {"corpus_sha256": corpus.metadata()["sha256"]})
    return entry
