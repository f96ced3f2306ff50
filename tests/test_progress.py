"""Long Monte-Carlo runs report progress per block of rounds, and progress never changes a result."""
from specsim import montecarlo
from specsim.cli.common import progress_bar
from specsim.labs.pitfalls import PITFALLS
from specsim.schemes import Block, Chain, Tree
from specsim.toy import load_model


def test_progress_counts_every_round_once_and_changes_nothing(monkeypatch):
    monkeypatch.setattr(montecarlo, "CHUNK", 1000)  # several blocks in a small run
    m, seen = load_model("seed"), []
    for run in (lambda p: montecarlo.sample_rounds(m, ("a",), Chain(3), 4500, 2, progress=p),
                lambda p: montecarlo.sample_rounds(m, ("a",), Block(3), 4500, 2, progress=p),
                lambda p: montecarlo.sample_rounds(m, ("a",), Tree((2, 1)), 2500, 2, progress=p),
                lambda p: montecarlo.sample_rounds_loop(m, ("a",), Chain(2), 2500, 2, PITFALLS["always-accept"].rule, p)):
        seen.clear()
        with_bar = run(seen.append)
        assert sum(seen) == with_bar.rounds and max(seen) <= 1000 and len(seen) > 1
        assert run(None).outcomes == with_bar.outcomes


def test_no_bar_when_stderr_is_not_a_terminal_or_the_run_is_short():
    with progress_bar(10**8, "rounds") as bar:  # pytest captures stderr: not a terminal
        assert bar is None
    with progress_bar(10, "rounds", threshold=100) as bar:
        assert bar is None
