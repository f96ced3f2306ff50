"""The training code runs a few steps on a tiny corpus: plain, distilled, saved, reloaded."""
import json

import pytest
import torch

from specsim.gpt import weights
from specsim.gpt.config import PRESETS
from specsim.gpt.train.recipe import STAGES, Recipe, run_stage
from specsim.gpt.tokenizer import ASCII_VOCAB, CharTokenizer

TEXT = "def add(a, b):\n    return a + b\n\n" * 40


def tiny_data():
    ids = torch.tensor(CharTokenizer(ASCII_VOCAB).encode(TEXT))
    return ids[:1000], ids[1000:]


def test_stages_train_save_and_reload(tmp_path):
    torch.set_num_threads(1)
    recipe = Recipe(target_steps=40, more_steps=10, draft_steps=30, distill_steps=10, distill_more_steps=5,
                    exit_steps=5, eagle_steps=30, eagle_more_steps=5,
                    target_batch=4, draft_batch=4, target_lr=1e-2, draft_lr=1e-2, exit_rank=4,
                    target_preset="tiny-2", draft_preset="tiny")
    out = str(tmp_path)
    entries = {s: run_stage(s, out, recipe, progress=False, data=tiny_data()) for s in STAGES}
    target = entries["target_more"]  # the second phase rewrote the target's entry
    phases = target["notes"]["phases"]
    assert [p["steps"] for p in phases] == [40, 10] and target["notes"]["steps"] == 50
    assert phases[0]["curve"][-1][1] < phases[0]["curve"][0][1]  # the loss went down
    assert entries["draft_distilled"]["notes"]["loss"].startswith("KL")
    assert [p["steps"] for p in entries["distill_more"]["notes"]["phases"]] == [10, 5]
    assert entries["draft_distilled"]["notes"]["init"] == "draft_trained"
    control = entries["draft_distilled"]["notes"]["control"]  # same start and windows, cross-entropy
    assert control["steps"] == 10 and 0 < control["teacher_forced_alpha"] <= 1
    assert 0 < entries["draft_distilled"]["notes"]["teacher_forced_alpha"] <= 1
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert sorted(manifest["models"]) == ["draft_distilled", "draft_trained", "eagle", "exit_heads", "target"]
    assert 0 < entries["eagle"]["notes"]["teacher_forced_alpha"] <= 1 and weights.load_eagle(out).config.n_embd == 16
    assert weights.load_gpt("draft_distilled", out).config == PRESETS["tiny"]
    assert not list(tmp_path.glob("*.ckpt"))  # checkpoints go once the weights are written
    heads = weights.load_exit_heads(out)
    assert sorted(heads) == [1] and set(entries["exit_heads"]["notes"]["teacher_forced_alpha"]) == {"1"}
    with pytest.raises(ValueError, match="target_more continues a target that had one phase"):
        run_stage("target_more", out, recipe, progress=False, data=tiny_data())
    eagle = entries["eagle_more"]["notes"]  # the second phase rewrote the eagle entry, from the first's weights
    assert [p["steps"] for p in eagle["phases"]] == [30, 5] and eagle["steps"] == 35 and eagle["init"] == "eagle"
    assert eagle["tv_weight"] == 4.0 and 0 <= eagle["final_tv"] <= 1 and 0 < eagle["teacher_forced_alpha"] <= 1
    assert manifest["models"]["eagle"]["notes"] == eagle
    third = run_stage("eagle_more", out, recipe, progress=False, data=tiny_data())["notes"]  # one more phase
    assert [p["steps"] for p in third["phases"]] == [30, 5, 5] and third["steps"] == 40
    assert [p["seed"] for p in third["phases"]] == [0, 0, 1]  # a repeat draws other batches
    assert third["phases"][1]["teacher_forced_alpha"] == eagle["teacher_forced_alpha"]  # what phase 2 ended at
    assert third["device"] == "cpu" and "teacher_forced_alpha" not in third["phases"][2]


