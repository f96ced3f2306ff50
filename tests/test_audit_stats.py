"""The audit's statistics (``specsim.labs.audit``), checked by simulation on toy targets (no torch).

Every simulation is seeded. Rates are checked with a stated tolerance: S simulated audits of an exact engine at
a false-alarm rate f give Binomial(S, f) alarms when the rate holds; each test allows the count up to the
binomial quantile with upper-tail probability below 0.001 (its own false-alarm rate), computed by scipy.
Powers are checked the same way from below. Each simulation takes a few seconds on two cores.
"""
import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import binom

from specsim import exact, toy
from specsim.labs import audit as judge
from specsim.labs import pitfalls
from specsim.schemes import Chain

SEED = toy.load_model("seed")
LESSON_P = {s: float(v) for s, v in exact.target_joint(SEED, ("a",), 2).items()}  # lesson 24's toy, 2 tokens
ZIPF = {(i,): 1 / (i + 1) for i in range(60)}
ZIPF = {s: v / sum(ZIPF.values()) for s, v in ZIPF.items()}  # a Zipf-like p: long tail of small cells
NEAR_UNIFORM = {(i,): (1 + 0.01 * (i % 3)) for i in range(96)}
NEAR_UNIFORM = {s: v / sum(NEAR_UNIFORM.values()) for s, v in NEAR_UNIFORM.items()}


def most_alarms(sims, rate):
    """The largest alarm count that an honest rate allows: P(Binomial(sims, rate) > it) < 0.001."""
    return int(binom.isf(0.001, sims, rate))


def fewest_hits(sims, power):
    """The smallest count of rejections that a stated power allows: P(Binomial(sims, power) < it) < 0.001."""
    return int(binom.ppf(0.001, sims, power))


def audit_p_value(law, exact_p, n, alpha, seed):
    """One audit of ``n`` runs of an engine whose law over the judge's cells is ``law``, judged as
    ``judge_samples`` judges: the same cells, statistic and Monte Carlo p-value (its seed per audit)."""
    cells = judge.cells_of(exact_p, n)
    counts = np.random.default_rng([seed, 1]).multinomial(n, law(cells))
    stat = float(judge.pearson(counts, cells.probs, n))
    return judge.calibrated(stat, cells.probs, n, alpha, seed, len(cells) - 1)[0]


def test_the_simulation_path_is_the_judges_own():
    rng = np.random.default_rng(3)
    keys = list(LESSON_P)
    samples = [keys[i] for i in rng.choice(len(keys), 150, p=list(LESSON_P.values()))]
    r = judge.judge_samples(samples, LESSON_P, alpha=0.01, seed=4)
    cells = judge.cells_of(LESSON_P, 150)
    counts = np.bincount([cells.cell_of(s) for s in samples], minlength=len(cells))
    stat = float(judge.pearson(counts, cells.probs, 150))
    assert r.statistic == pytest.approx(stat, rel=1e-12)
    assert r.p_value == judge.calibrated(stat, cells.probs, 150, 0.01, 4, len(cells) - 1)[0]
    assert r.p_value_method == "monte carlo" and r.mc_draws == judge.mc_draws(0.01) == 5000


@pytest.mark.parametrize("name, p, n", [("lesson 24", LESSON_P, 100), ("lesson 24", LESSON_P, 200),
                                        ("zipf", ZIPF, 100), ("zipf", ZIPF, 200)])
def test_the_false_alarm_rate_holds_at_small_n(name, p, n):
    """800 audits of an exact engine at f = 0.05 (Monte Carlo p-values): the alarms stay within Binomial(800, f)."""
    sims, f = 800, 0.05
    alarms = sum(audit_p_value(lambda c: c.probs, p, n, f, s) < f for s in range(sims))
    assert alarms <= most_alarms(sims, f), (name, n, alarms)


def test_the_monte_carlo_p_value_is_valid_even_with_few_draws():
    """(1 + #{T* >= T}) / (1 + B) is valid at any B: with B = 19 draws, P(p <= 0.05) <= 0.05."""
    cells = judge.cells_of(LESSON_P, 100)
    sims, alarms = 2000, 0
    rng = np.random.default_rng(11)
    for s in range(sims):
        stat = float(judge.pearson(rng.multinomial(100, cells.probs), cells.probs, 100))
        alarms += judge.mc_p_value(stat, judge.null_statistics(cells.probs, 100, 19, s))[0] <= 0.05
    assert alarms <= most_alarms(sims, 0.05)


