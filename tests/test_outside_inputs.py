"""Outside files and long inputs: bounded before use, shown inert, the user's files never lost.

Each test pins one refusal or safeguard: a checkpoint's tokenizer cannot drive the terminal, export-hf --force
replaces only its own unchanged export, a config's size is checked before torch loads, long inputs are echoed
capped, a dynamic tree that cannot fit is refused before loading and SIGTERM ends a command with one line.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from specsim import schemes
from specsim.cli import MAX_ERROR

ROOT = Path(__file__).resolve().parent.parent
transformers = pytest.importorskip("transformers")  # the HF checkpoints below (CI installs the dev extra)
ESCAPE = "\x1b]0;PWNED\x07\x1b[31m"


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> Path:
    from specsim.gpt.hf import export
    out = tmp_path_factory.mktemp("hf") / "draft"
    export.export_hf(str(out), "draft-distilled")
    return out


def test_a_tokenizers_escape_sequence_is_printed_inert_and_kept_exact_in_json(cli, exported, tmp_path):
    pair = tmp_path / "esc"
    shutil.copytree(exported, pair)
    tok = json.loads((pair / "tokenizer.json").read_text())
    tok["model"]["vocab"][ESCAPE] = tok["model"]["vocab"].pop(" ")  # the space now prints an OSC title and red
    (pair / "tokenizer.json").write_text(json.dumps(tok))
    args = ("gpt", "generate", "--target", pair, "--draft", pair, "--prompt", "def", "--tokens", "20", "--greedy")
    code, out, err = cli(*args)
    assert code == 0, err
    assert "\x1b" not in out and "\x07" not in out and "\\x1b]0;PWNED\\x07" in out
    code, out, err = cli(*args, "--json")
    assert ESCAPE in json.loads(out)["text"]  # the JSON says exactly what was generated


def test_force_refuses_a_folder_of_the_users_own_files_and_leaves_them(cli, tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "config.json").write_text('{"model_type": "llama"}')
    (mine / "tokenizer.json").write_text('{"mine": true}')
    code, out, err = cli("gpt", "export-hf", mine, "--force", "--device", "cpu")
    assert code == 2 and "did not write" in err and err.count("\n") == 1
    assert (mine / "config.json").read_text() == '{"model_type": "llama"}'
    assert (mine / "tokenizer.json").read_text() == '{"mine": true}' and len(os.listdir(mine)) == 2


def test_a_rerun_removes_the_staging_folder_an_interrupted_export_left(cli, exported, tmp_path):
    out = tmp_path / "again"
    shutil.copytree(exported, out)
    (out / ".specsim-export-left").mkdir()
    (out / ".specsim-export-left" / "model.safetensors").write_bytes(b"half")
    code, _, err = cli("gpt", "export-hf", out, "--model", "draft-distilled", "--force", "--device", "cpu")
    assert code == 0, err
    assert sorted(os.listdir(out)) == sorted(os.listdir(exported))


def test_sigterm_during_an_export_leaves_no_staging_folder(tmp_path):
    out = tmp_path / "stopped"
    proc = subprocess.Popen([sys.executable, "-m", "specsim.cli", "gpt", "export-hf", str(out)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # wait for the event the test needs, however long the load takes: the staging folder exists (the model is
    # loaded, the export writing), or the export already ended (too fast to catch: then it must have succeeded)
    while proc.poll() is None and not (out.exists() and any(e.startswith(".specsim-export-") for e in os.listdir(out))):
        time.sleep(0.01)  # the polling interval, not a deadline
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode in (0, 128 + signal.SIGTERM), err
    if proc.returncode:
        assert err == "specsim gpt: stopped by SIGTERM\n"
    assert not [e for e in os.listdir(out) if e.startswith(".specsim-export-")]


@pytest.mark.parametrize("field", ["n_layer", "vocab_size", "n_embd", "n_positions"])
def test_a_config_promising_too_much_is_refused_before_anything_is_built(cli, exported, tmp_path, field, monkeypatch):
    bad = tmp_path / "bad"
    shutil.copytree(exported, bad)
    config = json.loads((bad / "config.json").read_text())
    (bad / "config.json").write_text(json.dumps(config | {field: 10**9}))
    import specsim.gpt.hf.pair as hf_pair
    monkeypatch.setattr(hf_pair, "_load_one", lambda *a: pytest.fail("the model was built"))
    code, out, err = cli("gpt", "generate", "--target", bad, "--draft", exported, "--prompt", "def", "--tokens", "3")
    assert code == 2 and f"({field} = 1000000000)" in err and err.count("\n") == 1, err


def test_a_config_that_does_not_describe_its_weights_is_refused(exported, tmp_path):
    from specsim.gpt.checkpoint_checks import CheckpointError, precheck
    bad = tmp_path / "wide"
    shutil.copytree(exported, bad)
    config = json.loads((bad / "config.json").read_text())
    (bad / "config.json").write_text(json.dumps(config | {"n_layer": 500}))  # fits memory, not the weight file
    with pytest.raises(CheckpointError, match=r"n_layer = 500\).*weight files hold"):
        precheck(str(bad), "target")


def test_long_inputs_are_echoed_capped():
    for text in ("tree:" + "2," * 300_000 + "2", "tree:" + "0," * 100_000 + "0", "x" * 1_000_000):
        with pytest.raises(ValueError) as e:
            schemes.parse(text)
        assert len(str(e.value)) < 400, len(str(e.value))


def test_every_cli_error_line_is_capped(cli):
    wide = "tree:" + "2," * 60_000 + "2"
    for argv in (("round", "seed", "--context", "z" * 200_000), ("round", "seed", "--scheme", wide),
                 ("gpt", "generate", "--prompt", "x", "--scheme", wide)):
        code, out, err = cli(*argv)
        assert code == 2 and err.count("\n") == 1 and len(err) < MAX_ERROR + 200, len(err)


def test_a_dynamic_tree_that_cannot_fit_is_refused_before_loading_naming_depth_times_topk(cli, monkeypatch):
    from specsim.gpt import api
    monkeypatch.setattr(api, "load_pair", lambda *a, **k: pytest.fail("models loaded"))
    code, out, err = cli("gpt", "generate", "--prompt", "def ", "--scheme", "tree:dynamic,budget=64,depth=64,topk=64")
    assert code == 2 and "topk x (depth - 1) = 4032" in err and "at most 126" in err and err.count("\n") == 1


def test_a_tiny_temperature_names_the_bound_it_breaks(cli):
    code, out, err = cli("gpt", "generate", "--prompt", "def ", "--temperature", "1e-300")
    assert code == 2 and "below 1/100" in err and "digits" not in err


def catches(pid: int, sig: int) -> bool:
    """Whether process ``pid`` has a handler installed for ``sig`` (Linux: the SigCgt mask of /proc/PID/status)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            mask = next(line.split()[1] for line in f if line.startswith("SigCgt:"))
    except FileNotFoundError:  # it has just ended (the caller's poll() says so)
        return False
    return bool(int(mask, 16) >> (sig - 1) & 1)


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads a process's signal handlers in /proc")
def test_sigterm_ends_a_long_command_with_one_line():
    proc = subprocess.Popen([sys.executable, "-m", "specsim.cli", "gpt", "bench", "--gammas", "1-8", "--device",
                             "cpu"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # the event the test needs, however loaded the machine: the command is running, its SIGTERM handler set
    while proc.poll() is None and not catches(proc.pid, signal.SIGTERM):
        time.sleep(0.01)  # the polling interval, not a deadline
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM and err.endswith("specsim gpt: stopped by SIGTERM\n"), err


# -- random bytes in every file-reading entry point: one line, a non-zero exit, never a traceback -------------
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

BYTES = st.one_of(st.binary(max_size=3000), st.text(max_size=500).map(str.encode),
                  st.recursive(st.none() | st.integers() | st.text(max_size=8),
                               lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=4), kids,
                                                                                          max_size=4),
                               max_leaves=20).map(lambda v: json.dumps(v).encode()))
