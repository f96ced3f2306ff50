"""Hugging Face interop: the exported checkpoint computes specsim's logits, and HF pairs run specsim's decoder.

Tolerances: logits compared in float32 with atol 1e-5 (both sides run the same
float32 operations; observed differences are 0 or a few ulps). Token
sequences are compared exactly.
"""
from __future__ import annotations

import json
import os
import sys

import pytest
import torch

transformers = pytest.importorskip("transformers")  # a guard only: CI installs the hf extra

from specsim.gpt import api, decode  # noqa: E402

from specsim.gpt.hf import export as hf_export

from specsim.gpt.hf import pair as hf_pair
from specsim.gpt.tokenizer import CharTokenizer  # noqa: E402
from specsim.gpt.weights import read_manifest  # noqa: E402

ATOL = 1e-5
PROMPTS = ["def ", "import os\n", "class Foo(object):\n    def __init__(self, x):\n        self.x = "]


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """The shipped target and distilled drafter exported once: {"target": dir, "draft": dir}."""
    transformers.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()  # else save_pretrained's bars land in captured stderr
    root = tmp_path_factory.mktemp("hf")
    dirs = {"target": str(root / "target"), "draft": str(root / "draft")}
    hf_export.export_hf(dirs["target"], "target")
    hf_export.export_hf(dirs["draft"], "draft-distilled")
    return dirs


@pytest.fixture(scope="module")
def loaded(exported):
    model = transformers.AutoModelForCausalLM.from_pretrained(exported["target"], local_files_only=True).eval()
    return model, api.load_pair("distilled", "cpu").target


def test_export_writes_a_pickle_free_checkpoint_and_tokenizers(exported):
    files = set(os.listdir(exported["target"]))
    assert {"config.json", "model.safetensors", "tokenizer.json", hf_export.TOKENIZER_FILE} <= files
    assert not any(f.endswith((".bin", ".pt", ".pkl")) for f in files)
    vocab = read_manifest()["vocab"]
    with open(os.path.join(exported["target"], hf_export.TOKENIZER_FILE)) as f:
        assert json.load(f)["vocab"] == vocab
    tok = transformers.AutoTokenizer.from_pretrained(exported["target"], local_files_only=True)
    text = "def f(x):\n    return {'a': x ~ 1}  # \"q\""
    assert tok.encode(text, add_special_tokens=False) == CharTokenizer(vocab).encode(text)
    assert tok.decode(tok.encode(text, add_special_tokens=False)) == text


@torch.inference_mode()
def test_full_sequence_logits_equal_specsim(loaded):
    hf, ours = loaded
    tok = api.load_pair("distilled", "cpu").tokenizer
    for prompt in PROMPTS:
        ids = torch.tensor([tok.encode(prompt)])
        torch.testing.assert_close(hf(ids).logits, ours(ids), atol=ATOL, rtol=0)


@torch.inference_mode()
def test_incremental_logits_with_a_cache_equal_specsim(loaded):
    """Prefill, then chunks of 1 and 3 new tokens after the cached ones (HF's DynamicCache vs KVCache)."""
    hf, ours = loaded
    ids = api.load_pair("distilled", "cpu").tokenizer.encode(PROMPTS[2])
    cache, kv = ours.new_cache(), transformers.DynamicCache()
    key = hf_pair.HFCausalLM(hf)._cache_kw  # "cache" (transformers 5.x) or "past_key_values"
    start = 0
    for size in (20, 1, 3, 1, 5):
        x = torch.tensor([ids[start:start + size]])
        ref = ours(x, cache)
        got = hf(input_ids=x, use_cache=True, **{key: kv}).logits
        torch.testing.assert_close(got, ref, atol=ATOL, rtol=0)
        start += size
    assert kv.get_seq_length() == cache.length == start


def test_greedy_generate_equals_specsim(loaded):
    hf, ours = loaded
    tok = api.load_pair("distilled", "cpu").tokenizer
    for prompt in PROMPTS[1:]:
        ids = tok.encode(prompt)
        x = torch.tensor([ids])
        out = hf.generate(x, attention_mask=torch.ones_like(x), max_new_tokens=20, do_sample=False, pad_token_id=0)
        g = decode.plain_generate(ours, ids, 20, decode.Sampling(greedy=True))
        assert out[0, len(ids):].tolist() == g.tokens


