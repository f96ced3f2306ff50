"""The work estimator, the limits, and the bounds on numbers and files."""
from __future__ import annotations

import json
import os
import time
from decimal import Decimal
from fractions import Fraction as F

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specsim import bounds, exact, limits, parsing, transforms

from specsim.labs import pitfalls
from specsim.schemes import Block, Chain, Scheme, Tree
from specsim.bounds import LIMITS, WorkRefused, check_joint, check_round
from specsim.parsing import parse_number
from specsim.schemes.chain import round_work
from specsim.toy import ModelError, ToyModel, json_depth, load_model, loads_model, random_model

SEED = load_model("seed")


def _two(d: int = 1) -> ToyModel:
    """A two-token model whose rows have about ``d``-digit denominators."""
    a, b = F(10**d + 1, 3 * 10**d), F(10**d + 7, 5 * 10**d)
    rows = {("x",): (a, 1 - a), ("y",): (b, 1 - b)}
    return ToyModel(("x", "y"), 1, rows, {("x",): rows[("y",)], ("y",): rows[("x",)]}, "two")


# -- the estimator -------------------------------------------------------------
def test_round_work_counts_outcomes_from_the_branching():
    assert round_work(3, 3) == 81  # the plain bound V^(gamma + 1)
    assert round_work(3, 3, p_branch=3) == 3 * (1 + 3 + 9 + 27)
    assert len(exact.round_distribution(SEED, ("a",), 3).outcomes) == 94 <= round_work(3, 3, 3)


def test_shape_reads_branching_states_and_digits():
    s = bounds.shape(load_model("zeros"))
    assert (s.vocab, s.branch, s.p_branch, s.states) == (3, 3, 2, 3)  # every p row has a zero
    assert bounds.shape(_two(600)).digits >= 600
    assert bounds.shape(SEED, power=10).digits == 10 * bounds.shape(SEED).digits


def test_work_grows_with_gamma_tokens_contexts_and_digits():
    w = bounds.exact_work
    assert w(SEED, 4, rounds=1) > w(SEED, 3, rounds=1)
    assert w(SEED, n_tokens=4, schemes=[3]) > w(SEED, n_tokens=3, schemes=[3])
    assert w(SEED, n_tokens=3, schemes=[3], contexts=3) == 3 * w(SEED, n_tokens=3, schemes=[3])
    assert w(_two(600), 6, rounds=1) > 50 * w(_two(1), 6, rounds=1)


@pytest.mark.parametrize("call", [
    lambda: check_round(SEED, 3),
    lambda: check_joint(SEED, 3, range(1, 5), contexts=3),  # README: specsim prove seed --tokens 3
    lambda: check_joint(SEED, 2, [3], rules=len(pitfalls.PITFALLS), rounds=1, power=2),  # pitfalls default
    lambda: check_round(SEED, 8, limit=LIMITS.interactive_work),
])
def test_documented_sizes_are_within_the_limits(call):
    call()


@pytest.mark.parametrize("call, words", [
    (lambda: check_round(_two(), 19), "a round of chain:19 over 2 tokens"),
    (lambda: check_round(_two(600), 12), "lower γ"),
    (lambda: check_joint(_two(), 12, range(1, 65), contexts=2), "lower γ or N"),
    (lambda: check_joint(SEED, 8, [12], rules=9, rounds=1), "9 rules"),
    (lambda: bounds.check_sample(SEED, 3, 10**9), "--rounds"),
    (lambda: bounds.check_sample(SEED, 3, 10**7, pitfalls.PITFALLS["always-accept"].rule), "broken rule"),
    (lambda: bounds.check_generate(SEED, 3, 100_000), "--tokens"),
])
def test_refusals_name_the_limit_and_what_to_lower(call, words):
    with pytest.raises(WorkRefused) as e:
        call()
    text = str(e.value)
    assert words in text and "the limit is" in text and "lower" in text and "\n" not in text


def test_a_refusal_is_a_value_error_and_quick():
    start = time.perf_counter()
    with pytest.raises(ValueError):
        check_round(_two(), 60)
    assert time.perf_counter() - start < 0.5