def test_a_near_uniform_target_keeps_its_cells_and_its_power():
    """96 near-equal tokens at N = 300: about N / 5 cells, not one; an engine that drops a third of the
    vocabulary (TV 1/3) is caught."""
    cells = judge.cells_of(NEAR_UNIFORM, 300)
    assert len(cells) >= 300 // 5 // 2 and min(cells.probs) * 300 >= judge.MIN_EXPECTED
    rng = np.random.default_rng(5)
    keys = list(NEAR_UNIFORM)
    samples = [keys[i] for i in rng.integers(0, 64, 300)]
    assert judge.judge_samples(samples, NEAR_UNIFORM).verdict == "not the target"


def worst_case(tv):
    """The engine that meets the Cauchy-Schwarz bound over the cells: e = p (1 + 2 tv) on half of p's mass and
    p (1 - 2 tv) on the other half (a target of 20 equal cells splits exactly)."""
    def law(cells):
        probs = np.array(cells.probs)
        signs = np.where(np.arange(len(probs)) % 2 == 0, 1.0, -1.0)
        return probs * (1 + 2 * tv * signs)
    return law


def test_runs_needed_gives_the_stated_power_to_the_worst_case_engine():
    """At the runs ``runs_needed`` states for TV 0.1 (f = 0.05), the worst-case engine at that distance is
    caught in at least 0.8 of 500 audits (up to the binomial tolerance)."""
    p = {(i,): 1 / 20 for i in range(20)}
    n, df = judge.runs_needed(p, 0.1, alpha=0.05)
    assert df == len(judge.cells_of(p, n)) - 1 == 19
    sims = 500
    hits = sum(audit_p_value(worst_case(0.1), p, n, 0.05, s) < 0.05 for s in range(sims))
    assert hits >= fewest_hits(sims, judge.POWER), (n, hits)


def test_runs_needed_holds_its_power_at_the_default_rate_on_a_zipf_like_target():
    """At f = 0.001 the noncentral chi-square overstates the power; ``runs_needed`` raises N until its own
    simulation reaches 0.8. 1000 fresh audits (another seed for the judge and for the engine's draws) agree,
    within the binomial tolerance."""
    n, df = judge.runs_needed(ZIPF, 0.05)
    assert n > judge.samples_needed(0.05, df)
    cells = judge.cells_of(ZIPF, n)
    power = judge.simulated_power(cells.probs, judge.worst_case_law(cells.probs, 0.05), n, sims=1000, seed=7)
    assert round(power * 1000) >= fewest_hits(1000, judge.POWER), (n, power)


def test_the_worst_case_law_is_at_the_stated_distance():
    cells = judge.cells_of(ZIPF, 500)
    e = judge.worst_case_law(cells.probs, 0.05)
    assert e.sum() == pytest.approx(1.0, abs=1e-12) and 0.5 * abs(e - cells.probs).sum() == pytest.approx(0.05)


def test_runs_needed_uses_the_cells_its_own_n_makes():
    """On a Zipf-like target the cells grow with N: the runs are computed with the degrees at that N."""
    n, df = judge.runs_needed(ZIPF, 0.05)
    assert df == len(judge.cells_of(ZIPF, n)) - 1
    assert judge.samples_needed(0.05, df) <= n
    assert df > len(judge.cells_of(ZIPF, 200)) - 1  # a pilot of 200 runs would have counted fewer


def test_the_sequential_test_keeps_its_rate():
    """Ville's inequality: 1000 exact engines watched run by run for 300 runs at f = 0.05 (cells of the
    budget), alarms within Binomial(1000, 0.05)."""
    cells = judge.cells_of(LESSON_P, 300)
    rng = np.random.default_rng(21)
    sims = 1000
    alarms = sum(judge.sequential_decision(judge.e_process(rng.choice(len(cells), 300, p=cells.probs),
                                                           cells.probs), 0.05)["decided_at"] is not None
                 for _ in range(sims))
    assert alarms <= most_alarms(sims, 0.05)


def test_the_sequential_test_stops_early_on_a_lossy_engine():
    lossy = {s: float(v) for s, v in exact.speculative_joint(SEED, ("a",), Chain(3), 2,
                                                             pitfalls.ResampleFromTarget()).items()}
    rng = np.random.default_rng(2)
    keys = list(lossy)
    samples = [keys[i] for i in rng.choice(len(keys), 4000, p=list(lossy.values()))]
    r = judge.judge_samples(samples, LESSON_P, sequential=True)
    assert r.verdict == "not the target" and r.sequential["decided_at"] < 4000


