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



def test_a_second_visitor_draws_the_figures_the_first_one_built(monkeypatch):
    """Building a figure validates every trace of every frame, so the built animations and the Speedup
    page's maps are shared by every session: a second visit builds nothing and is shown the same figures,
    and a new α builds only the figures that depend on α. (Settings no other test uses: fresh keys.)"""
    import parts.animations as anim
    from specsim.plots import charts as plots
    built = []

    def counting(kind, build):
        return lambda *args, **kwargs: built.append(kind) or build(*args, **kwargs)

    for kind, (frames_of, build) in list(anim.FIGURES.items()):
        monkeypatch.setitem(anim.FIGURES, kind, (frames_of, counting(kind, build)))
    monkeypatch.setattr(plots, "best_gamma_heatmaps", counting("map", plots.best_gamma_heatmaps))
    first = open_page("views/speedup.py", params={"alpha": "0.37", "c": "0.07"}, timeout=120)
    assert sorted(built) == ["cost", "map", "speedup"]
    second = open_page("views/speedup.py", params={"alpha": "0.37", "c": "0.07"}, timeout=120)
    assert sorted(built) == ["cost", "map", "speedup"]
    assert charts(first) == charts(second)
    second.slider(key="sp-alpha").set_value(0.38).run()
    assert sorted(built) == ["cost", "cost", "map", "map", "speedup"]  # the c sweep at the new α, the new mark
