"""The implementations gallery: textbook-equivalent systems proved exact, the others refuted, float edges priced."""
from __future__ import annotations

import json
import math
from fractions import Fraction

import pytest

from specsim import exact, toy
from specsim.labs import implementations as impl
from specsim.labs import judge, pitfalls
from specsim.rule import CORRECT
from specsim.schemes import Chain, ConfidenceChain, Tree

SEED, ZEROS = toy.load_model("seed"), toy.load_model("zeros")
TEXTBOOK_EQUIVALENT = ["hf-sampling", "hf-prompt-lookup", "vllm", "medusa-greedy", "eagle2", "specinfer",
                       "llama-cpp", "gpt-fast"]


def test_every_entry_is_described_and_cited():
    assert set(impl.IMPLEMENTATIONS) == set(impl.DATA)
    for e in impl.IMPLEMENTATIONS.values():
        assert e.system and e.description and e.uniforms and e.closing
        assert any(mark in e.source for mark in ("commit", "5.24.0", "arXiv")), e.name
        assert (e.zero_probability is None) == (e.zero_derivation is None), e.name
        assert e.kind in ("chain", "confidence", "tree")
    assert {n for n, e in impl.IMPLEMENTATIONS.items() if not e.expected_exact} == {"medusa-typical",
                                                                                     "llama-cpp-example"}


@pytest.mark.parametrize("name", TEXTBOOK_EQUIVALENT)
def test_textbook_equivalent_entries_are_proved_exact(name):
    """TV 0 (Fraction ==) at every context of the presets and 60 family models, two tokens ahead."""
    entry = impl.IMPLEMENTATIONS[name]
    schemes = {"chain": [Chain(1), Chain(2), Chain(3)],
               "confidence": [entry.scheme, ConfidenceChain(3, "3/4"), ConfidenceChain(3, "1/2")],
               "tree": [entry.scheme, Tree((3,)), Tree((1, 2))]}[entry.kind]
    for scheme in schemes:
        proof = impl.prove(entry, n_tokens=2, scheme=scheme, models=60)
        assert proof.exact and proof.counter_example is None, (name, scheme)
        assert proof.checks > 300


@pytest.mark.parametrize("name", TEXTBOOK_EQUIVALENT)
def test_textbook_equivalent_joints_equal_the_target_joint(name):
    """The same statement written as joints: produced == wanted, exactly, on every context of every preset."""
    entry = impl.IMPLEMENTATIONS[name]
    for make in toy.PRESETS.values():
        model = make()
        for ctx in model.contexts():
            produced = exact.speculative_joint(model, ctx, entry.scheme, 3, entry.rule)
            assert produced == exact.target_joint(entry.target(model), ctx, 3)


def _medusa_joint(model, ctx, drafts):
    """Chain of 1, N = 2, from Medusa's definition, without the library's walk.

    A draft x (with probability drafts[x]) is kept when p(x) > min(0.09, 0.3 exp(-H)),
    H = -sum p log(p + 1e-5); after it the target's argmax (first index on a tie, as torch.argmax).
    Only for contexts where every draft is kept (asserted).
    """
    p = model.p(ctx)
    h = -sum(float(v) * math.log(float(v) + 1e-5) for v in p)
    threshold = min(0.09, 0.3 * math.exp(-h))
    out = {}
    for x, dx in drafts.items():
        assert float(p[x]) > threshold
        after = model.p(ctx + (model.vocab[x],))
        out[(model.vocab[x], model.vocab[after.index(max(after))])] = dx
    return out


