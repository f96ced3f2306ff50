"""The tiny GPT as a Hugging Face ``GPT2LMHeadModel`` checkpoint: same layout, renamed weights.

specsim's model is GPT-2's layout, so the export is a renaming, not a
conversion of the maths:

* ``wte``, ``wpe``, ``ln_f`` and each block's ``ln_1``, ``ln_2`` keep their
  tensors under ``transformer.`` names (``blocks.i`` becomes ``h.i``);
* the four linear layers of a block (``attn.c_attn``, ``attn.c_proj``,
  ``mlp.c_fc``, ``mlp.c_proj``) are ``nn.Linear`` here, stored (out, in), and
  GPT-2's ``Conv1D`` there, stored (in, out): their weights are transposed;
* the head is tied to the token embedding on both sides (stored once);
* the config says ``gelu_pytorch_tanh`` (specsim's ``gelu(approximate="tanh")``),
  ``layer_norm_epsilon = 1e-5`` (torch's LayerNorm default), no dropout, and
  no special tokens (a character model has no end-of-text token, so a
  generation always runs its full length).

``export_hf`` writes ``config.json``, ``model.safetensors`` (float32, no
pickle), ``generation_config.json``, a tokenizer that ``AutoTokenizer`` loads
offline (``tokenizer.json``: a ``tokenizers`` word-level model over single
characters) and ``specsim_tokenizer.json`` (the vocabulary string, enough to
re-tokenize without any library), into a new or empty directory (or, with
``force``, over a previous export and nothing else; never through a symlink). ``tests/test_gpt_hf.py`` checks the
logits against specsim's, with and without a cache.

>>> from specsim.gpt.config import PRESETS
>>> from specsim.gpt.model import GPT
>>> state = hf_state_dict(GPT(PRESETS["tiny"]))
>>> state["transformer.h.0.attn.c_attn.weight"].shape   # (in, out): Conv1D layout
torch.Size([16, 48])
>>> "lm_head.weight" in state                            # tied to transformer.wte.weight
False
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile

import torch

from ..checkpoint_checks import CheckpointError
from ..config import GPTConfig

MODELS = {"target": "target", "draft-distilled": "draft_distilled", "draft-trained": "draft_trained"}
CONV1D = ("attn.c_attn.weight", "attn.c_proj.weight", "mlp.c_fc.weight", "mlp.c_proj.weight")
TOKENIZER_FILE = "specsim_tokenizer.json"
INSTALL = "pip install -e '.[hf]'"


class HFMissing(ValueError):
    """transformers (or tokenizers) is not installed; the message says what to install."""


def require_transformers():
    """The ``transformers`` module, or one line saying how to install it."""
    try:
        import transformers
    except ModuleNotFoundError:
        raise HFMissing(f"this needs Hugging Face transformers, which is not installed: {INSTALL}") from None
    return transformers


def hf_state_dict(model) -> dict:
    """specsim GPT tensors under ``GPT2LMHeadModel`` names, float32, the four linear weights transposed."""
    out = {}
    for name, t in model.state_dict().items():
        if name == "lm_head.weight":  # tied: GPT-2 ties it to transformer.wte.weight on load
            continue
        t = t.detach().to("cpu", torch.float32)
        if name.endswith(CONV1D):
            t = t.t()  # nn.Linear (out, in) -> Conv1D (in, out)
        out["transformer." + name.replace("blocks.", "h.", 1)] = t.contiguous()
    return out


def hf_config_dict(config: GPTConfig) -> dict:
    """The ``GPT2Config`` fields that make GPT-2 compute what specsim's model computes."""
    return {"vocab_size": config.vocab_size, "n_positions": config.block_size, "n_embd": config.n_embd,
            "n_layer": config.n_layer, "n_head": config.n_head, "n_inner": 4 * config.n_embd,
            "activation_function": "gelu_pytorch_tanh", "layer_norm_epsilon": 1e-5,
            "resid_pdrop": 0.0, "embd_pdrop": 0.0, "attn_pdrop": 0.0, "tie_word_embeddings": True,
            "bos_token_id": None, "eos_token_id": None, "pad_token_id": None,
            "architectures": ["GPT2LMHeadModel"]}


