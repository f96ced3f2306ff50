"""The one stepper part (app/parts/stepper.py) on the Round stepper: a chain, a block and a tree played from the
same round record (``RoundTrace.events()``), ``?scheme=`` and its shorthand, the same rounds on both pages."""
from __future__ import annotations

import json
import re

import pytest
from streamlit.testing.v1 import AppTest

from specsim import sampling, schemes, toy
from specsim.schemes import Block, Chain, Tree
from specsim.views import tree_view

from tests.apptest import open_page  # noqa: E402 (puts app/ on sys.path)
from parts import event_text  # noqa: E402

SEED = toy.load_model("seed")


def open_stepper(params=None, page="views/stepper.py") -> AppTest:
    return open_page(page, params)


def texts(at) -> str:
    return "\n".join(m.value for m in at.markdown)


def player(at, key="stepper"):
    return at.session_state[key]["player"]


@pytest.mark.parametrize("scheme", [Chain(2), Block(3), Tree((2, 1)), Tree((2, 2), "distinct"),
                                    schemes.parse("chain:max=3,stop=0.6"), schemes.parse("tree:dynamic,budget=3,depth=2,topk=2")])
def test_every_scheme_steps_through_the_library_rounds(scheme):
    """Next walks the rounds ``sampling.generate`` gives for the seed, every event described once."""
    at = open_stepper({"scheme": scheme.name, "seed": "5"})
    gen = sampling.generate(SEED, ("a",), scheme, 12, seed=5)
    want = [(j, e, ev) for j, r in enumerate(gen.rounds[:2]) for e, ev in enumerate(r.events())]
    for j, e, ev in want:
        pl = player(at)
        assert (pl.round, pl.event) == (j, e) and pl.trace.to_dict() == gen.rounds[j].to_dict()
        names = tree_view.sibling_paths(pl.trace.parents)
        assert event_text.describe_event(ev, scheme, names) in texts(at)
        at.button(key="stepper-next").click().run()
        assert not at.exception and not at.error, [x.value for x in at.error]
    assert "tokens for" in "\n".join(c.value for c in at.caption)  # the tokens-per-pass chart is drawn


def test_the_stream_shows_every_emitted_token_in_order():
    """After three finished tree rounds the token stream's kept chips (accepted, replacement, bonus) are the
    emitted tokens, in order; a tree's rejected nodes show struck through, its untested ones not at all."""
    at = open_stepper({"scheme": "tree:2,1", "seed": "3"})
    for _ in range(3):
        at.button(key="stepper-round").click().run()
    gen = sampling.generate(SEED, ("a",), Tree((2, 1)), 20, seed=3)
    stream = next(m.value for m in at.markdown if m.value.startswith('<div style="line-height'))
    kept = re.findall(r'title="(accepted draft|replacement \(from the residual\)|bonus \(from p\))"[^>]*>([^<]*)<', stream)
    assert [token for _, token in kept] == [t for r in gen.rounds[:3] for t in r.emitted]
    rejected = stream.count('title="rejected draft"')
    assert rejected == sum(e["kind"] == "reject" for r in gen.rounds[:3] for e in r.events())


def test_a_tree_draws_its_tree_and_a_block_its_event_figure():
    at = open_stepper({"scheme": "tree:2,1"})
    names = [t.get("name") for c in at.get("plotly_chart") for t in json.loads(c.proto.spec)["data"]]
    assert "not reached" in names  # the tree figure
    at = open_stepper({"scheme": "block:2"})
    metas = [json.loads(c.proto.spec)["layout"].get("meta") for c in at.get("plotly_chart")]
    assert "draft" in metas


@pytest.mark.parametrize("params, want", [
    ({"gamma": "2"}, Chain(2)), ({"gamma": "2", "verify": "block"}, Block(2)),
    ({"tree": "3,1", "drafts": "distinct"}, Tree((3, 1), "distinct")), ({"scheme": "block:4"}, Block(4)),
    ({"scheme": "chain:2", "gamma": "4"}, Chain(2)),  # ?scheme= wins over the shorthand
])
def test_scheme_parameter_and_its_shorthand(params, want):
    at = open_stepper(params)
    assert player(at).trace.scheme == want and not at.error
    assert at.radio(key="stepper-kind").value == want.kind


