"""What a checkpoint on disk must pass before specsim loads it: no code, no pickle, bounded, whole, finite.

specsim reads checkpoints a user hands it: a pair of Hugging Face
checkpoint directories (``hf_pair``) and training checkpoints to resume
(``train``). Each check below refuses with a ``CheckpointError``: a
``ValueError`` whose message is one line naming the file and the problem, so
the command line prints it (exit code 2) and the app shows it.

* **JSON files** (``config.json``, ``tokenizer_config.json``) are read here,
  not by transformers first: a regular file, at most ``MAX_JSON_BYTES``,
  nested at most ``MAX_DEPTH`` deep (counted by a flat scan, so a file
  nested 100,000 deep is one line, not a ``RecursionError``), an object.
* **No code.** An ``auto_map`` in either file names Python files of the
  checkpoint that transformers would import (``trust_remote_code``): refused,
  whatever the user would answer; every ``from_pretrained`` also gets
  ``trust_remote_code=False``.
* **No pickle.** Weights load only from safetensors files (raw tensors); a
  checkpoint with only ``pytorch_model.bin`` (a pickle, which can run code
  when loaded) is refused with a line saying how to convert it. Each
  safetensors file must have a readable header that covers the whole file
  (a truncated download is refused).
* **The model that was asked for.** After loading: no missing, unexpected or
  mis-shaped weights (transformers would fill missing ones at random), and
  every parameter finite (the first bad tensor is named).

This module needs neither torch nor transformers at import.

>>> json_depth('{"a": [1, {"b": "[[["}]}')
3
>>> check_auto_map({"model_type": "gpt2"}, "config.json")
>>> try:
...     check_auto_map({"auto_map": {"AutoConfig": "evil.Config"}}, "x/config.json")
... except CheckpointError as e:
...     print(e)
x/config.json has an auto_map (AutoConfig -> evil.Config): it names Python code in the checkpoint, which specsim never runs
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import stat

MAX_JSON_BYTES = 1 << 20  # 1 MiB: real config.json files are a few kB
MAX_DEPTH = 64
PICKLE_WEIGHTS = ("pytorch_model.bin", "pytorch_model.bin.index.json", "tf_model.h5", "flax_model.msgpack",
                  "model.ckpt.index")
SAFETENSORS, SAFETENSORS_INDEX = "model.safetensors", "model.safetensors.index.json"
_JSON_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')  # strings (skipped whole) and brackets


class CheckpointError(ValueError):
    """A checkpoint specsim refuses to load; the message is one line naming the file and the problem."""


def one_line(e: BaseException, limit: int = 200) -> str:
    """The first line of an exception's message (its type name when it has none), at most ``limit`` characters."""
    text = str(e).strip().splitlines()
    return text[0][:limit] if text and text[0].strip() else type(e).__name__


def json_depth(text: str, stop: int = MAX_DEPTH + 1) -> int:
    """The deepest nesting of arrays and objects in ``text`` (a flat scan: no recursion), at most ``stop``."""
    depth = deepest = 0
    for m in _JSON_TOKENS.finditer(text):
        c = m.group()
        if c in "[{":
            depth += 1
            deepest = max(deepest, depth)
            if deepest >= stop:
                return deepest
        elif c in "]}":
            depth -= 1
    return deepest


def read_json(path: str, limit: int = MAX_JSON_BYTES) -> dict:
    """The JSON object in the regular file ``path``, or one line: not a regular file, too large, too deep, not JSON."""
    try:  # O_NONBLOCK: opening a FIFO does not wait for a writer; fstat then says what was opened
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as e:
        raise CheckpointError(f"cannot open {path}: {e.strerror or one_line(e)}") from None
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise CheckpointError(f"{path} is not a regular file")
        if info.st_size > limit:
            raise CheckpointError(f"{path} is larger than {limit:,} bytes ({info.st_size:,}): not a config file")
        data = f.read(limit + 1)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise CheckpointError(f"{path} is not UTF-8 text") from None
    if json_depth(text) > MAX_DEPTH:
        raise CheckpointError(f"{path} is nested deeper than {MAX_DEPTH} levels: not a config file")
    try:
        value = json.loads(text)
    except ValueError as e:
        raise CheckpointError(f"{path} is not valid JSON: {one_line(e)}") from None
    if not isinstance(value, dict):
        raise CheckpointError(f"{path} is not a JSON object (it holds a {type(value).__name__})")
    return value


def check_auto_map(config: dict, path: str) -> None:
    """Refuse an ``auto_map``: the names of Python files in the checkpoint that transformers would import."""
    if "auto_map" not in config:
        return
    auto_map = config["auto_map"]
    named = (", ".join(f"{k} -> {v}" for k, v in auto_map.items()) if isinstance(auto_map, dict)
             else str(auto_map))
    raise CheckpointError(f"{path} has an auto_map ({named[:160]}): it names Python code in the checkpoint, "
                          "which specsim never runs")


