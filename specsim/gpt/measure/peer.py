"""The peer benchmark: specsim's decoders against Hugging Face transformers on the same model pair.

Five decoders, each run on the same prompts for the same number of new
tokens, interleaved in every repeat (repeat r runs each decoder in turn on
each prompt, so a busy machine slows them all alike), in one process, at T = 1 (the full
vocabulary sampled: ``do_sample=True, top_k=0, top_p=1``) and greedy:

* ``specsim_plain``, ``specsim_spec`` (γ drafts per round): ``specsim.gpt.decode``;
* ``hf_plain``: ``target.generate``;
* ``hf_assisted_gamma``: ``generate(assistant_model=draft)`` with exactly γ
  assistant tokens per round (``num_assistant_tokens=γ``, schedule
  ``constant``, no confidence stop): the like-for-like comparison;
* ``hf_assisted_default``: the assistant's default settings (20 tokens,
  ``constant`` schedule, confidence threshold 0.4 on this transformers);
* ``hf_assisted_heuristic``: γ to start, the ``heuristic_transient`` schedule.

transformers reads the assistant's settings from the *assistant's*
``generation_config``, so they are set there (and restored). Target passes
on the HF side are counted by a forward hook on the target; specsim counts
its own (the prefill is not a pass there, and is merged into the first pass
on the HF side, so both count passes that produce tokens). Tokens/s and
ratios are medians over the repeats (``ratios_of_fastest_runs`` also sets the
least disturbed run of each side against each other); every wall time goes
through ``specsim.bench.timing.measure``.

For the shipped pair the HF side is ``hf_export.to_hf_model`` of the same
weights (equal logits); for a user's pair (``hf_pair.load_hf_pair``) both
sides run the same HF modules.
"""
from __future__ import annotations

import statistics

import torch

from ...bench.timing import measure
from .. import decode
from .bench import heldout_prompts
from ..decode import Sampling, sync_device

DECODERS = ("specsim_plain", "specsim_spec", "hf_plain", "hf_assisted_gamma", "hf_assisted_default",
            "hf_assisted_heuristic")
ASSISTED = ("hf_assisted_gamma", "hf_assisted_default", "hf_assisted_heuristic")
MODES = {"sample": Sampling(1.0, None, None, False), "greedy": Sampling(greedy=True)}
ASSISTANT_KEYS = ("num_assistant_tokens", "num_assistant_tokens_schedule", "assistant_confidence_threshold")


def hf_models(pair):
    """The (target, draft) ``PreTrainedModel``s behind a pair: its own, or the shipped ones exported."""
    from ..hf.pair import HFCausalLM
    if isinstance(pair.target, HFCausalLM):
        return pair.target.model, pair.draft.model
    from ..hf.export import to_hf_model
    return to_hf_model(pair.target), to_hf_model(pair.draft)


class PassCounter:
    """Counts forward calls of a module while installed (``with PassCounter(m) as c: ...; c.calls``)."""

    def __init__(self, module):
        self.module, self.calls, self.handle = module, 0, None

    def __enter__(self):
        self.handle = self.module.register_forward_hook(lambda *_: self._hit())
        return self

    def _hit(self):
        self.calls += 1

    def __exit__(self, *exc):
        self.handle.remove()


def assistant_settings(name: str, gamma: int, defaults: dict) -> dict:
    """What ``hf_assisted_*`` sets on the assistant's generation config."""
    if name == "hf_assisted_gamma":
        return {"num_assistant_tokens": gamma, "num_assistant_tokens_schedule": "constant",
                "assistant_confidence_threshold": 0.0}  # 0 turns the confidence stop off
    if name == "hf_assisted_heuristic":
        return {**defaults, "num_assistant_tokens": gamma, "num_assistant_tokens_schedule": "heuristic_transient"}
    return dict(defaults)


