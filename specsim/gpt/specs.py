"""Drafter names (specs), parsed without torch: the CLI and the app check them before loading a model.

>>> parse_spec("lookup:3"), parse_spec("early-exit:2+head"), parse_spec("trained")
(('lookup', 3), ('early-exit+head', 2), ('trained', None))
>>> parse_spec("medusa")
Traceback (most recent call last):
...
ValueError: unknown drafter 'medusa'; choose distilled, trained, lookup:N, early-exit:K or early-exit:K+head
"""
from __future__ import annotations

import re

SPECS = "distilled, trained, lookup:N, early-exit:K or early-exit:K+head"
GALLERY = ("distilled", "trained", "lookup:3", "early-exit:2", "early-exit:2+head")  # the gallery's defaults


def parse_spec(spec: str) -> tuple[str, int | None]:
    """'distilled' -> ('distilled', None); 'lookup:3' -> ('lookup', 3);
    'early-exit:2+head' -> ('early-exit+head', 2); bad -> ValueError (one line)."""
    if spec in ("distilled", "trained"):
        return spec, None
    m = re.fullmatch(r"(lookup|early-exit):([0-9]{1,6})|early-exit:([0-9]{1,6})\+head", spec or "")  # ASCII digits
    if not m:
        raise ValueError(f"unknown drafter {str(spec)[:60]!r}; choose {SPECS}")
    if m.group(3):
        return "early-exit+head", int(m.group(3))
    return m.group(1), int(m.group(2))
