"""The training code runs a few steps on a tiny corpus: plain, distilled, saved, reloaded."""
import json

import pytest
import torch

from specsim.gpt import weights
from specsim.gpt.config import PRESETS
from specsim.gpt.recipe import Recipe, run_stage
from specsim.gpt.tokenizer import ASCII_VOCAB, CharTokenizer

TEXT = "def add(a, b):\n    return a + b\n\n" * 40


def tiny_data():
    ids = torch.tensor(CharTokenizer(ASCII_VOCAB).encode(TEXT))
    return ids[:1000], ids[1000:]


def test_stages_train_save_and_reload(tmp_path):
    torch.set_num_threads(1)
    recipe = Recipe(target_steps=40, draft_steps=30, target_batch=4, draft_batch=4, target_lr=1e-2,
                    draft_lr=1e-2, target_preset="tiny", draft_preset="tiny")
    out = str(tmp_path)
    entries = {s: run_stage(s, out, recipe, progress=False, data=tiny_data())
               for s in ("target", "draft_trained", "draft_distilled")}
    curve = entries["target"]["notes"]["curve"]
    assert curve[-1][1] < curve[0][1]  # the loss went down
    assert entries["draft_distilled"]["notes"]["loss"].startswith("KL")
    assert 0 < entries["draft_distilled"]["notes"]["teacher_forced_alpha"] <= 1
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert sorted(manifest["models"]) == sorted(entries)
    model = weights.load_gpt("draft_distilled", out)
    assert model.config == PRESETS["tiny"]


def test_same_seed_same_losses():
    from specsim.gpt.train import train_lm
    train, val = tiny_data()
    a = train_lm(PRESETS["tiny"], train, val, steps=5, batch_size=2, seed=7, progress=False)
    b = train_lm(PRESETS["tiny"], train, val, steps=5, batch_size=2, seed=7, progress=False)
    assert a.losses == b.losses


def test_teacher_forced_alpha_is_the_fraction_rule_alpha_averaged_over_positions():
    """The torch twin inside teacher_forced_alpha agrees with specsim.rule.alpha, row by row."""
    from specsim import rule as exact_rule
    from specsim.gpt.model import GPT
    from specsim.gpt.train import teacher_forced_alpha

    torch.manual_seed(0)
    target, draft = GPT(PRESETS["tiny"]).eval(), GPT(PRESETS["tiny"]).eval()  # two random models
    data = tiny_data()[0][:65]
    got = teacher_forced_alpha(target, draft, data, block=16, max_windows=4, temperature=0.7)
    x = data[:64].view(4, 16)  # (4, T)
    with torch.no_grad():
        p = torch.softmax(target(x).double() / 0.7, dim=-1).view(-1, 96)  # (4*T, V)
        q = torch.softmax(draft(x).double() / 0.7, dim=-1).view(-1, 96)  # (4*T, V)
    per_position = [exact_rule.alpha(a.tolist(), b.tolist()) for a, b in zip(p, q)]
    assert 0 < got < 1
    assert got == pytest.approx(sum(per_position) / len(per_position), abs=1e-5)  # float32 logits