@settings(max_examples=25, deadline=None)
@given(v=st.integers(2, 4), gamma=st.integers(1, 14), seed=st.integers(0, 10**6))
def test_below_the_limit_finishes_above_is_refused(v, gamma, seed):
    model = random_model(v, seed=seed, denominator=12)
    limit = 20_000  # small, so the test stays quick; the property holds for any limit
    try:
        check_round(model, gamma, limit=limit)
    except WorkRefused:
        assert bounds.exact_work(model, gamma, rounds=1) > limit
        return
    start = time.perf_counter()
    r = exact.round_distribution(model, model.contexts()[0], gamma)
    assert sum(r.outcomes.values()) == 1
    assert len(r.outcomes) <= round_work(v, gamma, v)  # the prediction bounds the outcomes
    assert time.perf_counter() - start < 5


@settings(max_examples=15, deadline=None)
@given(n=st.integers(1, 8), gamma=st.integers(1, 8), seed=st.integers(0, 10**6))
def test_joints_below_the_limit_finish_and_are_exact(n, gamma, seed):
    model = random_model(2, seed=seed, denominator=10)
    try:
        check_joint(model, n, [gamma], contexts=1, limit=20_000)
    except WorkRefused:
        return
    ctx = model.contexts()[0]
    assert exact.speculative_joint(model, ctx, gamma, n) == exact.target_joint(model, ctx, n)


# -- numbers -------------------------------------------------------------------
@pytest.mark.parametrize("value, expected", [
    ("3/5", F(3, 5)), ("0.25", F(1, 4)), ("1e-3", F(1, 1000)), (" 2 ", F(2)), (1, F(1)),
    (0.1, F(1, 10)), (Decimal("0.5"), F(1, 2)), (F(2, 3), F(2, 3)), ("-1.5E+2", F(-150)),
])
def test_numbers_within_the_bounds_are_exact(value, expected):
    assert parse_number(value, "x") == expected


@pytest.mark.parametrize("value, words", [
    ("inf", "finite"), ("-Infinity", "finite"), ("nan", "finite"), (float("inf"), "finite"),
    (Decimal("NaN"), "finite"), ("1e-100000000", "exponent"), ("1e400", "exponent"),
    ("1" * 1001, "digits"), ("1/" + "3" * 1001, "digits"), (10**1001, "digits"), ("1/0", "zero"),
    ("abc", "not a number"), ("1/2/3", "not a number"), (True, "not a number"), (None, "not a number"),
], ids=lambda v: str(v)[:24])
def test_numbers_past_the_bounds_are_refused_quickly(value, words):
    start = time.perf_counter()
    with pytest.raises(ValueError, match=words) as e:
        parse_number(value, "field")
    assert str(e.value).startswith("field") and time.perf_counter() - start < 0.1


@settings(max_examples=50, deadline=None)
@given(num=st.integers(0, 10**40), den=st.integers(1, 10**40), exp=st.integers(-300, 300))
def test_any_typed_number_is_read_exactly_or_refused(num, den, exp):
    assert parse_number(f"{num}/{den}", "x") == F(num, den)
    text = f"{num}e{exp}"
    if abs(exp) <= LIMITS.exponent:
        assert parse_number(text, "x") == F(num) * F(10) ** exp
    else:
        with pytest.raises(ValueError, match="exponent"):
            parse_number(text, "x")


def test_temperatures_needing_huge_exact_powers_are_refused():
    assert transforms.parse_temperature("1/100") == F(1, 100)
    assert bounds.temperature_power(F(1, 4)) == 4 and bounds.temperature_power(F(2, 3)) == 1
    for tau in ("1e-9", "1/1000000", 1e-9):
        with pytest.raises(ValueError, match="below 1/100"):
            transforms.parse_temperature(tau)
    assert transforms.parse_temperature(0) == 0  # greedy stays allowed


# -- files ---------------------------------------------------------------------
def test_json_depth_skips_strings():
    assert json_depth('{"a": [[1], "[[[["]}') == 3
    assert json_depth("[" * 1000 + "]" * 1000) == 1000


