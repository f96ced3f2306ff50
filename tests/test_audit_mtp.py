"""`specsim audit --engine hf --hf use_mtp=true`: transformers' MTP candidate generator audited live on a tiny
random model with one MTP layer, built offline (``specsim.gpt.hf.mtp``).

What the exact math predicts, from transformers' code (5.25.0): with sampling on, ``MtpModel.forward`` samples
each draft from the softmax of the processed MTP logits and returns those same processed logits, which
``_speculative_sampling`` softmaxes as q; draft and ratio read one q, so the rule is exact and the audit must read
"consistent with the target" (a false alarm at alpha 0.001 has probability 0.001; the seed is fixed). The same
holds for ``--hf speculation_type=dflash`` (``specsim.gpt.hf.dflash``): a block drafted at once, each draft
sampled from the row handed over as q.
"""
import json

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from specsim.gpt.hf.options import parse_hf_options  # noqa: E402


def _has_mtp() -> str | None:
    """Why this transformers cannot run the test, or None."""
    if not hasattr(transformers, "MellumForCausalLM"):
        return f"transformers {transformers.__version__} has no Mellum (the smallest model with MTP layers)"
    try:
        from transformers.generation.candidate_generator import MTPCandidateGenerator  # noqa: F401
        from transformers.modeling_layers import MtpModel  # noqa: F401
    except ImportError:
        return f"transformers {transformers.__version__} has no MTPCandidateGenerator / MtpModel (no use_mtp)"
    return None


needs_mtp = pytest.mark.skipif(_has_mtp() is not None, reason=str(_has_mtp()))


@pytest.fixture(scope="module")
def mtp_dir(tmp_path_factory):
    if _has_mtp():
        pytest.skip(_has_mtp())
    from specsim.gpt import api
    from specsim.gpt.hf.mtp import write_tiny_mtp_model
    return write_tiny_mtp_model(str(tmp_path_factory.mktemp("mtp")), api.load_pair("distilled", device="cpu").vocab)


def test_use_mtp_is_parsed_strictly_and_alone():
    assert parse_hf_options(["use_mtp=true"]) == {"use_mtp": True}
    assert parse_hf_options(["use_mtp=False"]) == {"use_mtp": False}
    with pytest.raises(ValueError, match="true or false"):
        parse_hf_options(["use_mtp=yes"])
    with pytest.raises(ValueError, match="give it alone"):
        parse_hf_options(["use_mtp=true", "num_assistant_tokens=3"])


@needs_mtp
def test_the_mtp_layer_is_written_and_loaded_from_the_checkpoint(mtp_dir):
    # MtpModel.from_pretrained raises when an MTP weight is missing: every written weight must come back as written
    from safetensors.torch import load_file
    from transformers.modeling_layers import MtpModel
    model = transformers.AutoModelForCausalLM.from_pretrained(mtp_dir, dtype=torch.float32)
    mtp = MtpModel.from_pretrained(model, device_map={"": "cpu"})
    saved = load_file(f"{mtp_dir}/model.safetensors")
    loaded = {k: v for k, v in mtp.state_dict().items() if k.startswith("layers.")}
    assert loaded and set(loaded) == {k[len("mtp."):] for k in saved if k.startswith("mtp.")}
    assert all(torch.equal(loaded[k], saved[f"mtp.{k}"]) for k in loaded)


@needs_mtp
@pytest.mark.parametrize("argv, words", [
    (["--draft", "x"], "no --draft"),
    ([], "give --target DIR"),
])
def test_use_mtp_takes_a_target_and_no_draft(cli, mtp_dir, argv, words):
    target = ["--target", mtp_dir] if argv else []
    code, out, err = cli("audit", "--engine", "hf", *target, *argv, "--hf", "use_mtp=true", "--prompt", "def ",
                         "--samples", "10", "--json")
    assert code == 2 and not out and words in err and len(err.strip().splitlines()) == 1, err


