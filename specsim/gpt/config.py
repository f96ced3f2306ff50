"""Model sizes for the tiny GPT pair, as a dataclass with named presets.

The target is the model whose distribution p we want to sample; the drafter
proposes tokens from q. Both share the character vocabulary and the context
window, so a drafter's token ids mean the same thing to the target.

>>> PRESETS["target"].n_layer, PRESETS["draft"].n_layer
(5, 1)
>>> GPTConfig(n_embd=100, n_head=3)
Traceback (most recent call last):
...
ValueError: n_embd (100) must be divisible by n_head (3)
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, replace


@dataclass(frozen=True)
class GPTConfig:
    """GPT-2 layout: learned positions, pre-LayerNorm blocks, GELU MLP, tied embeddings."""

    vocab_size: int = 96
    block_size: int = 256  # context window in characters
    n_layer: int = 6
    n_head: int = 6
    n_embd: int = 384

    def __post_init__(self):
        if self.n_embd % self.n_head:
            raise ValueError(f"n_embd ({self.n_embd}) must be divisible by n_head ({self.n_head})")
        for name in ("vocab_size", "block_size", "n_layer", "n_head", "n_embd"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1")

    @property
    def head_size(self) -> int:
        return self.n_embd // self.n_head

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "GPTConfig":
        return cls(**{k: int(d[k]) for k in ("vocab_size", "block_size", "n_layer", "n_head", "n_embd")})

    def with_vocab(self, vocab_size: int) -> "GPTConfig":
        return replace(self, vocab_size=vocab_size)


PRESETS = {
    "target": GPTConfig(n_layer=5, n_head=6, n_embd=384),
    "draft": GPTConfig(n_layer=1, n_head=4, n_embd=128),
    "tiny": GPTConfig(block_size=32, n_layer=1, n_head=2, n_embd=16),  # tests
    "tiny-2": GPTConfig(block_size=32, n_layer=2, n_head=2, n_embd=16),  # tests (a layer to exit after)
}