@pytest.mark.parametrize("value, words", [("chain:99", "from 1 to"), ("tree:0", ">= 1"), ("walk:3", "write chain:G"),
                                          ("chain:\uff13", "not an ASCII digit"), ("x" * 5000, "the limit is 60")])
def test_a_bad_scheme_is_one_error_line_and_the_page_goes_on(value, words):
    at = open_stepper({"scheme": value})
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and words in errors[0] and "\n" not in errors[0] and len(errors[0]) < 300, errors
    assert player(at).trace.scheme == Chain(3)  # the default


def test_both_pages_play_the_same_rounds():
    """The Trees page and the Round stepper use one part: the same tree and seed give the same round."""
    a = open_stepper({"scheme": "tree:2,2:distinct", "seed": "9"})
    b = open_stepper({"scheme": "tree:2,2:distinct", "seed": "9"}, page="views/trees.py")
    assert player(a).trace.to_dict() == player(b, "trees").trace.to_dict()


def test_reset_while_playing_stops_at_the_first_event():
    at = open_stepper({"scheme": "tree:2,1"})
    at.button(key="stepper-round").click().run()
    at.button(key="stepper-play").click().run()
    assert at.session_state["stepper"]["playing"]
    at.button(key="stepper-reset").click().run()
    assert not at.exception and not at.session_state["stepper"]["playing"]
    assert (player(at).round, player(at).event) == (0, 0)
    assert any(b.label == "Play" for b in at.button)


# -- Play shows every event and stops when the page is left ------------------------------------

def test_play_moves_one_event_per_tick_and_never_skips_one(monkeypatch):
    """A slow rerun (5 s late) shows the event longer, it does not jump ahead; ticks that come too early
    (piled up behind a slow run) do not advance at all."""
    from parts import stepper
    from specsim.views import replay
    s = {"player": replay.Player(SEED, ("a",), Chain(3), 0), "clock": None}
    shown = []
    for now in (0.0, 0.31, 0.62, 5.6, 5.65, 5.7, 5.95):
        monkeypatch.setattr(stepper.time, "monotonic", lambda now=now: now)
        stepper._keep_time(s, 0.3)
        shown.append(s["player"].step_number)
    assert shown == [1, 2, 3, 4, 4, 4, 5]


def test_a_stale_slider_value_sent_while_playing_does_not_step_play_back():
    """The browser's clock tick can carry the slider's value from before the newest event reached it (seen in
    Chromium as steps 28, 29, 28, 29): while playing, a change back to an event just shown is ignored; paused,
    the slider moves the player as always."""
    at = open_stepper({"scheme": "chain:3"})
    for _ in range(2):
        at.button(key="stepper-next").click().run()
    at.button(key="stepper-play").click().run()
    assert at.session_state["stepper"]["playing"] and (player(at).round, player(at).event) == (0, 2)
    at.slider(key="stepper-slider-0").set_value(2).run()  # the event shown before this one: a stale echo
    assert not at.exception and player(at).event == 2
    assert not at.session_state["stepper"]["playing"]  # a full run of the page stops Play (see the next test)
    at.slider(key="stepper-slider-0").set_value(1).run()  # paused: the slider moves the player
    assert player(at).event == 0


def test_play_stops_when_the_page_is_left_and_resumes_nowhere():
    at = open_stepper({"scheme": "chain:3"})
    at.button(key="stepper-next").click().run()
    at.button(key="stepper-play").click().run()
    assert at.session_state["stepper"]["playing"]
    where = player(at).step_number
    at.switch_page("views/speedup.py").run()
    at.switch_page("views/stepper.py").run()
    assert not at.exception and not at.session_state["stepper"]["playing"]
    assert player(at).step_number == where and any(b.label == "Play" for b in at.button)
