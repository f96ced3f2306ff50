"""Shipped weights load, fit the size budget, and a tampered file is refused."""
import os
import shutil

import pytest
import torch

from specsim.gpt import weights
from specsim.gpt.tokenizer import ASCII_VOCAB, CharTokenizer, UnknownCharacterError


def shipped_dir():
    return str(weights.default_dir())


def test_manifest_lists_the_models_and_exit_heads_with_checksums_and_fits_20_mb():
    m = weights.read_manifest()
    assert set(m["models"]) == set(weights.MODEL_NAMES) | {"exit_heads", "eagle"} and m["vocab"] == ASCII_VOCAB
    total = 0
    for entry in m["models"].values():
        assert len(entry["sha256"]) == 64 and entry["dtype"] == "float16"
        total += os.path.getsize(os.path.join(shipped_dir(), entry["file"]))
    assert total <= 20 * 1024 * 1024


def test_shipped_models_load_in_float32():
    for name in weights.MODEL_NAMES:
        model = weights.load_gpt(name)
        assert model.wte.weight.dtype == torch.float32 and not model.training
        assert model.lm_head.weight is model.wte.weight


def test_exit_heads_load_for_every_k_and_a_tampered_file_is_refused(tmp_path):
    heads = weights.load_exit_heads()
    assert sorted(heads) == list(range(1, weights.load_gpt("target").config.n_layer))
    assert all(not h.training for h in heads.values())
    d = tmp_path / "w"
    shutil.copytree(shipped_dir(), d)
    path = d / "exit_heads.safetensors"
    data = bytearray(path.read_bytes())
    data[-1] ^= 0x01
    path.write_bytes(bytes(data))
    with pytest.raises(weights.WeightsError, match="checksum mismatch for exit_heads.safetensors"):
        weights.load_exit_heads(str(d))


def test_tampered_weights_are_refused(tmp_path):
    d = tmp_path / "w"
    shutil.copytree(shipped_dir(), d)
    weights.load_gpt("draft_trained", str(d))  # the copy is fine
    path = d / "draft_trained.safetensors"
    data = bytearray(path.read_bytes())
    data[-1] ^= 0x01  # flip one bit of one weight
    path.write_bytes(bytes(data))
    with pytest.raises(weights.WeightsError, match="checksum mismatch for draft_trained.safetensors"):
        weights.load_gpt("draft_trained", str(d))
    os.remove(d / "target.safetensors")
    with pytest.raises(weights.WeightsError, match="missing"):
        weights.load_gpt("target", str(d))
    with pytest.raises(weights.WeightsError, match="no model named"):
        weights.load_gpt("nope", str(d))


def test_tokenizer_round_trip_and_names_unknown_characters():
    tok = CharTokenizer(ASCII_VOCAB)
    text = "def f(x):\n    return x ** 2  # ok ~"
    assert tok.decode(tok.encode(text)) == text
    with pytest.raises(UnknownCharacterError, match="'\\\\t'"):
        tok.encode("a\tb")


def test_the_weights_report_lists_every_model_of_the_manifest_and_sums_their_bytes():
    from specsim.gpt import weights_report
    m = weights_report.manifest()
    rows = weights_report.rows(m)
    assert [r["model"] for r in rows] == [n for n in ("target", "draft_trained", "draft_distilled", "exit_heads",
                                                      "eagle") if n in m["models"]]
    assert set(m["models"]) == {r["model"] for r in rows}, "a shipped model is missing from `gpt weights`"
    total = sum(e["bytes"] for e in m["models"].values()) / weights_report.MiB
    assert f"{total:.2f} MiB in all" in weights_report.header_lines(m)[1]
    eagle = next(r for r in rows if r["model"] == "eagle")
    assert eagle["teacher_forced_alpha"] == m["models"]["eagle"]["notes"]["teacher_forced_alpha"]