def hf_generate(target, ids: list, n_tokens: int, mode: str, seed: int, assistant=None) -> list:
    """``n_tokens`` new ids after ``ids`` from ``target.generate`` (assisted when ``assistant`` is given)."""
    torch.manual_seed(seed)  # transformers samples from the global generator
    x = torch.tensor([ids], device=target.device)  # (1, T)
    kw = dict(do_sample=True, top_k=0, top_p=1.0, temperature=1.0) if mode == "sample" else dict(do_sample=False)
    out = target.generate(x, attention_mask=torch.ones_like(x), max_new_tokens=n_tokens, min_new_tokens=n_tokens,
                          assistant_model=assistant, pad_token_id=0, **kw)
    return out[0, len(ids):].tolist()


def check_window(prompt_ids: list, n_tokens: int, gamma: int, window: int) -> None:
    """Refuse (one line) a run that would slide the window on either side: neither side may run past it."""
    need = max(len(i) for i in prompt_ids) + n_tokens + gamma + 1
    if need > window:
        raise ValueError(f"prompt + tokens + gamma + 1 = {need} positions exceed the context window of {window}: "
                         f"lower --tokens to at most {window - need + n_tokens}")


@torch.inference_mode()
def peer_bench(pair, gamma: int = 4, n_tokens: int = 160, repeats: int = 5, seed: int = 0, prompts=None,
               modes=("sample", "greedy")) -> dict:
    """Run the five decoders interleaved; returns the JSON-ready result dict (see the module docstring)."""
    import transformers
    check_peer(pair, gamma, n_tokens, repeats)
    prompts = prompts or heldout_prompts()
    ids = [pair.tokenizer.encode(p) for p in prompts]
    check_window(ids, n_tokens, gamma, pair.window)
    target, draft = hf_models(pair)
    conf = draft.generation_config
    saved = {k: getattr(conf, k, None) for k in ASSISTANT_KEYS}
    library = getattr(conf, "_get_default_generation_params", dict)()  # where unset values come from (5.x)
    defaults = {k: saved[k] if saved[k] is not None else library.get(k) for k in ASSISTANT_KEYS}
    run = Decoders(pair, target, draft, gamma, defaults).run
    try:
        tps, last = time_decoders(run, ids, modes, n_tokens, repeats, seed, lambda: sync_device(pair.device))
    finally:
        for k, v in saved.items():
            setattr(conf, k, v)
    result = {"settings": {"gamma": gamma, "tokens": n_tokens, "prompts": len(ids),
                           "prompt_tokens": [len(i) for i in ids], "repeats": repeats, "seed": seed,
                           "threads": torch.get_num_threads(), "device": str(pair.device), "draft": pair.draft_name,
                           "window": pair.window, "torch": torch.__version__,
                           "transformers": transformers.__version__,
                           "assistant": {d: assistant_settings(d, gamma, defaults) for d in ASSISTED}},
              "modes": {}}
    for mode in modes:
        result["modes"][mode] = _summary(tps[mode], last[mode], n_tokens, mode)
    return result


def check_peer(pair, gamma: int, n_tokens: int, repeats: int) -> None:
    """Refuse (one line) counts below 1 and a drafter that is no model (the HF side needs one)."""
    if repeats < 1 or n_tokens < 1 or gamma < 1:
        raise ValueError("repeats, tokens and gamma must be >= 1")
    from ..hf.pair import HFCausalLM
    from ..model import GPT
    if not isinstance(pair.draft, (GPT, HFCausalLM)):
        raise ValueError(f"the peer bench compares model drafters; {pair.draft_name} is not one "
                         "(use distilled, trained, or --target PATH --draft PATH)")


class Decoders:
    """The five decoders on one pair: specsim's on the pair, transformers' on its ``PreTrainedModel``s
    (``target``, ``draft``; an assisted decoder sets its settings on the draft's generation config)."""

    def __init__(self, pair, target, draft, gamma: int, defaults: dict):
        self.pair, self.target, self.draft, self.gamma, self.defaults = pair, target, draft, gamma, defaults

    def run(self, name: str, mode: str, prompt_ids: list, s: int, n: int):
        """One decoder on one prompt: (new ids, target passes)."""
        sampling = MODES[mode]
        if name == "specsim_plain":
            g = decode.plain_generate(self.pair.target, prompt_ids, n, sampling, s)
            return g.tokens, g.target_passes
        if name == "specsim_spec":
            g = decode.speculative_generate(self.pair.target, self.pair.drafter(), prompt_ids, n, self.gamma,
                                            sampling, s)
            return g.tokens, g.target_passes
        assistant = None
        if name in ASSISTED:
            for k, v in assistant_settings(name, self.gamma, self.defaults).items():
                setattr(self.draft.generation_config, k, v)
            assistant = self.draft
        with PassCounter(self.target) as c:
            out = hf_generate(self.target, prompt_ids, n, mode, s, assistant)
        return out, c.calls


