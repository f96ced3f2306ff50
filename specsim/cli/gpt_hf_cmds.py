"""The Hugging Face side of `specsim gpt`: `export-hf`, `bench --peer hf`, and `--target/--draft PATH` pairs.

Registered by ``gpt_cmds``; torch and transformers are imported only inside
the handlers. Without transformers each of these fails with one line naming
what to install (exit code 2).
"""
from __future__ import annotations

import os

from .common import UsageError, print_json, report, table

HF_MODELS = ["target", "draft-distilled", "draft-trained"]
PEER_TOKENS, PEER_REPEATS = 160, 5  # 64-character prompts + 160 tokens + gamma fit the 256 window


def looks_like_path(text: str) -> bool:
    """A --draft value that names a directory rather than a drafter spec."""
    return os.sep in text or "/" in text or text.startswith((".", "~")) or os.path.isdir(text)


def add_pair_args(p) -> None:
    p.add_argument("--target", default=None, metavar="PATH",
                   help="your own pair: a local Hugging Face causal-LM checkpoint directory as the target "
                        "(then --draft PATH is the drafter's; both must share a tokenizer)")


def add_export(sub, needs_torch) -> None:
    e = sub.add_parser("export-hf", help="write a shipped model as a Hugging Face GPT2LMHeadModel checkpoint",
                       description="config.json + model.safetensors (no pickle) + a character tokenizer that "
                                   "AutoTokenizer loads offline, + specsim_tokenizer.json (the vocabulary).")
    e.add_argument("out_dir", metavar="OUT_DIR", help="a new or empty directory")
    e.add_argument("--force", action="store_true",
                   help="replace a previous export in OUT_DIR (refused if it holds any other file)")
    e.add_argument("--model", choices=HF_MODELS, default="target")
    e.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto",
                   help="checked like every gpt command; the files are written from CPU tensors")
    e.add_argument("--json", action="store_true")
    e.set_defaults(func=needs_torch(cmd_export))


def quiet_transformers() -> None:
    """No progress bars or advice from transformers on our output."""
    from ..gpt.hf.export import require_transformers
    t = require_transformers()
    t.logging.set_verbosity_error()
    t.utils.logging.disable_progress_bar()


def cmd_export(args) -> int:
    from ..gpt.api import resolve_device
    from ..gpt.hf.export import export_hf
    resolve_device(args.device)
    quiet_transformers()
    result = export_hf(args.out_dir, args.model, force=args.force)
    if args.json:
        print_json(result)
        return 0
    print(f"{args.model}: {result['parameters']:,} parameters, vocabulary {result['vocab_size']} characters -> "
          f"{args.out_dir}")
    print("files: " + ", ".join(result["files"]))
    return 0


def own_pair(args):
    """The pair named by --target PATH --draft PATH (the draft path is checked when it loads)."""
    from ..gpt.hf.pair import load_hf_pair
    quiet_transformers()
    return load_hf_pair(args.target, args.draft, args.device)


def check_pair_args(args) -> None:
    """--draft PATH needs --target PATH, and a --target pair takes no drafter gallery."""
    if args.target is None and looks_like_path(args.draft):
        raise UsageError(f"--draft {args.draft} is a path: give the target checkpoint too (--target PATH)")
    if args.target is not None and getattr(args, "drafters", None):
        raise UsageError("--drafters runs the shipped drafters; it does not combine with --target")


PEER_KEYS = ["decoder", "tokens_per_s", "tokens_per_target_pass", "target_passes", "tokens"]


def cmd_peer(args, pair) -> int:
    from ..gpt.measure.peer import peer_bench
    quiet_transformers()
    result = peer_bench(pair, gamma=args.gamma, n_tokens=args.tokens or PEER_TOKENS,
                        repeats=args.repeats or PEER_REPEATS, seed=args.seed)
    return report(args, result, _peer_lines)


def _peer_lines(result):
    st = result["settings"]
    yield (f"specsim against transformers {st['transformers']} (torch {st['torch']}), device {st['device']}, "
           f"{st['threads']} thread(s), gamma {st['gamma']}, {st['prompts']} prompts x {st['tokens']} tokens, "
           f"medians of {st['repeats']} interleaved repeats")
    for mode, m in result["modes"].items():
        yield f"\n{'T = 1, full vocabulary' if mode == 'sample' else 'greedy'}"
        rows = [[name] + [r[k] for k in PEER_KEYS[1:]] for name, r in m["runs"].items()]
        yield table(rows, PEER_KEYS)
        for k, v in m["ratios"].items():
            yield f"{k}: {v}"
        if "tokens_agree" in m:
            yield f"greedy tokens agree across all decoders: {m['tokens_agree']}"
