"""Verifying against the mixture v = w p + (1 - w) q (specsim.labs.mixture): exact values compared exactly.

The rule runs through the exact engine like every lab rule; its one-position closed forms are checked
against the engine, its ends against the exact rule (w = 1) and always-accept (w = 0), its place under
the bound alpha + TV against every lab rule, and its decisions against transformers' own
``_speculative_sampling`` with ``assistant_ensemble_weight`` (uniforms planted just below and above the
rule's acceptance probability, so the comparison is deterministic).
"""
from __future__ import annotations

from fractions import Fraction as F

import pytest

from specsim import exact
from specsim.labs import mixture, pitfalls
from specsim.labs.judge import joints, judge
from specsim.rule import CORRECT, alpha, residual, total_variation
from specsim.schemes import Chain
from specsim.toy import load_model, random_model

SEED = load_model("seed")
MODELS = [SEED, load_model("order2"), random_model(4, 1, seed=3), random_model(3, 1, seed=11)]


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.name)
def test_at_w_one_the_rule_is_exact_and_accepts_alpha(model):
    for c in model.contexts():
        p, q = model.p(c), model.q(c)
        assert mixture.acceptance(p, q, 1) == alpha(p, q)
        assert mixture.distance(p, q, 1) == 0
        assert mixture.one_position(mixture.MixtureTarget(1), model, c) == (alpha(p, q), 0)
    assert all(ch.exact for ch in exact.check_exactness(model, 2, [Chain(1), Chain(2)], rule=mixture.MixtureTarget(1)))


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.name)
def test_at_w_zero_every_draft_is_kept_and_the_token_follows_q(model):
    for c in model.contexts():
        p, q = model.p(c), model.q(c)
        assert mixture.acceptance(p, q, 0) == 1
        assert mixture.distance(p, q, 0) == total_variation(p, q)
        kept, tv = mixture.one_position(mixture.MixtureTarget(0), model, c)
        assert (kept, tv) == (1, total_variation(p, q))


def test_w_zero_is_always_accept_over_whole_rounds():
    always = pitfalls.PITFALLS["always-accept"].rule
    for c in SEED.contexts():
        assert (exact.speculative_joint(SEED, c, Chain(3), 3, mixture.MixtureTarget(0))
                == exact.speculative_joint(SEED, c, Chain(3), 3, always))


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.name)
def test_one_position_closed_forms_equal_the_engine(model):
    """Kept with 1 - w (1 - alpha), emitted TV (1 - w)(1 - alpha): the engine's P(K = 1) and first-token TV."""
    for c in model.contexts():
        a = model.alpha(c)
        for w in (F(1, 20), F(1, 3), F(1, 2), F(19, 20)):
            assert mixture.one_position(mixture.MixtureTarget(w), model, c) == (1 - w * (1 - a), (1 - w) * (1 - a))


def test_the_first_token_follows_v_exactly_and_is_biased_for_w_below_one():
    for c in SEED.contexts():
        p, q = SEED.p(c), SEED.q(c)
        for w in (F(1, 4), F(3, 4)):
            v = mixture.mixture(p, q, w)
            for gamma in (1, 3):
                produced, _ = joints(SEED, c, Chain(gamma), mixture.MixtureTarget(w), 1)
                assert [produced.get((t,), 0) for t in SEED.vocab] == v
            assert residual(v, q) == residual(p, q)
            assert judge(SEED, c, Chain(2), mixture.MixtureTarget(w), 2).total_variation > 0


@pytest.mark.parametrize("model", MODELS[:3], ids=lambda m: m.name)
def test_no_lab_rule_beats_the_bound_and_the_mixture_reaches_it(model):
    for c in model.contexts():
        p, q = model.p(c), model.q(c)
        for name, (kept, tv) in mixture.lab_one_position(model, c).items():
            assert kept <= mixture.best_acceptance(p, q, tv), (name, c)
        for w in mixture.WEIGHTS:
            assert mixture.acceptance(p, q, w) == mixture.best_acceptance(p, q, mixture.distance(p, q, w))


def test_lab_rules_leave_out_transformed_pairs_and_other_draft_rows():
    names = mixture.lab_rules(SEED)
    assert "correct" in names and "temperature-on-target-only" not in names
    assert "greedy-draft-with-sampled-q" in names
    assert "greedy-draft-with-sampled-q" not in mixture.lab_one_position(SEED, ("a",))


