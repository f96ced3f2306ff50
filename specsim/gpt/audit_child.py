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
   converted in memory) or a user's ``PATH.py:ClassName``, built as
   ``ClassName(target, drafter, temperature=..., top_k=..., top_p=...)`` over
   the shipped target and distilled drafter;
3. for run i = 0 .. N - 1 write one line, the JSON list of its first K token
   ids, generated with seed ``seed + i``, as the engine returned them (a
   tensor or an array through ``tolist``, keeping its type: never rounded or
   converted here, the parent checks each is an int of the vocabulary); a
   failure is one line {"e": ...}.

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
        return g.tokens[:k]
    return run


def _hf_engine(job: dict):
    import torch

    from . import api
    from .hf.export import to_hf_model
    pair = api.load_pair("distilled", device="cpu")
    target, draft = to_hf_model(pair.target).eval(), to_hf_model(pair.draft).eval()
    s = job["sampling"]
    opts = {"do_sample": True, "temperature": s["temperature"], "top_k": s["top_k"] or 0, "top_p": s["top_p"] or 1.0}
    draft.generation_config.num_assistant_tokens = 4
    draft.generation_config.num_assistant_tokens_schedule = "constant"

    def run(ids, k, seed):
        torch.manual_seed(seed)
        x = torch.tensor([ids])
        with torch.inference_mode():
            out = target.generate(x, attention_mask=torch.ones_like(x), assistant_model=draft, max_new_tokens=k,
                                  min_new_tokens=k, pad_token_id=0, **opts)
        return out[0, len(ids):].tolist()
    return run


def build(job: dict):
    """(ids, k, seed) -> tokens, for the job's engine."""
    if job["engine"] == "specsim":
        return _specsim_engine(job)
    if job["engine"] == "hf":
        return _hf_engine(job)
    from . import api
    pair = api.load_pair("distilled", device="cpu")
    return _user_engine(job["path"], job["class_name"], pair.target, pair.draft, job["sampling"])


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
        keep = [job["path"]] if job.get("engine") == "file" else []
        _send(fd, {"isolation": isolation.enter(job.get("require_isolation", False), keep)})
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
            tokens = plain(run(job["ids"], job["tokens"], job["seed"] + i))
        except BaseException as e:
            _send(fd, {"e": f"run {i} failed: {type(e).__name__}: {str(e)[:200]}"})
            os._exit(0)
        _send(fd, tokens)
    os._exit(0)
