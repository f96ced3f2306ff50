"""Helpers shared by the test files: running the `specsim` command in-process."""
import json

import pytest

from specsim.cli import main


@pytest.fixture
def cli(capsys):
    """``cli(*argv) -> (exit code, stdout, stderr)`` of ``specsim ARGV``, argparse's own exits included."""
    def run(*argv):
        try:
            code = main([str(a) for a in argv])
        except SystemExit as e:  # argparse usage errors exit from the parser
            code = e.code
        out, err = capsys.readouterr()
        return code, out, err
    return run


@pytest.fixture
def cli_json(cli):
    """``cli_json(*argv)``: ``specsim ARGV --json`` parsed, after asserting exit code 0."""
    def run(*argv):
        code, out, err = cli(*argv, "--json")
        assert code == 0, err
        return json.loads(out)
    return run
