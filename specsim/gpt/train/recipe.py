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
* ``distill_more``: a second phase from the ``draft_distilled`` drafter,
  ``distill_more_steps`` steps with a new warm-up and cosine decay from
  ``distill_more_lr``, the loss KL(p || q) plus ``distill_tv_weight`` x
  (1 - alpha), the rejection rate itself (as ``eagle_more`` does for the EAGLE
  layer); it rewrites the ``draft_distilled`` entry, whose notes keep every
  phase (the first with its cross-entropy control) and the teacher-forced alpha
  before and after, paired window by window. Run again, it trains on for one
  more phase (phase k draws its batches with seed ``seed + k - 1``);
* ``exit_heads``: one small ``ExitHead`` per K = 1 .. n_layer - 1 for the
  early-exit drafter, KL(p || q_K) with the target frozen;
* ``eagle``: the EAGLE drafter's layer (``specsim.gpt.train.eagle.train_eagle``),
  smooth L1 on the target's final features plus ``eagle_kl_weight`` x KL(p || q)
  of its read-out, the target frozen, every slot also trained as the 2nd and
  3rd draft of a chain on the layer's own predicted features (``eagle_unroll``,
  EAGLE-3's training-time test); its notes record the teacher-forced alpha with a
  standard error over validation windows, beside the distilled drafter's on
  the same windows;
