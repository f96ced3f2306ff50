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

A **mixture-of-experts** model (``experts`` > 0) replaces the MLP of its last
``layers - dense_layers`` layers by ``experts`` experts (MLPs of width
``expert_d_ff``), a router (d_model x experts) and ``shared_experts``
experts every token uses. One token multiplies only its
``experts_per_token`` experts: ``streamed_params`` (and so the FLOPs) count
those; a pass over n tokens reads the **union** of the experts they chose,
``weight_bytes(dtype, tokens=n)``, its expected size from
``specsim.serving.moe`` under the model's ``routing``.

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

from .moe import ROUTINGS, check_routing, experts_read

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
    ``max_context``: the longest context the model takes. ``qk_norm``: an RMSNorm over
    each head's queries and keys (Qwen3), head_dim weights each.

    Mixture of experts (all 0 for a dense model): ``experts`` routed experts per MoE
    layer, ``experts_per_token`` of them per token, each a (gated) MLP of width
    ``expert_d_ff``; ``shared_experts`` more that every token uses; the first
    ``dense_layers`` layers keep a dense MLP of width ``d_ff``. ``routing``: how the
    tokens of a pass pick their experts (``specsim.serving.moe.ROUTINGS``).
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
    qk_norm: bool = False
    experts: int = 0
    experts_per_token: int = 0
    expert_d_ff: int = 0
    shared_experts: int = 0
    dense_layers: int = 0
    routing: str = "uniform"

    def __post_init__(self):
        for field in ("layers", "d_model", "n_heads", "n_kv_heads", "head_dim", "d_ff", "vocab"):
            if not isinstance(getattr(self, field), int) or getattr(self, field) < 1:
                raise ValueError(f"{self.name}: {field} must be a positive integer, got {getattr(self, field)!r}")
        if self.n_heads % self.n_kv_heads:
            raise ValueError(f"{self.name}: n_heads ({self.n_heads}) must be a multiple of n_kv_heads "
                             f"({self.n_kv_heads})")
        for field in ("experts", "experts_per_token", "expert_d_ff", "shared_experts", "dense_layers"):
            value = getattr(self, field)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{self.name}: {field} must be an integer >= 0, got {value!r}")
        if self.experts:
            try:
                check_routing(self.experts, self.experts_per_token)
            except ValueError as e:
                raise ValueError(f"{self.name}: {e}") from None
            if self.expert_d_ff < 1:
                raise ValueError(f"{self.name}: an expert's width expert_d_ff must be >= 1, got {self.expert_d_ff}")
            if self.dense_layers >= self.layers:
                raise ValueError(f"{self.name}: dense_layers ({self.dense_layers}) must leave some of the "
                                 f"{self.layers} layers to the experts")
        elif self.experts_per_token or self.expert_d_ff or self.shared_experts or self.dense_layers:
            raise ValueError(f"{self.name}: experts_per_token, expert_d_ff, shared_experts and dense_layers "
                             "need experts >= 1")
        if self.routing not in ROUTINGS:
            raise ValueError(f"{self.name}: unknown routing {str(self.routing)[:20]!r}: known {', '.join(ROUTINGS)}")

    @property
    def norm_params(self) -> int:
        """One norm's parameters: d_model (RMSNorm) or 2 d_model (LayerNorm)."""
        return self.d_model * (2 if self.layer_norm else 1)

    def mlp_params(self, width: int) -> int:
        """One MLP (a dense layer's, or one expert) of ``width``: 3 or 2 matrices (and biases)."""
        mats = 3 if self.gated_mlp else 2
        return mats * self.d_model * width + (((mats - 1) * width + self.d_model) if self.bias else 0)

    @property
    def attention_params(self) -> int:
        """One layer's attention: Q, K, V, O projections (and biases), its norms, the q/k norms."""
        d, q, kv = self.d_model, self.n_heads * self.head_dim, self.n_kv_heads * self.head_dim
        attn = d * q + 2 * d * kv + q * d + (q + 2 * kv + d if self.bias else 0)
        return attn + self.norms_per_layer * self.norm_params + (2 * self.head_dim if self.qk_norm else 0)

    @property
    def layer_params(self) -> int:
        """One dense decoder layer: attention, the MLP of width d_ff, its norms (and biases)."""
        return self.attention_params + self.mlp_params(self.d_ff)

    @property
    def moe_layers(self) -> int:
        """Layers whose MLP is experts (0 for a dense model)."""
        return self.layers - self.dense_layers if self.experts else 0

    @property
    def expert_params(self) -> int:
        """One expert's parameters (0 for a dense model)."""
        return self.mlp_params(self.expert_d_ff) if self.experts else 0

    @property
    def moe_layer_params(self) -> int:
        """One MoE layer, stored: attention, the router (d_model x experts), every expert, the shared ones."""
        return self.attention_params + self.d_model * self.experts + (
            self.experts + self.shared_experts) * self.expert_params

    @property
    def body_params(self) -> int:
        """Stored parameters but the tables: layers, input projection, final norm."""
        fuse = self.fuse_in * self.d_model + self.d_model if self.fuse_in else 0
        return ((self.layers - self.moe_layers) * self.layer_params + self.moe_layers * self.moe_layer_params
                + fuse + (self.norm_params if self.final_norm else 0))

    @property
    def shared_params(self) -> int:
        """What every pass reads whatever the tokens: the body but the routed experts, and the LM head."""
        return self.body_params - self.moe_layers * self.experts * self.expert_params + self.vocab * self.d_model

    @property
    def params(self) -> int:
        """Stored parameters (a shared embedding and LM head are not this model's)."""
        tables = 0 if self.shares_embeddings else self.vocab * self.d_model * (1 if self.tied_embeddings else 2)
        return self.body_params + tables + self.positions * self.d_model

    @property
    def streamed_params(self) -> int:
        """Parameters one position's pass reads and multiplies: the shared ones and, in each MoE layer,
        the token's ``experts_per_token`` experts (a dense model: the body and the LM head)."""
        return self.shared_params + self.moe_layers * self.experts_per_token * self.expert_params

    def experts_read(self, tokens: int = 1) -> float:
        """Expected distinct experts per MoE layer that a pass over ``tokens`` tokens reads (0 if dense)."""
        if not self.experts:
            return 0
        return experts_read(self.experts, self.experts_per_token, tokens, self.routing)

    def weight_bytes(self, dtype: str = "bf16", tokens: int = 1):
        """Bytes of weights a pass over ``tokens`` tokens (all positions of the batch) reads: a dense model
        reads ``streamed_params`` whatever the tokens (an int); an MoE model the shared weights and, per
        MoE layer, the expected union of the experts the tokens chose (a float)."""
        if not self.experts:
            return self.streamed_params * dtype_bytes(dtype)
        routed = self.moe_layers * self.experts_read(tokens) * self.expert_params
        return (self.shared_params + routed) * dtype_bytes(dtype)

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