@pytest.mark.parametrize("text, words", [
    ("[" * 100_000 + "]" * 100_000, "nests 100,000 levels"),
    ('{"vocab": ["x"], "order": 1, "target": {"x": [' + "1" * 5001 + "]}}", "5,001 digits"),
    ('{"vocab": ["x"], "order": 1, "target": {"x": [NaN]}, "draft": {}}', "NaN is refused"),
    ('{"vocab": ["x"], "order": 1, "target": {"x": [1e400]}, "draft": {}}', "exponent"),
    ('{"vocab": ["0", "1"], "order": 20, "target": {}, "draft": {}}', "order 20 is too large"),
    ('{"vocab": ["0", "1"], "order": 100000000000, "target": {}, "draft": {}}', "too large"),
    (json.dumps({"vocab": [f"t{i}" for i in range(64)], "order": 3, "target": {}, "draft": {}}),
     "contexts is too many"),
])
def test_models_built_to_explode_are_refused_before_expansion(text, words):
    start = time.perf_counter()
    with pytest.raises(ModelError, match=words):
        loads_model(text)
    assert time.perf_counter() - start < 1


def test_json_floats_are_read_as_exact_decimals():
    m = loads_model('{"vocab": ["x", "y"], "order": 1, "target": {"x": [0.1, 0.9], "y": [1, 0]},'
                    ' "draft": {"x": [0.5, 0.5], "y": [0.3, 0.7]}}')
    assert m.p(("x",)) == (F(1, 10), F(9, 10)) and m.q(("y",)) == (F(3, 10), F(7, 10))


def test_only_regular_files_of_bounded_size_are_opened(tmp_path):
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate(LIMITS.file_bytes + 1)
    cases = [(fifo, "not a regular file"), ("/dev/zero", "not a regular file"),
             (tmp_path, "is a directory"), (big, "the limit is")]
    for path, words in cases:
        with pytest.raises(ModelError, match=words):
            load_model(str(path))


# -- a limit a person can raise -------------------------------------------------
V16 = random_model(16, seed=0)


def test_the_cli_runs_about_a_minute_the_app_a_second():
    """γ 4, N 3 on a 16-token model (~9 s here) runs from the CLI, not from an app page."""
    ctx = len(V16.contexts())
    check_joint(V16, 3, [4], ctx, limit=bounds.cli_budget())
    with pytest.raises(WorkRefused) as e:
        check_joint(V16, 3, [4], ctx, limit=LIMITS.interactive_work)
    assert "--max-work" not in str(e.value)  # the app never offers to raise it


def test_a_refusal_names_the_value_that_would_let_it_run():
    import re
    ctx = len(V16.contexts())
    with pytest.raises(WorkRefused) as e:
        check_joint(V16, 4, [4], ctx, limit=bounds.cli_budget())
    need = int(re.search(r"raise it with --max-work (\d+)$", str(e.value)).group(1))
    assert need > LIMITS.cli_work
    check_joint(V16, 4, [4], ctx, limit=bounds.cli_budget(need))
    with pytest.raises(WorkRefused):
        check_joint(V16, 4, [4], ctx, limit=bounds.cli_budget(need - 1))


def test_work_past_the_ceiling_is_not_offered_a_raise():
    with pytest.raises(WorkRefused) as e:
        bounds.check(LIMITS.max_work * 10, "this", "γ", bounds.cli_budget())
    assert str(e.value).endswith(": lower γ")


def test_a_raised_budget_raises_the_other_limits_alike():
    broken = pitfalls.PITFALLS["always-accept"].rule
    rounds = int(1.5 * LIMITS.loop_work * 1000 / bounds.loop_work(1000, 3, 3))  # 1.5x the loop limit
    with pytest.raises(WorkRefused, match="raise it with --max-work"):
        bounds.check_sample(SEED, 3, rounds, broken, limit=bounds.cli_budget())
    bounds.check_sample(SEED, 3, rounds, broken, limit=bounds.cli_budget(2 * LIMITS.cli_work))
    bounds.check_sample(SEED, 3, rounds, limit=bounds.cli_budget())  # the correct rule: the vectorized kernel
    assert bounds.cli_budget(3 * LIMITS.cli_work).scaled(LIMITS.loop_work).steps == 3 * LIMITS.loop_work


# -- results too long to show are refused before the work -------------------------
def _digits_shown(r) -> int:
    values = list(r.outcomes.values()) + list(r.accepted) + [r.expected_tokens]
    return max(max(len(str(F(x).numerator)), len(str(F(x).denominator))) for x in values)


