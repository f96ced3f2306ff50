"""The child process of ``specsim audit``: build the engine, run it N times, write each run's tokens.

The parent (``specsim.gpt.audit``) never imports the engine and never trusts
this process for anything but tokens: it computes the exact distribution from
the target itself and judges the tokens. The steps:

1. read the job (one JSON line on stdin: the engine, prompt ids, K, N, seed,
   sampling settings, the descriptor for the tokens); stdin becomes /dev/null
   and the descriptor is not inherited by anything the engine starts; then
   isolate itself (``specsim.labs.isolation.enter``: its own namespaces,
   read-only files, no new processes), say so in its first line, and limit
   its address space (``RLIMIT_AS``: one memory limit for the whole tree);
2. build the engine: ``specsim`` (specsim's own decoder, any scheme and
   drafter), ``hf`` (transformers' assisted generation on the shipped pair,
   converted in memory, or on the job's local checkpoints, with the job's
   ``--hf`` options) or a user's ``PATH.py:ClassName``, built as
   ``ClassName(target, drafter, temperature=..., top_k=..., top_p=...)`` over
   the shipped target and distilled drafter;
3. for run i = 0 .. N - 1 write one line, the JSON list of its first K token
   ids, generated with seed ``seed + i``, as the engine returned them (a
   tensor or an array through ``tolist``, keeping its type: never rounded or
   converted here, the parent checks each is an int of the vocabulary); a
   failure is one line {"e": ...}. For ``specsim`` and ``hf`` a line
   {"v": n} comes first: the drafted tokens the target verified inside the
   judged window in that run (from specsim's round trace; for transformers,
   the candidates its candidate generator handed the target), so the parent
   can tell an audit that saw speculation from one that saw none.

Importing this module does nothing; only ``main()`` acts.
"""
from __future__ import annotations

import json
import os
import sys


