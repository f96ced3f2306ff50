"""check_rule and `specsim check-rule`: proofs on the family, smallest counter-examples, one-line errors."""
from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from specsim import bounds, exact, toy

from specsim.labs import checker

from specsim.labs import family

from specsim.labs import pitfalls

from specsim.labs import shrink
from specsim.rule import CORRECT, RoundRule, residual

ROOT = Path(__file__).resolve().parent.parent

EXACT_BY_DESIGN = {"correct", "no-bonus-token", "temperature-on-target-only", "accept-if-ratio-at-least-u"}
SEED = toy.load_model("seed")


@pytest.fixture(scope="module")
def lab():
    return {name: checker.check_rule(pit.rule, gammas=(1, 2, 3), n_tokens=2, models=12,
                                     speculative=pit.speculative, target=pit.target)
            for name, pit in pitfalls.PITFALLS.items()}


def test_every_broken_pitfall_is_refuted_and_the_exact_ones_proved(lab):
    assert {n for n, r in lab.items() if r.exact} == EXACT_BY_DESIGN
    assert lab["correct"].models == len(toy.PRESETS) + 12 and lab["correct"].checks == 3 * lab["correct"].contexts


@pytest.mark.parametrize("name", [n for n in pitfalls.PITFALLS if n not in EXACT_BY_DESIGN])
def test_counterexample_is_no_larger_than_the_lab_model_and_real(lab, name):
    ce = lab[name].counterexample
    assert len(ce.model.vocab) <= len(SEED.vocab) and ce.model.order <= SEED.order
    assert ce.gamma <= 3 and ce.n_tokens <= 2
    again = toy.loads_model(checker.model_json(ce.model))  # the printed JSON, read back
    r = pitfalls.evaluate(pitfalls.PITFALLS[name], again, ce.context, ce.gamma, ce.n_tokens)
    assert r.total_variation == ce.total_variation > 0
    assert ce.differences and all(a != b for _, a, b in ce.differences)


def test_counterexample_cannot_shrink_further(lab):
    ce = lab["resample-from-target"].counterexample
    setup = checker.Setup(checker.ValidatedRule(pitfalls.ResampleFromTarget()))
    here = shrink.size(ce.model, ce.gamma, ce.n_tokens)
    for m, g, n in shrink._candidates(ce.model, ce.context, ce.gamma, ce.n_tokens):
        if shrink.size(m, g, n) < here:
            assert setup.violation(m, g, n) is None


def test_tokens_per_round_beside_the_correct_rule(lab):
    nb, ok = lab["no-bonus-token"].tokens, lab["correct"].tokens
    assert [g for g, _, _ in nb] == [1, 2, 3]
    assert all(a < b for _, a, b in nb)  # exact but slower: no bonus token
    assert all(a == b for _, a, b in ok)
    ce = lab["always-accept"].counterexample
    want = exact.round_distribution(ce.model, ce.context, ce.gamma).expected_tokens
    assert ce.tokens_correct == want and ce.tokens_rule == ce.gamma + 1


def test_a_rule_wrong_only_on_four_tokens_is_found_on_the_random_family():
    class WrongOnFour(RoundRule):
        def replacement(self, p, q):
            r = residual(p, q)
            return p if len(p) == 4 or r is None else r

    r = checker.check_rule(WrongOnFour(), gammas=(1,), n_tokens=1, models=12)
    assert not r.exact and len(r.counterexample.model.vocab) == 4
    assert r.counterexample.model.order == 1  # order 2 shrunk away


def test_family_models_cover_the_shapes_and_the_edge_rows():
    models = [checker.family_model(i, seed=3) for i in range(60)]
    assert {(len(m.vocab), m.order) for m in models} == set(checker.SHAPES)
    rows = [(m.target[c], m.draft[c]) for m in models for c in m.contexts()]
    for p, q in rows:
        assert sum(p) == sum(q) == 1 and min(p) >= 0 and min(q) >= 0
    assert any(p == q for p, q in rows)
    assert any(qx == 0 < px for p, q in rows for px, qx in zip(p, q))
    assert any(px == 0 < qx for p, q in rows for px, qx in zip(p, q))
    assert checker.family_model(5, seed=3) == models[5] and checker.family_model(5, seed=4) != models[5]


class _Bad(RoundRule):
    def __init__(self, method, value):
        self.method, self.value = method, value

    def draft_row(self, q):
        return self._give("draft_row", q, lambda: RoundRule.draft_row(self, q))

    def accept(self, p, q, x):
        return self._give("accept", p, lambda: RoundRule.accept(self, p, q, x))

    def replacement(self, p, q):
        return self._give("replacement", p, lambda: [Fraction(1, len(p))] * len(p))

    def bonus(self, p):
        return self._give("bonus", p, lambda: p)

    def _give(self, method, row, default):
        if method != self.method:
            return default()
        if self.value == "raise":
            raise KeyError("oops\nsecond line")
        return self.value(row) if callable(self.value) else self.value


@pytest.mark.parametrize("method, value, words", [
    ("accept", "raise", "accept() raised KeyError"),
    ("accept", Fraction(3, 2), "outside [0, 1]"),
    ("accept", -1, "outside [0, 1]"),
    ("accept", 0.5, "return Fractions"),
    ("bonus", lambda p: [-x for x in p], "negative entry"),
    ("bonus", lambda p: list(p)[:-1], "entries; the vocabulary has"),
    ("replacement", lambda p: [Fraction(1, 2)] * len(p), "not 1"),
    ("draft_row", lambda q: 3, "not a row"),
])
def test_misbehaving_rules_are_one_line_rule_errors(method, value, words):
    with pytest.raises(checker.RuleError) as e:
        checker.check_rule(_Bad(method, value), gammas=(1,), n_tokens=1, models=3)
    assert words in str(e.value) and "\n" not in str(e.value)


