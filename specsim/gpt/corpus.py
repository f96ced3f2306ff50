"""The training text: pure-ASCII modules of the Python standard library, pinned.

Source: the top-level ``*.py`` files of CPython's standard library (``Lib/``)
whose text is newline plus printable ASCII only, taken from Python 3.11.7 in
sorted file-name order, joined with blank lines, up to ``MAX_CHARS``.
Licence: PSF License Agreement (``data/LICENSE-PSF.txt``, copied from the same
installation), which allows redistribution with the notice retained.

Stdlib files differ between Python versions, so the extracted text is shipped
(``data/corpus.txt.gz``) with its sha256 in ``data/corpus.json``; ``build``
recreates it from a local stdlib and reports the checksum it got.
Every 20th file goes to the validation split (held out from training); the
bench's held-out prompts come from those files.
"""
from __future__ import annotations

import gzip
import hashlib
import json
import os
import sysconfig
from importlib import resources

from .tokenizer import ASCII_VOCAB

MAX_CHARS = 3_000_000
HOLDOUT_EVERY = 20
_DATA = "specsim.gpt.data"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def build(stdlib_dir: str | None = None) -> tuple[list[tuple[str, str]], dict]:
    """Read the stdlib files; returns ([(file name, text)], metadata)."""
    stdlib_dir = stdlib_dir or sysconfig.get_paths()["stdlib"]
    allowed = set(ASCII_VOCAB)
    files, total = [], 0
    for name in sorted(os.listdir(stdlib_dir)):
        path = os.path.join(stdlib_dir, name)
        if not (name.endswith(".py") and os.path.isfile(path)):
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        if not set(text) <= allowed or total + len(text) > MAX_CHARS:
            continue
        files.append((name, text))
        total += len(text)
    meta = {"source": f"CPython standard library ({stdlib_dir}), top-level pure-ASCII *.py files",
            "licence": "PSF License Agreement (see LICENSE-PSF.txt)",
            "files": [[n, len(t.rstrip("\n")), sha256(t.encode())] for n, t in files]}
    return files, meta


def join(files) -> str:
    return "\n\n".join(t.rstrip("\n") for _, t in files) + "\n"


def write(out_dir: str, files, meta: dict) -> dict:
    """Write corpus.txt.gz and corpus.json (text checksum, split rule) into out_dir."""
    text = join(files)
    meta = dict(meta, chars=len(text), sha256=sha256(text.encode()),
                separator="\\n\\n", holdout_every=HOLDOUT_EVERY)
    with gzip.GzipFile(os.path.join(out_dir, "corpus.txt.gz"), "wb", mtime=0) as f:
        f.write(text.encode())
    with open(os.path.join(out_dir, "corpus.json"), "w") as f:
        json.dump(meta, f, indent=1)
    return meta


def metadata() -> dict:
    return json.loads(resources.files(_DATA).joinpath("corpus.json").read_text())


def load_files() -> list[tuple[str, str]]:
    """The shipped corpus as [(file name, text)], checksum verified."""
    meta = metadata()
    text = gzip.decompress(resources.files(_DATA).joinpath("corpus.txt.gz").read_bytes()).decode()
    if sha256(text.encode()) != meta["sha256"]:
        raise ValueError("the shipped corpus does not match its checksum in corpus.json")
    files, pos = [], 0
    for name, length, _ in meta["files"]:  # cut at the recorded lengths
        files.append((name, text[pos:pos + length]))
        pos += length + 2  # the "\n\n" separator
    return files


def splits(files) -> tuple[str, str]:
    """(train text, validation text): every HOLDOUT_EVERY-th file is held out."""
    train = [f for i, f in enumerate(files) if i % HOLDOUT_EVERY != HOLDOUT_EVERY - 1]
    val = [f for i, f in enumerate(files) if i % HOLDOUT_EVERY == HOLDOUT_EVERY - 1]
    return join(train), join(val)