def test_medusa_typical_on_zeros_after_z():
    """5/16 is the TV when the single draft is sampled from q; Medusa's code drafts
    the heads' top-k (generate_candidates: torch.topk), so a chain of one drafts q's argmax, and the
    gallery entry gives 7/16.

    After z: p = q = (1/4, 0, 3/4); both tokens pass the threshold (0.09 < 1/4), so a round emits the
    draft then argmax p after it: x -> x (p(.|x) = 1/2, 1/2, 0, the first on a tie), z -> z. The target
    joint is xx 1/8, xy 1/8, zx 3/16, zz 9/16.
    Sampled draft: xx 1/4, zz 3/4, TV = (1/8 + 1/8 + 3/16 + 3/16)/2 = 5/16.
    Top-1 draft (z): zz 1, TV = (1/8 + 1/8 + 3/16 + 7/16)/2 = 7/16.
    (A tie broken towards y instead gives the same two values.)
    """
    ctx, want = ("z",), exact.target_joint(ZEROS, ("z",), 2)
    sampled = _medusa_joint(ZEROS, ctx, {0: Fraction(1, 4), 2: Fraction(3, 4)})
    top1 = _medusa_joint(ZEROS, ctx, {2: Fraction(1)})
    assert exact.joint_total_variation(sampled, want) == Fraction(5, 16)
    assert exact.joint_total_variation(top1, want) == Fraction(7, 16)
    pit = judge.judge(ZEROS, ctx, Chain(1), pitfalls.PITFALLS["typical-acceptance"].rule, 2)
    assert pit.produced == sampled and pit.total_variation == Fraction(5, 16)
    r = impl.evaluate(impl.IMPLEMENTATIONS["medusa-typical"], ZEROS, ctx, 2, scheme=Chain(1))
    assert not r.exact and r.total_variation == Fraction(7, 16)
    assert exact.speculative_joint(ZEROS, ctx, Chain(1), 2, impl.IMPLEMENTATIONS["medusa-typical"].rule) == top1


@pytest.mark.parametrize("name", ["medusa-typical", "llama-cpp-example"])
def test_lossy_entries_have_a_small_real_counterexample(name):
    entry = impl.IMPLEMENTATIONS[name]
    r = impl.evaluate(entry, SEED, ("a",), 2)
    ce = r.counter_example
    assert not r.exact and ce is not None
    assert len(ce.model.vocab) == 2 and ce.gamma == 1 and ce.n_tokens == 1
    again = judge.judge(ce.model, ce.context, Chain(ce.gamma), entry.rule, ce.n_tokens)
    assert again.total_variation == ce.total_variation > 0


def test_llama_cpp_example_is_the_greedy_draft_pitfall():
    """One draft sequence: the first sorted candidate verified with r <= p/q is greedy-draft-with-sampled-q."""
    entry = impl.IMPLEMENTATIONS["llama-cpp-example"]
    for ctx in SEED.contexts():
        assert judge.judge(SEED, ctx, Chain(2), entry.rule, 2).produced == \
            judge.judge(SEED, ctx, Chain(2), pitfalls.PITFALLS["greedy-draft-with-sampled-q"].rule, 2).produced


def test_sample_and_match_accepts_p_of_the_draft():
    """Seed after a, chain:2: the draft is q's argmax a each time, kept with p(a | a) = 3/5, so
    E[tokens] = 1 + 3/5 + (3/5)^2 = 49/25, below the textbook rule's 267/100."""
    r = impl.evaluate(impl.IMPLEMENTATIONS["hf-prompt-lookup"], SEED, ("a",), 2, models=0)
    assert r.exact and r.tokens_per_round == 1 + Fraction(3, 5) + Fraction(9, 25) == Fraction(49, 25)
    assert r.textbook_tokens_per_round == exact.round_distribution(SEED, ("a",), Chain(2)).expected_tokens


def test_llama_cpp_floor_keeps_one_draft_on_seed():
    """p_min = 3/4 is above q's top probability after every token of the seed model, and the token below
    the floor is still drafted: each round drafts exactly one token, so it is sample-and-match with
    one draft, E[tokens] = 1 + p(argmax q) (after a: 1 + 3/5)."""
    assert all(max(SEED.q(c)) < impl.LLAMA_CPP_P_MIN for c in SEED.contexts())
    for ctx in SEED.contexts():
        r = impl.evaluate(impl.IMPLEMENTATIONS["llama-cpp"], SEED, ctx, 2, models=0)
        q, p = SEED.q(ctx), SEED.p(ctx)
        assert r.exact and r.tokens_per_round == 1 + p[q.index(max(q))]
    assert impl.evaluate(impl.IMPLEMENTATIONS["llama-cpp"], SEED, ("a",), 2, models=0).tokens_per_round == \
        Fraction(8, 5)


@pytest.mark.parametrize("name, zero", [("hf-sampling", Fraction(1, 2**24)), ("vllm", Fraction(1, 2**53)),
                                        ("gpt-fast", Fraction(1, 2**9) + Fraction(1, 2**24))])
