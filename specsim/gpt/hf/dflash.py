"""A tiny random DFlash pair, built offline: transformers' ``speculation_type="dflash"`` path.

transformers (5.x) drafts a whole block at once with ``DFlashTokenCandidateGenerator``
(``transformers/generation/candidate_generator.py``) when ``generate(...,
assistant_model=A, speculation_type="dflash")``: the assistant reads the
target's hidden states at ``target_layer_ids`` and a block of mask tokens, the
target's own head turns its output into ``block_size`` rows of logits, and with
sampling on each draft is *sampled* from the softmax of its processed row,
which is handed to ``_speculative_sampling`` as q unchanged. Each draft is a
sample of the q its ratio reads (a q that ignores the drafts before it in the
block is still a valid proposal), so the rule is exact: the audit should read
"consistent with the target".

The only DFlash assistant class in the installed release is
``MuseGlimmerAssistantModel``; here it is one layer of width 64 over the tiny
MTP target of ``hf.mtp`` (the same 96-character vocabulary; its mask token is
the vocabulary's last character, a stand-in a real model reserves a token for).
``specsim audit --engine hf --target DIR/target --draft DIR/assistant --hf
speculation_type=dflash`` audits it live.
"""
from __future__ import annotations

import os

import torch

from .export import hf_tokenizer, require_transformers
from .mtp import tiny_mtp_model

BLOCK = 4  # drafts per block


def tiny_dflash_assistant(vocab: str, seed: int = 1, spread: float = 0.3):
    """A ``MuseGlimmerAssistantModel`` for ``hf.mtp``'s target: float32, eval, random weights."""
    transformers = require_transformers()
    if not hasattr(transformers, "MuseGlimmerAssistantModel"):
        raise ValueError(f"transformers {transformers.__version__} has no DFlash assistant (MuseGlimmerAssistantModel)")
    config = transformers.MuseGlimmerAssistantConfig(
        hidden_size=64, intermediate_size=128, num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1,
        head_dim=32, max_position_embeddings=256, sliding_window=64, block_size=BLOCK, mask_token_id=len(vocab) - 1,
        target_layer_ids=[0, 1], bos_token_id=None, eos_token_id=None, pad_token_id=None)
    torch.manual_seed(seed)
    model = transformers.MuseGlimmerAssistantModel(config)
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() > 1:
                p.normal_(0.0, spread)
    return model.eval()


def write_tiny_dflash_pair(out_dir: str, vocab: str, seed: int = 0) -> dict:
    """Write the target (``hf.mtp``'s) and its DFlash assistant under ``out_dir`` (safetensors, a character
    tokenizer each): {"target": path, "assistant": path}."""
    from .mtp import write_tiny_mtp_model
    target = write_tiny_mtp_model(os.path.join(out_dir, "target"), vocab, seed)
    path = os.path.join(out_dir, "assistant")
    tiny_dflash_assistant(vocab, seed + 1).save_pretrained(path, safe_serialization=True)
    hf_tokenizer(vocab).save_pretrained(path)
    return {"target": target, "assistant": path}


__all__ = ["BLOCK", "tiny_dflash_assistant", "tiny_mtp_model", "write_tiny_dflash_pair"]
