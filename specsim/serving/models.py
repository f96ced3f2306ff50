"""Model shapes for the roofline: what one forward pass reads and computes.

A ``ModelShape`` holds the numbers of a decoder-only transformer's
config.json that decide its cost: layers, width, attention heads and KV
heads, head size, MLP width, vocabulary, and the layout details that change
the parameter count (tied embeddings, gated MLP, biases, LayerNorm or
RMSNorm, learned positions). From them:

- ``params``: the stored parameter count (checked against the published
  counts below and against the tiny pair's manifest);
- ``streamed_params``: the parameters one forward pass reads in full, every
  weight matrix and vector plus the LM head; the input embedding table and a
  learned position table are only looked up (a few rows), so they are not
  counted, except that a tied embedding is read in full as the LM head;
- ``weight_bytes(dtype)`` = streamed_params x bytes per element;
- ``kv_bytes_per_token(dtype)`` = 2 (K and V) x layers x KV heads x head size
  x bytes per element;
- ``flops_per_token(keys)`` = 2 x streamed_params (one multiply-add per
  weight) + 4 x layers x heads x head size x keys (Q K^T and the weighted sum
  of V, one multiply-add per query head, key and head dimension). Norms,
  activations, softmax and biases are left out: under 1 % of the total here.

Example: one layer of width 10, one head, an MLP of width 20, 100 tokens
(everything round, so the arithmetic can be checked by hand):

>>> m = ModelShape("toy", layers=1, d_model=10, n_heads=1, n_kv_heads=1, head_dim=10, d_ff=20,
...                vocab=100, tied_embeddings=False, gated_mlp=False, source="by hand")
>>> m.params          # layer: 4*10*10 + 2*10*20 + 2*10 = 820; final norm 10; 2 tables of 100*10
2830
>>> m.streamed_params  # the input table is only looked up: 2830 - 1000
1830
>>> m.weight_bytes("bf16"), m.kv_bytes_per_token("bf16"), m.flops_per_token(5)
(3660, 40, 3860)
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

# Bytes per element of each dtype the presets know.
DTYPE_BYTES = {"fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1}

MANIFEST = Path(__file__).resolve().parent.parent / "gpt" / "weights" / "manifest.json"


def dtype_bytes(dtype: str) -> int:
    """Bytes per element; a one-line ValueError naming the known dtypes.

    >>> dtype_bytes("bf16")
    2
    """
    if dtype not in DTYPE_BYTES:
        raise ValueError(f"unknown dtype {str(dtype)[:20]!r}: known {', '.join(DTYPE_BYTES)}")
    return DTYPE_BYTES[dtype]


@dataclass(frozen=True)
class ModelShape:
    """The shapes of a decoder-only transformer, as its config.json gives them.

    ``gated_mlp``: SwiGLU (gate, up, down: 3 matrices of d_model x d_ff) or a
    plain 2-matrix MLP. ``bias``: every linear layer but the LM head has a
    bias (GPT-2). ``layer_norm``: LayerNorm (weight and bias) instead of
    RMSNorm (weight only). ``norms_per_layer``: 2, or 1 for EAGLE's first
    layer (it has no input norm). ``positions``: rows of a learned position
    table (0 for rotary). ``fuse_in``: width of an input projection with bias
    (EAGLE's fc over [token embedding; target feature], 2 x d_model -> d_model).
    ``shares_embeddings``: the embedding and the LM head are another model's
    (not in ``params``), but the LM head is still read on every pass.
    ``max_context``: the longest context the model takes.
    """

    name: str
    layers: int
    d_model: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    d_ff: int
    vocab: int
    tied_embeddings: bool
    gated_mlp: bool
    source: str
    bias: bool = False
    layer_norm: bool = False
    norms_per_layer: int = 2
    final_norm: bool = True
    positions: int = 0
    fuse_in: int = 0
    shares_embeddings: bool = False
    max_context: int | None = None

    def __post_init__(self):
        for field in ("layers", "d_model", "n_heads", "n_kv_heads", "head_dim", "d_ff", "vocab"):
            if not isinstance(getattr(self, field), int) or getattr(self, field) < 1:
                raise ValueError(f"{self.name}: {field} must be a positive integer, got {getattr(self, field)!r}")
        if self.n_heads % self.n_kv_heads:
            raise ValueError(f"{self.name}: n_heads ({self.n_heads}) must be a multiple of n_kv_heads "
                             f"({self.n_kv_heads})")

    @property
    def norm_params(self) -> int:
        """One norm's parameters: d_model (RMSNorm) or 2 d_model (LayerNorm)."""
        return self.d_model * (2 if self.layer_norm else 1)

    @property
    def layer_params(self) -> int:
        """One decoder layer: Q, K, V, O projections, the MLP, its norms (and biases)."""
        d, q, kv = self.d_model, self.n_heads * self.head_dim, self.n_kv_heads * self.head_dim
        attn = d * q + 2 * d * kv + q * d + (q + 2 * kv + d if self.bias else 0)
        mats = 3 if self.gated_mlp else 2
        mlp = mats * d * self.d_ff + (((mats - 1) * self.d_ff + d) if self.bias else 0)
        return attn + mlp + self.norms_per_layer * self.norm_params

    @property
    def body_params(self) -> int:
        """Everything read in full on a pass except the LM head: layers, input projection, final norm."""
        fuse = self.fuse_in * self.d_model + self.d_model if self.fuse_in else 0
        return self.layers * self.layer_params + fuse + (self.norm_params if self.final_norm else 0)

    @property
    def params(self) -> int:
        """Stored parameters (a shared embedding and LM head are not this model's)."""
        tables = 0 if self.shares_embeddings else self.vocab * self.d_model * (1 if self.tied_embeddings else 2)
        return self.body_params + tables + self.positions * self.d_model

    @property
    def streamed_params(self) -> int:
        """Parameters one forward pass reads in full: the body and the LM head (vocab x d_model)."""
        return self.body_params + self.vocab * self.d_model

    def weight_bytes(self, dtype: str = "bf16") -> int:
        """Bytes of weights one forward pass reads: ``streamed_params`` x bytes per element."""
        return self.streamed_params * dtype_bytes(dtype)

    def stored_bytes(self, dtype: str = "bf16") -> int:
        """Bytes the weights occupy in memory: ``params`` x bytes per element."""
        return self.params * dtype_bytes(dtype)

    def kv_bytes_per_token(self, dtype: str = "bf16") -> int:
        """Cache bytes per token: K and V, every layer, every KV head."""
        return 2 * self.layers * self.n_kv_heads * self.head_dim * dtype_bytes(dtype)

    def attention_flops(self, keys: int) -> int:
        """Q K^T and the weighted sum of V for one query over ``keys`` keys, every layer and head."""
        return 4 * self.layers * self.n_heads * self.head_dim * keys

    def flops_per_token(self, keys: int) -> int:
        """FLOPs of one position attending to ``keys`` keys (itself included)."""
        return 2 * self.streamed_params + self.attention_flops(keys)


# -- presets ------------------------------------------------------------------------------------

HF = "Hugging Face meta-llama/{repo} config.json"


def _llama(name, repo, layers, d, heads, kv, head_dim, d_ff, tied, card):
    src = (f"{HF.format(repo=repo)}: num_hidden_layers {layers}, hidden_size {d}, num_attention_heads "
           f"{heads}, num_key_value_heads {kv}, head_dim {head_dim}, intermediate_size {d_ff}, vocab_size "
           f"128256, tie_word_embeddings {str(tied).lower()}, SwiGLU MLP, RMSNorm, rotary positions "
           f"({card} parameters on the model card); the Llama 3.1/3.2 window of 131,072 positions")
    return ModelShape(name, layers, d, heads, kv, head_dim, d_ff, 128256, tied, True, src, max_context=131072)


LLAMA_3_8B = _llama("llama-3-8b", "Meta-Llama-3-8B (same shapes as Llama-3.1-8B)", 32, 4096, 32, 8, 128, 14336,
                    False, "8.03B")
LLAMA_3_70B = _llama("llama-3-70b", "Meta-Llama-3-70B (same shapes as Llama-3.1-70B)", 80, 8192, 64, 8, 128,
                     28672, False, "70.6B")
LLAMA_32_1B = _llama("llama-3.2-1b", "Llama-3.2-1B", 16, 2048, 32, 8, 64, 8192, True, "1.24B")
LLAMA_32_3B = _llama("llama-3.2-3b", "Llama-3.2-3B", 28, 3072, 24, 8, 128, 8192, True, "3.21B")

EAGLE_8B = ModelShape(
    "eagle-head-8b", layers=1, d_model=4096, n_heads=32, n_kv_heads=8, head_dim=128, d_ff=14336, vocab=128256,
    tied_embeddings=False, gated_mlp=True, norms_per_layer=1, final_norm=False, fuse_in=2 * 4096,
    shares_embeddings=True, max_context=131072,
    source=("EAGLE draft head (Li et al. 2024, arXiv:2401.15077; SafeAILab/EAGLE eagle/model/cnets1.py at "
            "2174a790): fc = Linear(2*hidden, hidden, bias=True) over [token embedding; target feature], one "
            "Llama decoder layer without its input norm, no final norm, then the target's own LM head; on "
            "llama-3-8b shapes. A pass reads the fc, the layer and the target's 128256 x 4096 LM head "
            "(1.05 GB of its 1.55 GB in bf16), and the layer's own KV cache."))


def tiny_shapes(manifest_path: Path = MANIFEST) -> dict:
    """"tiny-target" and "tiny-draft" from the shipped weights' manifest (no torch needed).

    The tiny GPT is GPT-2 laid out: learned positions, biases, LayerNorm, a
    GELU MLP of width 4 d_model, a tied LM head (``specsim/gpt/model.py``).

    >>> s = tiny_shapes()
    >>> s["tiny-target"].params, s["tiny-draft"].params
    (9008256, 243584)
    """
    manifest = json.loads(Path(manifest_path).read_text())
    out = {}
    for name, key in (("tiny-target", "target"), ("tiny-draft", "draft_trained")):
        c = manifest["models"][key]["config"]
        d, heads = c["n_embd"], c["n_head"]
        out[name] = ModelShape(
            name, layers=c["n_layer"], d_model=d, n_heads=heads, n_kv_heads=heads, head_dim=d // heads,
            d_ff=4 * d, vocab=c["vocab_size"], tied_embeddings=True, gated_mlp=False, bias=True,
            layer_norm=True, positions=c["block_size"], max_context=c["block_size"],
            source=(f"specsim/gpt/weights/manifest.json, model {key!r}: n_layer {c['n_layer']}, n_embd {d}, "
                    f"n_head {heads}, vocab_size {c['vocab_size']}, block_size {c['block_size']}; GPT-2 layout "
                    f"of specsim/gpt/model.py; {manifest['models'][key]['parameters']:,} parameters"))
    return out


MODELS = {m.name: m for m in (LLAMA_3_8B, LLAMA_3_70B, LLAMA_32_1B, LLAMA_32_3B, EAGLE_8B)}
MODELS.update(tiny_shapes())


def preset(name, cls, table: dict, what: str, also: str = ""):
    """``table[name]`` (a ``cls`` value passes through); a one-line ValueError naming the presets (and ``also``)."""
    if isinstance(name, cls):
        return name
    if name not in table:
        raise ValueError(f"unknown {what} {str(name)[:40]!r}: known {', '.join(table)}{also}")
    return table[name]


def model_named(name) -> ModelShape:
    """A preset by name (a ModelShape passes through); a one-line ValueError listing the presets."""
    return preset(name, ModelShape, MODELS, "model")