def to_hf_model(model):
    """An in-memory ``GPT2LMHeadModel`` (float32, eval) with ``model``'s weights."""
    transformers = require_transformers()
    hf = transformers.GPT2LMHeadModel(transformers.GPT2Config(**hf_config_dict(model.config)))
    missing, unexpected = hf.load_state_dict(hf_state_dict(model), strict=False)
    left = [k for k in missing if k != "lm_head.weight" and not k.endswith(".attn.bias")]
    if left or unexpected:  # a layout change on either side would show here
        raise ValueError(f"GPT-2 layout mismatch: missing {left}, unexpected {unexpected}")
    hf.tie_weights()
    _no_special_tokens(hf.generation_config)
    return hf.to(model.wte.weight.device).eval()


def _no_special_tokens(gen_config) -> None:
    gen_config.bos_token_id = gen_config.eos_token_id = gen_config.pad_token_id = None


def hf_tokenizer(vocab: str):
    """A ``PreTrainedTokenizerFast``: every character one token, id = its index in ``vocab``."""
    transformers = require_transformers()
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    tok = Tokenizer(models.WordLevel({ch: i for i, ch in enumerate(vocab)}, unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")  # one piece per character
    tok.decoder = decoders.Fuse()  # join the characters back without spaces
    return transformers.PreTrainedTokenizerFast(tokenizer_object=tok, clean_up_tokenization_spaces=False)


def export_hf(out_dir: str, model: str = "target", weights_dir=None, force: bool = False) -> dict:
    """Write the shipped ``model`` (target, draft-distilled, draft-trained) as an HF checkpoint in ``out_dir``.

    ``out_dir`` must be new or empty; with ``force`` it may also hold a
    previous export, whose files are replaced, but nothing else: a file the
    export does not write (another model's ``pytorch_model.bin``, a README)
    would mix with it, so it is refused (``CheckpointError``, one line) and
    left as it was. The files are written into a fresh folder inside
    ``out_dir`` first, then each is moved over its name with ``os.replace``:
    a symlink there is replaced, never written through, and a file is either
    the old one or the new one, never half written.

    Returns what was written: {"dir", "model", "files", "parameters", "vocab_size"}.
    """
    if model not in MODELS:
        raise ValueError(f"unknown model {model!r}; choose {', '.join(MODELS)}")
    require_transformers()
    check_out_dir(out_dir, force)  # before any work: a non-empty directory without --force
    from ..weights import load_gpt, read_manifest
    gpt = load_gpt(MODELS[model], weights_dir, "cpu")
    vocab = read_manifest(weights_dir)["vocab"]
    os.makedirs(out_dir, exist_ok=True)
    remove_leftovers(out_dir)  # an earlier export stopped by a signal or a crash left its staging folder
    staging = tempfile.mkdtemp(prefix=STAGING, dir=out_dir)
    try:  # a signal (SIGTERM, SIGHUP: specsim.cli turns them into an exception) still runs the finally
        _write_checkpoint(staging, gpt, vocab, model)
        write_manifest(staging, model)
        files = sorted(os.listdir(staging))
        check_replaceable(out_dir, files, ignore=os.path.basename(staging))
        for name in sorted(files, key=lambda n: n == MANIFEST):  # the manifest last: it vouches for the rest
            os.replace(os.path.join(staging, name), os.path.join(out_dir, name))
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return {"dir": out_dir, "model": model, "files": files,
            "parameters": gpt.num_parameters(), "vocab_size": gpt.config.vocab_size}


def check_out_dir(out_dir: str, force: bool) -> None:
    """``out_dir`` is new, or an empty directory, or (with ``force``) a directory; else one line."""
    if os.path.lexists(out_dir) and not os.path.isdir(out_dir):
        raise CheckpointError(f"{out_dir} exists and is not a directory")
    if os.path.isdir(out_dir) and not force:
        entries = sorted(os.listdir(out_dir))
        if entries:
            raise CheckpointError(f"{out_dir} is not empty ({_some(entries)}): export-hf writes into a new or empty "
                                  "directory; --force replaces a previous export there")


MANIFEST = "specsim-export.json"  # what an export wrote: each file's sha256, so a later --force knows its own files
STAGING = ".specsim-export-"


def _sha256(path: str) -> str:
    import hashlib
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def write_manifest(folder: str, model: str) -> None:
    files = {n: _sha256(os.path.join(folder, n)) for n in sorted(os.listdir(folder))}
    with open(os.path.join(folder, MANIFEST), "w") as f:
        json.dump({"written_by": "specsim gpt export-hf", "model": model, "files": files}, f, indent=1)


def previous_export(out_dir: str) -> dict:
    """{file: sha256} of the export in ``out_dir``, every file checked against its checksum; CheckpointError
    (one line) when there is none or a file was changed, added or removed since (then it is the user's)."""
    path = os.path.join(out_dir, MANIFEST)
    try:
        if os.path.islink(path) or os.path.getsize(path) > 2**16:
            raise ValueError
        with open(path) as f:
            files = json.load(f)["files"]
        if not isinstance(files, dict) or not all(isinstance(v, str) for v in files.values()):
            raise ValueError
    except (OSError, ValueError, KeyError, TypeError):
        raise CheckpointError(f"{out_dir} holds files specsim did not write (no valid {MANIFEST}): --force "
                              "replaces only a previous export; move them away or export into another "
                              "directory") from None
    for name, digest in files.items():
        full = os.path.join(out_dir, name)
        if os.path.basename(name) != name or os.path.islink(full) or not os.path.isfile(full) \
                or _sha256(full) != digest:
            raise CheckpointError(f"{out_dir}/{name[:60]} changed since specsim exported it: --force replaces only "
                                  "files it wrote and that are as it wrote them; move it away first")
    return files


def remove_leftovers(out_dir: str) -> None:
    """Delete staging folders an interrupted export left (their name is ours and they hold only files)."""
    for entry in os.listdir(out_dir):
        full = os.path.join(out_dir, entry)
        if entry.startswith(STAGING) and os.path.isdir(full) and not os.path.islink(full) \
                and all(os.path.isfile(os.path.join(full, e)) for e in os.listdir(full)):
            shutil.rmtree(full, ignore_errors=True)


def check_replaceable(out_dir: str, files: list, ignore: str) -> None:
    """Every entry of ``out_dir`` is a file of a previous export, unchanged since (its manifest says so), and
    one the export is about to replace; else one line, and nothing is touched."""
    entries = sorted(set(os.listdir(out_dir)) - {ignore})
    if not entries:
        return
    previous = previous_export(out_dir)
    foreign = [e for e in entries if e not in files or (e != MANIFEST and e not in previous)]
    if foreign:
        raise CheckpointError(f"{out_dir} holds files export-hf does not write ({_some(foreign)}): they would mix "
                              "with the export; move them away or export into another directory")


def _some(names: list) -> str:
    return ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")


def _write_checkpoint(folder: str, gpt, vocab: str, model: str) -> None:
    """config, generation config, weights and both tokenizers, into the (fresh, empty) ``folder``."""
    transformers = require_transformers()
    from safetensors.torch import save_file
    transformers.GPT2Config(**hf_config_dict(gpt.config)).save_pretrained(folder)
    gen_config = transformers.GenerationConfig()
    _no_special_tokens(gen_config)
    gen_config.save_pretrained(folder)
    save_file(hf_state_dict(gpt), os.path.join(folder, "model.safetensors"), metadata={"format": "pt"})
    hf_tokenizer(vocab).save_pretrained(folder)
    with open(os.path.join(folder, TOKENIZER_FILE), "w") as f:
        json.dump({"type": "characters", "vocab": vocab,
                   "note": "token id i is the character vocab[i]; no special tokens",
                   "source": f"specsim {MODELS[model]}"}, f, indent=1)
