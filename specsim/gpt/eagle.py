"""An EAGLE-style drafter: one narrow decoder layer that reads the target's own features.

EAGLE (Li, Wei, Zhang, Zhang, "EAGLE: Speculative Sampling Requires Rethinking
Feature Uncertainty", ICML 2024, arXiv:2401.15077) drafts at the level of the
target's *features* -- the hidden state just before its final norm and LM
head -- instead of tokens. Here, for the tiny GPT:

* slot j of the drafter takes ``[f_{j-1} ; e(x_j)]``: the target's final
  hidden state at position j - 1 (the state that predicted x_j) and the
  target's own embedding of x_j (``target.wte``, shared, not copied; f_{-1}
  is zero), projects the pair to a narrow width ``width``, runs one pre-norm
  decoder layer (attention over the earlier slots, MLP) and projects back to
  the target's width: the predicted feature f^_j;
* the row q for x_{j+1} is read out through the target's frozen final norm
  and head: ``q = softmax(lm_head(ln_f(f^_j)))`` (``lm_head`` is tied to
  ``wte``: the drafter owns only ``EagleLayer``'s weights);
* while drafting, a draft's slot takes its parent's *predicted* feature
  (the target has not seen the draft yet); once the target has verified a
  round, its verify pass gives the real features of the kept positions
  (``GPT.forward(..., hidden=True)``) and the drafter re-reads the accepted
  tokens with them (``EagleDrafter.features``), as EAGLE does.

Why it accepts more than a one-layer GPT of the same width: f_{j-1} already
carries everything the five target layers extracted from the context, so the
one layer only has to fold in the one new token; a small drafter has to
rebuild the context from tokens alone. Where it is weaker: a draft deep in a
chain reads a feature predicted from a predicted feature, so acceptance
falls with depth faster than teacher forcing suggests.

Training (``specsim.gpt.train.eagle.train_eagle``, the recipe's stage ``eagle``): the target frozen,
on random windows of the corpus, the loss is the paper's pair, feature
regression (smooth L1 between f^_j and f_j) plus ``kl_weight`` times the
KL(p || q) of the read-out against the target's row. A draft after the
first reads a *predicted* feature, not a real one, and there are two ways
to train for that. EAGLE adds noise to the features it trains on (here
``noise``: Gaussian, on half the windows; the paper uses uniform noise).
EAGLE-3 (Li, Wei, Zhang, Zhang, "EAGLE-3: Scaling up Inference
Acceleration of Large Language Models via Training-Time Test",
arXiv:2503.01840, 2025) trains on the drafts themselves: here ``unroll`` = k
also scores every slot as the 2nd .. k-th draft of a chain, reading the
layer's own predicted features (``unrolled``). The shipped layer is trained
the second way (``train.recipe.Recipe``: ``eagle_unroll`` 3, no noise),
then trained on from that layer with the total variation 1 - alpha of the
read-out added to the loss (the stage ``eagle_more``).

Without a cache the module is the teacher-forced drafter (its inputs are the
target's real features at every slot), which is what
``train.loop.teacher_forced_alpha`` measures.

>>> import torch
>>> from specsim.gpt.config import PRESETS
>>> from specsim.gpt.model import GPT
>>> torch.manual_seed(0) and None
>>> target = GPT(PRESETS["tiny"]).eval()
>>> eagle = Eagle(target, EagleLayer(EagleConfig.for_target(target.config, width=8, n_head=2))).eval()
>>> eagle(torch.tensor([[1, 2, 3]])).shape  # teacher forced: (B, T, V)
torch.Size([1, 3, 96])
>>> EagleConfig(n_embd=16, width=10, n_head=3)
Traceback (most recent call last):
...
ValueError: the eagle layer's width (10) must be divisible by its heads (3)
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from .config import GPTConfig
from .drafters import ModelDrafter
from .model import Block, KVCache, block_span, block_step, block_weights, row_product, span_mask


@dataclass(frozen=True)
class EagleConfig:
    """The target's width and vocabulary, and the drafter layer's own width and heads."""

    n_embd: int = 384  # the target's hidden size (features in and out)
    width: int = 128  # the drafter layer's width
    n_head: int = 4
    block_size: int = 256
    vocab_size: int = 96

    def __post_init__(self):
        for name in ("n_embd", "width", "n_head", "block_size", "vocab_size"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise ValueError(f"the eagle layer's {name} must be an integer >= 1, got {getattr(self, name)!r}")
        if self.width % self.n_head:
            raise ValueError(f"the eagle layer's width ({self.width}) must be divisible by its heads ({self.n_head})")

    @classmethod
    def for_target(cls, target: GPTConfig, width: int = 128, n_head: int = 4) -> "EagleConfig":
        return cls(target.n_embd, width, n_head, target.block_size, target.vocab_size)

    @property
    def layer(self) -> GPTConfig:
        """The decoder layer's own shape (one block of ``width``), for ``Block`` and its cache."""
        return GPTConfig(self.vocab_size, self.block_size, 1, self.n_head, self.width)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "EagleConfig":
        return cls(**{k: int(d[k]) for k in ("n_embd", "width", "n_head", "block_size", "vocab_size")})


