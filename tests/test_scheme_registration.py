"""A new scheme is a class in ``specsim.schemes`` and one registration line: nothing outside asks its kind.

The toy scheme below is a chain under another keyword (``twin:G``) that names itself in full
("scheme twin:2 (2 drafted tokens)") instead of by its γ: the grammar reads it, the exact engine
proves it, the work bound prices it, and the CLI runs it, with no other line of specsim changed.
"""
from fractions import Fraction as F

import pytest

from specsim import bounds, exact
from specsim.schemes import Chain, parse
from specsim.toy import load_model
from specsim.views import tree_view

SEED = load_model("seed")


class Twin(Chain):
    """chain:G's round under the keyword twin, shown by its name rather than by γ alone."""

    kind = "twin"  # a subclass of Chain answers chain_gamma None: it is told by its name, not by γ alone


@pytest.fixture
def twin(registered):
    return registered(Twin)  # register(Twin): the one line a new scheme needs


def test_the_grammar_reads_a_registered_scheme_and_writes_it_back(twin):
    s = parse("twin:2")
    assert type(s) is Twin and s.name == "twin:2" and parse(s.name) == s
    assert s.label() == "scheme twin:2 (2 drafted tokens)" and s.json_keys() == {}
    with pytest.raises(ValueError, match="unknown kind 'twin2'"):
        parse("twin2:2")


def test_an_unregistered_keyword_is_refused_in_one_line():
    with pytest.raises(ValueError, match="unknown kind 'twin'") as e:
        parse("twin:2")
    assert "\n" not in str(e.value)


def test_the_exact_engine_proves_the_registered_scheme(twin):
    s = parse("twin:3")
    r = exact.round_distribution(SEED, ("a",), s)
    assert r.outcomes == exact.round_distribution(SEED, ("a",), Chain(3)).outcomes
    assert r.expected_tokens == F(1659, 500)  # DESIGN.md's reference round
    checks = exact.check_exactness(SEED, 2, [s], SEED.contexts())
    assert all(c.exact for c in checks) and {c.scheme.name for c in checks} == {"twin:3"}
    assert bounds.exact_work(SEED, s, rounds=1) == bounds.exact_work(SEED, Chain(3), rounds=1)
    assert tree_view.node_by_node(s) is False


def test_the_cli_runs_the_registered_scheme(twin, cli, cli_json):
    code, out, err = cli("prove", "seed", "--tokens", "2", "--scheme", "twin:2")
    assert code == 0, err
    assert "scheme = twin:2" in out and "DIFFERS" not in out
    d = cli_json("round", "seed", "--context", "a", "--scheme", "twin:3")
    assert d["scheme"] == "twin:3" and d["gamma"] == 3 and d["expected_tokens"] == "1659/500"
    assert "alpha" in d  # a fixed γ: set beside the i.i.d. formula, as a chain is
    code, _, err = cli("round", "seed", "--context", "a", "--scheme", "twin:99")
    assert code == 2 and err.count("\n") == 1 and "twin:G with G from 1 to 64" in err


def test_the_round_stepper_page_offers_and_plays_a_registered_scheme(twin):
    """The page that plays any scheme lists every registered family: pick twin, then step a round."""
    from tests.apptest import open_page

    at = open_page("views/stepper.py")
    kinds = at.radio(key="stepper-kind")
    assert "twin" in kinds.options
    kinds.set_value("twin").run()
    assert not at.exception, [e.value for e in at.exception]
    at.button(key="stepper-next").click().run()
    assert not at.exception, [e.value for e in at.exception]
    player = at.session_state["stepper"]["player"]
    assert player.scheme.name == "twin:3" and player.step_number == 2  # it plays twin rounds, one step on
    assert any("**draft 2 of 3**" in m.value for m in at.markdown)  # its events, told in words
