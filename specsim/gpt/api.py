"""The entry points for the app and the CLI: load the shipped pair, generate from text.

>>> pair = load_pair("distilled", device="cpu")
>>> g = speculative_generate(pair, "def ", n_tokens=8, scheme="chain:3", seed=0)
>>> len(g.tokens), g.mode, len(g.text)
(8, 'speculative', 8)
>>> g.rounds[0].cache["target"]["after_crop"] == g.rounds[0].cache["target"]["start"] + g.rounds[0].accepted + 1
True

``Generation`` (``specsim.gpt.trace``) carries ``tokens``, ``text`` (set
here), ``scheme``, ``rounds`` (one ``Round`` per speculative round of any
scheme: drafts and their parents, p and q rows, u, ``acceptance``,
``accepted_flags``, K as ``accepted``, the ``closing_token`` and its
``closing_kind`` ("correct" or "bonus"), ``replacement_row``, cache lengths of
both models at start / before verification / after it / after the crop,
``scored_by()`` for which logit row scored which draft), ``alpha``,
``accepted_per_round``, ``target_passes`` and ``to_dict()`` (trace format 2).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import torch

from . import decode
from .decode import Generation, Sampling
from . import specs
from .drafters import Drafter, ModelDrafter, parse_spec
from .specs import rule_and_scheme
from .model import GPT
from .tokenizer import CharTokenizer
from .weights import load_eagle, load_exit_heads, load_gpt, read_manifest

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16}  # the target's number formats (``load_pair``)


class Shelf:
    """The shipped weights a drafter's build asks for (``specs.DrafterEntry.build``): loaded on demand and
    cached per device, directory and dtype, or, with ``given``, only those given (``make_drafter``)."""

    def __init__(self, device: str = "cpu", weights_dir=None, dtype: str = "float32", given: dict | None = None):
        self.device, self.weights_dir, self.dtype, self.given = device, weights_dir, dtype, given

    def small(self, name: str) -> GPT:
        """The shipped small GPT ``name`` (the weights ``draft_<name>``), in float32 (see ``load_pair``)."""
        if self.given is None:
            return _model(f"draft_{name}", self.device, self.weights_dir)
        if not self.given.get("small") or name not in self.given["small"]:
            raise ValueError(f"the {name} drafter is not loaded")
        return self.given["small"][name]

    def exit_head(self, k: int):
        """The trained exit head after the target's block K, in the target's dtype."""
        heads = _exit_heads(self.device, self.weights_dir, self.dtype) if self.given is None \
            else self.given.get("exit_heads")
        if not heads or k not in heads:
            raise ValueError(f"no trained exit head for K = {k} is loaded")
        return heads[k]

    def eagle(self):
        """The trained ``EagleLayer``, in float32 (it casts what it reads)."""
        if self.given is None:
            return load_eagle(self.weights_dir, torch.device(self.device))
        if self.given.get("eagle") is None:
            raise ValueError("the eagle drafter is not loaded")
        return self.given["eagle"]


def build_drafter(spec: str, target, shelf: Shelf) -> Drafter:
    """The drafter named by ``spec`` on ``target``, built as its registry entry says (``specs.DRAFTERS``)."""
    parsed = specs.parse(spec)
    return specs.DRAFTERS[parsed.name].builder()(parsed, target, shelf)


def make_drafter(spec: str, target, small_models: dict | None = None, exit_heads: dict | None = None,
                 eagle=None) -> Drafter:
    """The drafter named by ``spec`` on ``target``; ``small_models`` maps 'distilled' /
    'trained' to loaded GPTs, ``exit_heads`` K to trained ``ExitHead``s and ``eagle``
    is the trained ``EagleLayer`` (nothing else is loaded: ``load_pair`` loads what a spec needs)."""
    return build_drafter(spec, target, Shelf(given={"small": small_models, "exit_heads": exit_heads, "eagle": eagle}))


class DeviceError(ValueError):
    """The requested device does not exist on this machine."""


def resolve_device(device: str = "auto") -> torch.device:
    """"auto" = CUDA when available, else CPU."""
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device == "cuda" and not torch.cuda.is_available():
        raise DeviceError(f"CUDA is not available here (torch {torch.__version__}); use --device cpu or auto")
    if device not in ("cpu", "cuda"):
        raise DeviceError(f"unknown device {device!r}; choose auto, cpu or cuda")
    return torch.device(device)


def resolve_dtype(dtype: str, device: torch.device) -> torch.dtype:
    """The target's dtype by name ("float32" or "bfloat16"), refused in one line where the device lacks it
    (every CPU torch runs bfloat16; a GPU needs native support, ``torch.cuda.is_bf16_supported``)."""
    if dtype not in DTYPES:
        raise ValueError(f"unknown dtype {dtype!r}; choose {' or '.join(DTYPES)}")
    if dtype == "bfloat16" and device.type == "cuda" and not torch.cuda.is_bf16_supported():
        raise DeviceError(f"this GPU ({torch.cuda.get_device_name(device)}) has no bfloat16; use --dtype float32")
    return DTYPES[dtype]


@dataclass
class GPTModels:
    """The loaded target and drafter (torch modules) and their tokenizer.

    ``draft_name`` is a drafter spec (``specsim.gpt.specs.DRAFTERS``): ``distilled``,
    ``trained``, ``lookup:N``, ``early-exit:K``, ... ``draft`` is its model (a
    small GPT, or the target's first K layers), None for model-free lookup;
    ``drafter()`` gives a fresh ``Drafter`` for one generation (``prototype.fresh()``;
    a pair without a prototype, two checkpoints of your own, drafts with its model).

    Not a ``specsim.pair.ModelPair`` (it has no p(context) / q(context)): the
    exact engine takes ``specsim.gpt.exact_adapter.GPTPair``, built from it.
    """

    target: GPT
    draft: GPT | None
    tokenizer: CharTokenizer
    device: torch.device
    draft_name: str  # a drafter spec: distilled, trained, lookup:N, early-exit:K, ...
    prototype: Drafter | None = None  # the drafter built for the spec; None: a ModelDrafter on ``draft``

    @property
    def vocab(self) -> str:
        return self.tokenizer.vocab

    @property
    def window(self) -> int:
        return min([self.target.config.block_size] + ([self.draft.config.block_size] if self.draft else []))

    def drafter(self) -> Drafter:
        if self.prototype is None:
            return ModelDrafter(self.draft, self.draft_name)
        return self.prototype.fresh()


@functools.lru_cache(maxsize=8)
def _model(name: str, device: str, weights_dir, dtype: str = "float32"):
    return load_gpt(name, weights_dir, torch.device(device)).to(DTYPES[dtype])


@functools.lru_cache(maxsize=4)
def _exit_heads(device: str, weights_dir, dtype: str = "float32"):
    return {k: h.to(DTYPES[dtype]) for k, h in load_exit_heads(weights_dir, torch.device(device)).items()}


@functools.lru_cache(maxsize=16)
def _load(draft: str, device: str, weights_dir, dtype: str = "float32") -> GPTModels:
    target = _model("target", device, weights_dir, dtype)
    d = build_drafter(draft, target, Shelf(device, weights_dir, dtype))  # loads the weights its entry asks for
    vocab = read_manifest(weights_dir)["vocab"]
    return GPTModels(target, d.own_model(), CharTokenizer(vocab), torch.device(device), draft, d)


def load_pair(draft: str = "distilled", device: str = "auto", weights_dir=None, dtype: str = "float32") -> GPTModels:
    """The shipped target and a drafter spec (cached per spec, device, directory and dtype).

    The target is loaded once per dtype and shared by every spec (early exit uses its layers).

    ``dtype``: the target's number format, "float32" (the default) or "bfloat16" (the float16 weights
    file rounded to bfloat16; the KV cache follows the model, and on a CPU attention over it runs in
    float32: ``model.cached_attention``). Only the target changes: the rows p are
    still computed from its logits cast up to float32 (``rule.adjust``), so the acceptance rule reads the
    same kind of numbers. The small drafters and the EAGLE layer stay float32, because that is faster:
    on one CPU thread (AVX-512 with BF16, torch 2.13) a distilled drafter step is slower in bfloat16 (at
    one position and width 128 the kernels' fixed costs dominate), while the target's pass over six
    positions costs far less of its float32 time than its pass over one (``gpt bench --profile --dtype
    bfloat16`` measures both).
    The EAGLE layer casts the target's features and embeddings to its own float32 and its predicted
    features back to the target's dtype for the shared head (``specsim.gpt.eagle``). Early exit runs the
    target's own layers, so its exit heads take the target's dtype."""
    parse_spec(draft)  # one-line ValueError for a bad spec
    dev = resolve_device(device)
    resolve_dtype(dtype, dev)  # one-line ValueError for a bad dtype or a GPU without it
    return _load(draft, str(dev), weights_dir, dtype)


def encode_prompt(pair: GPTModels, prompt: str) -> list:
    if not prompt:
        raise ValueError("the prompt is empty")
    ids = pair.tokenizer.encode(prompt)
    if len(ids) > pair.window:
        raise ValueError(f"the prompt is {len(ids)} characters; the context window is {pair.window}")
    return ids


def sampling(temperature=1.0, top_k=None, top_p=None, greedy=False) -> Sampling:
    """Checked sampling settings. Temperature 0 means greedy, as on the toy path."""
    if temperature == 0:
        greedy, temperature = True, 1.0
    if not greedy and not temperature > 0:
        raise ValueError(f"temperature must be >= 0, got {temperature}")
    if top_k is not None and top_k < 1:
        raise ValueError(f"top-k must be >= 1, got {top_k}")
    if top_p is not None and not 0 < top_p <= 1:
        raise ValueError(f"top-p must be in (0, 1], got {top_p}")
    return Sampling(temperature, top_k, top_p, greedy)


def _check_n(n_tokens):
    if n_tokens < 1:
        raise ValueError(f"the number of tokens must be >= 1, got {n_tokens}")


def speculative_generate(pair: GPTModels, prompt: str, n_tokens: int, scheme=None, temperature: float = 1.0,
                         top_k: int | None = None, top_p: float | None = None, greedy: bool = False, seed: int = 0,
                         crop: bool = True, rule="correct", order: str = "dfs", limit=None,
                         gamma: int | None = None, clock=None) -> Generation:
    """Speculative decoding of ``n_tokens`` characters after ``prompt`` with any scheme; same seed, same trace.

    ``scheme``: ``Chain(4)``, ``Block(4)``, ``Tree((2, 2, 1))``, a grammar string
    ("chain:4", "block:4", "tree:2,2,1:distinct") or an int G for chain:G
    (default chain:4; ``gamma=G`` is the same shorthand);
    ``rule``: a rule object or its name (``rule_named``; a gallery entry of
    ``specsim implementations`` verifies its own kind of scheme, as
    ``specs.rule_and_scheme`` says: llama.cpp's a confidence-stopped chain,
    a tree entry its own tree when no scheme is given); ``order``: how a
    tree is flattened for its verify pass (dfs or bfs: the layout, never the tokens);
    ``limit``: a ``specsim.bounds.Budget`` (the CLI's --max-work), else the default bound;
    ``clock``: time each round's steps (``decode.speculative_generate``)."""
    from ..bounds import check_gpt
    from ..schemes import as_scheme
    _check_n(n_tokens)
    if gamma is not None and scheme is not None:
        raise ValueError("give a scheme or gamma, not both")
    given = gamma is not None or scheme is not None
    rule, scheme = rule_and_scheme(rule, as_scheme(gamma if gamma is not None else 4 if scheme is None else scheme),
                                   given)  # a gallery entry runs on its own kind of scheme (its own tree if none given)
    lower = "the number of tokens or " + scheme.size
    check_gpt(n_tokens, scheme.drafted_tokens, len(pair.vocab), limit=limit, lower=lower)
    g = decode.speculative_generate(pair.target, pair.drafter(), encode_prompt(pair, prompt), n_tokens, scheme,
                                    sampling(temperature, top_k, top_p, greedy), seed, crop, rule, order, clock)
    g.text = pair.tokenizer.decode(g.tokens)
    for r in g.rounds:
        r.text = pair.tokenizer.decode(r.emitted)
    return g


def plain_generate(pair: GPTModels, prompt: str, n_tokens: int, temperature: float = 1.0,
                   top_k: int | None = None, top_p: float | None = None, greedy: bool = False,
                   seed: int = 0, clock=None) -> Generation:
    """Plain decoding with the target alone (one target pass per character); ``clock``: split its time
    into prefill and decoding (``decode.plain_generate``)."""
    _check_n(n_tokens)
    g = decode.plain_generate(pair.target, encode_prompt(pair, prompt), n_tokens,
                              sampling(temperature, top_k, top_p, greedy), seed, clock)
    g.text = pair.tokenizer.decode(g.tokens)
    return g