QWEN = ("Qwen/{repo} on Hugging Face: the model card's {card} (the counts below reproduce them); per-layer "
        "shapes as in transformers 5.25.0 models/{module}/configuration_{module}.py and modeling_{module}.py "
        "(q_norm and k_norm over head_dim, RMSNorm, SwiGLU, rotary positions; a router of num_experts x "
        "hidden_size without bias)")

QWEN3_30B_A3B = ModelShape(
    "qwen3-30b-a3b", layers=48, d_model=2048, n_heads=32, n_kv_heads=4, head_dim=128, d_ff=6144, vocab=151936,
    tied_embeddings=False, gated_mlp=True, qk_norm=True, experts=128, experts_per_token=8, expert_d_ff=768,
    max_context=32768,
    source=QWEN.format(repo="Qwen3-30B-A3B", module="qwen3_moe", card=(
        "48 layers, 32 query and 4 KV heads, 128 experts of which 8 activated, 30.5B parameters (29.9B "
        "non-embedding), 3.3B activated, a native context of 32,768 tokens")) + (
        ": hidden_size 2048, head_dim 128, moe_intermediate_size 768, every layer MoE (decoder_sparse_step "
        "1, no mlp_only_layers), vocab_size 151936, untied embeddings"))

QWEN3_06B = ModelShape(
    "qwen3-0.6b", layers=28, d_model=1024, n_heads=16, n_kv_heads=8, head_dim=128, d_ff=3072, vocab=151936,
    tied_embeddings=True, gated_mlp=True, qk_norm=True, max_context=32768,
    source=QWEN.format(repo="Qwen3-0.6B", module="qwen3", card=(
        "28 layers, 16 query and 8 KV heads, 0.6B parameters (0.44B non-embedding), tied embeddings, a "
        "context of 32,768 tokens")) + ": hidden_size 1024, head_dim 128, intermediate_size 3072, vocab_size "
                                        "151936 (Qwen3's vocabulary: a drafter for qwen3-30b-a3b)")


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


MODELS = {m.name: m for m in (LLAMA_3_8B, LLAMA_3_70B, LLAMA_32_1B, LLAMA_32_3B, EAGLE_8B, QWEN3_30B_A3B, QWEN3_06B)}
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
