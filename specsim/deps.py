"""The libraries specsim leans on: which versions are installed, which were tested.

Two ranges per library, and they mean different things:

- **required**: what ``pyproject.toml`` lets pip install, read from the
  installed package's own metadata (one source: the file a user installs
  from). transformers carries an upper bound there because specsim's
  gallery encodes its verification rule per release (5.24 keeps a draft
  when u <= p/q, 5.25 when u < p/q): a release past the bound has not been
  read, so pip does not pick it.
- **tested**: the releases the test suite has passed on (``TESTED`` below).
  A version inside *required* but outside *tested* may well work; it is
  reported as untested, never refused.

Nothing here imports the libraries it reports on (``importlib.metadata``
reads their installed versions), so ``specsim deps`` answers in a blink.

>>> status("9.9.9", ">=1.0,<2", ">=1.0,<2")
'outside required >=1.0,<2'
>>> status("1.5", ">=1.0,<2", ">=1.4,<1.6"), status("1.7", ">=1.0,<2", ">=1.4,<1.6"), status(None, ">=1.0", ">=1.0")
('tested', 'untested (tested >=1.4,<1.6)', 'not installed')
"""
from __future__ import annotations

from dataclasses import dataclass
from importlib import metadata

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

# The libraries whose behaviour a test, an entry or a page encodes, and the
# releases the whole suite has passed on (update after a green run on another).
TESTED = {
    "torch": ">=2.13,<2.14",
    "transformers": ">=5.24,<5.26",
    "streamlit": ">=1.67,<1.68",
    "plotly": ">=7.1,<7.2",
}


@dataclass(frozen=True)
class Dep:
    """One library: its installed version (None when absent) against both ranges."""
    name: str
    installed: str | None
    required: str          # the specifier of specsim's metadata ("" when it sets none)
    tested: str
    status: str            # tested | untested (...) | outside required ... | not installed

    @property
    def ok(self) -> bool:
        """Installed and inside the required range (tested or not)."""
        return self.installed is not None and not self.status.startswith("outside")


def installed_version(name: str) -> str | None:
    """The installed distribution's version, without importing it; None when it is absent."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def required_ranges(dist: str = "specsim") -> dict[str, str]:
    """Library name -> the widest specifier specsim's installed metadata sets for it, extras included."""
    ranges: dict[str, str] = {}
    try:
        requires = metadata.requires(dist) or []
    except metadata.PackageNotFoundError:
        return ranges
    for line in requires:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        ranges.setdefault(req.name.lower(), str(req.specifier))
    return ranges


def _release(version: str) -> Version:
    """The release part only: a local tag such as torch's "+cpu" or a pre-release does not move it."""
    return Version(Version(version).base_version)


def status(installed: str | None, required: str, tested: str) -> str:
    """Where ``installed`` lies against the two ranges, as a short phrase."""
    if installed is None:
        return "not installed"
    try:
        v = _release(installed)
    except InvalidVersion:
        return f"untested (unreadable version {installed[:40]!r})"
    if required and v not in SpecifierSet(required):
        return f"outside required {required}"
    if v in SpecifierSet(tested):
        return "tested"
    return f"untested (tested {tested})"


def report() -> list[Dep]:
    """Every library of ``TESTED``, in that order, as installed here."""
    required = required_ranges()
    out = []
    for name, tested in TESTED.items():
        have = installed_version(name)
        need = required.get(name, "")
        out.append(Dep(name, have, need, tested, status(have, need, tested)))
    return out
