"""The Tiny GPT page's statistics section: which counts it passes on, and its per-position table."""
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "app"))
from sections import gpt_stats_section  # noqa: E402


def generation(rounds):
    """A stand-in for specsim.gpt.decode.Generation: (accepted, judged) per round."""
    rs = [SimpleNamespace(accepted=k, accepted_flags=[i < k for i in range(c)]) for k, c in rounds]
    return SimpleNamespace(rounds=rs, accepted_per_round=[r.accepted for r in rs])


def test_check_uses_the_drafts_actually_judged():
    gen = generation([(3, 3), (0, 1), (1, 2), (0, 0), (2, 3)])  # one round drafted nothing (prompt lookup)
    m = gpt_stats_section.check(gen, 3)
    assert m["alpha"].value == pytest.approx(6 / 9)
    rows = gpt_stats_section.position_rows(m)
    assert [(r["draft position"], r["rounds that judged it"], r["accepted"]) for r in rows] == [
        (1, 4, 3), (2, 3, 2), (3, 2, 1)]


def test_check_needs_two_rounds_and_a_judged_draft():
    assert gpt_stats_section.check(generation([(1, 2)]), 2) is None
    assert gpt_stats_section.check(generation([(0, 0), (0, 0)]), 2) is None
