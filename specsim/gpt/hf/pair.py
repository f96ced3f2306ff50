"""Bring your own pair: two local Hugging Face causal-LM checkpoints behind specsim's model interface.

The decoder (``specsim.gpt.decode``), the drafters, the trace and the bench
call a model as ``model(idx, cache, last_only)`` with a cache that has a
``length``, ``crop(length)`` and ``reset()``, and read ``model.config.block_size``,
``model.config.vocab_size`` and ``model.wte.weight.device``. ``HFCausalLM``
gives an ``AutoModelForCausalLM`` exactly that, over a ``DynamicCache``; so
speculative decoding, its trace and its bench run on the user's models
unchanged (nothing in ``decode.py`` knows about transformers).

Loading checks, each refused with one line (a ``CheckpointError``): the path
exists, is a checkpoint (``config.json``), runs no code from the checkpoint
(no ``auto_map``, weights from safetensors only, never a pickle), is a
causal LM whose every weight is in its files and finite
(``checkpoint_checks`` says how), both models share one tokenizer (same
vocabulary) and one logit width (``vocab_size``), and transformers is
installed. Models run in float32. ``tests/test_gpt_hf.py``
runs the exported tiny pair through it: the same tokens and the same trace as
specsim's own models, greedy and sampled.
"""
from __future__ import annotations

import functools
import inspect
import os
from types import SimpleNamespace

import torch
import torch.nn as nn

from ..checkpoint_checks import (CheckpointError, check_checkpoint, check_config_size, check_finite,
                                check_loading_info, one_line,
                                read_hf_configs,
                                safetensors_files)
from .export import require_transformers

CAUSAL_SUFFIXES = ("ForCausalLM", "LMHeadModel")
DEFAULT_WINDOW = 2048  # when a config names no context length


class HFCache:
    """A ``DynamicCache`` with specsim's cache interface: ``length``, ``crop(length)``, ``reset()``."""

    def __init__(self):
        self.reset()

    def reset(self) -> None:
        self.kv = require_transformers().DynamicCache()
        self.length = 0

    def crop(self, length: int) -> None:
        if not 0 <= length <= self.length:
            raise ValueError(f"cannot crop a cache of length {self.length} to {length}")
        if length < self.length:
            self.kv.crop(length - self.length)  # negative: remove that many (old and new transformers alike)
        self.length = length


class HFCausalLM(nn.Module):
    """An HF causal LM as a specsim model: ``forward(idx, cache, last_only) -> (B, T, V)`` float32 logits."""

    def __init__(self, model, name: str = "hf"):
        super().__init__()
        self.model, self.name = model.eval(), name
        c = model.config
        if getattr(c, "vocab_size", None) is None and hasattr(c, "get_text_config"):
            c = c.get_text_config()  # a composite config (an assistant's) keeps its sizes in its text config
        window = getattr(c, "n_positions", None) or getattr(c, "max_position_embeddings", None) or DEFAULT_WINDOW
        self.config = SimpleNamespace(block_size=int(window), vocab_size=int(c.vocab_size),
                                      n_layer=getattr(c, "num_hidden_layers", None))
        params = inspect.signature(model.forward).parameters
        self._cache_kw = "cache" if "cache" in params else "past_key_values"  # renamed in transformers 5.x
        self._keep_kw = "logits_to_keep" if "logits_to_keep" in params else None

    @property
    def wte(self):
        return self.model.get_input_embeddings()  # .weight.device: where inputs go

    def new_cache(self) -> HFCache:
        return HFCache()

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.model.parameters())

    def forward(self, idx: torch.Tensor, cache: HFCache | None = None, last_only: bool = False):
        n = 0 if cache is None else cache.length
        if n + idx.size(1) > self.config.block_size:
            raise ValueError(f"{n + idx.size(1)} positions exceed the context window of {self.config.block_size}")
        kw = {}
        if cache is not None:
            kw = {self._cache_kw: cache.kv, "use_cache": True}
        if last_only and self._keep_kw:
            kw[self._keep_kw] = 1
        logits = self.model(input_ids=idx, **kw).logits  # (B, T, V) or (B, 1, V)
        if cache is not None:
            cache.length = n + idx.size(1)
        return (logits[:, -1:] if last_only else logits).float()