FAST = settings(max_examples=40, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture])


def one_line_refusal(code, out, err):
    assert code != 0 and err.count("\n") == 1 and "Traceback" not in err, (code, err)


@FAST
@given(data=BYTES)
def test_random_bytes_as_a_toy_model_file(cli, tmp_path, data):
    path = tmp_path / "model.json"
    path.write_bytes(data)
    for argv in (("prove", path, "--tokens", "1"), ("round", path), ("pitfalls", path)):
        one_line_refusal(*cli(*argv))


@FAST
@given(data=BYTES)
def test_random_bytes_as_a_checkpoints_config(cli, exported, tmp_path, data):
    bad = tmp_path / "ckpt"
    if not bad.exists():
        shutil.copytree(exported, bad)
    (bad / "config.json").write_bytes(data)
    one_line_refusal(*cli("gpt", "generate", "--target", bad, "--draft", exported, "--prompt", "def", "--tokens", "2"))


@pytest.mark.parametrize("data", [b"", b"\x00\xff" * 100, os.urandom(2000), b"def (:\n", b"import sys; sys.exit(3)"])
def test_random_bytes_as_a_rule_or_an_engine_file(tmp_path, data):
    path = tmp_path / "user.py"
    path.write_bytes(data)
    for argv in (["check-rule", f"{path}:R", "--models", "1", "--gammas", "1"],
                 ["audit", "--engine", f"{path}:E", "--prompt", "def", "--tokens", "1", "--samples", "5"]):
        r = subprocess.run([sys.executable, "-m", "specsim.cli", *argv], capture_output=True, text=True, cwd=ROOT,
                           timeout=300)
        one_line_refusal(r.returncode, r.stdout, r.stderr)


def test_the_app_shows_a_tokens_control_characters_as_text():
    sys.path.insert(0, str(ROOT / "app"))
    try:
        from parts import tokens
    finally:
        sys.path.pop(0)
    for shown in (tokens.md(ESCAPE), tokens.html_text(ESCAPE), tokens.md_tokens([ESCAPE, "a"])):
        assert "\x1b" not in shown and "\x07" not in shown and "x1b" in shown
    assert tokens.visible("a\nb") == "a\nb"
