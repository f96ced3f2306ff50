"""Hostile checkpoints: your own pair, a training checkpoint, an export directory.

No code from a checkpoint runs (an ``auto_map`` naming Python files, a pickle
in ``pytorch_model.bin`` or in a training checkpoint), a broken or partial
checkpoint is refused in one line naming what is wrong (never loaded with
random weights), and ``export-hf`` neither overwrites files it did not write
nor writes through a symlink. Every hostile file is built in tmp_path from a
real export of the shipped drafter, then tampered with. Each planted piece of
code would create ``MARKER``; the tests assert it never appears.

Cases that could run code or hang run ``python -m specsim.cli`` in a
subprocess, with "y" lines on stdin (``yes | specsim ...``: transformers asks
on stdin before running remote code) and a generous timeout that only catches
a hang.
"""
from __future__ import annotations

import json
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

transformers = pytest.importorskip("transformers")  # a guard only: CI installs the hf extra

from safetensors.torch import load_file, save_file  # noqa: E402

from specsim.gpt import api  # noqa: E402

from specsim.gpt.hf import export as hf_export

from specsim.gpt.hf import pair as hf_pair

from specsim.gpt.train import loop as train
from specsim.gpt.checkpoint_checks import CheckpointError  # noqa: E402
from specsim.gpt.config import PRESETS  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 300  # seconds: catches a hang, never a slow machine
GENERATE = ("gpt", "generate", "--prompt", "def ", "--tokens", "2", "--device", "cpu")


@pytest.fixture(scope="module")
def good(tmp_path_factory) -> Path:
    """The shipped distilled drafter as an HF checkpoint (small: one layer); it loads as a pair with itself."""
    transformers.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    out = tmp_path_factory.mktemp("good") / "draft"
    hf_export.export_hf(str(out), "draft-distilled")
    return out


def copy_of(good: Path, tmp_path: Path, name: str) -> Path:
    out = tmp_path / name
    shutil.copytree(good, out)
    return out


def edit_json(path: Path, **changes) -> None:
    data = json.loads(path.read_text()) if path.exists() else {}
    path.write_text(json.dumps(data | changes))


