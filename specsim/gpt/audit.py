"""``specsim audit``: an engine judged by the tokens it emits, from a process that never imports it.

1. The exact distribution of the first K tokens after the prompt comes from
   the target's own forward passes here, with the sampling settings the
   engine is told to use (temperature, top-k, top-p through ``rule.adjust``):
   every prefix whose probability reaches the smallest cell's threshold is
   expanded, one batched pass per level (``exact_distribution``).
2. The engine runs in a child process (``specsim.gpt.audit_child``) under
   ``specsim.labs.reaper.Reaper``, isolated by the operating system
   (``specsim.labs.isolation``: it cannot see, signal or write to this
   process; this process checks that itself) and under one memory limit:
   N seeded, independent runs, each one line of K token ids, each under its
   own clock and the whole audit under another. Everything the verdict
   needs (scipy included) is loaded before the child starts. A line that is
   not K token ids of the vocabulary (ints, checked here) ends the audit with
   one line and no verdict; so does a child that ends early or goes silent.
3. The verdict, for K <= 3 (``specsim.labs.audit.judge_samples``): Pearson's
   chi-square over cells fixed by p and N, its p-value by Monte Carlo from p
   (valid at every N), with the TV seen, its bootstrap interval and what this
   budget can detect. For K > 3 every emitted token is judged against the
   target's exact conditional given the run's own prefix: one batched pass
   over each run's tokens here (``token_conditionals``) gives them all, and
   ``specsim.labs.audit.judge_pits`` tests the randomized probability-integral
   transforms. ``sequential``: a mixture likelihood-ratio test watched while
   the runs arrive, which ends the audit once it decides "not the target".
"""
from __future__ import annotations

import json
import os
import select
import sys
import time
from pathlib import Path

import numpy as np
import torch

from ..labs import audit as judge
from .rule import adjust

ENGINES = ("specsim", "hf")
DEFAULT_MEMORY_MB, MIN_MEMORY_MB, MAX_MEMORY_MB = judge.DEFAULT_MEMORY_MB, judge.MIN_MEMORY_MB, judge.MAX_MEMORY_MB
SAMPLE_SECONDS = 60.0  # one run (building the engine aside)
START_SECONDS = 120.0  # loading torch, the weights and the engine
MAX_SAMPLES, MAX_TOKENS = judge.MAX_SAMPLES, judge.MAX_TOKENS
_ROOT = str(Path(__file__).resolve().parents[2])
_BOOT = "import sys; sys.path.insert(0, sys.argv[1]); from specsim.gpt.audit_child import main; main()"


class AuditError(ValueError):
    """No verdict: the engine failed, ended early, stalled or sent something that is not tokens; one line."""


def exact_distribution(target, ids: list, k: int, temperature: float = 1.0, top_k=None, top_p=None,
                       threshold: float = 0.0, batch: int = 256) -> dict:
    """{K-token sequence: probability} of every sequence the target gives at least ``threshold``
    (and all of them at ``threshold`` 0, for a small vocabulary), from its own passes (float64 rows)."""
    level = {(): 1.0}
    with torch.inference_mode():
        for _ in range(k):
            nxt = {}
            prefixes = list(level)
            for i in range(0, len(prefixes), batch):
                chunk = prefixes[i:i + batch]
                x = torch.tensor([list(ids) + list(p) for p in chunk])  # (B, T)
                rows = adjust(target(x)[:, -1].double(), temperature, top_k, top_p)  # (B, V)
                for p, row in zip(chunk, rows.tolist()):
                    for t, v in enumerate(row):
                        mass = level[p] * v
                        if mass > 0 and mass >= threshold:
                            nxt[p + (t,)] = mass
            level = nxt
    return level


