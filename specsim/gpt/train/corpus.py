"""The training text: pure-ASCII modules of the Python standard library, pinned.

Source: CPython's standard library (``Lib/``) from Python 3.11.7, the files
whose text is newline plus printable ASCII only, joined with blank lines.
First the *base* files: the top-level ``*.py`` files in sorted file-name order,
up to ``MAX_CHARS`` (the corpus of the first shipped weights). Then the *extra*
files: the ``*.py`` files of the packages under ``Lib/`` in sorted path order,
without test suites, generated tables (``encodings``, ``pydoc_data``) and
``site-packages``, up to ``EXTRA_CHARS`` more.
Licence: PSF License Agreement (``data/LICENSE-PSF.txt``, copied from the same
installation), which allows redistribution with the notice retained.

Stdlib files differ between Python versions, so the extracted text is shipped
(``data/corpus.txt.gz``) with its sha256 in ``data/corpus.json``; ``build``
recreates it from a local stdlib and reports the checksum it got.
Every 20th *base* file goes to the validation split (held out from training);
the extra files all go to training, so the validation files are the same as
those of the base corpus and losses stay comparable. The bench's held-out
prompts come from those files.
"""
from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import sysconfig
from importlib import resources

from ..checkpoint_checks import atomic_write
from ..tokenizer import ASCII_VOCAB

MAX_CHARS = 3_000_000
EXTRA_CHARS = 6_000_000
HOLDOUT_EVERY = 20
SKIP_DIRS = {"test", "tests", "idle_test", "encodings", "pydoc_data", "site-packages", "__pycache__"}
_DATA = "specsim.gpt.data"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read_ascii(path: str, allowed: set) -> str | None:
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    return text if set(text) <= allowed else None


def build(stdlib_dir: str | None = None, extra_chars: int = EXTRA_CHARS) -> tuple[list[tuple[str, str]], dict]:
    """Read the stdlib files; returns ([(file name, text)], metadata).

    The first ``base`` files are the top-level ones; the rest are the extras.
    """
    stdlib_dir = stdlib_dir or sysconfig.get_paths()["stdlib"]
    allowed = set(ASCII_VOCAB)
    files, total = [], 0
    for name in sorted(os.listdir(stdlib_dir)):
        path = os.path.join(stdlib_dir, name)
        if not (name.endswith(".py") and os.path.isfile(path)):
            continue
        text = _read_ascii(path, allowed)
        if text is None or total + len(text) > MAX_CHARS:
            continue
        files.append((name, text))
        total += len(text)
    base, extra = len(files), 0
    for rel in _package_files(stdlib_dir):
        text = _read_ascii(os.path.join(stdlib_dir, rel), allowed)
        if text is None or extra + len(text) > extra_chars:
            continue
        files.append((rel, text))
        extra += len(text)
    meta = {"source": f"CPython standard library ({stdlib_dir}), pure-ASCII *.py files: "
                      f"{base} top-level (base), {len(files) - base} from its packages (extra)",
            "licence": "PSF License Agreement (see LICENSE-PSF.txt)", "base_files": base,
            "files": [[n, len(t.rstrip("\n")), sha256(t.encode())] for n, t in files]}
    return files, meta


def _package_files(stdlib_dir: str) -> list[str]:
    """Relative paths of the ``*.py`` files in the stdlib's packages, sorted."""
    out = []
    for d, dirs, names in os.walk(stdlib_dir):
        rel = os.path.relpath(d, stdlib_dir)
        if rel == ".":
            dirs[:] = [x for x in dirs if x not in SKIP_DIRS and not x.startswith("config-")]
            continue
        dirs[:] = [x for x in dirs if x not in SKIP_DIRS]
        out += [os.path.join(rel, n).replace(os.sep, "/") for n in names if n.endswith(".py")]
    return sorted(out)


def join(files) -> str:
    return "\n\n".join(t.rstrip("\n") for _, t in files) + "\n"


def write(out_dir: str, files, meta: dict) -> dict:
    """Write corpus.txt.gz and corpus.json (text checksum, split rule) into out_dir."""
    text = join(files)
    meta = dict(meta, chars=len(text), sha256=sha256(text.encode()),
                separator="\\n\\n", holdout_every=HOLDOUT_EVERY)
    packed = io.BytesIO()  # the same bytes GzipFile(path) writes (it names the file in its header), then at once
    with gzip.GzipFile(filename=os.path.join(out_dir, "corpus.txt.gz"), mode="wb", fileobj=packed, mtime=0) as f:
        f.write(text.encode())
    atomic_write(os.path.join(out_dir, "corpus.txt.gz"), packed.getvalue())
    atomic_write(os.path.join(out_dir, "corpus.json"), json.dumps(meta, indent=1).encode())
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


def splits(files, base: int | None = None) -> tuple[str, str]:
    """(train text, validation text): every HOLDOUT_EVERY-th of the first ``base``
    files (default: all of them) is held out; files after those all train."""
    base = len(files) if base is None else base
    held = [i < base and i % HOLDOUT_EVERY == HOLDOUT_EVERY - 1 for i in range(len(files))]
    return join([f for f, h in zip(files, held) if not h]), join([f for f, h in zip(files, held) if h])


def shipped_splits() -> tuple[str, str]:
    """(train text, validation text) of the shipped corpus, checksum verified."""
    return splits(load_files(), metadata().get("base_files"))
