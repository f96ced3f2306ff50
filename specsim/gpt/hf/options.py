"""``specsim audit --engine hf --hf key=value``: transformers' assisted-generation options, parsed strictly.

An option either changes how the engine drafts (the audit's reference, the
target's own distribution, stays the same: a correct engine is exact whatever
it drafts) or changes the target's distribution itself (a logits processor).
The first kind passes through; of the second kind the reference reproduces
temperature, top-k and top-p only (``--temperature``, ``--top-k``, ``--top-p``),
so every other processor is refused in one line rather than read as "not the
target" against the wrong reference.

>>> parse_hf_options(["num_assistant_tokens=3", "assistant_confidence_threshold=0"])
{'num_assistant_tokens': 3, 'assistant_confidence_threshold': 0.0}
>>> parse_hf_options(["use_mtp=true"])  # the target drafts with its own MTP layers: no --draft
{'use_mtp': True}
>>> parse_hf_options(["repetition_penalty=1.2"])  # doctest: +ELLIPSIS
Traceback (most recent call last):
ValueError: --hf repetition_penalty changes the target's distribution (a logits processor) and ...
"""
from __future__ import annotations

SCHEDULES = ("constant", "heuristic", "heuristic_transient")


def _int_from_1(name, text):
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or not 1 <= value <= 64:
        raise ValueError(f"--hf {name} must be a whole number from 1 to 64, got {text[:40]!r}")
    return value


def _fraction(name, text):
    try:
        value = float(text)
    except ValueError:
        value = None
    if value is None or not 0.0 <= value <= 1.0:
        raise ValueError(f"--hf {name} must be a number from 0 to 1, got {text[:40]!r}")
    return value


def _true(name, text):
    if text.lower() not in ("true", "false"):
        raise ValueError(f"--hf {name} must be true or false, got {text[:40]!r}")
    return text.lower() == "true"


def _dflash(name, text):
    if text != "dflash":
        raise ValueError(f"--hf {name} takes dflash (a DFlash assistant as --draft), got {text[:40]!r}")
    return text


def _schedule(name, text):
    if text not in SCHEDULES:
        raise ValueError(f"--hf {name} must be one of {', '.join(SCHEDULES)}, got {text[:40]!r}")
    return text


# where each drafting option goes: "assistant" (the assistant's generation_config) or "generate" (a kwarg)
DRAFTING = {
    "num_assistant_tokens": (_int_from_1, "assistant"),
    "num_assistant_tokens_schedule": (_schedule, "assistant"),
    "assistant_confidence_threshold": (_fraction, "assistant"),
    "prompt_lookup_num_tokens": (_int_from_1, "generate"),
    "max_matching_ngram_size": (_int_from_1, "generate"),
    "assistant_ensemble_weight": (_fraction, "generate"),  # documented lossy below 1: the audit should catch it
    "use_mtp": (_true, "generate"),  # the target's own MTP layers draft (specsim.gpt.hf.mtp): no --draft
    "speculation_type": (_dflash, "generate"),  # --draft is a DFlash assistant (specsim.gpt.hf.dflash)
}
ALONE = ("use_mtp", "speculation_type")  # a drafter of its own kind: the assistant's options do not apply
THE_REFERENCE = {"temperature": "--temperature", "top_k": "--top-k", "top_p": "--top-p"}
PROCESSORS = ("repetition_penalty", "min_p", "typical_p", "epsilon_cutoff", "eta_cutoff", "top_h",
              "no_repeat_ngram_size", "encoder_repetition_penalty", "bad_words_ids", "suppress_tokens",
              "begin_suppress_tokens", "sequence_bias", "min_length", "min_new_tokens", "forced_bos_token_id",
              "forced_eos_token_id", "renormalize_logits", "guidance_scale", "watermarking_config",
              "exponential_decay_length_penalty", "low_memory", "diversity_penalty", "num_beams")


def parse_hf_options(items) -> dict:
    """``["key=value", ...]`` -> {key: typed value}; one-line ValueError for anything else."""
    out = {}
    for item in items or ():
        key, eq, text = str(item).partition("=")
        key, text = key.strip(), text.strip()
        if not eq or not key or not text:
            raise ValueError(f"--hf takes key=value, got {str(item)[:60]!r}")
        if key in THE_REFERENCE:
            raise ValueError(f"--hf {key}: use the audit's own {THE_REFERENCE[key]}, which its reference applies too")
        if key in PROCESSORS:
            raise ValueError(f"--hf {key} changes the target's distribution (a logits processor) and the audit's "
                             "reference cannot reproduce it: audit without it")
        if key not in DRAFTING:
            raise ValueError(f"unknown --hf option {key[:40]!r}; known: {', '.join(DRAFTING)}")
        if key in out:
            raise ValueError(f"--hf {key} given twice")
        out[key] = DRAFTING[key][0](key, text)
    for key in ALONE:
        other = [k for k in out if k != key]
        if out.get(key) and other:
            raise ValueError(f"--hf {other[0]} tunes another drafter; {key}={text_of(out[key])} drafts its own "
                             "way: give it alone")
    return out


def text_of(value) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def split_hf_options(options: dict) -> tuple:
    """(the assistant's generation_config fields, generate's keyword arguments)."""
    assistant = {k: v for k, v in options.items() if DRAFTING[k][1] == "assistant"}
    generate = {k: v for k, v in options.items() if DRAFTING[k][1] == "generate"}
    return assistant, generate


def uses_mtp(options: dict) -> bool:
    """Whether the target drafts for itself (``use_mtp=true``): no assistant model, no ``--draft``."""
    return bool(options.get("use_mtp"))


def drafter_kind(options: dict) -> str:
    """How ``hf.pair.load_hf_pair`` loads the checkpoints these options need: "mtp" (the target alone),
    "dflash" (the draft is a DFlash assistant) or "pair"."""
    if uses_mtp(options):
        return "mtp"
    return "dflash" if options.get("speculation_type") == "dflash" else "pair"


def check_checkpoints(options: dict, target_dir, draft_dir) -> None:
    """One line when the checkpoints given do not fit the drafter the options ask for."""
    kind = drafter_kind(options)
    if kind == "mtp" and (draft_dir or not target_dir):
        raise ValueError("--hf use_mtp=true drafts with the target's own MTP layers: give --target DIR (a "
                         "checkpoint with num_mtp_layers) and no --draft")
    if kind == "dflash" and not (target_dir and draft_dir):
        raise ValueError("--hf speculation_type=dflash needs --target DIR and --draft DIR (a DFlash assistant)")
    if kind == "pair" and bool(target_dir) != bool(draft_dir):
        raise ValueError("give both --target DIR and --draft DIR (a local checkpoint pair), or neither")