def test_curve_ends_and_order():
    points = mixture.curve(SEED, ("a",), Chain(3), 2)
    assert [pt.weight for pt in points] == list(mixture.WEIGHTS)
    first, last = points[0], points[-1]
    assert (last.total_variation, last.acceptance) == (0, SEED.alpha(("a",)))
    assert last.tokens_per_round == exact.round_distribution(SEED, ("a",), Chain(3), CORRECT).expected_tokens
    assert (first.acceptance, first.tokens_per_round) == (1, 4)
    assert first.total_variation == pitfalls.evaluate(pitfalls.PITFALLS["always-accept"], SEED, ("a",), Chain(3),
                                                      2).total_variation
    # on this model: more weight on p, slower and closer, point by point
    assert all(a.tokens_per_round > b.tokens_per_round and a.total_variation > b.total_variation
               for a, b in zip(points, points[1:]))
    assert all(pt.iid_tokens_per_round >= pt.tokens_per_round for pt in points)


def test_every_lab_rule_is_dominated_by_some_weight_on_the_seed_model():
    points = mixture.curve(SEED, ("a",), Chain(3), 2)
    for r in pitfalls.run_lab(SEED, ("a",), Chain(3), 2, list(mixture.lab_rules(SEED))):
        assert any(pt.total_variation <= r.total_variation and pt.tokens_per_round >= r.expected_tokens
                   for pt in points), r.name


def test_distance_over_n_tokens_never_falls():
    tvs = [judge(SEED, ("a",), Chain(3), mixture.MixtureTarget(F(1, 2)), n).total_variation for n in range(1, 6)]
    assert tvs[0] == F(1, 20) == mixture.distance(SEED.p(("a",)), SEED.q(("a",)), F(1, 2))
    assert all(a <= b for a, b in zip(tvs, tvs[1:])) and tvs[-1] > tvs[0]


@pytest.mark.parametrize("bad", [-1, F(3, 2), "x", "1/0", True, None])
def test_bad_weights_are_one_line_errors(bad):
    with pytest.raises(ValueError) as err:
        mixture.MixtureTarget(bad)
    assert "\n" not in str(err.value) and "w" in str(err.value)


def test_the_weight_parses_exactly():
    assert mixture.MixtureTarget("1/3").weight == F(1, 3)
    assert mixture.MixtureTarget(0.25).weight == F(1, 4)
    assert mixture.MixtureTarget(1).name == "mixture w = 1"


def test_transformers_ensemble_weight_decides_as_the_rule(monkeypatch):
    """transformers' sampled path with ``assistant_ensemble_weight`` = w, one draft: a uniform just below the
    rule's acceptance keeps the draft, one just above rejects it, the correction is drawn from p's residual,
    and after a full acceptance from p (float32 rows, so a margin of 1e-4 around each threshold)."""
    transformers = pytest.importorskip("transformers")
    torch = pytest.importorskip("torch")
    utils = pytest.importorskip("transformers.generation.utils")
    import inspect

    fn = getattr(utils, "_speculative_sampling", None)
    if fn is None or "assistant_ensemble_weight" not in inspect.signature(fn).parameters:
        pytest.skip(f"transformers {transformers.__version__} has no assistant_ensemble_weight")

    def logits(rows):
        return torch.tensor([[[float(x) for x in row] for row in rows]], dtype=torch.float64).log().float()

    seen = {}

    def multinomial(probs, num_samples=1, **kw):
        seen["row"] = probs.detach().double().flatten().tolist()
        return torch.zeros((probs.shape[0], num_samples), dtype=torch.long)

    monkeypatch.setattr(torch, "multinomial", multinomial)
    checked = 0
    for c in SEED.contexts():
        p, q = SEED.p(c), SEED.q(c)
        for w in (F(1, 4), F(1, 2), F(3, 4)):
            rule = mixture.MixtureTarget(w)
            for x, token in enumerate(SEED.vocab):
                a = float(rule.accept(p, q, x))
                args = (torch.tensor([[0, x]]), logits([q]), 1, logits([p, SEED.p(c + (token,))]))
                for u, kept in ((a - 1e-4, True), (a + 1e-4, False)):
                    if u >= 1:
                        continue
                    monkeypatch.setattr(torch, "rand_like", lambda t, u=u: torch.full_like(t, u))
                    _, n = fn(*args, assistant_ensemble_weight=float(w))
                    assert int(n) == int(kept), (c, w, token, u)
                    want = SEED.p(c + (token,)) if kept else rule.replacement(p, q)
                    assert seen["row"] == pytest.approx([float(v) for v in want], abs=1e-6)
                    checked += 1
    assert checked > 20