def test_the_weights_report_shows_every_phase_of_an_eagle_layer_trained_on():
    """An eagle entry with one phase, then two and three (stage ``eagle_more`` run again): steps of each, which
    phases had the total-variation term, the alpha each later phase ended at and where it ran."""
    import copy

    from specsim.gpt import weights_report
    m = copy.deepcopy(weights_report.manifest())
    n = m["models"]["eagle"]["notes"]
    first = {k: v for k, v in n.items() if k not in ("phases", "tv_weight", "device")} | {"steps": 2500, "batch": 8}
    n.pop("phases")

    def report(*phases):
        n["phases"] = list(phases)
        row = next(r for r in weights_report.rows(m) if r["model"] == "eagle")
        return row, next(x for x in weights_report.footer_lines(m) if x.startswith("eagle:"))

    row, line = report(first)
    assert row["steps"] == "2500 x 8" and "alpha)" not in row["loss"] and "phase 2" not in line
    second = dict(first, steps=300, lr=5e-4, tv_weight=4.0, seed=0)
    row, line = report(first, second)
    assert row["steps"] == "2500 x 8 + 300 x 8" and row["loss"].endswith("(+ 4 x (1 - alpha) in phase 2)")
    assert "phase 2: 300 more steps from the layer before (learning rate 0.0005, cosine, seed 0) with 4 x" in line
    row, line = report(first, second | {"teacher_forced_alpha": 0.81}, dict(second, steps=70, seed=1, device="cuda"))
    assert row["steps"] == "2500 x 8 + 300 x 8 + 70 x 8" and row["loss"].endswith("in phases 2-3)")
    assert "added to the loss, alpha 0.8100 after it; phase 3: 70 more steps" in line and "seed 1 on cuda)" in line


def test_the_weights_report_shows_a_distilled_drafter_trained_on_with_the_rejection_rate():
    """The shipped draft_distilled entry, as ``distill_more`` wrote it (run once or more): the row counts every
    phase from draft_trained and names the term; a footer line per later phase gives its alpha and paired gain;
    the same entry cut back to its first phase reads as a plain KL drafter."""
    import copy

    from specsim.gpt import weights_report
    m = copy.deepcopy(weights_report.manifest())
    n = m["models"]["draft_distilled"]["notes"]
    first, *later = n["phases"]
    assert later, "the shipped drafter has at least one distill_more phase"
    row = next(r for r in weights_report.rows(m) if r["model"] == "draft_distilled")
    assert row["steps"] == "draft_trained + " + " + ".join(f"{p['steps']} x 8" for p in [first] + later)
    which = "phase 2" if len(later) == 1 else f"phases 2-{len(later) + 1}"
    assert row["loss"] == f"KL(p || q) (+ {later[0]['tv_weight']:g} x (1 - alpha) in {which})"
    assert row["teacher_forced_alpha"] == later[-1]["teacher_forced_alpha"] == n["teacher_forced_alpha"]
    footer = weights_report.footer_lines(m)
    for i, more in enumerate(later, 2):
        line = next(x for x in footer if x.startswith(f"draft_distilled phase {i}:"))
        assert (f"{more['steps']} more steps from the drafter before (learning rate {more['lr']:g}, cosine, "
                f"seed {more['seed']})") in line
        assert (f"alpha {more['teacher_forced_alpha']:.4f} +- {more['teacher_forced_alpha_se']:.4f} on 32 held-out "
                f"windows, {more['paired_gain']:+.4f} +- {more['paired_gain_se']:.4f} over the drafter before") in line
    assert not any(x.startswith(f"draft_distilled phase {len(later) + 2}") for x in footer)
    eagle = next(x for x in footer if x.startswith("eagle:"))
    assert f"draft_distilled on the same windows {n['teacher_forced_alpha']:.4f}" in eagle  # the drafter now
    m["models"]["draft_distilled"]["notes"] = dict(first, recipe=n["recipe"])  # before distill_more
    row = next(r for r in weights_report.rows(m) if r["model"] == "draft_distilled")
    assert row["steps"] == f"draft_trained + {first['steps']} x 8" and row["loss"] == "KL(p || q)"
    assert not any(x.startswith("draft_distilled phase") for x in weights_report.footer_lines(m))


def test_a_write_interrupted_midway_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    """What gpt train writes (weights, manifest, corpus) goes through atomic_write: a signal mid-write (here an
    exception from the write itself) leaves the previous file whole and nothing half-written beside it."""
    import builtins

    from specsim.gpt.checkpoint_checks import atomic_write
    path = tmp_path / "manifest.json"
    atomic_write(str(path), b"old")
    real_open = builtins.open

    class Stop(KeyboardInterrupt):
        pass

    def open_then_stop(file, mode="r", *a, **k):
        f = real_open(file, mode, *a, **k)
        if "w" in mode:
            f.write(b"half")
            raise Stop
        return f

    monkeypatch.setattr(builtins, "open", open_then_stop)
    with pytest.raises(Stop):
        atomic_write(str(path), b"new and longer")
    monkeypatch.setattr(builtins, "open", real_open)
    assert path.read_bytes() == b"old" and sorted(os.listdir(tmp_path)) == ["manifest.json"]
