"""Where drafts come from: one drafter interface that the speculative decoder takes.

Every drafter gives the row q after the sequence so far and after each token
drafted from it, says how many drafts it proposes this round, and is told
after verification how many tokens of the sequence the target kept. The
decoder (``specsim.gpt.decode``) does everything else -- the draws (the
scheme's own, on the host), verification, residual, bonus, crop, the trace
-- once, for all drafters and every scheme:

* ``distilled`` and ``trained``: the shipped small GPTs (``ModelDrafter``);
* ``early-exit:K``: the target's own first K layers, then its final layer
  norm and LM head (self-speculation without training), ``early-exit:K+head``
  the same K layers with a small trained exit head instead
  (``ExitHead``, trained by KL(p || q) against the full target with the target
  frozen; shipped for every K). In chain decoding both *share the target's KV
  cache* (``SharedExitDrafter``): for positions the target has verified,
  layers 0 .. K-1 of its cache hold exactly the keys and values the drafter
  would compute (same weights, same tokens, same positions), so the drafter
  keeps no cache of its own and needs no prefill. It writes its drafts' keys
  into those K layers above the verified length and crops them away before
  the verify pass, which recomputes them for all layers. A draft tree is
  laid out differently from the chain, so the tree decoder gives early exit
  its own K-layer cache (``ModelDrafter``);
* ``eagle``: one narrow decoder layer over the target's own final hidden
  state and the next token's embedding, read out through the target's final
  norm and head (``specsim.gpt.eagle``, EAGLE-style; the decoder hands it the
  verify pass's features);
* ``lookup:N``: prompt lookup, model-free. It finds the most recent earlier
  occurrence of the last N tokens of the sequence and proposes what followed
  it, falling back to N - 1, ..., 1 tokens; with no match it proposes
  nothing. The draft length therefore varies per round, down to 0 (that
  round is one plain target step: the verify pass over the last token alone
  gives the "bonus" row).

Exactness of a deterministic draft (at any temperature). A drafter that
proposes x without sampling is a drafter whose row q puts mass 1 on x. The
rule needs no change: x is accepted with probability min(1, p(x) / q(x)) =
p(x), and on rejection the replacement is drawn from max(0, p - q)
normalized, which is p with x removed and renormalized. So the emitted
token is x with probability p(x) and y != x with probability
(1 - p(x)) * p(y) / (1 - p(x)) = p(y): exactly p. (When p(x) = 1 the draft is
always accepted.) ``tests/test_gpt_drafters.py`` checks this with the exact
engine on a toy model whose q rows are one-hot.

>>> d = LookupDrafter(3)
>>> d.propose_ids([1, 2, 3, 9, 9, 1, 2, 3], 4)  # "1 2 3" seen before: propose what followed
[9, 9, 1, 2]
>>> d.propose_ids([5, 6, 7], 4)  # no earlier occurrence of 7: nothing
[]
>>> d.propose_ids([4, 1, 8, 2, 1], 2)  # "2 1" unseen, falls back to "1" (most recent: followed by 8)
[8, 2]
"""
from __future__ import annotations

import copy
import dataclasses

import torch
import torch.nn as nn
import torch.nn.functional as F

from .model import one_position
from .specs import parse_spec  # noqa: F401  (the names, without torch)


