"""A tiny random Gemma-4 target and its Gemma-4 assistant, built offline from transformers' own configs.

transformers (5.x) drafts for a ``Gemma4Assistant*`` with its multi-token
candidate generator (``SinglePositionMultiTokenCandidateGenerator`` in
``transformers/generation/candidate_generator.py``): the assistant reads the
target's last hidden state and its shared KV states, drafts the argmax of its
logits at every step and hands those raw logits to ``_speculative_sampling`` as
q. With sampling on, that is the greedy-draft-with-softmax-ratio bug of
transformers 4.44.2 again (transformers issue 47932), and the raw logits skip
temperature, top-k and top-p. ``specsim audit --engine hf --target DIR/target
--draft DIR/assistant`` audits it live on the pair this module writes (the
candidate generator drafts nothing in the first round: judge at least 3 tokens).

The pair shares a character vocabulary (specsim's tokenizer over the same 96
characters as the shipped models), so prompts read as text; weights are
random normal with a stated spread (a spread near 0.17 gives a target whose
first-token distribution is neither one-hot nor near-uniform, so an affordable
audit has cells to compare).
"""
from __future__ import annotations

import torch

from .export import hf_tokenizer, require_transformers


def _text_config(transformers, vocab: int, hidden: int, shared: int):
    return transformers.Gemma4TextConfig(
        vocab_size=vocab, hidden_size=hidden, intermediate_size=2 * hidden, num_hidden_layers=2,
        num_attention_heads=2, num_key_value_heads=1, head_dim=32, global_head_dim=32,
        hidden_size_per_layer_input=0, vocab_size_per_layer_input=0, num_kv_shared_layers=shared,
        layer_types=["sliding_attention", "full_attention"], sliding_window=64, max_position_embeddings=256,
        enable_moe_block=False, use_double_wide_mlp=False, pad_token_id=None, bos_token_id=None, eos_token_id=None)


def tiny_gemma4_pair(vocab: str, seed: int = 0, spread: float = 0.17):
    """(target ``Gemma4ForCausalLM``, assistant ``Gemma4AssistantForCausalLM``), float32, eval, random weights."""
    transformers = require_transformers()
    if not hasattr(transformers, "Gemma4AssistantForCausalLM"):
        raise ValueError(f"transformers {transformers.__version__} has no Gemma-4 assistant "
                         "(Gemma4AssistantForCausalLM)")
    torch.manual_seed(seed)
    target = transformers.Gemma4ForCausalLM(_text_config(transformers, len(vocab), 64, 0))
    assistant = transformers.Gemma4AssistantForCausalLM(transformers.Gemma4AssistantConfig(
        text_config=_text_config(transformers, len(vocab), 32, 2), backbone_hidden_size=64, num_centroids=8,
        centroid_intermediate_top_k=4))
    with torch.no_grad():
        for model in (target, assistant):
            for p in model.parameters():
                if p.dim() > 1:  # matrices random; norms keep their initial scales
                    p.normal_(0.0, spread)
    for model in (target, assistant):
        cfg = model.generation_config
        cfg.bos_token_id = cfg.eos_token_id = cfg.pad_token_id = None
    return target.eval(), assistant.eval()


def write_tiny_gemma4_pair(out_dir: str, vocab: str, seed: int = 0, spread: float = 0.17) -> dict:
    """Write the pair as two checkpoints (safetensors, a character tokenizer each) under ``out_dir``:
    {"target": path, "assistant": path}."""
    import os
    target, assistant = tiny_gemma4_pair(vocab, seed, spread)
    out = {}
    for name, model in (("target", target), ("assistant", assistant)):
        path = os.path.join(out_dir, name)
        model.save_pretrained(path, safe_serialization=True)
        hf_tokenizer(vocab).save_pretrained(path)
        out[name] = path
    return out