def test_an_interrupted_run_resumed_ends_with_the_same_weights(tmp_path, stopped_after_first_checkpoint):
    from specsim.gpt.train import loop as train
    data, _ = tiny_data()
    whole = train.train_lm(PRESETS["tiny"], data, data, steps=6, batch_size=2, seed=0, progress=False)
    ckpt = str(tmp_path / "run.ckpt")
    with stopped_after_first_checkpoint():
        train.train_lm(PRESETS["tiny"], data, data, steps=6, batch_size=2, seed=0, progress=False,
                       checkpoint=ckpt, checkpoint_every=3)
    resumed = train.train_lm(PRESETS["tiny"], data, data, steps=6, batch_size=2, seed=0, progress=False,
                             checkpoint=ckpt, checkpoint_every=3)
    assert resumed.losses == whole.losses
    assert all(torch.equal(a, b) for a, b in zip(whole.model.state_dict().values(),
                                                 resumed.model.state_dict().values()))
    with pytest.raises(ValueError, match="checkpoint .* is from a different run \\(differs in lr\\)"):
        train.train_lm(PRESETS["tiny"], data, data, steps=6, batch_size=2, seed=0, lr=0.5, progress=False,
                       checkpoint=ckpt)


def test_an_untrained_exit_head_is_the_plain_early_exit():
    from specsim.gpt.drafters import EarlyExit, ExitHead
    from specsim.gpt.model import GPT
    torch.manual_seed(0)
    target = GPT(PRESETS["tiny-2"]).eval()
    head = ExitHead(16, rank=4)
    head.ln.load_state_dict(target.ln_f.state_dict())
    x = torch.tensor([[1, 2, 3, 4]])
    torch.testing.assert_close(EarlyExit(target, 1, head)(x), EarlyExit(target, 1)(x), rtol=0, atol=1e-6)
    torch.nn.init.normal_(head.up.weight)  # a trained head moves away from it
    assert not torch.allclose(EarlyExit(target, 1, head)(x), EarlyExit(target, 1)(x), atol=1e-3)


def test_bfloat16_autocast_only_where_it_runs_natively():
    from specsim.gpt.train.loop import native_bf16
    assert native_bf16(torch.device("cuda"))
    assert native_bf16(torch.device("cpu")) == (torch.cpu._is_avx512_bf16_supported()
                                                or torch.cpu._is_amx_tile_supported())


def test_same_seed_same_losses():
    from specsim.gpt.train.loop import train_lm
    train, val = tiny_data()
    a = train_lm(PRESETS["tiny"], train, val, steps=5, batch_size=2, seed=7, progress=False)
    b = train_lm(PRESETS["tiny"], train, val, steps=5, batch_size=2, seed=7, progress=False)
    assert a.losses == b.losses


def test_teacher_forced_alpha_is_the_fraction_rule_alpha_averaged_over_positions():
    """The torch twin inside teacher_forced_alpha agrees with specsim.rule.alpha, row by row."""
    from specsim import rule as exact_rule
    from specsim.gpt.model import GPT
    from specsim.gpt.train.loop import teacher_forced_alpha

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


def test_cli_trains_the_eagle_stage_and_says_what_it_reached(tmp_path, cli):
    """`gpt train --stage eagle --eagle-steps N` on a copy of the shipped target: one summary line with the
    stage's own figures (its notes have no train/validation loss), the manifest entry written."""
    import shutil
    for name in ("target.safetensors", "draft_distilled.safetensors", "manifest.json"):
        shutil.copy(str(weights.default_dir().joinpath(name)), tmp_path / name)
    code, out, err = cli("gpt", "train", "--stage", "eagle", "--out", str(tmp_path), "--eagle-steps", "2",
                         "--device", "cpu")
    assert code == 0, err
    line = out.strip().splitlines()[-1]
    notes = json.loads((tmp_path / "manifest.json").read_text())["models"]["eagle"]["notes"]
    assert notes["steps"] == 2 and line.startswith("eagle: 346240 parameters, smooth L1 ")
    assert f"teacher-forced alpha {notes['teacher_forced_alpha']} +- {notes['teacher_forced_alpha_se']}" in line


def test_cli_eagle_more_without_an_eagle_layer_is_one_line(tmp_path, cli):
    """`gpt train --stage eagle_more --eagle-more-steps N` where no eagle layer was trained: exit 2, one line."""
    import shutil
    shutil.copy(str(weights.default_dir().joinpath("target.safetensors")), tmp_path / "target.safetensors")
    manifest = json.loads(weights.default_dir().joinpath("manifest.json").read_text())
    manifest["models"] = {"target": manifest["models"]["target"]}
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    code, out, err = cli("gpt", "train", "--stage", "eagle_more", "--out", str(tmp_path), "--eagle-more-steps", "1",
                         "--device", "cpu")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "eagle_more continues a trained eagle layer" in err and "run --stage eagle first" in err


