"""Lossy cousins of tree verification and of the chain rule: biased where they should be, exact where not."""
from fractions import Fraction as F

import pytest

from specsim import exact

from specsim.labs import pitfalls
from specsim.labs.pitfalls_tree import typical_threshold
from specsim.toy import ToyModel, load_model
from specsim.transforms import greedy
from specsim.schemes.tree import Tree

SEED = load_model("seed")
TREE = pitfalls.TREE_PITFALLS


def ev(pit, scheme, model=SEED, ctx=("a",), n=2):
    return pitfalls.evaluate(pit, model, ctx, scheme, n)


def _equal(model):
    """The model with q = p everywhere: every correct or lossy test accepts every draft."""
    return ToyModel(model.vocab, model.order, model.target, dict(model.target), model.name + "-eq")


@pytest.mark.parametrize("shape", [(2,), (2, 2), (2, 2, 1)])
@pytest.mark.parametrize("drafts", ["iid", "distinct"])
def test_no_residual_update_is_biased_on_seed(shape, drafts):
    assert ev(TREE["tree-no-residual-update"], Tree(shape, drafts)).total_variation > 0


def test_no_residual_update_on_a_chain_is_resampling_from_the_target():
    mine = ev(TREE["tree-no-residual-update"], Tree((1, 1, 1)))
    theirs = ev(pitfalls.PITFALLS["resample-from-target"], 3)
    assert mine.total_variation == theirs.total_variation == F(48, 625)
    assert mine.expected_tokens == theirs.expected_tokens


def test_top_k_tree_is_biased_and_needs_distinct_drafts():
    r = ev(TREE["top-k-tree-as-if-sampled"], Tree((2, 2), "distinct"))
    assert r.total_variation > 0 and not r.exact
    with pytest.raises(ValueError, match="distinct"):
        ev(TREE["top-k-tree-as-if-sampled"], Tree((2,), "iid"))


def test_no_residual_update_is_exact_when_p_equals_q():
    model = _equal(load_model("order2"))
    for ctx in model.contexts():
        for drafts in ("iid", "distinct"):
            r = pitfalls.evaluate(TREE["tree-no-residual-update"], model, ctx, Tree((2, 1), drafts), 2)
            assert r.total_variation == 0


def test_top_k_is_exact_only_when_the_drafter_is_deterministic():
    base = load_model("order2")
    onehot = ToyModel(base.vocab, base.order, base.target, {c: greedy(r) for c, r in base.draft.items()},
                      "onehot-q")
    for ctx in onehot.contexts():  # the top token of a one-hot q is a sample from q
        assert pitfalls.evaluate(TREE["top-k-tree-as-if-sampled"], onehot, ctx, Tree((2, 1), "distinct"),
                                 2).total_variation == 0
    # with p == q the top token is always kept: the output is the argmax, not p
    assert ev(TREE["top-k-tree-as-if-sampled"], Tree((2,), "distinct"), _equal(SEED)).total_variation > 0


def test_accept_if_ratio_at_least_u_costs_nothing_in_exact_arithmetic():
    for preset in ("seed", "zeros", "order2"):
        model = load_model(preset)
        for ctx in model.contexts():
            r = pitfalls.evaluate(pitfalls.PITFALLS["accept-if-ratio-at-least-u"], model, ctx, 3, 2)
            assert r.total_variation == 0
            assert r.expected_tokens == exact.round_distribution(model, ctx, 3).expected_tokens


def test_typical_acceptance_is_biased_and_greedy_on_rejection():
    r = ev(pitfalls.PITFALLS["typical-acceptance"], 3)
    assert r.total_variation > 0
    assert r.expected_tokens >= exact.round_distribution(SEED, ("a",), 3).expected_tokens
    zeros = load_model("zeros")
    tvs = [pitfalls.evaluate(pitfalls.PITFALLS["typical-acceptance"], zeros, c, 1, 1).total_variation
           for c in zeros.contexts()]
    assert any(t > 0 for t in tvs)


def test_typical_threshold_defaults():
    assert typical_threshold([F(1)]) == 0.09  # H = 0: min(0.09, 0.3)
    flat = typical_threshold([F(1, 4)] * 4)  # 0.3 / 4
    assert abs(flat - 0.075) < 1e-12


def test_lab_numbers_on_seed_are_exact_fractions():
    for pit in TREE.values():
        r = ev(pit, Tree((2, 2, 1), "distinct"))
        assert isinstance(r.total_variation, F) and isinstance(r.expected_tokens, F)
