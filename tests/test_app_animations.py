"""The animated figures on the toy pages (AppTest): each page carries its animations with as many
frames as the library's frames for the page's settings, computed here independently of the page."""
from fractions import Fraction

from specsim.views import frames

from specsim.views import replay
from specsim.toy import load_model

from .test_app import charts, open_page


def animated(at) -> list:
    """Frame names of each chart that has frames, in page order."""
    return [[f["name"] for f in c["frames"]] for c in charts(at) if c.get("frames")]


def test_stepper_plays_every_event_of_the_first_round_and_more_rounds_on_request():
    at = open_page("views/stepper.py", timeout=60)
    m = load_model("seed")
    events = replay.Player(m, m.contexts()[0], 3, 0).events_in(0)  # the page's defaults: seed, γ 3, seed 0
    [names] = animated(at)
    assert len(names) == events
    at.number_input(key="anim-round-rounds").set_value(3).run()
    pl = replay.Player(m, m.contexts()[0], 3, 0)
    pl.round = 2
    pl._extend()
    [names] = animated(at)
    assert len(names) == pl.offsets[3]  # every event of the first three rounds


def test_residual_explorer_morphs_q_into_p_and_plays_the_visual_proof():
    at = open_page("views/residual.py", timeout=60)
    morph, proof = animated(at)
    assert len(morph) == 21  # t = 0, 1/20, ..., 1
    assert len(proof) == len(frames.snapshot_counts(2000))
    at.number_input(key="anim-residual-seed").set_value(7).run()
    assert not at.exception and len(animated(at)) == 2


def test_exactness_fills_the_k_histogram_toward_the_exact_distribution():
    at = open_page("views/exactness.py", timeout=60)
    [acceptance] = animated(at)
    assert len(acceptance) == len(frames.snapshot_counts(1000))


def test_speedup_sweeps_alpha_and_cost():
    at = open_page("views/speedup.py", timeout=120)
    alpha_sweep, cost_sweep = animated(at)
    assert len(alpha_sweep) == len(frames.ALPHAS) and len(cost_sweep) == len(frames.COSTS)
    assert frames.ALPHAS[-1] == Fraction(99, 100)