def token_conditionals(target, ids: list, runs: list, temperature: float = 1.0, top_k=None, top_p=None,
                       batch: int = 16) -> tuple:
    """(below_id, below_rank, mass), each (N, K): for every emitted token x of every run, F(x-) in token-id
    order, F(x-) likeliest first, and p(x), under the target's exact conditional (float64, after the same
    temperature, top-k and top-p) given the prompt and the run's own earlier tokens: one pass per batch."""
    out = []
    with torch.inference_mode():
        for i in range(0, len(runs), batch):
            chunk = torch.tensor([list(ids) + list(r) for r in runs[i:i + batch]])  # (B, L + K)
            k = chunk.shape[1] - len(ids)
            logits = target(chunk[:, :-1])[:, len(ids) - 1:].double()  # (B, K, V): row t predicts token t
            rows = adjust(logits.reshape(-1, logits.shape[-1]), temperature, top_k, top_p)  # (B K, V)
            out.append(judge.pit_inputs(rows.reshape(len(chunk), k, -1).numpy(), chunk[:, len(ids):].numpy()))
    return tuple(np.concatenate([o[j] for o in out]) for j in range(3))


def watcher(pair, ids: list, exact: dict | None, samples: int, alpha: float, seed: int, sampling: dict):
    """A ``stop(samples)`` for ``run_engine``: the sequential test, read every ``samples // 100`` runs; True once
    it has decided "not the target" (its e-value reached 1 / alpha). It keeps the token conditionals it
    computes (``.kept``), so the verdict does not compute them twice."""
    every = max(1, samples // 100)
    kept = []

    def stop(got: list) -> bool:
        if exact is None:  # token by token: the new runs' conditionals, one pass
            kept.append(token_conditionals(pair.target, ids, got[sum(len(k[0]) for k in kept):], **sampling))
        if len(got) % every and len(got) < samples:
            return False
        if exact is not None:
            return judge.judge_sequential(got, exact, alpha, samples)["decided_at"] is not None
        arrays = [np.concatenate([k[j] for k in kept]) for j in range(3)]
        return judge.pits_sequential(*arrays, alpha=alpha, seed=seed, budget=samples)["decided_at"] is not None
    stop.kept = kept
    return stop


def run_engine(job: dict, vocab_size: int, timeout: float, progress=None, require_isolation: bool = False,
               drafted: list | None = None, stop=None) -> tuple:
    """(samples, seconds of sampling, isolation) from the engine in a child; AuditError for anything else.
    ``drafted``: a list that receives, run by run, the drafted tokens the engine says it verified inside the
    judged window (``specsim`` and ``hf`` say so; a report, never part of the verdict). ``stop(samples)``:
    read after each run; True ends the audit there (the sequential test has decided)."""
    from ..labs.reaper import Reaper
    from ..labs.sandbox import OracleDown, SandboxError, read_isolation
    judge.preload()  # the verdict's modules, before the child exists
    deadline = time.monotonic() + timeout
    job = job | {"require_isolation": require_isolation}
    isolation = None
    read_fd, write_fd = os.pipe()
    samples, buffer, started = [], b"", None
    with Reaper() as reaper:
        import subprocess
        try:
            child = reaper.spawn([sys.executable, "-c", _BOOT, _ROOT], stdin=subprocess.PIPE,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, pass_fds=(write_fd,))
        finally:
            os.close(write_fd)
        try:
            child.stdin.write((json.dumps(job | {"out_fd": write_fd}) + "\n").encode())
            child.stdin.close()
        except OSError:
            pass
        try:
            while len(samples) < job["samples"]:
                line, buffer = _next_line(read_fd, buffer, deadline, len(samples), job["samples"])
                if isolation is None:  # the child's first line: its isolation, checked from here
                    try:
                        isolation = read_isolation(line, child.pid, require_isolation)
                    except (OracleDown, SandboxError) as e:
                        raise AuditError(str(e)) from None
                    continue
                if line.startswith(b'{"v": '):  # the run's verified drafts, before its tokens
                    count = _drafted(line)
                    if drafted is not None:
                        drafted.append(count)
                    continue
                samples.append(_tokens(line, job["tokens"], vocab_size))
                if started is None:
                    started = time.monotonic()
                if progress:
                    progress(len(samples), job["samples"])
                if stop is not None and stop(samples):
                    break
        finally:
            os.close(read_fd)
    return samples, time.monotonic() - (started or time.monotonic()), isolation


def _next_line(read_fd: int, buffer: bytes, deadline: float, got: int, planned: int) -> tuple:
    """(the child's next line, what is left after it), read within the run's clock (``START_SECONDS`` for the
    first, ``SAMPLE_SECONDS`` after) and the whole audit's ``deadline``; AuditError when a clock runs out, the
    child ends or a line passes 1 MiB."""
    limit = START_SECONDS if not got else SAMPLE_SECONDS
    end = min(time.monotonic() + limit, deadline)
    while b"\n" not in buffer:
        left = end - time.monotonic()
        if left <= 0:
            raise AuditError(f"the engine gave {got} of {planned} runs before its clock "
                             f"({'the whole audit' if end >= deadline else f'{limit:g} s a run'}); no verdict")
        if select.select([read_fd], [], [], min(left, 0.5))[0]:
            chunk = os.read(read_fd, 65536)
            if not chunk:
                raise AuditError(f"the engine's process ended after {got} of {planned} runs; no verdict")
            buffer += chunk
            if len(buffer) > 2**20:
                raise AuditError("the engine's process sent over 1 MiB for one run; no verdict")
    line, rest = buffer.split(b"\n", 1)
    return line, rest


def _drafted(line: bytes) -> int:
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        value = None
    if not (isinstance(value, dict) and set(value) == {"v"} and type(value["v"]) is int and value["v"] >= 0):
        raise AuditError("the engine's process sent a malformed count of verified drafts; no verdict")
    return value["v"]


def _tokens(line: bytes, k: int, vocab_size: int) -> tuple:
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        value = None
    if isinstance(value, dict) and set(value) == {"e"} and isinstance(value["e"], str):
        from ..labs.sandbox import one_line
        raise AuditError(one_line(value["e"]) + "; no verdict")
    if not (isinstance(value, list) and len(value) == k and all(type(t) is int and 0 <= t < vocab_size
                                                                  for t in value)):
        raise AuditError(f"the engine sent something that is not {k} token id(s) of the vocabulary; no verdict")
    return tuple(value)


def audit(engine: str, prompt: str, tokens: int = 2, samples: int = 2000, scheme: str = "chain:4",
          drafter: str = "distilled", temperature: float = 1.0, top_k=None, top_p=None, seed: int = 0,
          alpha: float = judge.ALPHA, timeout: float = 1800.0, detect_tv: float = 0.05, progress=None,
          memory_mb: int = DEFAULT_MEMORY_MB, require_isolation: bool = False, target_dir=None, draft_dir=None,
          hf_options=None, sequential: bool = False, p_value_method: str = "auto") -> dict:
    """Run ``engine`` (``specsim``, ``hf`` or ``PATH.py:ClassName``) ``samples`` times from ``prompt`` and
    judge its first ``tokens`` tokens against the shipped target's exact distribution (with ``hf`` and
    ``target_dir``/``draft_dir``, two local transformers checkpoints: against that target's). ``hf_options``:
    transformers' drafting options as ``key=value`` strings (``specsim.gpt.hf.options``). Up to
    ``judge.MAX_JOINT`` tokens are judged jointly, more token by token; ``sequential`` ends the audit as soon as
    the sequential test decides "not the target"; ``p_value_method``: "auto" (exact enumeration where few cells
    and runs allow it, else Monte Carlo), "exact" or "monte carlo" (``specsim.labs.audit.calibrated``)."""
    from . import api
    check_budget(tokens, samples, memory_mb, p_value_method)
    engine_job, warnings = engine_settings(engine, target_dir, draft_dir, hf_options)
    pair = engine_pair(engine_job)
    ids = api.encode_prompt(pair, prompt)
    api.sampling(temperature, top_k, top_p, False)  # one-line refusals of bad settings
    if temperature == 0:
        raise ValueError("an audit samples: use a temperature above 0")
    job = {"ids": ids, "tokens": tokens, "samples": samples, "seed": seed, "scheme": scheme, "drafter": drafter,
           "sampling": {"temperature": temperature, "top_k": top_k, "top_p": top_p}, "memory_mb": memory_mb}
    job |= engine_job
    if engine in ENGINES:
        job["engine"] = engine
    else:
        from ..labs.sandbox import parse_target
        path, name = parse_target(engine)  # the file checked to exist, nothing imported
        job |= {"engine": "file", "path": os.path.abspath(path), "class_name": name}
    window = pair.target.config.block_size
    if len(ids) + tokens > window:
        raise ValueError(f"the prompt ({len(ids)} tokens) and {tokens} judged tokens exceed the target's "
                         f"{window}-position window")
    joint = tokens <= judge.MAX_JOINT
    sampling = {"temperature": temperature, "top_k": top_k, "top_p": top_p}
    exact = exact_distribution(pair.target, ids, tokens, temperature, top_k, top_p,
                               threshold=judge.MIN_EXPECTED / samples / 4) if joint else None
    drafted = []
    stop = watcher(pair, ids, exact, samples, alpha, seed, sampling) if sequential else None
    got, seconds, isolation = run_engine(job, pair.target.config.vocab_size, timeout, progress, require_isolation,
                                         drafted, stop)
    check_speculation(engine, drafted, tokens)
    out = judge_runs(pair, ids, got, exact, alpha, seed, sampling, sequential, samples, stop, p_value_method)
    out.update({"engine": engine, "prompt": prompt, "tokens": tokens, "scheme": scheme if engine == "specsim" else None,
                "drafter": drafter if engine == "specsim" else None, "temperature": temperature, "top_k": top_k,
                "top_p": top_p, "seed": seed, "samples_per_s": round(len(got) / seconds, 2) if seconds else None,
                "detect_tv": detect_tv, "samples_to_detect": judge.runs_needed(exact, detect_tv, alpha)[0]
                if joint else judge.pit_runs_needed(tokens, detect_tv, alpha), "isolation": isolation,
                "memory_mb": memory_mb, "mode": "joint" if joint else "token by token", "runs_planned": samples})
    out.update({"target": engine_job.get("hf_target"), "draft": engine_job.get("hf_draft"),
                "hf_options": engine_job.get("hf_options"), "warnings": warnings,
                "verified_drafts": sum(drafted) if drafted else None,
                "runs_with_drafts": sum(1 for d in drafted if d) if drafted else None})
    return out


def check_budget(tokens: int, samples: int, memory_mb: int, p_value_method: str) -> None:
    """One-line refusals of an audit's sizes and p-value method."""
    if not 1 <= tokens <= MAX_TOKENS:
        raise ValueError(f"tokens must be from 1 to {MAX_TOKENS}, got {tokens} (up to {judge.MAX_JOINT} are "
                         "judged jointly, more token by token)")
    if not 2 <= samples <= MAX_SAMPLES:
        raise ValueError(f"samples must be from 2 to {MAX_SAMPLES:,}, got {samples}")
    if p_value_method not in judge.P_VALUE_METHODS:
        raise ValueError(f"the p-value method must be one of {', '.join(judge.P_VALUE_METHODS)}, "
                         f"got {p_value_method!r}")
    if not MIN_MEMORY_MB <= memory_mb <= MAX_MEMORY_MB:
        raise ValueError(f"memory must be from {MIN_MEMORY_MB} to {MAX_MEMORY_MB} MB, got {memory_mb}")


def judge_runs(pair, ids: list, got: list, exact: dict | None, alpha: float, seed: int, sampling: dict,
               sequential: bool, budget: int, stop=None, p_value_method: str = "auto") -> dict:
    """The verdict's dict on the runs ``got``: joint over ``exact`` (K <= 3), or token by token from the
    target's conditionals (those the sequential watcher already computed are reused)."""
    if exact is not None:
        out = judge.judge_samples(got, exact, alpha, seed, sequential=sequential, budget=budget,
                                  p_value_method=p_value_method).to_dict()
        out["top"] = [dict(t, text=pair.tokenizer.decode(t["tokens"])) for t in out["top"]]
        return out
    kept = stop.kept if stop is not None and stop.kept else []
    done = sum(len(k[0]) for k in kept)
    parts = kept + ([token_conditionals(pair.target, ids, got[done:], **sampling)] if got[done:] else [])
    arrays = [np.concatenate([k[j] for k in parts])[:len(got)] for j in range(3)]
    return judge.judge_pits(*arrays, alpha=alpha, seed=seed, sequential=sequential, budget=budget,
                            p_value_method=p_value_method)


def engine_settings(engine: str, target_dir, draft_dir, hf_options) -> tuple:
    """(the job's engine fields, warning lines): the checkpoint pair and ``--hf`` options, checked in one line
    each; a warning when the hf engine runs on a transformers outside the tested range (``specsim.deps``)."""
    if (target_dir or draft_dir) and engine != "hf":
        raise ValueError("--target DIR and --draft DIR are a transformers checkpoint pair for --engine hf "
                         "(the specsim engine's drafter is --drafter NAME)")
    if hf_options and engine != "hf":
        raise ValueError("--hf options are transformers' generate options, for --engine hf only")
    if engine != "hf":
        return {}, []
    from .. import deps
    from .hf.export import require_transformers
    from .hf.options import check_checkpoints, parse_hf_options
    require_transformers()  # one line when it is missing
    job = {"hf_options": parse_hf_options(hf_options)}
    check_checkpoints(job["hf_options"], target_dir, draft_dir)  # both, or the target alone for use_mtp
    if target_dir:
        job |= {"hf_target": os.path.abspath(os.path.expanduser(target_dir)),
                "hf_draft": os.path.abspath(os.path.expanduser(draft_dir)) if draft_dir else None}
    dep = next(d for d in deps.report() if d.name == "transformers")
    warnings = [] if dep.status == "tested" else [
        f"transformers {dep.installed} is {dep.status}: the hf engine is tested on transformers {dep.tested}"]
    return job, warnings


def engine_pair(engine_job: dict):
    """The pair whose target is the reference: the shipped one, or the job's checkpoints (loaded here as
    ``hf.pair`` loads them: safetensors only, no code from the checkpoint, every weight present and finite)."""
    from . import api
    if engine_job.get("hf_target"):
        from .hf.pair import load_hf_pair
        from .hf.options import drafter_kind
        return load_hf_pair(engine_job["hf_target"], engine_job["hf_draft"], device="cpu",
                            kind=drafter_kind(engine_job.get("hf_options") or {}))
    return api.load_pair("distilled", device="cpu")


def check_speculation(engine: str, drafted: list, tokens: int) -> None:
    """An engine that reports its drafts (specsim, hf) and verified none inside the judged window was not
    audited as a speculative decoder: refused in one line."""
    if drafted and not any(drafted):
        fix = ("transformers drafts at most K - 1 tokens for K new tokens and its assistant stops early below "
               "assistant_confidence_threshold: raise --tokens or set --hf assistant_confidence_threshold=0"
               if engine == "hf" else "raise --tokens or use a scheme that drafts")
        raise AuditError(f"the engine verified no drafted token inside the judged {tokens}-token window in "
                         f"{len(drafted):,} runs, so this is no speculative audit: {fix}")