class HFTokenizer:
    """An HF tokenizer with specsim's: ``encode`` (no special tokens), ``decode``, ``vocab[i]`` = token i as text."""

    def __init__(self, tokenizer):
        self.hf = tokenizer
        self.vocab = _TokenTexts(tokenizer)

    def __len__(self) -> int:
        return len(self.hf)

    def describe(self) -> str:
        return f"{len(self.hf)} tokens"

    def encode(self, text: str) -> list[int]:
        try:
            return list(self.hf.encode(text, add_special_tokens=False))
        except Exception as e:  # tokenizers raises a bare Exception for text it cannot encode
            raise ValueError(f"the tokenizer cannot encode this text (something outside its vocabulary): "
                             f"{one_line(e)}") from None

    def decode(self, ids) -> str:
        return self.hf.decode(list(ids), clean_up_tokenization_spaces=False)


class _TokenTexts:
    """``vocab[i]``: the text of token i, decoded on demand (a 50k vocabulary costs nothing up front)."""

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer

    def __len__(self) -> int:
        return len(self.tokenizer)

    @functools.lru_cache(maxsize=65536)
    def __getitem__(self, i: int) -> str:
        return self.tokenizer.decode([int(i)], clean_up_tokenization_spaces=False)

    def __hash__(self):
        return id(self)


DFLASH_FIELDS = ("block_size", "mask_token_id", "target_layer_ids")  # a DFlash assistant's config names them


class DFlashAssistant(nn.Module):
    """A DFlash assistant (transformers' ``speculation_type="dflash"``): no language-model head of its own (it
    drafts a block through the target's head), so it is held for ``generate``, never called as a model."""

    def __init__(self, model, name: str):
        super().__init__()
        self.model, self.name = model.eval(), name
        self.config = SimpleNamespace(block_size=None, vocab_size=None, n_layer=None)


def _load_one(path: str, role: str, device: torch.device, dflash: bool = False):
    """One checkpoint, checked before and after loading (``checkpoint_checks``): no code, no pickle, whole,
    every weight present and finite. Refusals are ``CheckpointError``s (one line). ``dflash``: a DFlash
    assistant (``DFlashAssistant``) rather than a causal LM."""
    transformers = require_transformers()
    path = check_checkpoint(path, role)
    where = f"the {role} checkpoint {path}"
    config_dict = read_hf_configs(path, role)  # read and checked here: transformers never sees an auto_map
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING
    if config_dict["model_type"] not in CONFIG_MAPPING:
        raise CheckpointError(f"{where} has model_type {config_dict['model_type'][:60]!r}, which transformers "
                              f"{transformers.__version__} does not know (and specsim runs no code from a checkpoint)")
    try:
        config = CONFIG_MAPPING[config_dict["model_type"]].from_dict(config_dict)
    except (KeyError, ValueError, TypeError, AttributeError) as e:
        raise CheckpointError(f"{where} has an unreadable config.json: {one_line(e)}") from None
    if dflash:
        return _load_dflash(path, config, config_dict, role, device)
    archs = getattr(config, "architectures", None) or []
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
    causal = MODEL_FOR_CAUSAL_LM_MAPPING_NAMES.get(config.model_type)
    if (archs and not any(a.endswith(CAUSAL_SUFFIXES) for a in archs)) or (not archs and not causal):
        what = ", ".join(map(str, archs)) or config.model_type
        raise CheckpointError(f"{where} is not a causal language model ({what})")
    model, tok = _checked_weights(transformers.AutoModelForCausalLM, path, config, config_dict, role)
    return HFCausalLM(model.to(device), os.path.basename(os.path.normpath(path))), tok


def _checked_weights(auto_class, path: str, config, config_dict: dict, role: str):
    """``auto_class.from_pretrained`` on a checked checkpoint: safetensors only, each file whole, its size
    what the config says; every loader error one line; nothing filled in at random or dropped, every weight
    finite. The model (on the CPU, float32) and its tokenizer."""
    transformers = require_transformers()
    where = f"the {role} checkpoint {path}"
    weights = safetensors_files(path, role)  # weights from safetensors only, each file whole
    check_config_size(config_dict, sum(os.path.getsize(os.path.join(path, f)) for f in weights), role)
    safe = dict(local_files_only=True, trust_remote_code=False)
    try:
        model, info = auto_class.from_pretrained(
            path, config=config, dtype=torch.float32, use_safetensors=True, output_loading_info=True, **safe)
        tok = transformers.AutoTokenizer.from_pretrained(path, **safe)
    except Exception as e:  # transformers and safetensors raise many types for a bad file; all are one line here
        raise CheckpointError(f"cannot load {where}: {loader_error(e)}") from None
    check_loading_info(info, role, model)  # nothing filled in at random, nothing dropped
    check_finite(model.named_parameters(), where)
    return model, tok


