"""What the shipped weights are and how they were trained, read from the manifest (no torch).

``specsim gpt weights`` prints it; ``specsim/gpt/README.md`` shows that output,
and ``tests/test_readme.py`` checks the two agree, so no figure about the
weights is typed by hand.
"""
from __future__ import annotations

import json
from importlib import resources

from . import specs  # noqa: F401  (the package, torch-free)

MiB = 1024 * 1024


def manifest(weights_dir=None) -> dict:
    if weights_dir is None:
        return json.loads(resources.files("specsim.gpt").joinpath("weights", "manifest.json").read_text())
    with open(f"{weights_dir}/manifest.json") as f:
        return json.load(f)


def corpus_meta() -> dict:
    return json.loads(resources.files("specsim.gpt").joinpath("data", "corpus.json").read_text())


def _phases(notes: dict) -> list:
    return notes.get("phases") or [notes]


def _tv_phases(notes: dict) -> str:
    """`` (+ w x (1 - alpha) in phase k)`` for the phases trained on with the total variation as a term."""
    later = [(i, p["tv_weight"]) for i, p in enumerate(_phases(notes), 1) if p.get("tv_weight")]
    if not later:
        return ""
    (first, _), (last, weight) = later[0], later[-1]
    which = f"phase {first}" if first == last else f"phases {first}-{last}"
    return f" (+ {weight:g} x (1 - alpha) in {which})"


def rows(m: dict) -> list:
    """One dict per model: the manifest's figures, ready to print or dump as JSON."""
    out = []
    for name in ("target", "draft_trained", "draft_distilled", "exit_heads", "eagle"):
        e = m["models"].get(name)
        if e is None:
            continue
        n, c = e["notes"], e["config"]
        recipe = n.get("recipe", {})
        if name == "eagle":  # one layer over the target's features, read out through the target's own head
            shape = f"1 x w{c['width']} on d{c['n_embd']} features, {c['n_head']} heads"
            steps = " + ".join(f"{p['steps']} x {p['batch']}" for p in _phases(n))
            loss = f"smooth L1 + {n['kl_weight']:g} x KL" + _tv_phases(n)
            val, tf = None, n.get("teacher_forced_alpha")
        elif name == "exit_heads":
            batch = recipe.get("target_batch", "?")
            shape = f"rank {c['rank']}, K = {', '.join(map(str, c['layers']))}"
            steps = f"{n['steps']} x {batch}"
            loss, val, tf = "KL(p || q_K)", None, None
        else:
            shape = f"{c['n_layer']} x d{c['n_embd']}, {c['n_head']} heads"
            batch = recipe.get("target_batch" if name == "target" else "draft_batch", "?")
            steps = " + ".join(f"{p['steps']} x {batch}" for p in _phases(n))
            init = _phases(n)[0].get("init")
            if init:  # trained on from another model's weights
                steps = f"{init} + {steps}"
            loss = ("KL(p || q)" if n.get("loss", "").startswith("KL") else "cross-entropy") + _tv_phases(n)
            val, tf = n.get("val_loss"), n.get("teacher_forced_alpha")
        out.append({"model": name, "shape": shape, "parameters": e["parameters"], "mib": e["bytes"] / MiB,
                    "steps": steps, "loss": loss, "val_loss": val, "teacher_forced_alpha": tf,
                    "seconds": n.get("seconds")})
    return out


HEADERS = ["model", "shape", "parameters", "MiB", "steps x batch", "loss", "val loss", "teacher-forced alpha",
           "seconds"]


def table_rows(rs: list) -> list:
    """``rows`` as text cells under ``HEADERS``."""
    return [[r["model"], r["shape"], f"{r['parameters']:,}", f"{r['mib']:.2f}", r["steps"], r["loss"],
             "" if r["val_loss"] is None else f"{r['val_loss']:.4f}",
             "" if r["teacher_forced_alpha"] is None else f"{r['teacher_forced_alpha']:.4f}",
             "" if r["seconds"] is None else f"{r['seconds']:.0f}"] for r in rs]