class EagleLayer(nn.Module):
    """The drafter's own weights: [f ; e] -> width, one decoder layer, width -> the target's width."""

    def __init__(self, config: EagleConfig):
        super().__init__()
        self.config = config
        self.fc = nn.Linear(2 * config.n_embd, config.width)
        self.block = Block(config.layer)
        self.out = nn.Linear(config.width, config.n_embd)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, std=0.02)
                nn.init.zeros_(m.bias)

    def forward(self, f, e, cache=None, mask=None):
        """f, e: (B, T, C) features and embeddings -> (B, T, C) predicted next features."""
        x = self.fc(torch.cat([f, e], dim=-1))  # (B, T, width)
        if cache is None:
            return self.out(self.block(x, mask))  # (B, T, C)
        n = cache.length  # B = 1: the token loop's feed, ``model.block_span``'s lean path
        return self.out(block_span(block_weights(self.block), x, cache, 0, n, span_mask(x.size(1), n, mask, x)))


class EagleCache(KVCache):
    """The layer's keys and values, plus what a slot's children read: its predicted feature (``out``)
    and the real features waiting to be read by the next feed (``queue``)."""

    def __init__(self, config: EagleConfig, device=None, dtype=torch.float32):
        super().__init__(config.layer, device, dtype)
        self.out = torch.zeros(config.block_size, config.n_embd, device=device, dtype=dtype)  # (W, C)
        self.queue = None  # (T, C): the real features of the next T slots, or None (drafts: parents' features)

    def keep(self, indices) -> None:
        indices = [int(i) for i in indices]
        super().keep(indices)  # checks them
        self.out[:len(indices)] = self.out[torch.tensor(indices, dtype=torch.long, device=self.out.device)]

    def reset(self) -> None:
        super().reset()
        self.queue = None


def parent_slots(n: int, T: int, mask=None) -> torch.Tensor:
    """The slot each of T new slots (after n cached) drafts from: its nearest visible earlier slot.

    Without a mask the chain's: n - 1, n, ..., n + T - 2. With a tree mask
    (row i: the slots new slot i may attend to, its ancestors and itself) the
    nearest ancestor, i.e. its parent.

    >>> parent_slots(5, 2).tolist()
    [4, 5]
    >>> m = torch.tensor([[1, 1, 0, 1, 0], [1, 0, 1, 0, 1]], dtype=torch.bool)  # slots 3, 4: children of 1, 2
    >>> parent_slots(3, 2, m).tolist()
    [1, 2]
    """
    if mask is None:
        return torch.arange(n - 1, n + T - 1)
    j = torch.arange(mask.size(1), device=mask.device)  # (S,)
    earlier = j[None, :] < (n + torch.arange(T, device=mask.device))[:, None]  # (T, S)
    return torch.where(mask & earlier, j, -1).max(dim=1).values.cpu()  # (T,)


