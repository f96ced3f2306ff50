"""A tiny random model with a multi-token-prediction (MTP) layer, built offline: transformers' ``use_mtp`` path.

transformers (5.x) drafts from a model's own MTP layers with
``MTPCandidateGenerator`` (``transformers/generation/candidate_generator.py``)
when ``generate(..., use_mtp=True)``: it reads the target's last hidden state,
runs ``MtpModel`` (``transformers/modeling_layers.py``), and with sampling on
*samples* each draft from the softmax of the processed MTP logits (temperature,
top-k and top-p applied by the target's own logits processors) and hands those
same processed logits to ``_speculative_sampling`` as q. The draft is then a
sample of q and the ratio reads the same q, so the rule is exact: the audit
should read "consistent with the target" (with sampling off it drafts the
argmax, but then the target is greedy too and no ratio is used).

The smallest installed architecture that takes ``num_mtp_layers`` with a dense
MLP is Mellum (``MellumForCausalLM``, one MTP layer at most): two decoder
layers of width 64, the 96-character vocabulary of the shipped models, random
normal matrices with a stated spread (0.3 gives a first token of entropy near
2.5 nats after "def ": neither one-hot nor near-uniform, so an affordable joint
audit has cells to compare). ``MtpModel.from_pretrained`` reads the
MTP weights from the checkpoint's own safetensors file (keys ``mtp.layers.0.*``,
the Mellum layout), so this module writes them there beside the main weights:
``specsim audit --engine hf --target DIR --hf use_mtp=true`` (no ``--draft``:
the target drafts for itself) audits it live.
"""
from __future__ import annotations

import os

import torch

from .export import hf_tokenizer, require_transformers


def _config(transformers, vocab: int, hidden: int):
    return transformers.MellumConfig(
        vocab_size=vocab, hidden_size=hidden, intermediate_size=2 * hidden, num_hidden_layers=2,
        num_attention_heads=2, num_key_value_heads=1, head_dim=32, max_position_embeddings=256, sliding_window=64,
        layer_types=["sliding_attention", "full_attention"], mlp_layer_types=["dense", "dense"],
        num_mtp_layers=1, mtp_layer_types=["sliding_attention"], mtp_mlp_layer_types=["dense"],
        pad_token_id=None, bos_token_id=None, eos_token_id=None)


def tiny_mtp_model(vocab: str, seed: int = 0, spread: float = 0.3):
    """(``MellumForCausalLM``, its ``MtpModel``): float32, eval, random weights (matrices normal with
    standard deviation ``spread``; norms keep their initial scales)."""
    transformers = require_transformers()
    if not hasattr(transformers, "MellumForCausalLM"):
        raise ValueError(f"transformers {transformers.__version__} has no Mellum (MellumForCausalLM), "
                         "the smallest model here with MTP layers")
    try:
        from transformers.modeling_layers import MtpModel
    except ImportError:
        raise ValueError(f"transformers {transformers.__version__} has no MtpModel (no use_mtp drafting)") from None
    torch.manual_seed(seed)
    model = transformers.MellumForCausalLM(_config(transformers, len(vocab), 64))
    mtp = MtpModel(model, model.config.num_mtp_layers)
    with torch.no_grad():
        for module in (model, mtp):
            for name, p in module.named_parameters():
                if p.dim() > 1 and not name.startswith(("embed_tokens", "shared_head")):  # shared: drawn once
                    p.normal_(0.0, spread)
    cfg = model.generation_config
    cfg.bos_token_id = cfg.eos_token_id = cfg.pad_token_id = None
    return model.eval(), mtp.eval()


def write_tiny_mtp_model(out_dir: str, vocab: str, seed: int = 0, spread: float = 0.3) -> str:
    """Write the model, its MTP layer and a character tokenizer as one checkpoint (safetensors) in
    ``out_dir``; returns the path."""
    from safetensors.torch import load_file, save_file
    model, mtp = tiny_mtp_model(vocab, seed, spread)
    model.save_pretrained(out_dir, safe_serialization=True)
    hf_tokenizer(vocab).save_pretrained(out_dir)
    path = os.path.join(out_dir, "model.safetensors")
    weights = load_file(path)
    # the embedding and head are the main model's (MtpModel shares them): only the MTP layer is written
    weights |= {f"mtp.{k}": v.detach().clone().contiguous() for k, v in mtp.state_dict().items()
                if k.startswith("layers.")}
    save_file(weights, path, metadata={"format": "pt"})
    return out_dir