class Drafter:
    """The interface the decoder takes: every capability a method with a default, so a new drafter
    overrides only what it does (``row`` at least) and the decoder never asks what a drafter is.

    ``ids`` is always the whole sequence so far (prompt, possibly slid, plus
    the generated tokens); its last token is the one the target scores next.
    The decoder drafts by asking for rows: ``row(ids, ())`` is q after
    ``ids``, then ``row(ids, path)`` after each drafted token in turn (a
    chain's path grows by one token per call). The draws themselves are the
    scheme's (``specsim.schemes``), on the host.

    A drafter is declared once, in ``specsim.gpt.specs.DRAFTERS`` (its name, parameter, help, how it is
    built, whether it drafts a tree, whether the page offers it).
    """

    name = "drafter"  # its spec as written (``lookup:3``): the registry entry it belongs to
    window = 10**9  # positions the drafter can hold (a model's context window)
    model_free = False
    passes = 0  # the drafter's model passes so far (a model-free drafter makes none)

    def start(self, ids: list) -> None:
        """(Re)start on ``ids``: at the beginning and after the window slid."""

    def budget(self, ids: list, gamma: int) -> int:
        """How many drafts it proposes this round (at most ``gamma``; prompt lookup may propose fewer)."""
        return gamma

    def row(self, ids: list, path: tuple, sampling) -> torch.Tensor:
        """q (V,) after ``ids`` and the drafted ``path``; called with (), then each longer path in turn."""
        raise NotImplementedError

    def done(self) -> None:
        """Drafting is over for this round (before the verify pass)."""

    def keep(self, ids: list, kept: int, crop: bool = True) -> None:
        """After verification: the first ``kept`` positions of ``ids`` are final
        (prefix, last token, accepted drafts); ``ids`` now ends with the closing token."""

    def attach(self, cache) -> None:
        """Handed the target's KV cache before the first round (a drafter that shares it: early exit)."""

    def reads_features(self) -> bool:
        """Whether the verify pass must also return the target's final hidden states (then ``features``)."""
        return False

    def features(self, ids: list, h: torch.Tensor) -> None:
        """After step 6, when ``reads_features()``: the target's final hidden states ``h`` (k, C) of the
        last k kept positions of ``ids[:-1]`` (the EAGLE drafter)."""

    def own_cache(self) -> "Drafter":
        """This drafter with a cache of its own, as the tree decoder needs one (early exit shares the
        target's in a chain); the tree decoder drafts with a ``ModelDrafter`` only."""
        return self

    def own_model(self):
        """Its torch model (``GPTModels.draft``: a small GPT, the target's first K layers, the EAGLE
        layer over the target), or None for a model-free drafter."""
        return None

    def cache_length(self) -> int | None:
        """Positions in its KV cache (the trace's cache lengths), or None without a cache."""
        return None

    def fresh(self) -> "Drafter":
        """A new drafter like this one, on the same model, for one generation (``GPTModels.drafter``).
        The default is a shallow copy: override it when the drafter keeps state that ``start`` does not
        reset."""
        return copy.copy(self)


def _one_hot(token: int, vocab_size: int, device) -> torch.Tensor:
    q = torch.zeros(vocab_size, device=device)  # (V,)
    q[token] = 1.0
    return q


class ModelDrafter(Drafter):
    """A causal LM with a KV cache (a small GPT, or the target's first layers)."""

    def __init__(self, model, name: str = "model"):
        self.model, self.name = model, name
        self.window = model.config.block_size
        self.cache = model.new_cache()
        self.device = model.wte.weight.device
        self.fed = 0  # ids[:fed] are in the cache (or deliberately skipped, crop=False)
        self.passes = 0
        self.step = one_position(model)  # one position without the forward pass's host costs

    def own_model(self):
        return self.model

    def cache_length(self):
        return self.cache.length

    def fresh(self):
        return type(self)(self.model, self.name)

    def start(self, ids):
        self.cache.reset()
        if len(ids) > 1:
            self.model(torch.tensor([ids[:-1]], device=self.device), self.cache, last_only=True)
        self.fed = len(ids) - 1

    def row(self, ids, path, sampling):
        # first call: the unfed tail of ids ((1, 1), or (1, 2) one behind after a full acceptance); then the last draft
        feed = ids[self.fed:] if not path else [path[-1]]
        self.passes += 1
        if len(feed) == 1:
            return sampling.row(self.step(feed[0], self.cache))
        return sampling.row(self.model(torch.tensor([feed], device=self.device), self.cache, last_only=True)[0, -1])

    def keep(self, ids, kept, crop=True):
        if crop:  # after a full acceptance the last draft was never fed: kept - 1 stay
            self.cache.crop(min(kept, self.cache.length))
            self.fed = self.cache.length
        else:  # the pitfall: stale drafts stay in the cache, only the closing token is fed next
            self.fed = len(ids) - 1


class ExitHead(nn.Module):
    """A trained exit after block K: a low-rank residual MLP and a LayerNorm, then
    the target's tied head. Zero-initialized up-projection and the target's final
    norm: untrained, it is exactly the plain early exit."""

    def __init__(self, n_embd: int, rank: int = 64):
        super().__init__()
        self.down = nn.Linear(n_embd, rank, bias=False)
        self.up = nn.Linear(rank, n_embd, bias=False)
        self.ln = nn.LayerNorm(n_embd)
        nn.init.normal_(self.down.weight, std=0.02)
        nn.init.zeros_(self.up.weight)

    def forward(self, x):
        return self.ln(x + self.up(F.gelu(self.down(x), approximate="tanh")))  # (B, T, C)