# -- your own pair ---------------------------------------------------------------

PROMPT = "def f(x):\n    return "


def test_own_pair_greedy_speculative_equals_plain_and_specsim(cli_json, exported):
    own = ("--target", exported["target"], "--draft", exported["draft"], "--device", "cpu")
    args = ("gpt", "generate", "--prompt", PROMPT, "--tokens", "30", "--gamma", "4", "--greedy")
    spec = cli_json(*args, *own)
    plain = cli_json(*args, "--plain", *own)
    shipped = cli_json(*args, "--device", "cpu")
    assert spec["mode"] == "speculative" and plain["mode"] == "plain"
    assert spec["tokens"] == plain["tokens"] == shipped["tokens"]
    assert spec["target_passes"] < plain["target_passes"] == 30


def test_own_pair_sampled_trace_equals_the_shipped_pair(exported):
    """Equal logits, same seed: the sampled speculative run is the same run, round by round."""
    pair = hf_pair.load_hf_pair(exported["target"], exported["draft"], "cpu")
    shipped = api.load_pair("distilled", "cpu")
    a = api.speculative_generate(pair, PROMPT, 40, gamma=3, seed=7)
    b = api.speculative_generate(shipped, PROMPT, 40, gamma=3, seed=7)
    assert a.tokens == b.tokens and a.accepted_per_round == b.accepted_per_round
    assert [r.cache for r in a.rounds] == [r.cache for r in b.rounds]  # the HF cache cropped like specsim's
    assert a.text == b.text


def _gpt2_dir(path, vocab: str, vocab_size: int):
    """A tiny random GPT-2 checkpoint with a character tokenizer over ``vocab``."""
    config = transformers.GPT2Config(vocab_size=vocab_size, n_positions=32, n_embd=16, n_layer=1, n_head=2)
    transformers.GPT2LMHeadModel(config).save_pretrained(path)
    hf_export.hf_tokenizer(vocab).save_pretrained(path)
    return str(path)


def _bad_pairs(tmp_path, exported):
    vocab = read_manifest()["vocab"]
    bert = tmp_path / "bert"
    bert.mkdir()
    (bert / "config.json").write_text(json.dumps({"model_type": "bert", "architectures": ["BertForMaskedLM"]}))
    (tmp_path / "empty").mkdir()
    return {
        "missing": (str(tmp_path / "nope"), "does not exist"),
        "not a checkpoint": (str(tmp_path / "empty"), "not a Hugging Face checkpoint directory (no config.json)"),
        "not causal": (str(bert), "is not a causal language model (BertForMaskedLM)"),
        "vocab size": (_gpt2_dir(tmp_path / "wide", vocab + "\t", 97), "the target scores 96 tokens and the draft 97"),
        "tokenizer": (_gpt2_dir(tmp_path / "rev", vocab[::-1], 96), "tokenizers differ"),
    }


def test_bad_pairs_are_one_line_errors(cli, tmp_path, exported):
    for case, (draft, message) in _bad_pairs(tmp_path, exported).items():
        code, out, err = cli("gpt", "generate", "--prompt", "x", "--tokens", "2", "--target", exported["target"],
                             "--draft", draft, "--device", "cpu")
        assert code == 2 and out == "" and message in err and err.count("\n") == 1, (case, err)
    code, _, err = cli("gpt", "generate", "--prompt", "x", "--draft", exported["draft"], "--device", "cpu")
    assert code == 2 and "give the target checkpoint too (--target PATH)" in err


def test_without_transformers_the_message_names_the_extra(cli, monkeypatch, tmp_path, exported):
    monkeypatch.setitem(sys.modules, "transformers", None)  # `import transformers` now fails
    for argv in (["export-hf", str(tmp_path / "out")],
                 ["generate", "--prompt", "x", "--target", exported["target"], "--draft", exported["draft"]],
                 ["bench", "--peer", "hf"]):
        code, _, err = cli("gpt", *argv, "--device", "cpu")
        assert code == 2 and "pip install -e '.[hf]'" in err and err.count("\n") == 1, err


