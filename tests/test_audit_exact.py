"""The exact p-value (``specsim.labs.audit_exact``) and the token-by-token audit's TV and power figures.

Exact results are compared exactly (Fractions with ==) or, for the float version, within a stated tolerance of
1e-12. Sampled results: S seeded simulations, each count checked against the binomial quantile whose tail has
probability below 0.001 (the check's own false-alarm rate); the means of TVs within 3.3 standard errors (a
two-sided false-alarm rate of about 0.001 for a normal mean).
"""
import itertools
import json
import math
from fractions import Fraction as F

import numpy as np
import pytest
from scipy.stats import binom

from specsim.labs import audit as judge
from specsim.labs import audit_exact

TINY = [F(1, 2), F(1, 3), F(1, 6)]  # three cells
N_TINY = 5


def pearson(x, probs):
    n = sum(x)
    return sum((xi - n * pi) ** 2 / (n * pi) for xi, pi in zip(x, probs))


def brute_force_tail(counts, probs):
    """P(T* >= T) summed over every sequence of runs (3^5 of them here), each with its own probability: a second
    enumeration, over sequences rather than count vectors."""
    n, stat = sum(counts), pearson(counts, probs)
    total = F(0)
    for seq in itertools.product(range(len(probs)), repeat=n):
        x = [seq.count(c) for c in range(len(probs))]
        if pearson(x, probs) >= stat:
            total += math.prod(probs[c] for c in seq)
    return total


def test_the_exact_p_value_is_the_brute_force_enumeration_exactly():
    every = audit_exact.compositions(N_TINY, 3).tolist()
    assert len(every) == audit_exact.outcomes(N_TINY, 3) == math.comb(7, 2) and all(sum(x) == 5 for x in every)
    for x in every:
        exact = audit_exact.exact_tail_fraction(x, TINY)
        assert exact == brute_force_tail(x, TINY), x
        assert audit_exact.exact_tail(float(pearson(x, TINY)), [float(p) for p in TINY], N_TINY) == \
            pytest.approx(float(exact), abs=1e-12)


def test_the_exact_p_value_keeps_every_false_alarm_rate_exactly():
    """Over every outcome of 5 runs, P(p-value <= f) <= f for every f: computed, not simulated."""
    every = audit_exact.compositions(N_TINY, 3).tolist()
    weight = {tuple(x): F(math.factorial(N_TINY), math.prod(math.factorial(v) for v in x)) *
              math.prod(p ** v for p, v in zip(TINY, x)) for x in every}
    assert sum(weight.values()) == 1
    p_values = {tuple(x): audit_exact.exact_tail_fraction(x, TINY) for x in every}
    for f in sorted(set(p_values.values())) + [F(1, 1000), F(1, 20)]:
        assert sum(w for x, w in weight.items() if p_values[x] <= f) <= f, f


def test_the_judge_enumerates_where_it_can_and_says_so_where_it_cannot():
    p = {("a",): 0.5, ("b",): 0.3, ("c",): 0.2}
    samples = [("a",)] * 60 + [("b",)] * 30 + [("c",)] * 10
    r = judge.judge_samples(samples, p)
    assert r.p_value_method == "exact (every outcome enumerated)" and r.mc_draws == 0
    assert r.p_value == audit_exact.exact_tail(r.statistic, [0.5, 0.3, 0.2], 100)
    mc = judge.judge_samples(samples, p, p_value_method="monte carlo")
    assert mc.p_value_method == "monte carlo" and abs(mc.p_value - r.p_value) < 4 * mc.p_value_se
    wide = {(i,): 1 / 40 for i in range(40)}  # 40 cells of 1,000 runs: far beyond the work limit
    big = [(i % 40,) for i in range(1000)]
    assert not audit_exact.feasible(1000, 40)
    assert judge.judge_samples(big, wide).p_value_method == "monte carlo"
    note = judge.judge_samples(big, wide, p_value_method="exact").p_value_method
    assert note.startswith("monte carlo (exact enumeration would need") and "\n" not in note


def test_a_bad_p_value_method_is_one_line():
    with pytest.raises(ValueError, match="one of auto, exact, monte carlo") as e:
        judge.judge_samples([("a",), ("a",)], {("a",): 1.0}, p_value_method="bootstrap")
    assert "\n" not in str(e.value)


# -- token by token: TV and power ---------------------------------------------------------------------------
V = 20  # a conditional uniform over 20 tokens: token x's rank PIT falls in bin x of 20 (ties ranked by id)


def uniform_runs(n, k, seed, law=None):
    """(below_id, below_rank, mass), each (n, k): every token's conditional uniform over V tokens; the tokens
    drawn from ``law`` (default: that conditional, an exact engine)."""
    law = np.full(V, 1.0 / V) if law is None else np.asarray(law)
    x = np.random.default_rng([seed, 5]).choice(V, size=(n, k), p=law)
    return x / V, x / V, np.full((n, k), 1.0 / V)