def header_lines(m: dict) -> list:
    meta = corpus_meta()
    files, total = meta["files"], sum(r["mib"] for r in rows(m))
    base = meta.get("base_files", len(files))
    return [f"corpus: {len(files)} files of the CPython 3.11.7 standard library, {meta['chars']:,} characters "
            f"({base} top-level base files, every 20th of them held out for validation)",
            f"weights: float16, {total:.2f} MiB in all"]


def footer_lines(m: dict) -> list:
    out = []
    for i, p in enumerate(_phases(m["models"]["target"]["notes"]), 1):
        curve = p["curve"]
        picks = [curve[j] for j in sorted({0, len(curve) // 4, len(curve) // 2, 3 * len(curve) // 4, len(curve) - 1})]
        out.append(f"target phase {i} ({p.get('data', 'corpus')}): train loss "
                   + ", ".join(f"{v:.3f} at step {s}" for s, v in picks)
                   + f"; validation loss {p['val_loss']:.4f}")
    control = m["models"].get("draft_distilled", {}).get("notes", {}).get("control")
    if control:
        out.append(f"control for draft_distilled: draft_trained + {control['steps']} steps of cross-entropy on "
                   f"the same windows: validation loss {control['val_loss']:.4f}, teacher-forced alpha "
                   f"{control['teacher_forced_alpha']:.4f}")
    distilled = m["models"].get("draft_distilled", {}).get("notes", {})
    for i, more in enumerate(_phases(distilled)[1:], 2):
        out.append(f"draft_distilled phase {i}: {more['steps']} more steps from the drafter before (learning rate "
                   f"{more['lr']:g}, cosine, seed {more['seed']}) with {more['tv_weight']:g} x (1 - alpha) added "
                   f"to KL: teacher-forced alpha {more['teacher_forced_alpha']:.4f} +- "
                   f"{more['teacher_forced_alpha_se']:.4f} on {more['alpha_windows']} held-out windows, "
                   f"{more['paired_gain']:+.4f} +- {more['paired_gain_se']:.4f} over the drafter before, paired by window")
    heads = m["models"].get("exit_heads")
    if heads:
        out.append("early exit, teacher-forced alpha without -> with the trained head: " + ", ".join(
            f"K={k} {a['without_head']:.4f} -> {a['with_head']:.4f}"
            for k, a in heads["notes"]["teacher_forced_alpha"].items()))
    eagle = m["models"].get("eagle")
    if eagle and "teacher_forced_alpha_se" in eagle["notes"]:
        n = eagle["notes"]
        same = n.get("distilled_same_windows", {})
        now = m["models"].get("draft_distilled", {}).get("notes", {})
        if "teacher_forced_alpha_se" in now:  # measured on the same held-out windows since (distill_more)
            same = {k: now[k] for k in ("teacher_forced_alpha", "teacher_forced_alpha_se")}
        line = (f"eagle: teacher-forced alpha {n['teacher_forced_alpha']:.4f} +- {n['teacher_forced_alpha_se']:.4f} "
                f"on {n['alpha_windows']} held-out windows, drafts unrolled to depth {n['unroll']} in training")
        for i, more in enumerate(_phases(n)[1:], 2):
            ended = (f", alpha {more['teacher_forced_alpha']:.4f} after it" if "teacher_forced_alpha" in more else "")
            where = f" on {more['device']}" if more.get("device") else ""
            line += (f"; phase {i}: {more['steps']} more steps from the layer before (learning rate {more['lr']:g}, "
                     f"cosine, seed {more.get('seed', '?')}{where}) with {more['tv_weight']:g} x (1 - alpha) "
                     f"added to the loss{ended}")
        if same:
            line += (f"; draft_distilled on the same windows {same['teacher_forced_alpha']:.4f} +- "
                     f"{same['teacher_forced_alpha_se']:.4f}")
        out.append(line)
    return out
