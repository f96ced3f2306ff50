"""`specsim` command line: one sub-command per module, errors as one line.

Each command module of this package (``exact_cmds``, ``sampling_cmds``,
``gpt_cmds``) has ``register(subparsers)`` that adds its sub-commands with
``set_defaults(func=handler)``. A handler receives the parsed arguments and
returns an exit code; it raises ``UsageError`` (or ``ValueError``) for bad
input, which ``main`` prints as one line on stderr with exit code 2. Heavy
imports (torch, scipy, sympy, the checker, numpy) happen inside the handlers
that need them, and ``main`` imports only the module of the command it runs
(``COMMANDS``), so `specsim round ...` starts without parsing the GPT commands.
"""
from __future__ import annotations

import argparse
import importlib
import signal
import sys

from .. import __version__
from .common import UsageError

# module -> the sub-commands its ``register`` adds, in the order `specsim --help` lists them
COMMANDS = {"exact_cmds": ("round", "prove", "compare", "speedup", "best-gamma", "tables", "bench-exact",
                           "bench-schemes"),
            "sampling_cmds": ("trace", "generate", "sample", "pitfalls", "bench-sample"),
            "check_cmds": ("check-rule",),
            "impl_cmds": ("implementations",),
            "gpt_cmds": ("gpt",),
            "serving_cmds": ("serving",),
            "deps_cmds": ("deps",),
            "audit_cmds": ("audit",)}


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse's own usage errors: one line, exit 2
        self.exit(2, f"{self.prog}: error: {message}\n")


class _Version(argparse.Action):
    """``--version``: specsim's version, then one line per library (``specsim deps`` has the full table)."""
    def __call__(self, parser, namespace, values, option_string=None):
        from .. import deps
        lines = [f"specsim {__version__}"]
        lines += [f"{d.name} {d.installed or '-'}: {d.status}" for d in deps.report()]
        print("\n".join(lines))
        parser.exit(0)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """Every sub-command, or with ``command`` only those of the module that registers it."""
    parser = _Parser(prog="specsim", description="Speculative decoding, simulated exactly and made visible.")
    parser.add_argument("--version", action=_Version, nargs=0,
                        help="show specsim's version and the installed versions of the libraries it was tested with")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name, commands in COMMANDS.items():
        if command is None or command in commands:
            importlib.import_module(f"{__name__}.{name}").register(sub)
    return parser


MAX_ERROR = 500  # characters of one error line: whatever input a message repeats, the line stays readable


def capped(message: str) -> str:
    """One error line of at most ``MAX_ERROR`` characters, its full length said when cut (the backstop
    behind every message that repeats an input through ``parsing.echo``)."""
    message = message.splitlines()[0] if message else message
    return message if len(message) <= MAX_ERROR else f"{message[:MAX_ERROR]}... ({len(message):,} characters)"


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    first = argv[0] if argv else None  # a command's name: only its module is imported
    parser = build_parser(first if any(first in c for c in COMMANDS.values()) else None)
    args = parser.parse_args(argv)
    restore = _stop_on_signals()
    try:
        code = args.func(args)
    except BrokenPipeError:  # output piped into `head` and closed early
        sys.stderr.close()
        return 0
    except (UsageError, ValueError, OSError) as e:
        print(f"specsim {args.command}: error: {capped(str(e))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as e:  # SIGINT; SIGTERM and SIGHUP too where a command turns them into Stopped
        signum = getattr(e, "signum", signal.SIGINT)
        print(f"specsim {args.command}: stopped by {signal.Signals(signum).name}", file=sys.stderr)
        return 128 + signum
    finally:
        restore()
    return code or 0


def _stop_on_signals():
    """While a command runs, SIGTERM and SIGHUP (``timeout``, systemd, a closing terminal) raise ``Stopped``, a
    ``KeyboardInterrupt``, as SIGINT does: every ``finally`` runs (temporary files and folders removed, child
    processes killed) and the command ends with one line. Returns the function that puts the old handlers back."""
    import threading
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    from ..labs.reaper import Stopped

    def stop(signum, frame):
        raise Stopped(signum)
    old = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGHUP)}
    return lambda: [signal.signal(sig, h) for sig, h in old.items()]


if __name__ == "__main__":
    sys.exit(main())