def test_the_work_estimator_refuses_with_one_line():
    with pytest.raises(bounds.WorkRefused):
        checker.check_rule(CORRECT, gammas=(30,), n_tokens=6, models=0)


def test_model_json_and_round_row():
    assert toy.loads_model(checker.model_json(SEED)) == SEED
    for d in range(1, 13):
        row = shrink.round_row((Fraction(1, 7), Fraction(2, 7), Fraction(4, 7)), d)
        assert sum(row) == 1 and all(x.denominator <= d for x in row)


def test_family_has_one_exact_point_on_the_zeros_preset():
    m = toy.load_model("zeros")
    for bonus in (True, False):
        for cmp in family.COMPARISONS:
            rows = family.grid(m, ("x",), 2, 2, bonus, cmp)
            assert family.exact_points(rows) == [family.EXACT_POINT]


def test_every_off_point_of_the_family_has_a_counterexample():
    for b in family.BETAS:
        for lam in family.LAMBDAS:
            r = checker.check_rule(family.RuleFamily(b, lam), gammas=(1,), n_tokens=1, models=6)
            assert r.exact == ((b, lam) == family.EXACT_POINT)


# -- the command ---------------------------------------------------------------------
RULES = '''
from fractions import Fraction
from specsim.rule import RoundRule, residual

class HalfMix(RoundRule):
    name = "half-mix"
    def replacement(self, p, q):
        r = residual(p, q) or p
        return [(a + b) / 2 for a, b in zip(r, p)]

class Honest(RoundRule):
    pass

class Raises(RoundRule):
    def bonus(self, p):
        raise RuntimeError("no bonus today")

class NeedsArgs(RoundRule):
    def __init__(self, x):
        pass

NotARule = dict
'''


@pytest.fixture
def rules(tmp_path):
    path = tmp_path / "my_rules.py"
    path.write_text(RULES)
    (tmp_path / "broken.py").write_text("import nonexistent_module_xyz\n")
    (tmp_path / "rules.txt").write_text(RULES)
    return tmp_path


def test_cli_proves_an_exact_rule(cli, rules):
    code, out, err = cli("check-rule", f"{rules}/my_rules.py:Honest", "--models", "6", "--gammas", "1-2")
    assert code == 0, err
    assert "EXACT in all" in out and "9 models (3 presets + 6 random, seed 0)" in out


def test_cli_prints_a_loadable_counterexample(cli, rules):
    code, out, err = cli("check-rule", f"{rules}/my_rules.py:HalfMix", "--models", "6", "--json")
    assert code == 1, err
    data = json.loads(out)
    ce = data["counterexample"]
    m = toy.model_from_dict(ce["model"])
    setup = checker.Setup(checker.ValidatedRule(_load(rules, "HalfMix")()))
    hit = setup.violation(m, ce["gamma"], ce["n_tokens"], [tuple(ce["context"])])
    assert str(hit.total_variation) == ce["total_variation"] and not data["exact"]
    code, text, _ = cli("check-rule", f"{rules}/my_rules.py:HalfMix", "--models", "6")
    assert code == 1 and "NOT EXACT" in text and checker.model_json(m) in text


def _load(rules, name):
    from specsim.labs.sandbox_child import load_rule_class
    return load_rule_class(f"{rules}/my_rules.py", name)


@pytest.mark.parametrize("target, words", [
    ("{d}/none.py:X", "does not exist"),
    ("{d}/rules.txt:HalfMix", "not a .py file"),
    ("{d}/my_rules.py", "expected PATH.py:ClassName"),
    ("{d}/my_rules.py:Missing", "defines no 'Missing'"),
    ("{d}/my_rules.py:NotARule", "not a subclass of specsim.rule.RoundRule"),
    ("{d}/my_rules.py:NeedsArgs", "constructible without arguments"),
    ("{d}/broken.py:X", "ModuleNotFoundError"),
    ("{d}/my_rules.py:Raises", "bonus() raised RuntimeError: no bonus today"),
    ("{d}:X", "not a .py file"),
])
def test_cli_bad_input_is_one_line_exit_2(cli, rules, target, words):
    code, out, err = cli("check-rule", target.format(d=rules), "--models", "3", "--gammas", "1")
    assert code == 2 and words in err and err.count("\n") == 1, err


def test_cli_own_files_keep_one_roundrule_class(cli):
    code, out, err = cli("check-rule", f"{ROOT}/specsim/rule.py:RoundRule", "--models", "0", "--gammas", "1")
    assert code == 0, err
    code, out, err = cli("check-rule", f"{ROOT}/specsim/labs/pitfalls.py:AlwaysAccept", "--models", "0", "--gammas", "1")
    assert code == 1, err


def test_cli_refuses_too_much_work(cli):
    code, out, err = cli("check-rule", f"{ROOT}/specsim/rule.py:RoundRule", "--gammas", "40", "--tokens", "6")
    assert code == 2 and "limit" in err and err.count("\n") == 1


def test_the_family_heatmap_has_one_cell_per_point_on_category_axes():
    from specsim.labs import family
    from specsim.plots.family import grid_figure
    from specsim.schemes import Chain
    from specsim.toy import load_model
    rows = family.grid(load_model("seed"), ("a",), Chain(1), 1)
    fig = grid_figure(rows, current=(2, "1/2"))
    heat = fig.data[0]
    assert fig.layout.xaxis.type == "category" and fig.layout.yaxis.type == "category"
    assert len(heat.x) == len({r["lam"] for r in rows}) and len(heat.y) == len({r["beta"] for r in rows})
    assert [t.name for t in fig.data[1:]] == ["exact point (β = 1, λ = 1)", "your rule"]