class Eagle(nn.Module):
    """The drafter model: an ``EagleLayer`` bound to the target whose features, embedding,
    final norm and head it reads (the target's weights are not copied and stay frozen)."""

    def __init__(self, target, layer: EagleLayer):
        super().__init__()
        c, t = layer.config, target.config
        if (c.n_embd, c.vocab_size) != (t.n_embd, t.vocab_size):
            raise ValueError(f"the eagle layer reads features of width {c.n_embd} and {c.vocab_size} tokens; "
                             f"the target has {t.n_embd} and {t.vocab_size}")
        self.target, self.layer = target, layer
        self.config = dataclasses.replace(c.layer, block_size=min(c.block_size, t.block_size))
        self.wte = target.wte
        self._head = None  # the target's norm and head in another dtype (``readout``); not a weight of the drafter

    def new_cache(self) -> EagleCache:
        p = self.layer.fc.weight  # the layer's own dtype (float32 beside a bfloat16 target: ``api.load_pair``)
        return EagleCache(self.layer.config, device=p.device, dtype=p.dtype)

    def features(self, ids: list) -> torch.Tensor:
        """The target's final hidden states on ``ids`` (one pass without a cache): (len(ids), C)."""
        if not ids:
            return torch.zeros(0, self.layer.config.n_embd, device=self.wte.weight.device)
        return self.target(torch.tensor([ids], device=self.wte.weight.device), hidden=True)[1][0]

    def readout(self, f: torch.Tensor) -> torch.Tensor:
        """The target's final norm and head on the predicted features ``f``: logits (B, T, V).

        In the layer's dtype: the target's own weights when the dtypes agree; beside a bfloat16 target,
        float32 copies of its norm and head (``head_weights``) (at one position the bfloat16 kernels' fixed cost
        outweighs the arithmetic: ``gpt bench --profile --draft eagle --dtype bfloat16`` shows the draft
        step). Either way the drafter's rows are q, whatever their rounding: the rule stays exact."""
        w, b, eps, head = self.head_weights(f.dtype)
        return F.linear(F.layer_norm(f, w.shape, w, b, eps), head)  # (B, T, V)

    def head_weights(self, dtype: torch.dtype) -> tuple:
        """(norm weight, norm bias, eps, head weight) of the target in ``dtype``: its own parameters when
        the dtype is theirs, else copies, made again only when those change (new data or written in place)."""
        t = self.target
        src = (t.ln_f.weight, t.ln_f.bias, t.lm_head.weight)
        if src[2].dtype == dtype:
            return src[0], src[1], t.ln_f.eps, src[2]
        made_from = (dtype,) + tuple((w.data_ptr(), w._version) for w in src)
        if self._head is None or self._head[0] != made_from:
            self._head = (made_from, tuple(w.detach().to(dtype) for w in src))
        w, b, head = self._head[1]
        return w, b, t.ln_f.eps, head

    def stepper(self) -> "EagleStep":
        """The chain's one-slot step (``EagleStep``)."""
        return EagleStep(self)

    def forward(self, idx, cache: EagleCache | None = None, last_only: bool = False, pos=None, mask=None):
        """Logits (B, T, V) for the new slots (``pos`` is not used: the features carry the positions).

        Without a cache: teacher forced, the target's own features on ``idx``.
        With one (B = 1): the T new slots read the cache's queued real features
        if it has any (exactly T), else each its parent slot's predicted feature.
        The target's embeddings and features are cast to the layer's dtype (a no-op when they agree)."""
        dtype = self.layer.fc.weight.dtype
        e = self.wte(idx).to(dtype)  # (B, T, C)
        if cache is None:
            h = self.target(idx, hidden=True)[1].to(dtype)  # (B, T, C)
            f = torch.cat([torch.zeros_like(h[:, :1]), h[:, :-1]], dim=1)  # slot j reads f_{j-1}
            x = self.layer(f, e)  # (B, T, C)
        else:
            n, T = cache.length, idx.size(1)
            if n + T > cache.capacity:
                raise ValueError(f"{n + T} positions exceed the context window of {cache.capacity}")
            if cache.queue is not None:
                if len(cache.queue) != T:
                    raise ValueError(f"the eagle drafter holds real features for {len(cache.queue)} slots, "
                                     f"fed {T}")
                f, cache.queue = cache.queue[None].to(dtype), None  # (1, T, C)
            elif mask is None and n > 0:  # a chain: each slot drafts from the one before it
                f = cache.out[n - 1:n + T - 1][None]  # (1, T, C)
            else:
                parents = parent_slots(n, T, mask)
                if int(parents.min()) < 0 or int(parents.max()) >= n:
                    raise ValueError("the eagle drafter drafts from slots already scored: feed each draft "
                                     "after its parent")
                f = cache.out[parents.to(cache.out.device)][None]  # (1, T, C)
            x = self.layer(f, e, cache, mask)  # (1, T, C)
            cache.out[n:n + T] = x[0]
            cache.length = n + T
        if last_only:
            x = x[:, -1:]  # (B, 1, C)
        return self.readout(x)  # (B, T, V)