def _rows(v: int, d: int, seed: int) -> ToyModel:
    """v tokens, every row with its own ~d-digit denominator (the worst case for the digits)."""
    import random
    rng = random.Random(seed)
    def row():
        den = rng.randrange(10**(d - 1), 10**d)
        cuts = sorted({rng.randrange(1, den) for _ in range(v - 1)})  # distinct at these sizes
        return tuple(F(b - a, den) for a, b in zip([0] + cuts, cuts + [den]))
    vocab = tuple(f"t{i}" for i in range(v))
    return ToyModel(vocab, 1, {(t,): row() for t in vocab}, {(t,): row() for t in vocab}, "rows")


@pytest.mark.parametrize("model", [_two(40), _rows(3, 30, 1), _rows(4, 20, 2)], ids=["two", "v3", "v4"])
def test_the_digit_bound_covers_every_shown_probability(model):
    ctx = model.contexts()[0]
    for gamma in (1, 2, 3):
        assert _digits_shown(exact.round_distribution(model, ctx, gamma)) <= limits.result_digits(model, gamma)
    for shape in ((2,), (2, 1), (1, 1, 1)):
        t = Tree(shape, "iid")
        assert _digits_shown(exact.round_distribution(model, ctx, t)) <= limits.result_digits(model, sum(shape))
    joint = exact.target_joint(model, ctx, 3)
    assert max(len(str(p.denominator)) for p in joint.values()) <= limits.result_digits(model, 0, 3)


def test_thousand_digit_fractions_are_refused_before_python_cannot_print_them():
    model = _two(1000)
    check_round(model, 1)  # ~2,000 digits: shown
    check_joint(model, 4, [1], contexts=2)  # ~4,000 digits: shown
    for call in (lambda: check_round(model, 3), lambda: check_joint(model, 5, [1]),
                 lambda: check_round(model, Tree((2,))),
                 lambda: check_joint(model, 2, [2], rules=9, rounds=1)):
        with pytest.raises(WorkRefused, match="the limit is 4,300 digits"):
            call()


# -- sampled work counts the vocabulary and the tree ----------------------------------
def test_sampled_work_grows_with_the_vocabulary_and_the_tree():
    assert bounds.sample_work(1000, 3, 64) > 5 * bounds.sample_work(1000, 3, 2)
    assert bounds.sample_work(1000, 3, 8, Block(3).kernel_draw) > bounds.sample_work(1000, 3, 8)
    assert bounds.loop_work(1000, 3, 64) > bounds.loop_work(1000, 3, 2)
    v64, tree = random_model(64, seed=0), Tree((64,), "iid")
    assert 70_000 * (tree.drafted_tokens + 1) <= LIMITS.loop_work  # the old estimate let ~16 min through
    with pytest.raises(WorkRefused, match="tree:64 over 64 tokens .no vectorized kernel"):
        bounds.check_sample(v64, tree, 70_000)  # measured ~1.6 ms a round: ~2 minutes
    bounds.check_sample(SEED, Tree((2, 2, 1), "iid"), 10_000)  # sample --tree's default rounds


# -- one bound for every scheme of the tiny GPT ------------------------------------
def test_one_gpt_bound_for_every_scheme():
    bounds.check_gpt(100, 4, 96)  # gpt generate's defaults
    bounds.check_gpt(200, list(range(1, 9)) + [0], runs=9)  # gpt bench's defaults: γ 1-8 and plain, 3 x 3 runs
    bounds.check_gpt(150, [4, 4, 6, 4, 0], runs=9)  # --schemes 'chain:4;block:4;tree:2,2;tree:4'
    with pytest.raises(WorkRefused, match="target positions"):
        bounds.check_gpt(4096, 64)  # ran 96 s (and with V 96, 25x the recorded probabilities below)
    with pytest.raises(WorkRefused, match="target positions"):
        bounds.check_gpt(4096, [64, 0], runs=150)  # bench --schemes block:64 --tokens 4096 --repeats 50
    for drafted in (4, 64):
        with pytest.raises(WorkRefused, match="recorded probabilities"):
            bounds.check_gpt(4096, drafted, 96)
    bounds.check_gpt(4096, 4, 96, limit=bounds.cli_budget(2 * LIMITS.cli_work))


# -- integers in ASCII digits only ------------------------------------------------
@pytest.mark.parametrize("text, value", [("7", 7), (" 12 ", 12), ("+3", 3), ("-2", -2), ("007", 7)])
def test_whole_numbers_in_ascii_digits_are_read(text, value):
    assert parsing.parse_whole(text, "n") == value