def test_token_mode_reports_tv_and_power_with_their_definition():
    r = judge.judge_pits(*uniform_runs(30, 10, 1), alpha=0.01, seed=1)
    rank = next(t for t in r["tests"] if t["name"].startswith("pit, likeliest first"))
    assert r["tv"] == rank["tv"] and rank["values"] == 300 and rank["cells"] == 20
    assert r["detectable_tv"] == round(judge.detectable(300, 19, 0.01 / 3), 4)
    assert "probability-rank PITs" in r["tv_definition"] and 0 < r["tv_exact_engine"] < r["detectable_tv"]
    x = np.round(uniform_runs(30, 10, 1)[1] * V).astype(int).ravel()
    assert rank["tv"] == round(0.5 * float(np.abs(np.bincount(x, minlength=V) / 300 - 1 / V).sum()), 4)


def test_the_tv_an_exact_engine_shows_is_the_noise_the_audit_states():
    sims = 200
    shown = [judge.judge_pits(*uniform_runs(20, 10, s), alpha=0.05, seed=s) for s in range(sims)]
    tvs = np.array([r["tv"] for r in shown])
    noise = shown[0]["tv_exact_engine"]  # the same count of values in every audit: the same noise level
    se = tvs.std(ddof=1) / math.sqrt(sims)
    assert abs(tvs.mean() - noise) <= 3.3 * math.hypot(se, tvs.std(ddof=1) / math.sqrt(judge.BOOTSTRAP // 4))


def test_pit_runs_needed_gives_its_stated_power():
    """At the runs ``pit_runs_needed`` states for TV 0.1 over 10-token runs (f = 0.05), an engine whose rank PITs
    follow the hardest histogram at that TV is caught in at least 0.8 of 300 fresh audits (binomial tolerance)."""
    n = judge.pit_runs_needed(10, 0.1, alpha=0.05)
    assert judge.pit_bins(n * 10) == V
    law = judge.worst_case_law(np.full(V, 1.0 / V), 0.1)
    assert 0.5 * np.abs(law - 1.0 / V).sum() == pytest.approx(0.1)
    sims = 300
    hits = sum(judge.judge_pits(*uniform_runs(n, 10, 1000 + s, law), alpha=0.05, seed=1000 + s)["verdict"]
               == "not the target" for s in range(sims))
    assert hits >= int(binom.ppf(0.001, sims, judge.POWER)), (n, hits)


# -- the command: the token-by-token figures in the text, and --p-value-method ------------------------------
def run_audit(cli, *argv):
    """``specsim audit`` on the shipped target from "def ": (exit code, stdout, stderr)."""
    pytest.importorskip("torch")
    return cli("audit", "--engine", "specsim", "--prompt", "def ", *map(str, argv))


def test_token_mode_prints_its_tv_and_power_as_the_json_states_them(cli):
    """K = 12: the text names the TV, the noise level, the TV this budget detects and the runs a TV needs, each
    the figure ``--json`` gives for the same seeded audit."""
    argv = ("--tokens", 12, "--samples", 30, "--detect", 0.1)
    code, out, err = run_audit(cli, *argv, "--json")
    assert code == 0, err
    r = json.loads(out)
    code, text, err = run_audit(cli, *argv)
    assert code == 0, err
    rank = next(t for t in r["tests"] if t["name"].startswith("pit, likeliest first"))
    tv_line = next(line for line in text.splitlines() if line.startswith("TV of the probability-rank PITs"))
    assert f"uniform over its {rank['cells']} equal bins" in tv_line
    assert f": {r['tv']:.4f}; noise alone gives an exact engine {r['tv_exact_engine']:.4f}" in tv_line
    power = next(line for line in text.splitlines() if line.startswith("This budget detects"))
    assert f"a TV of {r['detectable_tv']:.4f} with probability {judge.POWER:g}" in power
    assert f"a TV of 0.1 needs {r['samples_to_detect']:,} runs of 12 tokens" in power
    assert r["samples_to_detect"] == judge.pit_runs_needed(12, 0.1, judge.ALPHA)


def test_the_p_value_method_is_chosen_on_the_command_line(cli):
    """20 runs of one token make few cells: auto enumerates them exactly; monte-carlo (or the library's own
    spelling) draws; exact on 360 token-by-token values falls back to Monte Carlo and says so."""
    results = {}
    for method in (None, "monte-carlo", "monte carlo"):
        code, out, err = run_audit(cli, "--tokens", 1, "--samples", 20, "--json",
                                   *(["--p-value-method", method] if method else []))
        assert code in (0, 1), err
        results[method] = json.loads(out)
    assert results[None]["p_value_method"] == "exact (every outcome enumerated)" and results[None]["mc_draws"] == 0
    for method in ("monte-carlo", "monte carlo"):
        assert results[method]["p_value_method"] == "monte carlo" and results[method]["mc_draws"] > 0
    code, out, err = run_audit(cli, "--tokens", 12, "--samples", 30, "--p-value-method", "exact", "--json")
    r = json.loads(out)
    assert code in (0, 1) and all(t["p_value_method"].startswith("monte carlo (exact enumeration would need")
                                  for t in r["tests"]), err


@pytest.mark.parametrize("value", ["bootstrap", "Exact", "montecarlo", ""])
def test_a_bad_p_value_method_on_the_command_line_is_one_line(cli, value):
    code, out, err = run_audit(cli, "--p-value-method", value)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "--p-value-method: choose auto, exact or monte-carlo" in err