def _load_dflash(path: str, config, config_dict: dict, role: str, device: torch.device):
    """A DFlash assistant checkpoint, with the same checks as a causal LM's."""
    transformers = require_transformers()
    where = f"the {role} checkpoint {path}"
    missing = [f for f in DFLASH_FIELDS if getattr(config, f, None) is None]
    if missing:
        raise CheckpointError(f"{where} is not a DFlash assistant (its config has no {', '.join(missing)})")
    model, tok = _checked_weights(transformers.AutoModel, path, config, config_dict, role)
    return DFlashAssistant(model.to(device), os.path.basename(os.path.normpath(path))), tok


def loader_error(e: BaseException) -> str:
    """The loader's error as one line that names its cause (transformers' mismatch errors point at a report
    logged elsewhere, which a one-line error cannot show)."""
    text = one_line(e)
    if "above report" in text.lower() or "size mismatch" in text.lower():
        return ("its weights do not match its config.json (a tensor missing, unexpected or of another shape); "
                "export or convert the checkpoint again")
    return text


def check_same_tokenizer(target_tok, draft_tok, target: HFCausalLM, draft: HFCausalLM) -> None:
    """One line when the two models could not share token ids."""
    if target.config.vocab_size != draft.config.vocab_size:
        raise CheckpointError(f"the target scores {target.config.vocab_size} tokens and the draft "
                              f"{draft.config.vocab_size}: speculative decoding needs one vocabulary")
    if target_tok.get_vocab() != draft_tok.get_vocab():
        raise CheckpointError("the target's and the draft's tokenizers differ (another vocabulary): "
                              "the draft's token ids would mean other tokens to the target")


@functools.lru_cache(maxsize=4)
def _load_pair(target_path: str, draft_path: str, device: str, kind: str = "pair"):
    from ..api import GPTModels
    dev = torch.device(device)
    target, t_tok = _load_one(target_path, "target", dev)
    if kind == "mtp":  # a target that drafts for itself (its MTP layers): the target is the pair's draft too
        if draft_path:
            raise CheckpointError("a target that drafts with its own MTP layers takes no draft checkpoint")
        return GPTModels(target, target, HFTokenizer(t_tok), dev, f"hf:{target.name}")
    draft, d_tok = _load_one(draft_path, "draft", dev, kind == "dflash")
    if kind == "dflash":  # it drafts through the target's head and context: widths and window are the target's
        draft.config.vocab_size, draft.config.block_size = target.config.vocab_size, target.config.block_size
    check_same_tokenizer(t_tok, d_tok, target, draft)
    return GPTModels(target, draft, HFTokenizer(t_tok), dev, f"hf:{draft.name}")


def load_hf_pair(target_path: str, draft_path: str, device: str = "auto", kind: str = "pair"):
    """A ``specsim.gpt.api.GPTModels`` over two local HF checkpoints (cached per paths and device); with
    ``kind="mtp"`` and no ``draft_path``, over the target alone (its own draft: a model with MTP layers,
    ``hf.mtp``); with ``kind="dflash"``, the draft is a DFlash assistant held for ``generate`` only
    (``hf.dflash``). ``hf.options.drafter_kind`` says which kind ``--hf`` options ask for.

    Everything that takes the shipped pair takes it: ``api.speculative_generate``,
    ``api.plain_generate``, ``bench.bench``, ``bench.quick_measure``.
    """
    from ..api import resolve_device
    require_transformers()
    dev = str(resolve_device(device))
    return _load_pair(os.path.abspath(os.path.expanduser(target_path or "")) if target_path else "",
                      os.path.abspath(os.path.expanduser(draft_path or "")) if draft_path else "", dev, kind)