@pytest.mark.parametrize("text, words", [
    ("\uff14", "U+FF14 FULLWIDTH DIGIT FOUR"), ("\u0663", "U+0663 ARABIC-INDIC DIGIT THREE"),
    ("\u00b9", "U+00B9 SUPERSCRIPT ONE"), ("1_000", "is not an integer"), ("0x10", "is not an integer"),
    ("1e3", "is not an integer"), ("", "is not an integer"), ("1" * 5000, "5,000 digits"),
])
def test_anything_else_is_one_line_naming_the_character(text, words):
    import re
    with pytest.raises(ValueError, match=re.escape(words)) as e:
        parsing.parse_whole(text, "n")
    assert "\n" not in str(e.value) and len(str(e.value)) < 200


# -- one check per computation, through the scheme's own round_work ---------------------
class _Wide(Scheme):
    """A scheme no guard was written for: the checks ask its round_work and what ``Scheme`` answers."""

    name, kind, depth, drafted_tokens = "wide:5", "wide", 1, 5

    def round_work(self, s):
        return s.branch ** 5 * s.p_branch


def test_every_scheme_is_priced_by_its_own_round_work():
    s = bounds.shape(SEED)
    for scheme in (Chain(3), Block(3), Tree((2, 1)), Tree((2, 2), "distinct"), _Wide()):
        cost = limits.number_cost(s.digits * (scheme.depth + 1))
        assert bounds.exact_work(SEED, scheme, rounds=2) == 2 * limits.ROUND_STEPS * scheme.round_work(s) * cost
    with pytest.raises(WorkRefused, match="a round of wide:5 over 3 tokens") as e:
        check_round(SEED, _Wide(), limit=1000)
    assert "\n" not in str(e.value)


def test_an_int_gamma_is_a_chain_for_every_check():
    m = random_model(4, seed=3)
    assert bounds.exact_work(m, 5, 3, rounds=1) == bounds.exact_work(m, Chain(5), 3, rounds=1)
    for check in (lambda g: check_round(m, g, limit=20_000), lambda g: check_joint(m, 8, [g], limit=20_000),
                  lambda g: bounds.check_sample(m, g, 10**8 // 2)):
        with pytest.raises(WorkRefused) as by_int:
            check(9)
        with pytest.raises(WorkRefused) as by_chain:
            check(Chain(9))
        assert str(by_int.value) == str(by_chain.value)


@pytest.mark.parametrize("scheme, lower", [(Chain(12), "lower γ or N"), (Block(12), "lower γ or N"),
                                           (Tree((2, 2, 2, 2, 1)), "lower the widths, the depth or N")])
def test_a_joint_refusal_names_the_scheme_in_one_line(scheme, lower):
    with pytest.raises(WorkRefused) as e:
        check_joint(SEED, 8, [scheme], contexts=3)
    assert scheme.name in str(e.value) and lower in str(e.value) and "\n" not in str(e.value)


def test_a_joint_counts_only_the_drafts_it_can_still_keep():
    # N = 1 needs the first token only: a chain or a tree stops at the root; a block walks every chain anyway
    # (equal outcomes; only the number cost, read from the depth, differs a little)
    assert bounds.exact_work(SEED, Chain(8), 1) < 1.01 * bounds.exact_work(SEED, Chain(1), 1)
    assert bounds.exact_work(SEED, Tree((2, 2, 2)), 1) < 1.01 * bounds.exact_work(SEED, Tree((2,)), 1)
    assert bounds.exact_work(SEED, Block(8), 1) > 100 * bounds.exact_work(SEED, Block(1), 1)
    exact.speculative_joint(SEED, ("a",), Chain(8), 1)  # indeed instant


def test_sampling_picks_the_kernel_or_the_loop_as_montecarlo_does():
    rounds = 10**6
    broken = pitfalls.PITFALLS["always-accept"].rule
    bounds.check_sample(SEED, Chain(3), rounds)  # the chain kernel
    bounds.check_sample(SEED, Block(3), rounds)  # the block kernel
    for scheme, rule, why in ((Chain(3), broken, "a broken rule"), (Tree((1, 1, 1)), None, "no vectorized kernel")):
        with pytest.raises(WorkRefused, match=why):
            bounds.check_sample(SEED, scheme, rounds, rule)