# -- the peer bench ------------------------------------------------------------------

def test_peer_bench_json_and_token_counts(cli_json, monkeypatch):
    from specsim.gpt.measure import bench
    from specsim.gpt.measure import peer
    monkeypatch.setattr(bench, "N_PROMPTS", 1)
    d = cli_json("gpt", "bench", "--peer", "hf", "--tokens", "8", "--gamma", "3", "--repeats", "1",
                 "--device", "cpu")
    st = d["settings"]
    assert st["gamma"] == 3 and st["tokens"] == 8 and st["prompts"] == 1 and st["threads"] == 1
    assert st["assistant"]["hf_assisted_gamma"]["num_assistant_tokens"] == 3
    assert set(d["modes"]) == {"sample", "greedy"}
    for mode, m in d["modes"].items():
        assert set(m["runs"]) == set(peer.DECODERS)
        assert {"specsim_spec_over_hf_assisted_gamma", "specsim_spec_over_hf_assisted_best"} <= set(m["ratios"])
        assert set(m["ratios_of_fastest_runs"]) == {"specsim_spec_over_hf_assisted_gamma",
                                                   "specsim_spec_over_hf_assisted_best"}
        for name, r in m["runs"].items():
            assert r["tokens_per_prompt"] == [8] and r["tokens"] == 8, (mode, name)
            assert len(r["tokens_per_s_runs"]) == 1 and r["tokens_per_s"] > 0
            assert r["tokens_per_target_pass"] == pytest.approx(r["tokens"] / r["target_passes"], abs=1e-4)
        for name in ("specsim_plain", "hf_plain"):
            assert m["runs"][name]["target_passes"] == 8  # one pass per token
        for name in ("specsim_spec", "hf_assisted_gamma"):
            assert m["runs"][name]["target_passes"] < 8  # drafts were accepted
    assert d["modes"]["greedy"]["tokens_agree"] is True


def test_peer_bench_refuses_to_run_past_the_window(cli):
    code, _, err = cli("gpt", "bench", "--peer", "hf", "--tokens", "200", "--device", "cpu")
    assert code == 2 and "exceed the context window of 256" in err and err.count("\n") == 1


# -- --device on every gpt command ---------------------------------------------------

@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA is present here")
@pytest.mark.parametrize("argv", [["generate", "--prompt", "x"], ["bench"], ["bench", "--peer", "hf"],
                                  ["bench", "--drafters", "lookup:2"], ["train", "--out", "unused"],
                                  ["export-hf", "unused"]])
def test_every_gpt_command_refuses_cuda_without_a_gpu(cli, argv, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = cli("gpt", *argv, "--device", "cuda")
    assert code == 2 and "CUDA is not available" in err and err.count("\n") == 1
    assert os.listdir(tmp_path) == []  # refused before writing anything


# -- the Tiny GPT page ---------------------------------------------------------------

def test_tiny_gpt_page_runs_your_own_pair(exported, monkeypatch):
    from pathlib import Path

    from streamlit.testing.v1 import AppTest
    monkeypatch.setenv("SPECSIM_PAIRS_DIR", str(Path(exported["target"]).parent))  # the operator's directory
    at = AppTest.from_file(str(Path(__file__).resolve().parent.parent / "app" / "streamlit_app.py"),
                           default_timeout=120).run()
    at.session_state["gpt-n"] = 12  # a short run
    at.session_state["gpt-own-target"] = "target"  # picked from the directory's list, never a typed path
    at.session_state["gpt-own-draft"] = "draft"
    at.switch_page("views/tiny_gpt.py").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any("Running your own pair" in i.value for i in at.info)
    assert len(at.get("plotly_chart")) >= 4
    at.selectbox(key="gpt-own-draft").set_value(at.selectbox(key="gpt-own-draft").options[0]).run()
    assert not at.exception and any("needs both checkpoints" in e.value for e in at.error)
