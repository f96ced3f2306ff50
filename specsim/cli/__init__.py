"""`specsim` command line: one sub-command per module, errors as one line.

Each command module of this package (``exact_cmds``, ``sampling_cmds``,
``gpt_cmds``) has ``register(subparsers)`` that adds its sub-commands with
``set_defaults(func=handler)``. A handler receives the parsed arguments and
returns an exit code; it raises ``UsageError`` (or ``ValueError``) for bad
input, which ``main`` prints as one line on stderr with exit code 2. Heavy
imports (torch, scipy) happen inside the handlers that need them.
"""
from __future__ import annotations

import argparse
import sys

from .. import __version__
from . import check_cmds, exact_cmds, gpt_cmds, sampling_cmds
from .common import UsageError

COMMAND_MODULES = [exact_cmds, sampling_cmds, check_cmds, gpt_cmds]  # in the order `specsim --help` lists them


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse's own usage errors: one line, exit 2
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="specsim", description="Speculative decoding, simulated exactly and made visible.")
    parser.add_argument("--version", action="version", version=f"specsim {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for module in COMMAND_MODULES:
        module.register(sub)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code = args.func(args)
    except BrokenPipeError:  # output piped into `head` and closed early
        sys.stderr.close()
        return 0
    except (UsageError, ValueError, OSError) as e:
        print(f"specsim {args.command}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return code or 0


if __name__ == "__main__":
    sys.exit(main())