class EagleDrafter(ModelDrafter):
    """``ModelDrafter`` on an ``Eagle`` model, told the target's features of the kept positions.

    ``start`` runs the target once over the prompt for its features (the
    decoder's own prefill does not return them); after every round the
    decoder calls ``features(ids, h)`` with the verify pass's features of the
    positions the target kept, and the drafter drops its drafted slots and
    reads the accepted tokens again with those real features.
    """

    def __init__(self, model: Eagle, name: str = "eagle"):
        super().__init__(model, name)

    def reads_features(self) -> bool:
        return True

    def start(self, ids):
        self.cache.reset()
        f = self.model.features(ids[:-1])  # (L - 1, C): positions 0 .. L - 2
        self.cache.queue = torch.cat([f.new_zeros(1, f.size(1)), f])  # slot j reads f_{j-1}; f_{-1} = 0
        if len(ids) > 1:
            self.cache.queue, rest = self.cache.queue[:-1], self.cache.queue[-1:]
            self.model(torch.tensor([ids[:-1]], device=self.device), self.cache, last_only=True)
            self.cache.queue = rest  # the last token's slot reads f_{L-2}
        self.fed = len(ids) - 1

    def keep(self, ids, kept, crop=True):
        if not crop:
            raise ValueError("crop=False is the small GPT drafters' pitfall; the eagle drafter always re-reads "
                             "the kept tokens with the target's features")
        super().keep(ids, kept, crop)

    def features(self, ids: list, h: torch.Tensor) -> None:
        """The target kept the last len(h) positions of ``ids[:-1]`` with final hidden states ``h`` (k, C):
        drop every slot after the round's real ones and queue those features for the next feed."""
        real = len(ids) - len(h)  # the slots fed with real features: up to the round's last token
        self.cache.crop(real)
        self.fed = real
        self.cache.queue = h  # the next feed, ids[real:], reads them


def build_eagle(spec, target, shelf) -> EagleDrafter:
    """``eagle``: the shipped EAGLE layer over ``target`` (``specs.DRAFTERS``)."""
    return EagleDrafter(Eagle(target, shelf.eagle()).eval())


class EagleStep:
    """One new slot of a chain: ``step(token, cache)`` is ``eagle(torch.tensor([[token]]), cache,
    last_only=True)[0, -1]`` (V,), the same kernels on the same numbers (``tests/test_gpt_eagle.py``
    checks the bits), without the forward pass's host costs (see ``model.Step``). The slot reads the one
    queued real feature if there is one, else the slot before it's predicted feature. Made once per
    generation, like ``model.Step``: it keeps the parameters it was made with, and the target's
    embeddings, norm and head cast to the layer's dtype then."""

    def __init__(self, eagle: Eagle):
        layer = eagle.layer
        dtype = layer.fc.weight.dtype
        self.wte = eagle.wte.weight.detach().to(dtype)  # (V, C): the target's embeddings, cast once
        self.fc, self.out = (layer.fc.weight, layer.fc.bias), (layer.out.weight, layer.out.bias)
        self.block = block_weights(layer.block)
        self.head = eagle.head_weights(dtype)  # the target's final norm and head, as ``Eagle.readout`` reads them
        self.product = row_product(layer.fc.weight)

    def __call__(self, token: int, cache: EagleCache) -> torch.Tensor:
        n, product = cache.length, self.product
        if n + 1 > cache.capacity:
            raise ValueError(f"{n + 1} positions exceed the context window of {cache.capacity}")
        if cache.queue is not None:
            if len(cache.queue) != 1:
                raise ValueError(f"the eagle drafter holds real features for {len(cache.queue)} slots, fed 1")
            f, cache.queue = cache.queue[0].to(self.wte.dtype), None  # (C,)
        elif n > 0:
            f = cache.out[n - 1]  # (C,): the slot before drafts this one
        else:
            raise ValueError("the eagle drafter drafts from slots already scored: feed each draft after its parent")
        x = product(self.fc[1], self.fc[0], torch.cat([f, self.wte[token]]))  # (width,)
        x = product(self.out[1], self.out[0], block_step(self.block, x, cache, 0, n, product))  # (C,)
        cache.out[n] = x
        cache.length = n + 1
        w, b, eps, head = self.head
        return product(None, head, F.layer_norm(x, w.shape, w, b, eps))  # (V,): ``Eagle.readout``'s
