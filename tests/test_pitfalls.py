"""The pitfalls lab: exact distances, checked by hand where a hand derivation is short."""
from fractions import Fraction as F

import pytest

from specsim import exact, rule

from specsim.labs import pitfalls
from specsim.toy import load_model

SEED = load_model("seed")
P_A, Q_A = SEED.p(("a",)), SEED.q(("a",))  # p = (3/5, 3/10, 1/10), q = (1/2, 2/5, 1/10)


def tv(name, gamma=1, n=1, model=SEED, ctx=("a",)):
    return pitfalls.evaluate(pitfalls.PITFALLS[name], model, ctx, gamma, n).total_variation


def test_every_named_pitfall_is_present():
    required = {"correct", "resample-from-target", "accept-if-u-below-p", "accept-if-p-at-least-q",
                "always-accept", "no-bonus-token", "temperature-on-target-only",
                "greedy-draft-with-sampled-q"}
    assert required <= set(pitfalls.PITFALLS)
    for p in pitfalls.PITFALLS.values():
        assert p.rule.name == p.name or p.rule is rule.CORRECT
        assert len(p.description) > 80
        assert p.source is None or (p.source and ".txt" not in p.source and "00" not in p.source)


@pytest.mark.parametrize("preset", ["seed", "zeros", "order2"])
@pytest.mark.parametrize("name", ["correct", "no-bonus-token", "temperature-on-target-only"])
def test_exact_rules_give_zero_from_every_context(preset, name):
    model = load_model(preset)
    for ctx in model.contexts():
        for gamma in (1, 3):
            r = pitfalls.evaluate(pitfalls.PITFALLS[name], model, ctx, gamma, 3)
            assert r.total_variation == 0 and r.exact


def test_no_bonus_costs_exactly_the_bonus_token():
    full = exact.round_distribution(SEED, ("a",), 3)
    lab = pitfalls.evaluate(pitfalls.PITFALLS["no-bonus-token"], SEED, ("a",), 3, 2)
    assert lab.expected_tokens == full.expected_tokens - full.accepted[3] == F(267, 100)


# -- one position, gamma = 1, next token: derived by hand from p and q after "a" --

def test_always_accept_one_position_is_tv_of_p_and_q():
    # the first token is the draft itself, x ~ q: distance TV(p, q) = 1 - alpha = 1/10
    assert tv("always-accept") == rule.total_variation(P_A, Q_A) == 1 - rule.alpha(P_A, Q_A) == F(1, 10)
    # two tokens: x ~ q, then the bonus from p(. | x); the second factor is shared, so still 1/10
    assert tv("always-accept", gamma=1, n=2) == F(1, 10)


def test_accept_if_u_below_p_one_position():
    # kept with prob q(x) p(x) = (3/10, 3/25, 1/100), total 43/100; the rejection
    # mass 57/100 goes to the residual, all on "a": (87/100, 12/100, 1/100)
    out = (F(87, 100), F(12, 100), F(1, 100))
    assert tv("accept-if-u-below-p") == sum(abs(a - b) for a, b in zip(out, P_A)) / 2 == F(27, 100)


def test_accept_if_p_at_least_q_one_position():
    # a: 3/5 >= 1/2 kept, b: 3/10 < 2/5 rejected, c: 1/10 >= 1/10 kept;
    # the rejected 2/5 goes to the residual ("a"): output (9/10, 0, 1/10)
    assert tv("accept-if-p-at-least-q") == (F(3, 10) + F(3, 10)) / 2 == F(3, 10)


def test_resample_from_target_one_position():
    # min(p, q) + (1 - alpha) p = (1/2, 3/10, 1/10) + (1/10)(3/5, 3/10, 1/10)
    out = (F(56, 100), F(33, 100), F(11, 100))
    assert tv("resample-from-target") == sum(abs(a - b) for a, b in zip(out, P_A)) / 2 == F(1, 25)


def test_accept_if_p_above_q_one_position():
    # strict test: a (3/5 > 1/2) kept; b (3/10 < 2/5) and c (1/10 = 1/10) rejected;
    # the rejected 1/2 goes to the residual ("a"): output (1, 0, 0)
    assert tv("accept-if-p-above-q") == rule.total_variation(P_A, (1, 0, 0)) == F(2, 5)


def test_p_over_cq_envelope_is_rejection_sampling():
    # c = max p/q = 6/5: kept mass p(x)/c, the rejected 1/6 refilled from p: exactly p,
    # but only 5/6 of drafts are accepted where the real rule accepts alpha = 9/10
    r = exact.round_distribution(SEED, ("a",), 1, pitfalls.PITFALLS["p-over-cq-envelope"].rule)
    assert r.accepted == [F(1, 6), F(5, 6)]
    assert tv("p-over-cq-envelope", gamma=3, n=2) == 0
    for ctx in load_model("order2").contexts():
        assert tv("p-over-cq-envelope", gamma=3, n=3, model=load_model("order2"), ctx=ctx) == 0
    # where q misses a token p can emit, no finite bound covers it and the output is biased
    zeros = load_model("zeros")
    assert any(tv("p-over-cq-envelope", model=zeros, ctx=ctx) > 0 for ctx in zeros.contexts())


def test_p_over_cq_cost_clamps_to_always_accept_on_the_seed():
    # c = 1/5: p/(c q) = 5 p/q >= 1 for every token after "a", so every draft is kept
    assert tv("p-over-cq-cost") == tv("always-accept") == F(1, 10)


def test_extra_pass_costs_one_pass_per_rejection():
    r = pitfalls.extra_pass_cost(SEED, ("a",), 3)
    full = exact.round_distribution(SEED, ("a",), 3)
    assert r["extra_passes_per_token"] / r["passes_per_token"] == 1 + (1 - full.accepted[3]) == F(169, 125)


