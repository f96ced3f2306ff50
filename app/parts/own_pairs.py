"""Hugging Face checkpoints of the operator's, offered on the Tiny GPT page as "your own model pair".

Off unless the operator sets ``SPECSIM_PAIRS_DIR`` to a directory; a visitor then picks a target and
a draft among that directory's subdirectories that hold a ``config.json`` (``own_choices``) and
nothing else: no path is typed, no message says anything about other paths.
"""
from __future__ import annotations

import os

PAIRS_ENV = "SPECSIM_PAIRS_DIR"
MAX_CHOICES = 100  # subdirectories listed at most


def pairs_dir() -> str | None:
    """The operator's directory of checkpoints (resolved), or None when "your own pair" is off."""
    root = os.environ.get(PAIRS_ENV, "").strip()
    if not root:
        return None
    root = os.path.realpath(os.path.expanduser(root))
    return root if os.path.isdir(root) else None


def own_choices() -> list[str]:
    """The checkpoint directories a visitor may pick: names of ``pairs_dir()``'s subdirectories with a
    config.json whose real path stays inside it (a symlink out of it is not offered)."""
    root = pairs_dir()
    if root is None:
        return []
    names = []
    with os.scandir(root) as entries:
        for entry in entries:
            path = os.path.realpath(entry.path)
            if (not entry.name.startswith(".") and os.path.dirname(path) == root and os.path.isdir(path)
                    and os.path.isfile(os.path.join(path, "config.json"))):
                names.append(entry.name)
    return sorted(names)[:MAX_CHOICES]


def own_path(name: str) -> str | None:
    """The resolved checkpoint directory of a listed ``name``, or None for anything not listed."""
    return os.path.realpath(os.path.join(pairs_dir(), name)) if name in own_choices() else None