def test_distill_more_trains_the_distilled_drafter_on_with_the_rejection_rate_and_keeps_its_phases(tmp_path):
    """``distill_more``: from the distilled drafter's weights, KL + w (1 - alpha); the entry
    keeps the first phase (with its control) and the new one, alpha before and after paired by window; run
    again it adds a phase with other batches; without a distilled drafter it is one line."""
    assert STAGES.index("distill_more") == STAGES.index("draft_distilled") + 1  # ``all``: right after it
    torch.set_num_threads(1)
    recipe = Recipe(target_steps=20, more_steps=5, draft_steps=10, distill_steps=5, distill_more_steps=6,
                    target_batch=4, draft_batch=4, target_lr=1e-2, draft_lr=1e-2,
                    target_preset="tiny-2", draft_preset="tiny")
    out = str(tmp_path)
    run_stage("target", out, recipe, progress=False, data=tiny_data())
    with pytest.raises(ValueError, match=r"distill_more continues a distilled drafter; .* has none \(run --stage"):
        run_stage("distill_more", out, recipe, progress=False, data=tiny_data())
    for s in ("draft_trained", "draft_distilled"):
        run_stage(s, out, recipe, progress=False, data=tiny_data())
    first = weights.read_manifest(out)["models"]["draft_distilled"]["notes"]
    start = weights.load_gpt("draft_distilled", out).state_dict()
    notes = run_stage("distill_more", out, recipe, progress=False, data=tiny_data())["notes"]
    assert [p["steps"] for p in notes["phases"]] == [5, 6] and notes["steps"] == 11
    assert notes["phases"][0]["teacher_forced_alpha"] == first["teacher_forced_alpha"]
    assert notes["control"] == first["control"] and notes["init"] == "draft_distilled"
    assert notes["tv_weight"] == 4.0 and notes["loss"].startswith("KL(p || q) + 4 x (1 - alpha)")
    assert 0 < notes["teacher_forced_alpha"] <= 1 and notes["teacher_forced_alpha_se"] > 0
    gain = notes["teacher_forced_alpha"] - first["teacher_forced_alpha"]  # both over the same held-out windows
    assert abs(notes["paired_gain"] - gain) <= 2e-4  # each side rounded to 4 places
    trained = weights.load_gpt("draft_distilled", out).state_dict()
    assert any(not torch.equal(start[k], trained[k]) for k in start)  # trained on from the first phase's weights
    again = run_stage("distill_more", out, recipe, progress=False, data=tiny_data())["notes"]
    assert [p["steps"] for p in again["phases"]] == [5, 6, 6] and [p.get("seed") for p in again["phases"]][1:] == [1, 2]


def test_the_rejection_rate_term_changes_the_distillation_loss_only_when_asked():
    """``tv_weight`` 0 is the plain KL run to the bit; a weight trains other weights; without a teacher, refused."""
    from specsim.gpt.config import GPTConfig
    from specsim.gpt.model import GPT
    from specsim.gpt.train import loop as train
    data, _ = tiny_data()
    torch.manual_seed(1)
    teacher = GPT(GPTConfig(block_size=32, n_layer=1, n_head=2, n_embd=16)).eval()
    kw = dict(steps=3, batch_size=2, seed=0, progress=False, teacher=teacher)
    plain = train.train_lm(PRESETS["tiny"], data, data, **kw)
    zero = train.train_lm(PRESETS["tiny"], data, data, tv_weight=0.0, **kw)
    tv = train.train_lm(PRESETS["tiny"], data, data, tv_weight=4.0, **kw)
    assert plain.losses == zero.losses and tv.losses[0] > plain.losses[0]  # the same first batch, a term added
    a, b = plain.model.state_dict(), tv.model.state_dict()
    assert any(not torch.equal(a[k], b[k]) for k in a)
    with pytest.raises(ValueError, match="tv_weight is a distillation term"):
        train.train_lm(PRESETS["tiny"], data, data, steps=1, tv_weight=1.0, progress=False)


def test_cli_distill_more_without_a_distilled_drafter_is_one_line(tmp_path, cli):
    """`gpt train --stage distill_more` where no distilled drafter was trained: exit 2, one line."""
    import shutil
    shutil.copy(str(weights.default_dir().joinpath("target.safetensors")), tmp_path / "target.safetensors")
    manifest = json.loads(weights.default_dir().joinpath("manifest.json").read_text())
    manifest["models"] = {"target": manifest["models"]["target"]}
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    code, out, err = cli("gpt", "train", "--stage", "distill_more", "--out", str(tmp_path),
                         "--distill-more-steps", "1", "--device", "cpu")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "distill_more continues a distilled drafter" in err and "run --stage draft_distilled first" in err