def test_float_edge_on_zeros_after_x(name, zero):
    """After x the drafter proposes z with q = 1/2 but p(z) = 0 (vLLM, drafting q's argmax, proposes z in
    every round); with one draft the round emits z exactly when that test's uniform is 0: hazard =
    P(z drafted) P(u = 0), and every such outcome starts with z."""
    entry = impl.IMPLEMENTATIONS[name]
    r = impl.evaluate(entry, ZEROS, ("x",), 1, scheme=Chain(1), models=0)
    tested = 1 if name == "vllm" else Fraction(1, 2)  # vLLM drafts q's argmax, z, every round
    assert r.exact and r.float_hazard == tested * zero == tested * entry.zero_probability
    edge = exact.round_distribution(ZEROS, ("x",), Chain(1), impl.ZeroUniform(entry.rule, zero)).outcomes
    assert sum(pr for t, pr in edge.items() if t[0] == "z") == r.float_hazard
    assert "forbids" in r.hazard_emits


def test_float_edge_absent_or_zero():
    for name in ("hf-prompt-lookup", "medusa-typical", "medusa-greedy", "specinfer", "llama-cpp"):
        r = impl.evaluate(impl.IMPLEMENTATIONS[name], ZEROS, ("x",), 1, models=0)
        assert r.float_hazard is None
    r = impl.evaluate(impl.IMPLEMENTATIONS["hf-sampling"], SEED, ("a",), 1, models=0)
    assert r.float_hazard == 0 and "none here" in r.hazard_emits  # the seed model has no p = 0 token


def test_eagle2_float_edge_counts_both_branches():
    """tree:2,1 (distinct) after x: children z (q 1/2, p 0) then x. z passes with 2^-53; if z fails, x is
    kept with p(x) = 1/2 and its own child is z again (p(z | x) = 0): hazard = 2^-53 + (1 - 2^-53)/2 * 2^-53."""
    e = 1 / Fraction(2**53)
    r = impl.evaluate(impl.IMPLEMENTATIONS["eagle2"], ZEROS, ("x",), 1, models=0)
    assert r.float_hazard == e + (1 - e) * Fraction(1, 2) * e


def test_torch_uniform_grids_behind_the_zero_probabilities():
    """The derivations in implementations.json: float32 uniforms are multiples of 2^-24 and float64 of
    2^-53 (so P(0) is one grid point); a bfloat16 uniform is 0 for k = 0 and for every 24-bit k * 2^-24 that
    rounds to 1 (counted exhaustively: 2^15 of them), so P(0) = (1 + 2^15)/2^24; the draw frequency agrees
    within 5 standard errors (false-alarm rate below 1e-6, fixed seed)."""
    torch = pytest.importorskip("torch", reason="torch is needed to read its generator")
    g = torch.Generator().manual_seed(25)
    u32 = torch.rand(2**20, generator=g).double()
    assert bool(((u32 * 2**24) % 1 == 0).all())
    u64 = torch.rand(2**20, dtype=torch.float64, generator=g)
    assert bool(((u64 * 2**53) % 1 == 0).all())
    grid = torch.arange(2**24, dtype=torch.float64).mul(2.0**-24).float()
    assert int((grid.bfloat16() == 1).sum()) == 2**15
    n, chance = 2**22, float(impl.IMPLEMENTATIONS["gpt-fast"].zero_probability)
    zeros = int((torch.rand(n, dtype=torch.bfloat16, generator=g) == 0).sum())
    assert abs(zeros - n * chance) < 5 * math.sqrt(n * chance * (1 - chance))