# -- token by token --------------------------------------------------------------------------------------
VOCAB = SEED.vocab


def conditional(prev):
    return [float(x) for x in SEED.p((prev,))]


def long_runs(n, k, seed, greedy=0.0, shared=False):
    """(below_id, below_rank, mass), each (n, k), for n runs of k tokens of the seed toy from "a": exact when
    greedy = 0 and not shared; ``greedy``: the argmax with that probability; ``shared``: one uniform per run."""
    rng = np.random.default_rng([seed, 9])
    out = np.zeros((3, n, k))
    for r in range(n):
        prev, u0 = "a", rng.random()
        for t in range(k):
            p = conditional(prev)
            u = u0 if shared else rng.random()
            x = int(np.searchsorted(np.cumsum(p), u * sum(p), side="right"))
            x = min(x, len(p) - 1)
            if greedy and rng.random() < greedy:
                x = int(np.argmax(p))
            order = sorted(range(len(p)), key=lambda i: (-p[i], i))
            out[:, r, t] = sum(p[:x]), sum(p[i] for i in order[:order.index(x)]), p[x]
            prev = VOCAB[x]
    return out


def test_pits_of_an_exact_engine_keep_the_rate():
    """200 token-by-token audits (30 runs of 20 tokens) of exact runs at f = 0.05: within Binomial(200, f)."""
    sims, f = 200, 0.05
    alarms = sum(judge.judge_pits(*long_runs(30, 20, s), alpha=f, seed=s)["verdict"] == "not the target"
                 for s in range(sims))
    assert alarms <= most_alarms(sims, f)


def test_pits_catch_a_greedy_engine_and_shared_noise():
    greedy = judge.judge_pits(*long_runs(100, 50, 1, greedy=0.3), seed=1)
    shared = judge.judge_pits(*long_runs(100, 50, 1, shared=True), seed=1)
    exact_runs = judge.judge_pits(*long_runs(100, 50, 1), seed=1)
    assert greedy["verdict"] == shared["verdict"] == "not the target"
    assert exact_runs["verdict"] == "consistent with the target"
    by_name = {t["name"]: t["p_value"] for t in shared["tests"]}
    assert by_name["consecutive pairs"] < 1e-3  # marginally uniform: only the pairs see it


def test_a_token_the_target_never_emits_is_refuted():
    below, rank, mass = long_runs(10, 4, 0)
    mass[3, 2] = 0.0
    r = judge.judge_pits(below, rank, mass, sequential=True)
    assert r["verdict"] == "not the target" and r["p_value"] == 0.0 and r["sequential"]["decided_at"] == 4


def test_the_sequential_token_test_keeps_its_rate():
    sims, f = 200, 0.05
    alarms = sum(judge.judge_pits(*long_runs(20, 20, s), alpha=f, seed=s, sequential=True)["verdict"]
                 == "not the target" for s in range(sims))
    assert alarms <= most_alarms(sims, f)


# -- through the command (torch: the shipped target's own conditionals) -----------------------------------
EXAMPLES = f"{Path(__file__).resolve().parent.parent}/specsim/gpt/audit_engines.py"


def run_audit(cli, *argv):
    pytest.importorskip("torch")
    code, out, err = cli("audit", "--prompt", "def ", *map(str, argv), "--json")
    return code, (json.loads(out) if out else None), err


def test_long_runs_are_judged_token_by_token(cli):
    """K = 12 > 3: every token against its conditional; the exact decoder passes, an engine that keeps every
    draft is caught (seeded runs; f = 0.001)."""
    code, r, err = run_audit(cli, "--engine", "specsim", "--tokens", 12, "--samples", 30)
    assert code == 0, err
    assert r["mode"] == "token by token" and r["tokens_judged"] == 360 and len(r["tests"]) == 3
    assert r["p_value_method"].startswith("monte carlo") and r["verified_drafts"] > 0
    code, r, err = run_audit(cli, "--engine", f"{EXAMPLES}:EmitDraft", "--tokens", 12, "--samples", 30)
    assert code == 1 and r["verdict"] == "not the target", err


def test_the_sequential_audit_stops_once_decided(cli):
    code, r, err = run_audit(cli, "--engine", f"{EXAMPLES}:EmitDraft", "--tokens", 2, "--samples", 2000,
                             "--sequential")
    assert code == 1, err
    assert r["sequential"]["decided_at"] <= r["samples"] < r["runs_planned"] == 2000
    assert r["p_value_method"] == "monte carlo" and r["mc_draws"] == judge.mc_draws(judge.ALPHA)
