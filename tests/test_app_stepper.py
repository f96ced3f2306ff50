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

class FakeClock:
    """time.monotonic and time.sleep for play_clock: sleeping moves the clock; ``late`` adds to each run's start."""
    def __init__(self):
        self.now = 100.0

    def monotonic(self):
        return self.now

    def sleep(self, dt):
        assert 0 < dt <= 0.05 + 1e-12  # the hold sleeps in short slices, looking for clicks between them
        self.now += dt


class Rerun(Exception):
    pass


def play_runs(monkeypatch, delays, pending_at=None, speed=0.3):
    """Play's fragment runs on a fake clock: each run starts ``delays[k]`` seconds after the last one asked
    for it; returns [(start, step shown)] and the state. ``pending_at``: the run during whose hold a click
    waits."""
    from parts import play_clock
    from specsim.views import replay
    clock = FakeClock()
    monkeypatch.setattr(play_clock.time, "monotonic", clock.monotonic)
    monkeypatch.setattr(play_clock.time, "sleep", clock.sleep)
    monkeypatch.setattr(play_clock.st, "rerun", lambda scope: (_ for _ in ()).throw(Rerun(scope)))
    s = {"player": replay.Player(SEED, ("a",), Chain(3), 0), "clock": None}
    shown = []
    for k, delay in enumerate(delays):
        clock.now += delay
        play_clock.start_event(s, speed, clock.now)
        shown.append((clock.now, s["player"].step_number))
        monkeypatch.setattr(play_clock, "pending", lambda k=k: k == pending_at and clock.now >= shown[-1][0] + 0.1)
        try:
            play_clock.hold_then_next(s)
        except Rerun as e:
            assert e.args == ("fragment",)
        else:
            assert k == pending_at  # only a waiting click ends a hold without the next run
    return shown, s


def test_play_holds_every_event_for_its_time_and_never_skips_one(monkeypatch):
    """Runs that start a little late (the rerun's own cost) keep the pace: event k is shown at
    t0 + 0.3 k; one that starts far too late (a slow page) starts its time anew instead of cutting the next
    event short; every event is shown, one step at a time."""
    shown, _ = play_runs(monkeypatch, [0, 0.004, 0.02, 0.5, 0.01, 0.0])
    starts, steps = [t for t, _ in shown], [n for _, n in shown]
    assert steps == [1, 2, 3, 4, 5, 6]
    # late by 4 and 20 ms: the next event is still due on the grid 100 + 0.3 k (no drift); 0.5 s late: the
    # event's time starts when it is shown (101.4), and the grid goes on from there (101.7, 102.0)
    assert [round(t, 9) for t in starts] == [100, 100.304, 100.62, 101.4, 101.71, 102.0]


def test_a_click_during_a_hold_ends_it_at_once_without_a_step(monkeypatch):
    """A click inside the fragment waits behind the running hold: the hold ends within one poll and asks for
    no step, so the click's own run (Pause, Next step) acts on the event the user saw."""
    shown, s = play_runs(monkeypatch, [0, 0, 0], pending_at=2)
    assert [n for _, n in shown] == [1, 2, 3] and not s.get("advance")
    assert s["player"].step_number == 3


def test_play_locks_the_slider_and_a_stale_value_never_steps_it_back(monkeypatch):
    """While playing, the slider is shown disabled, so a value for it that comes with a click (Pause) is the
    browser's stale copy (seen in Chromium: Pause stepped back an event) and is ignored, whichever callback
    runs first; paused, the slider moves the player as always."""
    at = open_stepper({"scheme": "chain:3"})
    for _ in range(2):
        at.button(key="stepper-next").click().run()
    at.button(key="stepper-play").click().run()
    assert at.session_state["stepper"]["playing"] and (player(at).round, player(at).event) == (0, 2)
    assert at.slider(key="stepper-slider-0").disabled
    at.button(key="stepper-play").click().run()  # Pause
    assert not at.slider(key="stepper-slider-0").disabled
    at.slider(key="stepper-slider-0").set_value(1).run()  # paused: the slider moves the player
    assert player(at).event == 0

    from parts import stepper
    from specsim.views import replay
    for locked, want in ((True, 2), (False, 1)):  # the callbacks as Pause + a stale slider value call them
        s = {"player": replay.Player(SEED, ("a",), Chain(3), 0), "playing": False, "locked": locked}
        s["player"].event = 2
        monkeypatch.setattr(stepper.st, "session_state", {"k": s, "k-slider-0": 2})
        stepper._slide("k", "k-slider-0")
        assert s["player"].event == want


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


def test_play_builds_the_next_events_figure_while_it_holds_this_one(monkeypatch):
    """Building an event's figure took 20-30 ms between the caption and the chart: the hold builds the next
    one (across a round's end too), so each run finds its figure built, and it is the figure of that event."""
    from parts import event_view, play_clock
    from specsim.views import replay
    clock, real, built = FakeClock(), event_view.round_figure, []
    monkeypatch.setattr(play_clock.time, "monotonic", clock.monotonic)
    monkeypatch.setattr(play_clock.time, "sleep", clock.sleep)
    monkeypatch.setattr(play_clock.st, "rerun", lambda scope: (_ for _ in ()).throw(Rerun(scope)))
    monkeypatch.setattr(play_clock, "pending", lambda: False)
    monkeypatch.setattr(event_view, "round_figure", lambda trace, e, title: built.append(e) or real(trace, e, title))
    s = {"player": replay.Player(SEED, ("a",), Chain(2), 0), "clock": None}
    pl, rounds = s["player"], set()
    for k in range(12):
        play_clock.start_event(s, 0.3, clock.now)
        before = len(built)
        fig = event_view.figure(s, pl.round, pl.trace, pl.event, "t")
        assert len(built) == before + (k == 0)  # only the first event is built by its own run
        assert fig.to_json() == real(pl.trace, pl.event, f"t, round {pl.round + 1}").to_json()
        rounds.add(pl.round)
        with pytest.raises(Rerun):
            play_clock.hold_then_next(s, meanwhile=lambda: event_view.figure(s, *pl.peek(), "t"))
    assert len(rounds) >= 2 and len(s["figures"]) <= 3
    fresh = replay.Player(SEED, ("a",), Chain(2), 0)  # peeking ahead drew the same rounds as stepping does
    fresh.advance_to(pl.step_number)
    assert [t.emitted for t in fresh.rounds[:pl.round + 1]] == [t.emitted for t in pl.rounds[:pl.round + 1]]


def test_the_tokens_per_pass_chart_is_built_again_only_when_a_round_ends():
    at = open_stepper({"scheme": "chain:3"})
    at.button(key="stepper-round").click().run()
    first = at.session_state["stepper"]["tpp"]
    at.button(key="stepper-next").click().run()  # into the next round: nothing more has finished
    assert at.session_state["stepper"]["tpp"] is first
    at.button(key="stepper-round").click().run()
    again = at.session_state["stepper"]["tpp"]
    assert again is not first and len(again[0][0]) == len(first[0][0]) + 1