def test_scheme_for_and_guards():
    with pytest.raises(ValueError, match="verifies a chain"):
        impl.scheme_for(impl.IMPLEMENTATIONS["vllm"], "tree:2,1")
    with pytest.raises(ValueError, match="verifies a tree"):
        impl.scheme_for(impl.IMPLEMENTATIONS["eagle2"], "chain:2")
    assert impl.scheme_for(impl.IMPLEMENTATIONS["eagle2"], "tree:3").name == "tree:3:distinct"
    assert impl.scheme_for(impl.IMPLEMENTATIONS["specinfer"], "tree:3:distinct").name == "tree:3"
    assert impl.scheme_for(impl.IMPLEMENTATIONS["llama-cpp"], "chain:3").name == "chain:max=3,stop=0.75"
    assert impl.scheme_for(impl.IMPLEMENTATIONS["vllm"], "chain:max=3,stop=0.5").name == "chain:max=3,stop=0.5"
    with pytest.raises(ValueError, match="verifies a chain"):
        impl.scheme_for(impl.IMPLEMENTATIONS["llama-cpp"], "block:2")
    with pytest.raises(ValueError, match="unknown implementation"):
        impl.get("hf")
    with pytest.raises(ValueError, match="steps"):
        impl.check(toy.random_model(8, 2, seed=1), 6)
    impl.check(SEED, 2)  # the default table fits


def test_table_and_json(cli, cli_json):
    reports = impl.table(SEED, ("a",), 2, models=4)
    assert [r.name for r in reports] == list(impl.IMPLEMENTATIONS)
    assert json.loads(json.dumps([r.to_dict() for r in reports]))
    out = cli_json("implementations", "--models", "4")
    got = {r["name"]: r["verdict"] for r in out["implementations"]}
    assert got == {n: "exact" if e.expected_exact else "NOT exact" for n, e in impl.IMPLEMENTATIONS.items()}
    code, text, err = cli("implementations", "--preset", "zeros", "--context", "z", "--name", "medusa-typical",
                          "--models", "0")
    assert code == 0 and "7/16" in text and "NOT exact" in text


def test_cli_refusals_are_one_line(cli):
    for argv in (["implementations", "--name", "nope"], ["implementations", "--tokens", "6", "--max-work", "100"],
                 ["implementations", "--context", "q"], ["check-rule", "vllm", "--scheme", "tree:2"]):
        code, out, err = cli(*argv)
        assert code == 2 and len(err.strip().splitlines()) == 1, argv


def test_check_rule_names_the_entries_when_the_target_is_neither_a_file_nor_an_entry(cli):
    code, out, err = cli("check-rule", "vlm")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "PATH.py:ClassName" in err and "vllm" in err and "'vlm'" in err


def test_check_rule_takes_an_entry(cli, cli_json):
    assert cli_json("check-rule", "vllm", "--models", "3", "--gammas", "1-2")["exact"] is True
    code, out, _ = cli("check-rule", "medusa-typical", "--models", "3")
    assert code == 1 and "NOT EXACT" in out
    tree = cli_json("check-rule", "eagle2", "--models", "3")
    assert tree["exact"] is True and tree["schemes"][0]["scheme"] == "tree:2,1:distinct"
    llama = cli_json("check-rule", "llama-cpp", "--models", "3", "--gammas", "1,3")
    assert llama["exact"] is True and [s["scheme"] for s in llama["schemes"]] == ["chain:max=1,stop=0.75",
                                                                                 "chain:max=3,stop=0.75"]


def test_vllm_verifies_its_drafts_as_point_masses():
    """vLLM's V1 runner gives its rejection sampler no draft probabilities (NO_DRAFT_PROBS: q(x) taken as 1),
    so a draft is kept with p(x) and a rejection draws from p without x. On the seed preset its tokens per
    round equal the other point-mass engines' (prompt lookup) after every context and trail the textbook rule's."""
    entry = impl.get("vllm")
    assert "NO_DRAFT_PROBS" in entry.source and "gpu_model_runner.py" in entry.source
    p, q = SEED.p(("b",)), SEED.q(("b",))
    top = q.index(max(q))
    assert entry.rule.draft_row(q)[top] == 1 and entry.rule.accept(p, q, top) == p[top]
    assert entry.rule.replacement(p, q) == [Fraction(0)] + [v / (1 - p[top]) for v in p[1:]]
    for scheme in (Chain(1), Chain(2), Chain(3)):
        for ctx in SEED.contexts():
            vllm = impl.evaluate(entry, SEED, ctx, 2, scheme=scheme, models=0)
            lookup = impl.evaluate(impl.get("hf-prompt-lookup"), SEED, ctx, 2, scheme=scheme, models=0)
            assert vllm.exact and vllm.total_variation == 0
            assert vllm.tokens_per_round == lookup.tokens_per_round < vllm.textbook_tokens_per_round