@contextlib.contextmanager
def about(role: str):
    """Refusals inside name the checkpoint's role: "the target checkpoint: ..."."""
    try:
        yield
    except CheckpointError as e:
        raise CheckpointError(f"the {role} checkpoint: {e}") from None


def read_hf_configs(path: str, role: str) -> dict:
    """``config.json`` of the checkpoint directory ``path``, after checking it and ``tokenizer_config.json``."""
    with about(role):
        config = read_json(os.path.join(path, "config.json"))
        check_auto_map(config, os.path.join(path, "config.json"))
        tok_path = os.path.join(path, "tokenizer_config.json")
        if os.path.lexists(tok_path):
            check_auto_map(read_json(tok_path), tok_path)
        if not isinstance(config.get("model_type"), str):
            raise CheckpointError(f"{path}/config.json names no model_type")
    return config


def safetensors_files(path: str, role: str) -> list:
    """The safetensors weight files of checkpoint ``path`` (each checked whole), or one line: pickles only, none."""
    with about(role):
        return _safetensors_files(path)


def _safetensors_files(path: str) -> list:
    index = os.path.join(path, SAFETENSORS_INDEX)
    weights = os.path.join(path, SAFETENSORS)
    if os.path.lexists(weights) and not os.path.isfile(weights):
        raise CheckpointError(f"{weights} is {_kind(weights)}, not a weight file")
    if os.path.isfile(weights):
        files = [SAFETENSORS]
    elif os.path.lexists(index):
        weight_map = read_json(index, limit=16 * MAX_JSON_BYTES).get("weight_map")
        if not isinstance(weight_map, dict) or not all(isinstance(f, str) for f in weight_map.values()):
            raise CheckpointError(f"{index} has no weight_map of file names")
        files = sorted(set(weight_map.values()))
        for f in files:
            if os.path.basename(f) != f or not f.endswith(".safetensors"):
                raise CheckpointError(f"{index} names {f[:80]!r}, not a safetensors file in the checkpoint")
    else:
        pickled = [f for f in PICKLE_WEIGHTS if os.path.lexists(os.path.join(path, f))]
        if pickled:
            raise CheckpointError(f"{path} has only {pickled[0]} (a pickle, which can run code when "
                                  "loaded), no model.safetensors: convert it to safetensors with a tool you trust")
        raise CheckpointError(f"{path} has no model.safetensors")
    for f in files:
        check_safetensors(os.path.join(path, f))
    return files


def _kind(path: str) -> str:
    """What a path that is not a regular file is ("a FIFO (named pipe)", "a character device", ...),
    links followed, without opening it."""
    from ..labs.sandbox import file_kind
    try:
        return file_kind(path) or "a regular file"
    except OSError:
        return "a broken link"


def check_safetensors(path: str) -> None:
    """The file's header is readable and its tensors cover the whole file (not truncated, nothing appended)."""
    from safetensors import safe_open
    if not os.path.isfile(path):
        raise CheckpointError(f"weight file {path} is missing or not a regular file")
    try:
        with safe_open(path, "np") as f:  # the header only: no tensor is read, and torch need not load
            f.keys()
    except Exception as e:  # safetensors raises its own SafetensorError (not an OSError) for a bad header
        raise CheckpointError(f"{path} is not a whole safetensors file (truncated or corrupt): {one_line(e)}") from None


def check_loading_info(info: dict, role: str, model=None) -> None:
    """Refuse weights that transformers would have filled in at random or dropped: missing, unexpected, mis-shaped.

    An unexpected tensor under a module the model has (``h.0.attn.masked_bias``,
    a buffer older GPT-2 checkpoints saved) is a leftover the model does not
    need, and is let through; one under a module the model lacks (``h.7.`` in
    a 6-layer config, another head) means the config does not describe the
    weights, and is refused.
    """
    info = dict(info)
    if model is not None:
        info["unexpected_keys"] = [k for k in info.get("unexpected_keys") or () if not _under_a_module(model, k)]
    for kind in ("missing_keys", "unexpected_keys", "mismatched_keys"):
        keys = sorted(str(k[0] if isinstance(k, tuple) else k) for k in info.get(kind) or ())
        if keys:
            shown = ", ".join(keys[:4]) + (f" and {len(keys) - 4} more" if len(keys) > 4 else "")
            word = {"missing_keys": "missing", "unexpected_keys": "unexpected", "mismatched_keys": "mis-shaped"}[kind]
            raise CheckpointError(f"the {role} checkpoint has {word} weights ({len(keys)}): {shown}")
    if info.get("error_msgs"):
        raise CheckpointError(f"the {role} checkpoint's weights did not load: {one_line(Exception(info['error_msgs'][0]))}")