def _user_engine(path: str, class_name: str, target, drafter, sampling: dict):
    import importlib.util
    spec = importlib.util.spec_from_file_location(f"specsim_user_engine_{abs(hash(path))}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    cls = getattr(module, class_name, None)
    if not isinstance(cls, type):
        raise ValueError(f"{path!r} defines no class {class_name!r}")
    engine = cls(target, drafter, **sampling)
    if not callable(getattr(engine, "generate", None)):
        raise ValueError(f"{class_name} has no generate(ids, n, generator) method")
    return lambda ids, k, seed: engine.generate(list(ids), k, _generator(seed))


def _generator(seed: int):
    import torch
    return torch.Generator().manual_seed(seed)


def _specsim_engine(job: dict):
    from . import api
    pair = api.load_pair(job["drafter"], device="cpu")
    s = job["sampling"]
    text = pair.tokenizer.decode(job["ids"])

    def run(ids, k, seed):
        g = api.speculative_generate(pair, text, k, job["scheme"], temperature=s["temperature"], top_k=s["top_k"],
                                     top_p=s["top_p"], seed=seed)
        return g.tokens[:k], drafts_in_window(g.rounds, k)
    return run


def drafts_in_window(rounds, k: int) -> int:
    """Drafted tokens the target verified at positions 0 .. k - 1 of the judged window, from the round trace:
    a draft at depth d of a round that starts at position s sits at s + d - 1."""
    verified, start = 0, 0
    for r in rounds:
        depth = []
        for parent in r.parents:
            depth.append(1 if parent < 0 else depth[parent] + 1)
        verified += sum(1 for d in depth if start + d - 1 < k)
        start += len(r.emitted)
        if start >= k:
            break
    return verified


def _hf_models(job: dict):
    """(target, assistant): transformers models, float32, eval; the shipped pair converted in memory or the
    job's local checkpoints (``hf.pair``: safetensors only, no code from the checkpoint). A checkpoint's own
    generation_config.json is not applied: the audit's sampling settings are the only ones."""
    transformers = __import__("transformers")
    if job.get("hf_target"):
        from .hf.options import drafter_kind
        from .hf.pair import load_hf_pair
        pair = load_hf_pair(job["hf_target"], job["hf_draft"], device="cpu",
                            kind=drafter_kind(job.get("hf_options") or {}))
        target, draft = pair.target.model, pair.draft.model
    else:
        from . import api
        from .hf.export import to_hf_model
        pair = api.load_pair("distilled", device="cpu")
        target, draft = to_hf_model(pair.target), to_hf_model(pair.draft)
    for model in (target, draft):
        model.generation_config = transformers.GenerationConfig()
        model.generation_config.bos_token_id = model.generation_config.eos_token_id = None  # full length, no EOS
        model.generation_config.pad_token_id = None
    return target.eval(), draft.eval()


def count_candidates(model) -> list:
    """Wrap ``model``'s candidate generator: the returned one-item list counts the candidate tokens every
    ``get_candidates`` call handed the target to verify (each one is scored by the target's next pass)."""
    count = [0]
    make = model._get_candidate_generator

    def wrapped(*args, **kwargs):
        generator = make(*args, **kwargs)
        get = generator.get_candidates

        def get_candidates(input_ids, *a, **kw):
            ids, logits = get(input_ids, *a, **kw)
            count[0] += int(ids.shape[1] - input_ids.shape[1])
            return ids, logits
        generator.get_candidates = get_candidates
        return generator
    model._get_candidate_generator = wrapped
    return count


def _hf_engine(job: dict):
    import torch

    from .hf.options import split_hf_options
    target, draft = _hf_models(job)
    s = job["sampling"]
    assistant_opts, generate_opts = split_hf_options(job.get("hf_options") or {})
    opts = {"do_sample": True, "temperature": s["temperature"], "top_k": s["top_k"] or 0, "top_p": s["top_p"] or 1.0}
    draft.generation_config.num_assistant_tokens = 4
    draft.generation_config.num_assistant_tokens_schedule = "constant"
    for key, value in assistant_opts.items():
        setattr(draft.generation_config, key, value)
    # prompt lookup and the target's own MTP layers (use_mtp) draft without an assistant model
    helper = {} if "prompt_lookup_num_tokens" in generate_opts or generate_opts.get("use_mtp") else {
        "assistant_model": draft}
    count = count_candidates(target)

    def run(ids, k, seed):
        torch.manual_seed(seed)
        x = torch.tensor([ids])
        count[0] = 0
        with torch.inference_mode():
            out = target.generate(x, attention_mask=torch.ones_like(x), max_new_tokens=k, pad_token_id=0,
                                  **helper, **opts, **generate_opts)
        return out[0, len(ids):].tolist(), count[0]
    return run


def build(job: dict):
    """(ids, k, seed) -> (tokens, drafted tokens verified in the window or None), for the job's engine."""
    if job["engine"] == "specsim":
        return _specsim_engine(job)
    if job["engine"] == "hf":
        return _hf_engine(job)
    from . import api
    pair = api.load_pair("distilled", device="cpu")
    engine = _user_engine(job["path"], job["class_name"], pair.target, pair.draft, job["sampling"])
    return lambda ids, k, seed: (engine(ids, k, seed), None)


def plain(tokens):
    """What ``generate`` returned, as JSON-ready data of the same types (tensors and arrays through
    ``tolist``); anything else is sent as its type's name, which the parent refuses."""
    if hasattr(tokens, "tolist") and callable(tokens.tolist):
        tokens = tokens.tolist()
    if not isinstance(tokens, (list, tuple)):
        return f"<{type(tokens).__name__}>"
    return [t if type(t) in (int, float, bool, str) else f"<{type(t).__name__}>" for t in tokens]


def _send(fd: int, body) -> None:
    data = memoryview((json.dumps(body) + "\n").encode())
    while data:
        data = data[os.write(fd, data):]


def main() -> None:
    job = json.loads(sys.stdin.readline(1_000_000))  # step 1
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    fd = job["out_fd"]
    os.set_inheritable(fd, False)
    from ..labs import isolation
    try:  # before any of the engine's code loads
        _send(fd, {"isolation": isolation.enter(job.get("require_isolation", False))})
    except isolation.IsolationError as e:
        _send(fd, {"isolation": {"isolated": False, "why": str(e)[:300], "refused": True}})
        os._exit(0)
    if job.get("memory_mb"):
        import resource
        limit = job["memory_mb"] * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    try:
        import torch
        torch.set_num_threads(1)
        run = build(job)  # step 2
    except BaseException as e:  # the engine's file, class or constructor
        _send(fd, {"e": f"building the engine failed: {type(e).__name__}: {str(e)[:200]}"})
        os._exit(0)
    for i in range(job["samples"]):  # step 3
        try:
            tokens, drafted = run(job["ids"], job["tokens"], job["seed"] + i)
            tokens = plain(tokens)
        except BaseException as e:
            _send(fd, {"e": f"run {i} failed: {type(e).__name__}: {str(e)[:200]}"})
            os._exit(0)
        if drafted is not None:  # counted here, in the engine's process: a report, never part of the verdict
            _send(fd, {"v": drafted})
        _send(fd, tokens)
    os._exit(0)