def run_cli(*argv, tmp_path: Path):
    """``yes | python -m specsim.cli ARGV`` -> (exit code, stdout, stderr); HF caches kept in tmp_path."""
    env = dict(os.environ, HF_HOME=str(tmp_path / "hf_home"), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    p = subprocess.run([sys.executable, "-m", "specsim.cli", *map(str, argv)], input="y\n" * 5000,
                       capture_output=True, text=True, timeout=TIMEOUT, cwd=ROOT, env=env)
    return p.returncode, p.stdout, p.stderr


def assert_one_line(code, out, err, *fragments):
    assert code == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err, (code, out, err)
    for fragment in fragments:
        assert fragment in err, (fragment, err)


# -- 1. remote code: auto_map ------------------------------------------------------------------

EVIL = "import pathlib\npathlib.Path({marker!r}).write_text('code from the checkpoint ran')\n"


def plant_auto_map(ckpt: Path, marker: Path, in_tokenizer: bool) -> None:
    """Python files that write ``marker`` when imported, and an auto_map that names them."""
    code = EVIL.format(marker=str(marker))
    (ckpt / "evil_config.py").write_text(code + "from transformers import GPT2Config\n\n"
                                         "class EvilConfig(GPT2Config):\n    model_type = 'evil_gpt'\n")
    (ckpt / "evil_model.py").write_text(code + "from transformers import GPT2LMHeadModel\n"
                                        "from .evil_config import EvilConfig\n\n"
                                        "class EvilForCausalLM(GPT2LMHeadModel):\n    config_class = EvilConfig\n")
    (ckpt / "evil_tok.py").write_text(code + "from transformers import PreTrainedTokenizerFast\n\n"
                                      "class EvilTokenizer(PreTrainedTokenizerFast):\n    pass\n")
    if in_tokenizer:
        edit_json(ckpt / "tokenizer_config.json", tokenizer_class="EvilTokenizer",
                  auto_map={"AutoTokenizer": [None, "evil_tok.EvilTokenizer"]})
    else:
        edit_json(ckpt / "config.json", model_type="evil_gpt", architectures=["EvilForCausalLM"],
                  auto_map={"AutoConfig": "evil_config.EvilConfig",
                            "AutoModelForCausalLM": "evil_model.EvilForCausalLM"})


@pytest.mark.parametrize("where, file", [("config", "config.json"), ("tokenizer", "tokenizer_config.json")])
def test_auto_map_is_refused_and_its_code_never_runs(good, tmp_path, where, file):
    marker = tmp_path / "MARKER"
    evil = copy_of(good, tmp_path, "evil")
    plant_auto_map(evil, marker, in_tokenizer=where == "tokenizer")
    code, out, err = run_cli(*GENERATE, "--target", evil, "--draft", good, tmp_path=tmp_path)
    assert_one_line(code, out, err, "auto_map", file)
    assert not marker.exists()


# -- 2. pickles ------------------------------------------------------------------------------------

class _Evil:
    """Unpickling this calls ``open(marker, "w")``: the file appears if the pickle is ever loaded."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return open, (self.marker, "w")


def test_a_pickle_only_checkpoint_is_refused_and_never_unpickled(good, tmp_path):
    marker = tmp_path / "MARKER"
    evil = copy_of(good, tmp_path, "pickled")
    (evil / "model.safetensors").unlink()
    (evil / "pytorch_model.bin").write_bytes(pickle.dumps(_Evil(marker)))
    code, out, err = run_cli(*GENERATE, "--target", evil, "--draft", good, tmp_path=tmp_path)
    assert_one_line(code, out, err, "pytorch_model.bin", "safetensors")
    assert not marker.exists()


def _stage_target_ckpt(tmp_path: Path, content: bytes) -> Path:
    out = tmp_path / "train"
    out.mkdir()
    (out / "target.ckpt").write_bytes(content)
    return out


@pytest.mark.parametrize("case", ["pickle", "list", "garbage", "empty"])
def test_gpt_train_refuses_a_hostile_resume_checkpoint_in_one_line(cli, tmp_path, monkeypatch, recwarn, case):
    from specsim.gpt.train import recipe
    marker = tmp_path / "MARKER"
    if case == "list":
        path = tmp_path / "list.pt"
        torch.save([1, 2, 3], path)
        content = path.read_bytes()
    else:
        content = {"pickle": pickle.dumps(_Evil(marker)), "garbage": b"\x00not a checkpoint" * 100,
                   "empty": b""}[case]
    out = _stage_target_ckpt(tmp_path, content)
    data = torch.arange(300) % 7
    monkeypatch.setattr(recipe, "corpus_tensors", lambda **kw: (data, data))  # no 7 s corpus encoding
    code, stdout, err = cli("gpt", "train", "--out", out, "--stage", "target", "--target-steps", "1",
                            "--device", "cpu")
    assert_one_line(code, stdout, err, "target.ckpt")
    assert [str(w.message) for w in recwarn] == []  # a warning would be a second stderr line
    assert not marker.exists()
    assert (out / "target.ckpt").read_bytes() == content  # left for the user to inspect or delete


def _real_checkpoint(tmp_path: Path) -> tuple[Path, dict]:
    data = torch.arange(300) % 7
    ckpt = tmp_path / "run.ckpt"
    kw = dict(steps=2, batch_size=2, seed=0, progress=False)
    train.train_lm(PRESETS["tiny"], data, data, checkpoint=str(ckpt), checkpoint_every=1, **kw)
    return ckpt, kw


@pytest.mark.parametrize("case, message", [
    ("model", "its model weights do not fit"),
    ("nan", "not finite"),
    ("step", "step"),
    ("losses", "losses"),
])
def test_a_checkpoint_of_the_same_run_with_bad_contents_is_one_line(tmp_path, case, message):
    ckpt, kw = _real_checkpoint(tmp_path)
    state = torch.load(ckpt, weights_only=True)
    if case == "model":
        state["model"] = {k: v for k, v in state["model"].items() if "mlp" not in k}
    elif case == "nan":
        state["model"]["wte.weight"][0, 0] = float("nan")
    elif case == "step":
        state["step"] = 10**9
    else:
        state["losses"] = "not a list"
    torch.save(state, ckpt)
    data = torch.arange(300) % 7
    with pytest.raises(CheckpointError, match=message) as e:
        train.train_lm(PRESETS["tiny"], data, data, checkpoint=str(ckpt), **kw)
    assert "\n" not in str(e.value) and "run.ckpt" in str(e.value)


# -- 3, 4. broken weights: truncated, not finite, missing, unexpected --------------------------------

def _tamper_weights(ckpt: Path, case: str) -> None:
    path = ckpt / "model.safetensors"
    state = load_file(path)
    if case == "truncated":
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2])
        return
    if case in ("nan", "inf"):
        state["transformer.h.0.mlp.c_fc.weight"][3, 5] = float(case)
    elif case == "none":
        state = {}
    elif case == "some":
        state = {k: v for k, v in state.items() if ".mlp." not in k}
    elif case == "unexpected":
        state["transformer.h.7.attn.c_attn.weight"] = torch.zeros(2, 2)
    save_file(state, path, metadata={"format": "pt"})


WEIGHT_CASES = {
    "truncated": "model.safetensors",
    "nan": "transformer.h.0.mlp.c_fc.weight is not finite",
    "inf": "transformer.h.0.mlp.c_fc.weight is not finite",
    "none": "missing weights",
    "some": "transformer.h.0.mlp.c_fc.weight",
    "unexpected": "transformer.h.7.attn.c_attn.weight",
}


@pytest.mark.parametrize("case", list(WEIGHT_CASES))
def test_broken_weights_are_refused_naming_the_problem(cli, good, tmp_path, case):
    bad = copy_of(good, tmp_path, case)
    _tamper_weights(bad, case)
    code, out, err = cli(*GENERATE, "--target", good, "--draft", bad)
    assert_one_line(code, out, err, "draft", WEIGHT_CASES[case])


def test_missing_weights_raise_checkpoint_error_for_the_app(good, tmp_path):
    bad = copy_of(good, tmp_path, "some")
    _tamper_weights(bad, "some")
    with pytest.raises(CheckpointError, match=r"missing weights .*mlp"):
        hf_pair.load_hf_pair(str(good), str(bad), "cpu")


def test_the_tied_head_is_not_missing_and_the_logits_are_the_shipped_ones(good):
    """The export stores the head once (tied to wte); it loads with no missing weight, same logits."""
    pair = hf_pair.load_hf_pair(str(good), str(good), "cpu")
    ours = api.load_pair("distilled", "cpu").draft
    ids = torch.tensor([pair.tokenizer.encode("def f(x):\n")])
    with torch.inference_mode():
        torch.testing.assert_close(pair.target(ids), ours(ids), atol=1e-5, rtol=0)


# -- 1. config.json and tokenizer_config.json themselves -------------------------------------------

def _tamper_config(ckpt: Path, case: str) -> None:
    path = ckpt / "config.json"
    if case == "huge":
        path.write_text(json.dumps(json.loads(path.read_text()) | {"pad": " " * (2 << 20)}))
    elif case == "deep":
        path.write_text('{"model_type": "gpt2", "x": ' + "[" * 100_000 + "]" * 100_000 + "}")
    elif case == "list":
        path.write_text("[1, 2, 3]")
    elif case == "not json":
        path.write_text("{model_type: gpt2")
    elif case == "deep tokenizer":
        (ckpt / "tokenizer_config.json").write_text('{"x": ' + "{\"a\": " * 100_000 + "1" + "}" * 100_001)


CONFIG_CASES = {"huge": "larger than", "deep": "nested deeper than", "list": "not a JSON object",
                "not json": "not valid JSON", "deep tokenizer": "tokenizer_config.json"}


@pytest.mark.parametrize("case", list(CONFIG_CASES))
def test_hostile_config_files_are_one_line(cli, good, tmp_path, case):
    bad = copy_of(good, tmp_path, "bad")
    _tamper_config(bad, case)
    code, out, err = cli(*GENERATE, "--target", bad, "--draft", good)
    assert_one_line(code, out, err, "target", CONFIG_CASES[case])


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_or_a_device_as_a_config_is_refused_not_read(good, tmp_path):
    bad = copy_of(good, tmp_path, "fifo")
    (bad / "tokenizer_config.json").unlink()
    os.mkfifo(bad / "tokenizer_config.json")  # reading it would block forever
    (bad / "config.json").unlink()
    (bad / "config.json").symlink_to("/dev/zero")  # endless
    code, out, err = run_cli(*GENERATE, "--target", bad, "--draft", good, tmp_path=tmp_path)
    assert_one_line(code, out, err, "config.json", "not a regular file")
    (bad / "config.json").unlink()
    shutil.copy(good / "config.json", bad / "config.json")
    code, out, err = run_cli(*GENERATE, "--target", bad, "--draft", good, tmp_path=tmp_path)
    assert_one_line(code, out, err, "tokenizer_config.json", "not a regular file")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
@pytest.mark.parametrize("kind", ["fifo", "/dev/zero"])
def test_weights_that_are_a_fifo_or_a_device_are_named_as_such(good, tmp_path, kind):
    bad = copy_of(good, tmp_path, "weights")
    (bad / "model.safetensors").unlink()
    if kind == "fifo":
        os.mkfifo(bad / "model.safetensors")  # opening it would block forever
    else:
        (bad / "model.safetensors").symlink_to("/dev/zero")  # endless
    code, out, err = run_cli(*GENERATE, "--target", bad, "--draft", good, tmp_path=tmp_path)
    assert_one_line(code, out, err, "model.safetensors", "a FIFO (named pipe)" if kind == "fifo"
                    else "a character device")


# -- 5. export-hf: no lost files, no writing through links -------------------------------------------

def test_export_refuses_a_non_empty_directory_and_touches_nothing(cli, tmp_path):
    out = tmp_path / "theirs"
    out.mkdir()
    (out / "README.md").write_text("their model card")
    (out / "config.json").write_text('{"model_type": "llama"}')
    code, stdout, err = cli("gpt", "export-hf", out, "--device", "cpu")
    assert_one_line(code, stdout, err, "not empty", "--force")
    assert sorted(os.listdir(out)) == ["README.md", "config.json"]
    assert (out / "config.json").read_text() == '{"model_type": "llama"}'


def test_force_refuses_files_the_export_does_not_write(cli, good, tmp_path):
    out = copy_of(good, tmp_path, "mixed")
    (out / "pytorch_model.bin").write_bytes(b"their weights")
    before = {f: (out / f).read_bytes() for f in os.listdir(out)}
    code, stdout, err = cli("gpt", "export-hf", out, "--force", "--device", "cpu")
    assert_one_line(code, stdout, err, "pytorch_model.bin")
    assert {f: (out / f).read_bytes() for f in os.listdir(out)} == before


def test_force_never_writes_through_a_symlink_planted_in_an_export(cli, good, tmp_path):
    """A previous export whose config.json became a symlink to someone's file is no longer as specsim wrote
    it: --force refuses it in one line, and neither the link nor the file it points to is touched."""
    out = copy_of(good, tmp_path, "linked")
    elsewhere = tmp_path / "precious.json"
    elsewhere.write_text('{"keep": "me"}')
    (out / "config.json").unlink()
    (out / "config.json").symlink_to(elsewhere)
    code, stdout, err = cli("gpt", "export-hf", out, "--model", "draft-distilled", "--force", "--device", "cpu")
    assert_one_line(code, stdout, err, "config.json changed since specsim exported it")
    assert elsewhere.read_text() == '{"keep": "me"}' and (out / "config.json").is_symlink()
    assert not [e for e in os.listdir(out) if e.startswith(".specsim-export-")]  # no staging left behind


def test_force_replaces_an_unchanged_previous_export(cli, good, tmp_path):
    out = copy_of(good, tmp_path, "again")
    code, stdout, err = cli("gpt", "export-hf", out, "--model", "draft-distilled", "--force", "--device", "cpu")
    assert code == 0, err
    assert sorted(os.listdir(out)) == sorted(os.listdir(good))
    pair = hf_pair.load_hf_pair(str(out), str(good), "cpu")  # and it still loads: the same logits
    ids = torch.tensor([pair.tokenizer.encode("import os\n")])
    with torch.inference_mode():
        torch.testing.assert_close(pair.target(ids), pair.draft(ids), atol=0, rtol=0)


def test_force_refuses_a_directory_where_a_file_would_go(cli, good, tmp_path):
    out = copy_of(good, tmp_path, "dir")
    (out / "config.json").unlink()
    (out / "config.json").mkdir()
    code, stdout, err = cli("gpt", "export-hf", out, "--force", "--device", "cpu")
    assert_one_line(code, stdout, err, "config.json")
    assert (out / "config.json").is_dir()


# -- a training directory handed to `gpt train --out DIR` ----------------------------------------------

def _training_dir(tmp_path: Path, case: str) -> Path:
    """A directory whose target (one recorded phase) the stage target_more would continue."""
    from specsim.gpt import weights
    from specsim.gpt.model import GPT
    from specsim.gpt.tokenizer import ASCII_VOCAB
    out = tmp_path / "run"
    out.mkdir()
    model = GPT(PRESETS["tiny"])
    if case == "nan":
        with torch.no_grad():
            model.wte.weight[1, 2] = float("inf")
    entry = weights.save_model(model, str(out), "target", {"phases": [{"steps": 1, "seconds": 0.0}]})
    weights.update_manifest(str(out), ASCII_VOCAB, {"target": entry})
    if case == "deep manifest":
        (out / "manifest.json").write_text("[" * 100_000 + "]" * 100_000)
    elif case == "escape":
        manifest = json.loads((out / "manifest.json").read_text())
        manifest["models"]["target"]["file"] = "../precious.safetensors"
        (out / "manifest.json").write_text(json.dumps(manifest))
    return out


@pytest.mark.parametrize("case, message", [("nan", "wte.weight is not finite"),
                                           ("deep manifest", "nested deeper than"),
                                           ("escape", "names no weight file in its directory")])
def test_target_more_refuses_a_hostile_training_directory(tmp_path, case, message):
    from specsim.gpt.train.recipe import Recipe, run_stage
    out = _training_dir(tmp_path, case)
    recipe = Recipe(more_steps=1, target_batch=2, target_preset="tiny", draft_preset="tiny")
    data = torch.arange(300) % 7
    with pytest.raises(CheckpointError, match=message) as e:
        run_stage("target_more", str(out), recipe, progress=False, data=(data, data))
    assert "\n" not in str(e.value)


def test_a_pickle_beside_safetensors_is_never_read(good, tmp_path):
    """With model.safetensors present the pair loads from it; the pickle next to it is not opened."""
    marker = tmp_path / "MARKER"
    both = copy_of(good, tmp_path, "both")
    (both / "pytorch_model.bin").write_bytes(pickle.dumps(_Evil(marker)))
    pair = hf_pair.load_hf_pair(str(both), str(good), "cpu")
    assert pair.target.num_parameters() == pair.draft.num_parameters()
    assert not marker.exists()


@pytest.mark.parametrize("case, message", [
    ("unknown model_type", "model_type 'evil_gpt', which transformers"),
    ("deep tokenizer.json", "cannot load the target checkpoint"),
])
def test_other_odd_checkpoints_are_one_line(cli, good, tmp_path, case, message):
    bad = copy_of(good, tmp_path, "odd")
    if case == "unknown model_type":
        edit_json(bad / "config.json", model_type="evil_gpt")
    else:
        (bad / "tokenizer.json").write_text('{"x": ' + "[" * 100_000 + "]" * 100_000 + "}")
    code, out, err = cli(*GENERATE, "--target", bad, "--draft", good)
    assert_one_line(code, out, err, message)


def test_an_older_gpt2_layout_with_a_leftover_buffer_still_loads(good, tmp_path):
    """Hub-era GPT-2 files: names without ``transformer.`` and a saved ``attn.masked_bias`` buffer the model
    no longer has. Every weight is there, so it loads, with the same logits; an extra layer would not."""
    old = copy_of(good, tmp_path, "old")
    state = {k.removeprefix("transformer."): v for k, v in load_file(old / "model.safetensors").items()}
    state["h.0.attn.masked_bias"] = torch.tensor(-1e4)
    save_file(state, old / "model.safetensors", metadata={"format": "pt"})
    pair = hf_pair.load_hf_pair(str(old), str(good), "cpu")
    ids = torch.tensor([pair.tokenizer.encode("x = 1\n")])
    with torch.inference_mode():
        torch.testing.assert_close(pair.target(ids), pair.draft(ids), atol=0, rtol=0)
    state["h.1.attn.c_attn.weight"] = state["h.0.attn.c_attn.weight"].clone()  # a layer the config lacks
    save_file(state, old / "model.safetensors", metadata={"format": "pt"})
    with pytest.raises(CheckpointError, match=r"unexpected weights \(1\): h\.1\.attn\.c_attn\.weight"):
        hf_pair.load_hf_pair(str(good), str(old), "cpu")  # other paths than the pair cached above