class EarlyExit(nn.Module):
    """The target's first ``k`` blocks, then its final layer norm and head (shared
    weights), or a trained ``ExitHead`` and the target's head."""

    def __init__(self, target, k: int, head: ExitHead | None = None):
        super().__init__()
        n = target.config.n_layer
        if not 1 <= k < n:
            raise ValueError(f"early-exit needs 1 <= K < {n} (the target's layers), got {k}")
        self.target, self.k, self.exit_head = target, k, head
        self.config = dataclasses.replace(target.config, n_layer=k)
        self.wte = target.wte

    def new_cache(self):
        from .model import KVCache
        p = self.wte.weight
        return KVCache(self.config, device=p.device, dtype=p.dtype)

    def _head(self, x):
        return self.target.lm_head(self.exit_head(x))  # (B, T, V)

    def stepper(self):
        """The target's one-position step over its first K blocks and this exit (``model.Step``)."""
        return self.target.stepper(self.k, self._head if self.exit_head is not None else None)

    def forward(self, idx, cache=None, last_only=False, pos=None, mask=None):
        head = self._head if self.exit_head is not None else None
        return self.target(idx, cache, last_only, n_layers=self.k, pos=pos, mask=mask, head=head)  # (B, T, V)


class SharedExitDrafter(Drafter):
    """Early exit on the target's own KV cache (chain decoding; see the module docstring).

    The decoder calls ``attach(target_cache)`` before the first round.
    """

    def __init__(self, model: EarlyExit, name: str):
        self.model, self.name = model, name
        self.window = model.config.block_size
        self.cache = None
        self.passes = 0
        self.n = None  # the target's verified length while a round drafts on its cache
        self.step = model.stepper()

    def attach(self, cache) -> None:
        self.cache = cache

    def own_model(self):
        return self.model

    def cache_length(self):
        return None if self.cache is None else self.cache.length

    def fresh(self):
        return SharedExitDrafter(self.model, self.name)

    def start(self, ids):
        if self.cache is None:
            raise ValueError("a shared-cache drafter needs the target's cache: call attach() first")

    def row(self, ids, path, sampling):
        if not path:  # the target's verified prefix; layers 0 .. K-1 are the drafter's too
            self.n = self.cache.length
        self.passes += 1
        return sampling.row(self.step(path[-1] if path else ids[-1], self.cache))  # the last token, then each draft

    def done(self):
        if self.n is not None:
            self.cache.crop(self.n)  # the verify pass writes these positions again, in every layer
            self.n = None

    def own_cache(self) -> "ModelDrafter":
        """The same drafter with a K-layer cache of its own (for the tree decoder)."""
        return ModelDrafter(self.model, self.name)


class LookupDrafter(Drafter):
    """Prompt lookup: continue the most recent earlier match of the last n tokens."""

    model_free = True

    def __init__(self, n: int, vocab_size: int = 0, device="cpu"):
        if n < 1:
            raise ValueError(f"lookup needs N >= 1, got {n}")
        self.n, self.vocab_size, self.device = n, vocab_size, device
        self.name, self.passes = f"lookup:{n}", 0

    def fresh(self):
        return LookupDrafter(self.n, self.vocab_size, self.device)

    def propose_ids(self, ids: list, gamma: int) -> list:
        for n in range(min(self.n, len(ids) - 1), 0, -1):
            tail = ids[-n:]
            for start in range(len(ids) - n - 1, -1, -1):  # most recent earlier occurrence first
                if ids[start:start + n] == tail:
                    return ids[start + n:start + n + gamma]
        return []

    def budget(self, ids, gamma):
        self.proposal = self.propose_ids(ids, gamma)
        return len(self.proposal)

    def row(self, ids, path, sampling):
        return _one_hot(self.proposal[len(path)], self.vocab_size, self.device)  # q: mass 1 on the proposal


def build_small(spec, target, shelf) -> ModelDrafter:
    """``distilled`` and ``trained``: the shipped small GPT of that name (``specs.DRAFTERS``)."""
    return ModelDrafter(shelf.small(spec.name), spec.name)


def build_lookup(spec, target, shelf) -> LookupDrafter:
    """``lookup:N``: prompt lookup over the last N tokens, q one-hot in the target's vocabulary."""
    return LookupDrafter(spec.n, target.config.vocab_size, target.wte.weight.device)


def build_early_exit(spec, target, shelf) -> SharedExitDrafter:
    """``early-exit:K`` (the target's final norm and head) and ``early-exit:K+head`` (a trained exit head)."""
    head = None
    if spec.name == "early-exit+head":
        EarlyExit(target, spec.n)  # the one-line error for a K out of range comes first
        head = shelf.exit_head(spec.n)
    return SharedExitDrafter(EarlyExit(target, spec.n, head).eval(), spec.text)


def as_drafter(draft) -> Drafter:
    """A ``Drafter`` as is; a bare model (a GPT) wrapped in a ``ModelDrafter``."""
    return draft if isinstance(draft, Drafter) else ModelDrafter(draft)