def _under_a_module(model, key: str) -> bool:
    """Whether ``key``'s module path names a submodule of ``model`` (with or without the base model's prefix)."""
    path = str(key).rpartition(".")[0]
    prefix = getattr(model, "base_model_prefix", "")
    for name in (path, f"{prefix}.{path}" if prefix else path):
        try:
            if path:
                model.get_submodule(name)
                return True
        except AttributeError:
            pass
    return False


def check_finite(named_tensors, where: str) -> None:
    """Every floating tensor of ``named_tensors`` ((name, tensor) pairs) is finite; else the first bad one is named."""
    for name, t in named_tensors:
        if t.is_floating_point() and not bool(t.isfinite().all()):
            raise CheckpointError(f"{where}: weight {name} is not finite (NaN or infinity)")


# -- the size a config promises, checked before a model is built --------------------------------------------
SIZE_FIELDS = {  # what each common config key means, by its names across model families
    "layers": ("n_layer", "num_hidden_layers", "num_layers"),
    "width": ("n_embd", "hidden_size", "d_model"),
    "vocab": ("vocab_size",),
    "positions": ("n_positions", "max_position_embeddings"),
    "inner": ("n_inner", "intermediate_size", "ffn_dim"),
}


def _field(config: dict, kind: str, default=None):
    for name in SIZE_FIELDS[kind]:
        value = config.get(name)
        if value is not None:
            return name, value
    return SIZE_FIELDS[kind][0], default


def config_parameters(config: dict) -> tuple:
    """(estimated parameters, the config field that contributes most) from a config dict, before anything is
    built: embeddings (vocab and positions) plus, per layer, attention (4 width^2) and the MLP (2 width inner)."""
    names, values = {}, {}
    for kind, default in (("layers", 1), ("width", 1), ("vocab", 1), ("positions", 0), ("inner", None)):
        name, value = _field(config, kind, default)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            raise CheckpointError(f"config.json's {name} is {str(value)[:40]!r}, not a whole number")
        names[kind], values[kind] = name, value
    width, layers = values["width"], values["layers"]
    inner = values["inner"] if values["inner"] is not None else 4 * width
    parts = {names["vocab"]: values["vocab"] * width, names["positions"]: values["positions"] * width,
             names["layers"]: layers * (4 * width * width + 2 * width * inner)}
    total = sum(parts.values())
    top = max(parts, key=parts.get)
    if top == names["layers"] and width > layers:  # the layers' share grows with width squared: name the width
        top = names["width"]
    return total, top


def check_config_size(config: dict, weights_bytes: int, role: str) -> None:
    """One line, before the model is built, when the config promises far more parameters than the checkpoint's
    weight files can hold (2 bytes a parameter at the least) or than this machine's memory holds in float32."""
    total, field = config_parameters(config)
    value = config.get(field)
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        memory = 1 << 40
    if 4 * total > memory:
        raise CheckpointError(f"the {role} checkpoint's config.json ({field} = {str(value)[:20]}) describes about "
                              f"{total:.3g} parameters, {4 * total / 2**30:,.1f} GiB in float32: more than this "
                              f"machine's {memory / 2**30:,.1f} GiB")
    if 2 * total > 2 * weights_bytes + (1 << 20):
        raise CheckpointError(f"the {role} checkpoint's config.json ({field} = {str(value)[:20]}) describes about "
                              f"{total:.3g} parameters, but its weight files hold {weights_bytes / 2**20:,.1f} MiB: "
                              "the config does not describe these weights")


def check_checkpoint(path: str, role: str) -> str:
    """The checkpoint directory ``path`` (for ``role``: target or draft), or one line saying what is wrong."""
    if not path:
        raise CheckpointError(f"the {role} path is empty")
    path = os.path.expanduser(path)
    if not os.path.exists(path):
        raise CheckpointError(f"the {role} checkpoint {path} does not exist")
    if not os.path.isdir(path) or not os.path.lexists(os.path.join(path, "config.json")):  # a FIFO: read_json says
        raise CheckpointError(f"the {role} path {path} is not a Hugging Face checkpoint directory (no config.json)")
    return path


def precheck(path: str, role: str) -> None:
    """What can be checked of a checkpoint before torch or transformers load (under a second): that it is a
    checkpoint directory, its config files (no code), its weight files (safetensors, whole) and the size its
    config promises."""
    path = check_checkpoint(path, role)
    config = read_hf_configs(path, role)
    try:
        weights = safetensors_files(path, role)
    except CheckpointError:  # no weights, or bad ones: the loader says so, after what it checks first
        return
    check_config_size(config, sum(os.path.getsize(os.path.join(path, f)) for f in weights), role)


def atomic_write(path: str, data: bytes) -> None:
    """``data`` into ``path`` all at once: written to a temporary file beside it, then renamed over it, so a
    signal or a crash mid-write leaves the old file (or none), never half of the new one."""
    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    finally:
        if os.path.lexists(tmp):
            os.remove(tmp)