def time_decoders(run, ids, modes, n_tokens: int, repeats: int, seed: int, sync):
    """Every decoder (``run(name, mode, prompt_ids, seed, n)``) on every prompt (prompt k with seed
    ``seed + k``), each mode, after one short untimed run of each: (mode -> decoder -> tokens/s of each
    repeat, mode -> decoder -> the last repeat's (ids, passes) per prompt)."""
    for mode in modes:  # warm-up: one short untimed run of each decoder
        for name in DECODERS:
            run(name, mode, ids[0], seed, min(n_tokens, 16))
    tps = {m: {d: [] for d in DECODERS} for m in modes}
    last = {m: {} for m in modes}
    for _ in range(repeats):
        for mode in modes:
            seconds = {d: 0.0 for d in DECODERS}
            for k, prompt_ids in enumerate(ids):  # every decoder in turn on each prompt: drift hits all alike
                for name in DECODERS:
                    t = measure(lambda: run(name, mode, prompt_ids, seed + k, n_tokens), sync=sync)
                    seconds[name] += t.seconds[0]
                    last[mode].setdefault(name, [None] * len(ids))[k] = t.result
            for name in DECODERS:
                tps[mode][name].append(len(ids) * n_tokens / seconds[name])
    return tps, last


def _summary(tps: dict, last: dict, n_tokens: int, mode: str) -> dict:
    """Per decoder: median tokens/s, tokens and target passes; the ratios as medians of per-repeat ratios."""
    runs = {}
    for name in DECODERS:
        outs = last[name]
        tokens, passes = sum(len(o) for o, _ in outs), sum(p for _, p in outs)
        runs[name] = {"tokens_per_s": round(statistics.median(tps[name]), 1),
                      "tokens_per_s_runs": [round(x, 1) for x in tps[name]],
                      "tokens": tokens, "tokens_per_prompt": [len(o) for o, _ in outs],
                      "target_passes": passes, "tokens_per_target_pass": round(tokens / passes, 4)}

    def ratio(a, b):  # median over repeats of a's tokens/s / b's (b may be a per-repeat list)
        bs = b if isinstance(b, list) else tps[b]
        return round(statistics.median(x / y for x, y in zip(tps[a], bs)), 4)

    best = [max(tps[d][r] for d in ASSISTED) for r in range(len(tps["specsim_spec"]))]
    fastest = {d: max(tps[d]) for d in DECODERS}  # the least disturbed run of each (a shared machine)
    out = {"runs": runs,
           "ratios": {"specsim_spec_over_hf_assisted_gamma": ratio("specsim_spec", "hf_assisted_gamma"),
                      "specsim_spec_over_hf_assisted_best": ratio("specsim_spec", best),
                      "specsim_spec_over_specsim_plain": ratio("specsim_spec", "specsim_plain"),
                      "hf_assisted_gamma_over_hf_plain": ratio("hf_assisted_gamma", "hf_plain"),
                      "specsim_plain_over_hf_plain": ratio("specsim_plain", "hf_plain")},
           "ratios_of_fastest_runs": {
               "specsim_spec_over_hf_assisted_gamma": round(fastest["specsim_spec"] / fastest["hf_assisted_gamma"], 4),
               "specsim_spec_over_hf_assisted_best":
                   round(fastest["specsim_spec"] / max(fastest[d] for d in ASSISTED), 4)},
           "hf_assisted_best": max(ASSISTED, key=lambda d: statistics.median(tps[d]))}
    if mode == "greedy":  # greedy output is a function of the target alone: every decoder must agree
        out["tokens_agree"] = all(len({tuple(last[d][k][0]) for d in DECODERS}) == 1
                                  for k in range(len(last["specsim_plain"])))
    return out