def test_off_by_one_scores_with_the_next_row():
    # after "a" every draft x is judged by p(x | x): a 3/5 >= 1/2, b 1/2 >= 2/5, c 1/2 >= 1/10,
    # so every draft is kept and the first token is distributed as q
    r = pitfalls.off_by_one_first_token(SEED, ("a",))
    assert tuple(r["first_token"]) == Q_A and r["total_variation"] == F(1, 10)


def test_every_pitfall_has_its_description_in_the_data_file():
    assert set(pitfalls.DESCRIPTIONS) == set(pitfalls.PITFALLS) | set(pitfalls.TREE_PITFALLS)
    assert all("{" not in p.description for p in pitfalls.PITFALLS.values())


def test_greedy_draft_with_sampled_q_one_position():
    # the drafter always proposes "a" (its argmax); min(1, (3/5)/(1/2)) = 1, so "a" always
    assert tv("greedy-draft-with-sampled-q") == rule.total_variation(P_A, (1, 0, 0)) == F(2, 5)


def test_reference_lab_numbers_after_a():
    got = {r.name: (r.total_variation, r.expected_tokens)
           for r in pitfalls.run_lab(SEED, ("a",), 3, 2)}
    assert got["correct"] == (0, F(1659, 500))
    assert got["resample-from-target"] == (F(48, 625), F(1659, 500))
    assert got["always-accept"] == (F(17, 100), 4)
    assert got["accept-if-p-at-least-q"][0] == F(53, 100)
    assert all(tv_ > 0 for name, (tv_, _) in got.items()
               if name not in ("correct", "no-bonus-token", "temperature-on-target-only",
                                   "p-over-cq-envelope", "accept-if-ratio-at-least-u"))


def test_broken_rules_can_still_be_traced():
    from specsim import sampling
    for p in pitfalls.PITFALLS.values():
        t = sampling.trace_round(p.speculative(SEED), ("b",), 3, seed=5, rule=p.rule)
        assert t.emitted


def test_unknown_rule_name():
    with pytest.raises(ValueError, match="unknown rule 'nope'"):
        pitfalls.get("nope")


# -- formulas in circulation (specsim.formulas), beside the right ones --

def test_the_circulating_speedup_formula_ignores_alpha_and_cost():
    from specsim.formulas import speedup_formula_gap
    rows = speedup_formula_gap()
    assert all(r["alpha_free"] == F(r["gamma"], 2) for r in rows)
    assert any(r["right"] < 1 < r["alpha_free"] for r in rows)


def test_accepted_over_proposed_is_below_alpha_and_accepted_over_checked_is_alpha():
    from specsim.formulas import accepted_over_proposed, expected_accepted, expected_checked
    for a in (F(1, 2), F(4, 5), F(9, 10)):
        assert accepted_over_proposed(a, 1) == a
        for g in (2, 4, 8):
            assert accepted_over_proposed(a, g) < a
            assert expected_accepted(a, g) / expected_checked(a, g) == a


def test_extra_pass_speedup_pays_one_step_per_rejection():
    from specsim.formulas import extra_pass_speedup, speedup
    assert extra_pass_speedup(F(1), 4, F(1, 20)) == speedup(F(1), 4, F(1, 20))
    assert extra_pass_speedup(F(0), 4, F(1, 20)) == 1 / (4 * F(1, 20) + 2)


# -- Medusa's typical acceptance as published: the closing token is the argmax --

def _typical_joint_by_hand(model, ctx):
    """Two tokens, gamma = 1, enumerated from the rule's definition (not from the engine).

    Draft x ~ q; kept when p(x) > min(0.09, 0.3 exp(-H(p))), else replaced by argmax p;
    a kept draft is followed by argmax p(. | x). In both cases below every token q can
    propose clears the threshold (asserted), so the joint puts q(x) on (x, argmax p(. | x)).
    """
    import math
    p, q = model.p(ctx), model.q(ctx)
    h = -sum(float(v) * math.log(float(v)) for v in p if v)
    threshold = min(0.09, 0.3 * math.exp(-h))
    out = {}
    for i, x in enumerate(model.vocab):
        if not q[i]:
            continue
        assert float(p[i]) > threshold  # in both cases below every proposable draft is kept
        row = model.p(ctx + (x,))
        best = max(range(len(row)), key=lambda j: (row[j], -j))
        out[(x, model.vocab[best])] = out.get((x, model.vocab[best]), 0) + q[i]
    return out


def _tv(a, b):
    return sum(abs(a.get(k, 0) - b.get(k, 0)) for k in set(a) | set(b)) / 2


@pytest.mark.parametrize("preset, ctx, expected", [("zeros", ("z",), F(5, 16)), ("seed", ("a",), F(11, 25))])
def test_typical_acceptance_closes_on_the_argmax(preset, ctx, expected):
    model = load_model(preset)
    by_hand = _typical_joint_by_hand(model, ctx)
    wanted = exact.target_joint(model, ctx, 2)
    assert _tv(by_hand, wanted) == expected
    assert tv("typical-acceptance", gamma=1, n=2, model=model, ctx=ctx) == expected


def test_typical_acceptance_cli_reports_five_sixteenths():
    from specsim.cli import main
    import contextlib
    import io
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["pitfalls", "zeros", "--context", "z", "--gamma", "1", "--tokens", "2",
                     "--rule", "typical-acceptance"])
    assert code in (0, None)
    assert "5/16" in out.getvalue()


def test_pitfall_sources_are_readable_and_cite_no_seed_file():
    for name, entry in pitfalls.DESCRIPTIONS.items():
        text = " ".join(str(entry.get(k) or "") for k in ("title", "source_text", "source", "description"))
        assert "source 00" not in text.lower() and ".txt" not in text, name