* ``eagle_more``: a second phase from the ``eagle`` layer, ``eagle_more_steps``
  steps with a new warm-up and cosine decay from ``eagle_more_lr``, the same
  losses plus ``eagle_tv_weight`` x (1 - alpha) of the read-out (the
  rejection rate itself, which the KL term only bounds); its notes keep every
  phase, with the teacher-forced alpha each one ended at. Run again, it trains
  the layer on for one more such phase (phase k draws its batches with seed
  ``seed + k - 2``, so a repeat does not replay the previous phase's batches).

Each stage writes its safetensors file and updates the manifest in
``out_dir``; later stages load the target from there. Every stage saves a
checkpoint (``out_dir/STAGE.ckpt``) as it goes and resumes from it when run
again after an interruption; the checkpoint is deleted once the stage's
weights are written. The validation files are the same for every stage (the
held-out base files), so losses are comparable across the corpus change.
The defaults are the ones the shipped weights were made with; the shipped distilled
drafter then had a third and a fourth phase, ``distill_more`` run twice more with
``--distill-more-steps 2400`` on one CPU thread, and the shipped EAGLE layer a third phase,
``eagle_more`` run again with ``--eagle-more-steps 4000`` on a GPU (``tests/gpu_train_eagle.sh``;
the manifest keeps every phase's recipe and device).
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

STAGES = ("target", "target_more", "draft_trained", "draft_distilled", "distill_more", "exit_heads", "eagle",
          "eagle_more")


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
    distill_more_steps: int = 1200
    distill_more_lr: float = 3e-4
    distill_tv_weight: float = 4.0
    exit_lr: float = 2e-3
    exit_rank: int = 64
    eagle_steps: int = 2500
    eagle_lr: float = 2e-3
    eagle_width: int = 128
    eagle_heads: int = 4
    eagle_kl_weight: float = 4.0
    eagle_noise: float = 0.0
    eagle_unroll: int = 3
    eagle_more_steps: int = 2800
    eagle_more_lr: float = 5e-4
    eagle_tv_weight: float = 4.0
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


@dataclass(frozen=True)
class Run:
    """What every stage reads: where the weights go, the recipe, the device, the data, its checkpoint file."""
    out_dir: str
    recipe: Recipe
    device: object
    progress: bool
    train_ids: torch.Tensor
    val_ids: torch.Tensor
    ckpt: str

    def train(self, config, steps, batch, lr, desc, seed=None, **kw):
        """``train_lm`` with this run's data, seed (unless given), device and progress bar."""
        return train_lm(config, self.train_ids, self.val_ids, steps, batch, lr=lr,
                        seed=self.recipe.seed if seed is None else seed,
                        device=self.device, progress=self.progress, desc=desc, **kw)

    def load(self, name):
        return load_gpt(name, self.out_dir, device=self.device)

    def recipe_dict(self) -> dict:
        return dict(self.recipe.__dict__)


def run_stage(stage: str, out_dir: str, recipe: Recipe = Recipe(), device="cpu", progress=True,
              data=None) -> dict:
    """Train one stage, save it into ``out_dir`` and return its manifest entry.

    ``data`` (train ids, validation ids) replaces the shipped corpus (tests)."""
    if stage not in STAGES:
        raise ValueError(f"unknown stage {stage!r}; choose from {', '.join(STAGES)}")
    os.makedirs(out_dir, exist_ok=True)
    ckpt = os.path.join(out_dir, f"{stage}.ckpt")
    train_ids, val_ids = data if data is not None else corpus_tensors(base_only=stage == "target")
    run = Run(out_dir, recipe, device, progress, train_ids, val_ids, ckpt)
    name, entry = STAGE_RUNS[stage](run, stage)
    update_manifest(out_dir, ASCII_VOCAB, {name: entry}, {"corpus_sha256": corpus.metadata()["sha256"]})
    if os.path.exists(ckpt):
        os.remove(ckpt)
    return entry


def _target_stage(run: Run, stage: str) -> tuple:
    """Phase 1 of the target, on the base corpus."""
    rc = run.recipe
    r = run.train(PRESETS[rc.target_preset], rc.target_steps, rc.target_batch, rc.target_lr, stage, checkpoint=run.ckpt)
    notes = r.notes() | {"data": "base corpus"}
    notes["phases"] = [dict(notes, recipe=run.recipe_dict())]
    return "target", save_model(r.model, run.out_dir, "target", notes | {"recipe": run.recipe_dict()})


def _target_more_stage(run: Run, stage: str) -> tuple:
    """Phase 2 of the target: the phase-1 weights trained on, on the whole corpus."""
    rc, phases = run.recipe, _target_phases(run.out_dir)
    if len(phases) != 1:
        raise ValueError(f"target_more continues a target that had one phase; {run.out_dir} has "
                         f"{len(phases)} recorded (run --stage target first)")
    init = run.load("target")
    r = run.train(init.config, rc.more_steps, rc.target_batch, rc.more_lr, stage, init=init, checkpoint=run.ckpt)
    notes = r.notes() | {"data": "whole corpus: base and package files"}
    notes["phases"] = phases + [dict(notes, recipe=run.recipe_dict())]
    notes["steps"] = sum(p["steps"] for p in notes["phases"])
    notes["seconds"] = round(sum(p["seconds"] for p in notes["phases"]), 1)
    return "target", save_model(r.model, run.out_dir, "target", notes | {"recipe": run.recipe_dict()})


def _draft_stage(run: Run, stage: str) -> tuple:
    """``draft_trained`` (cross-entropy) or ``draft_distilled`` (KL against the target, from draft_trained,
    with a cross-entropy control from the same start), each with its teacher-forced alpha."""
    rc, cfg = run.recipe, PRESETS[run.recipe.draft_preset]
    target = run.load("target")
    if stage == "draft_distilled":
        init = run.load("draft_trained")
        r = run.train(cfg, rc.distill_steps, rc.draft_batch, rc.distill_lr, stage, teacher=target, init=init,
                      checkpoint=run.ckpt)
        notes = r.notes() | {"loss": "KL(p || q) against the target", "init": "draft_trained"}
        control = run.train(cfg, rc.distill_steps, rc.draft_batch, rc.distill_lr, "control", init=init)
        notes["control"] = {"loss": "cross-entropy", "init": "draft_trained", "steps": rc.distill_steps,
                            "val_loss": round(control.val_loss, 4),
                            "teacher_forced_alpha": round(teacher_forced_alpha(
                                target, control.model, run.val_ids, cfg.block_size, device=run.device), 4)}
    else:
        r = run.train(cfg, rc.draft_steps, rc.draft_batch, rc.draft_lr, stage, checkpoint=run.ckpt)
        notes = r.notes() | {"loss": "cross-entropy"}
    notes["teacher_forced_alpha"] = round(teacher_forced_alpha(
        target, r.model, run.val_ids, cfg.block_size, device=run.device), 4)
    return stage, save_model(r.model, run.out_dir, stage, notes | {"recipe": run.recipe_dict()})


def _distill_more_stage(run: Run, stage: str) -> tuple:
    """``distill_more``: the ``draft_distilled`` drafter trained on with KL(p || q) + w (1 - alpha); its
    teacher-forced alpha before and after on the same held-out windows, paired; every phase kept."""
    from ...stats import mean_se
    from .eagle import window_alphas
    rc, cfg = run.recipe, PRESETS[run.recipe.draft_preset]
    phases = _distilled_phases(run.out_dir)  # first: one line if there is no distilled drafter
    target, init = run.load("target"), run.load("draft_distilled")
    block = target.config.block_size
    before = window_alphas(target, init, run.val_ids, block, device=run.device)
    seed = rc.seed + len(phases)  # phase k draws with seed + k - 1: not the batches of the phases before
    r = run.train(cfg, rc.distill_more_steps, rc.draft_batch, rc.distill_more_lr, stage, seed=seed,
                  teacher=target, init=init, tv_weight=rc.distill_tv_weight, warmup=50, checkpoint=run.ckpt)
    after = window_alphas(target, r.model, run.val_ids, block, device=run.device)
    est, gain = mean_se(after), mean_se([b - a for a, b in zip(before, after)])
    phase = r.notes() | {"loss": f"KL(p || q) + {rc.distill_tv_weight:g} x (1 - alpha) against the target",
                         "init": "draft_distilled", "lr": rc.distill_more_lr, "tv_weight": rc.distill_tv_weight,
                         "seed": seed, "teacher_forced_alpha": round(est.value, 4),
                         "teacher_forced_alpha_se": round(est.se, 4), "alpha_windows": len(after),
                         "paired_gain": round(gain.value, 4), "paired_gain_se": round(gain.se, 4),
                         "recipe": run.recipe_dict()}
    first = phases[0]
    notes = {k: v for k, v in phase.items() if k != "recipe"} | {
        "phases": phases + [phase], "steps": sum(p["steps"] for p in phases) + phase["steps"],
        "seconds": round(sum(p["seconds"] for p in phases) + phase["seconds"], 1)}
    if "control" in first:  # the first phase's control, where readers of the entry look for it
        notes["control"] = first["control"]
    return "draft_distilled", save_model(r.model, run.out_dir, "draft_distilled", notes | {"recipe": run.recipe_dict()})


def _distilled_phases(out_dir: str) -> list:
    """The phases of the ``draft_distilled`` drafter in ``out_dir`` that ``distill_more`` continues (each
    one's notes with its recipe), or one line if there is none."""
    entry = read_manifest(out_dir)["models"].get("draft_distilled")
    notes = entry.get("notes") if isinstance(entry, dict) else None
    if not isinstance(notes, dict) or "steps" not in notes:
        raise ValueError(f"distill_more continues a distilled drafter; {out_dir} has none "
                         "(run --stage draft_distilled first)")
    phases = notes.get("phases") or [dict(notes)]
    if not isinstance(phases, list) or not all(isinstance(p, dict) for p in phases):
        raise ValueError(f"the draft_distilled entry of {out_dir}/manifest.json has phases that are not a list "
                         "of objects")
    return [{k: v for k, v in p.items() if k != "phases"} for p in phases]


def _exit_heads_stage(run: Run, stage: str) -> tuple:
    rc, target = run.recipe, run.load("target")
    heads, notes = train_exit_heads(target, run.train_ids, run.val_ids, rc.exit_steps, rc.target_batch,
                                    lr=rc.exit_lr, seed=rc.seed, rank=rc.exit_rank, device=run.device,
                                    progress=run.progress)
    return "exit_heads", save_exit_heads(heads, run.out_dir, notes | {"recipe": run.recipe_dict()})


def _eagle_stage(run: Run, stage: str) -> tuple:
    """The ``eagle`` stage (a fresh layer) or ``eagle_more`` (the ``eagle`` layer trained on with the
    total-variation term): train, measure alpha +- SE (and the distilled drafter's, when present), save."""
    from ..eagle import Eagle
    from ..weights import load_eagle
    from .eagle import train_eagle
    rc, target = run.recipe, run.load("target")
    more = stage == "eagle_more"
    phases = _eagle_phases(run.out_dir) if more else []  # first: one line if there is no layer to continue
    init = load_eagle(run.out_dir, device=run.device) if more else None
    steps, lr = (rc.eagle_more_steps, rc.eagle_more_lr) if more else (rc.eagle_steps, rc.eagle_lr)
    seed = rc.seed + max(0, len(phases) - 1)
    layer, notes = train_eagle(target, run.train_ids, run.val_ids, steps, rc.target_batch,
                               lr=lr, seed=seed, width=rc.eagle_width, n_head=rc.eagle_heads,
                               kl_weight=rc.eagle_kl_weight, noise=rc.eagle_noise, unroll=rc.eagle_unroll,
                               tv_weight=rc.eagle_tv_weight if more else 0.0, init=init,
                               device=run.device, progress=run.progress, checkpoint=run.ckpt)
    notes["device"] = torch.device(run.device).type
    if more:
        notes["init"] = "eagle"
        notes["phases"] = phases + [dict(notes, recipe=run.recipe_dict())]
        notes["steps"] = sum(p["steps"] for p in notes["phases"])
        notes["seconds"] = round(sum(p["seconds"] for p in notes["phases"]), 1)
    notes |= _alpha_notes(run, target, Eagle(target, layer).eval())
    return "eagle", save_eagle(layer, run.out_dir, notes | {"recipe": run.recipe_dict()})


def _eagle_phases(out_dir: str) -> list:
    """The phases of the ``eagle`` layer in ``out_dir`` that ``eagle_more`` continues (each one's notes
    and recipe, the last with the teacher-forced alpha it ended at), or one line if there is no layer."""
    entry = read_manifest(out_dir)["models"].get("eagle")
    notes = entry.get("notes") if isinstance(entry, dict) else None
    if not isinstance(notes, dict) or "steps" not in notes:
        raise ValueError(f"eagle_more continues a trained eagle layer; {out_dir} has none (run --stage eagle first)")
    skip = ("recipe", "teacher_forced_alpha", "teacher_forced_alpha_se", "alpha_windows", "distilled_same_windows")
    phases = notes.get("phases") or [{k: v for k, v in notes.items() if k not in skip} | {"recipe": notes.get("recipe", {})}]
    if not isinstance(phases, list) or not all(isinstance(p, dict) for p in phases):
        raise ValueError(f"the eagle entry of {out_dir}/manifest.json has phases that are not a list of objects")
    phases = [dict(p) for p in phases]
    for key in ("teacher_forced_alpha", "teacher_forced_alpha_se"):
        if key in notes:
            phases[-1].setdefault(key, notes[key])
    return phases


def _alpha_notes(run: Run, target, eagle) -> dict:
    """Teacher-forced alpha +- SE of ``eagle`` window by window (and of the distilled drafter on the same
    windows, when present)."""
    from ...stats import mean_se
    from .eagle import window_alphas
    block = target.config.block_size
    alphas = window_alphas(target, eagle, run.val_ids, block, device=run.device)
    est = mean_se(alphas)
    notes = {"teacher_forced_alpha": round(est.value, 4), "teacher_forced_alpha_se": round(est.se, 4),
             "alpha_windows": len(alphas)}
    if "draft_distilled" in read_manifest(run.out_dir)["models"]:
        d = mean_se(window_alphas(target, run.load("draft_distilled"), run.val_ids, block, device=run.device))
        notes["distilled_same_windows"] = {"teacher_forced_alpha": round(d.value, 4),
                                           "teacher_forced_alpha_se": round(d.se, 4)}
    return notes


STAGE_RUNS = {"target": _target_stage, "target_more": _target_more_stage, "draft_trained": _draft_stage,
              "draft_distilled": _draft_stage, "exit_heads": _exit_heads_stage, "eagle": _eagle_stage,
              "eagle_more": _eagle_stage, "distill_more": _distill_more_stage}