@needs_mtp
def test_the_mtp_path_is_audited_live_and_reads_consistent(cli, mtp_dir):
    code, out, err = cli("audit", "--engine", "hf", "--target", mtp_dir, "--hf", "use_mtp=true", "--prompt", "def ",
                         "--tokens", "3", "--samples", "300", "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["verdict"] == "consistent with the target" and r["p_value"] >= r["alpha"]
    assert r["target"] == mtp_dir and r["draft"] is None and r["hf_options"] == {"use_mtp": True}
    # no assistant and no prompt lookup: every verified draft came from the MTP layer (one per round, K = 3)
    assert r["runs_with_drafts"] == 300 and r["verified_drafts"] >= 300
    assert r["cells"] >= 5  # a target neither one-hot nor near-uniform: the joint test compares cells


@needs_mtp
def test_a_target_alone_loads_only_when_asked_for(mtp_dir):
    # every other caller of load_hf_pair (the gpt commands, the app) still needs its draft checkpoint
    from specsim.gpt.checkpoint_checks import CheckpointError
    from specsim.gpt.hf.pair import load_hf_pair
    with pytest.raises(CheckpointError, match="draft path is empty"):
        load_hf_pair(mtp_dir, None, "cpu")
    pair = load_hf_pair(mtp_dir, None, "cpu", kind="mtp")
    assert pair.target is pair.draft and pair.target.config.vocab_size == 96


# -- DFlash: a block drafted at once by an assistant reading the target's hidden states -----------------------
def _has_dflash() -> str | None:
    try:
        from transformers.generation.candidate_generator import DFlashTokenCandidateGenerator  # noqa: F401
    except ImportError:
        return f"transformers {transformers.__version__} has no DFlashTokenCandidateGenerator"
    if not hasattr(transformers, "MuseGlimmerAssistantModel"):
        return f"transformers {transformers.__version__} has no DFlash assistant (MuseGlimmerAssistantModel)"
    return _has_mtp()  # the target is hf.mtp's


def test_speculation_type_is_parsed_strictly_and_alone():
    assert parse_hf_options(["speculation_type=dflash"]) == {"speculation_type": "dflash"}
    with pytest.raises(ValueError, match="takes dflash"):
        parse_hf_options(["speculation_type=medusa"])
    with pytest.raises(ValueError, match="give it alone"):
        parse_hf_options(["speculation_type=dflash", "assistant_confidence_threshold=0"])


@pytest.mark.skipif(_has_dflash() is not None, reason=str(_has_dflash()))
def test_the_dflash_path_is_audited_live_and_reads_consistent(cli, tmp_path):
    # DFlashTokenCandidateGenerator samples each draft of the block from the processed row it returns as q:
    # exact, so "consistent with the target" (false-alarm probability alpha = 0.001, fixed seed)
    from specsim.gpt import api
    from specsim.gpt.hf.dflash import BLOCK, write_tiny_dflash_pair
    paths = write_tiny_dflash_pair(str(tmp_path), api.load_pair("distilled", device="cpu").vocab)
    code, out, err = cli("audit", "--engine", "hf", "--target", paths["target"], "--draft", paths["assistant"],
                         "--hf", "speculation_type=dflash", "--prompt", "def ", "--tokens", "3", "--samples", "300",
                         "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["verdict"] == "consistent with the target" and r["p_value"] >= r["alpha"]
    assert r["draft"] == paths["assistant"] and r["hf_options"] == {"speculation_type": "dflash"}
    # nothing is drafted in the prefill round; every run then verified at least one drafted token, at most a block
    assert r["runs_with_drafts"] == 300 and 300 <= r["verified_drafts"] <= 300 * BLOCK
    code, out, err = cli("audit", "--engine", "hf", "--hf", "speculation_type=dflash", "--prompt", "def ",
                         "--samples", "10", "--json")
    assert code == 2 and "DFlash assistant" in err and len(err.strip().splitlines()) == 1, err
