"""Helpers shared by the test files: running the `specsim` command in-process, the GPT tests' pair and
thread setting, and a training run stopped after its first checkpoint."""
import contextlib
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


@pytest.fixture(scope="module")
def one_thread():
    """One torch thread for the module's tests (the shipped weights' figures were made with one), restored after."""
    import torch
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def pair():
    """The shipped target and distilled drafter on the CPU with one torch thread: the GPT tests' pair
    (a module that needs another pair defines its own ``pair``)."""
    import torch
    from specsim.gpt import api
    torch.set_num_threads(1)
    return api.load_pair("distilled", device="cpu")


@pytest.fixture
def stopped_after_first_checkpoint(monkeypatch):
    """A context manager: inside it a training run saves its first checkpoint and then the machine goes
    away (KeyboardInterrupt, expected); after it, saving works again."""
    from specsim.gpt.train import checkpoint as train_checkpoint
    save = train_checkpoint.save

    def save_then_stop(*args, **kwargs):
        save(*args, **kwargs)
        raise KeyboardInterrupt

    @contextlib.contextmanager
    def stopping():
        monkeypatch.setattr(train_checkpoint, "save", save_then_stop)
        try:
            with pytest.raises(KeyboardInterrupt):
                yield
        finally:
            monkeypatch.setattr(train_checkpoint, "save", save)
    return stopping


@pytest.fixture
def registered():
    """``registered(MyScheme)`` registers a scheme family for one test (the one line a new family needs in
    specsim) and removes it after, so other tests see the grammar as shipped."""
    from specsim.schemes import grammar, register

    added = []

    def add(cls):
        register(cls)
        added.append(cls.kind)
        return cls

    yield add
    for kind in added:
        del grammar.KINDS[kind]
