"""transformers' own ``_speculative_sampling`` against the gallery's exact round (entry ``hf-sampling``).

The function (transformers 5.24 and 5.25, generation/utils.py; signature read below) verifies one round of
batch size 1: it takes the drafted ids, the assistant's logits (1, L, V) and the target's logits
(1, L + 1, V) and returns the emitted tokens. Here the drafts are sampled from q with a seeded torch
generator, the logits are log(probability) (log 0 = -inf, so softmax gives the toy rows back up to
float32 rounding), and 200,000 seeded rounds per case are compared with the exact round distribution
of the gallery entry by a chi-square test at a false-alarm rate of 1/1000 (the seeds are fixed, so a run
is reproducible). The float edge is reproduced by planting a uniform of 0: up to 5.24 the function keeps a
draft when u <= p/q, so u = 0 keeps a token the target forbids; from 5.25 it compares strictly (u < p/q) and
rejects it. The test reads the installed release and asserts that release's rule; it skips only when
transformers is absent, never because of its version (pyproject.toml bounds the releases pip installs).
"""
from __future__ import annotations

import inspect
import itertools

import pytest
from packaging.version import Version

transformers = pytest.importorskip("transformers", reason="the transformers cross-check needs transformers "
                                                          "(the 'dev' or 'hf' extra)")
torch = pytest.importorskip("torch", reason="transformers' verification runs on torch")
stats = pytest.importorskip("scipy.stats", reason="the chi-square test uses scipy")
utils = pytest.importorskip("transformers.generation.utils")

from specsim import exact, toy  # noqa: E402
from specsim.labs.implementations import IMPLEMENTATIONS  # noqa: E402
from specsim.schemes import Chain  # noqa: E402

ROUNDS = 200_000
FALSE_ALARM = 1e-3
ENTRY = IMPLEMENTATIONS["hf-sampling"]
# From 5.25 on, transformers keeps a draft only when u < p/q (strictly); before, when u <= p/q.
STRICT = Version(Version(transformers.__version__).base_version) >= Version("5.25")


def speculative_sampling():
    """transformers' function, after checking the parameters this test passes are still its first four.

    5.24.0 takes (candidate_input_ids, candidate_logits, candidate_length, new_logits,
    assistant_ensemble_weight=None); 4.x releases also took is_done_candidate (passed False: not at EOS).
    """
    fn = getattr(utils, "_speculative_sampling", None)
    assert fn is not None, (f"transformers {transformers.__version__} has no generation.utils._speculative_sampling: "
                            "read the new release and update the hf-sampling entry and this test")
    params = inspect.signature(fn).parameters
    assert list(params)[:4] == ["candidate_input_ids", "candidate_logits", "candidate_length", "new_logits"], params
    if "is_done_candidate" in params:
        return lambda ids, cand, length, new: fn(ids, cand, length, new, is_done_candidate=False)
    return fn


def logits(rows):
    """(1, len(rows), V) float32 logits whose softmax is the rows (log 0 = -inf)."""
    return torch.tensor([[[float(v) for v in row] for row in rows]], dtype=torch.float64).log().float()


def round_inputs(model, ctx, drafts):
    """What the assisted-decoding loop hands the function for these drafted token indices."""
    tokens = [model.vocab[d] for d in drafts]
    paths = [tuple(ctx) + tuple(tokens[:i]) for i in range(len(drafts) + 1)]
    ids = torch.tensor([[0] + list(drafts)])
    return ids, logits([model.q(c) for c in paths[:-1]]), logits([model.p(c) for c in paths])


def hf_counts(model, ctx, gamma, rounds, seed):
    """Emitted sequence -> count over ``rounds`` rounds: drafts sampled from q, verified by transformers."""
    fn = speculative_sampling()
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(seed)
    v = len(model.vocab)
    draft_rows = {}
    drafts = torch.empty((rounds, gamma), dtype=torch.long)
    for i in range(gamma):  # draft position i depends on the drafts before it: sample per prefix
        prefixes = [()] if i == 0 else list(itertools.product(range(v), repeat=i))
        for prefix in prefixes:
            rows = (drafts[:, :i] == torch.tensor(prefix)).all(dim=1) if i else torch.ones(rounds, dtype=torch.bool)
            q = model.q(tuple(ctx) + tuple(model.vocab[t] for t in prefix))
            draft_rows[prefix] = q
            n = int(rows.sum())
            if n:
                drafts[rows, i] = torch.multinomial(torch.tensor([float(x) for x in q]), n, True, generator=gen)
    inputs = {}
    counts = {}
    torch.manual_seed(seed + 1)  # the function's own torch.rand_like and torch.multinomial
    for d in drafts.tolist():
        key = tuple(d)
        if key not in inputs:
            inputs[key] = round_inputs(model, ctx, key)
        ids, cand, new = inputs[key]
        valid, _ = fn(ids, cand, gamma, new)
        out = tuple(model.vocab[t] for t in valid[0].tolist())
        counts[out] = counts.get(out, 0) + 1
    return counts


@pytest.mark.parametrize("preset, ctx, gamma", [("seed", ("a",), 2), ("zeros", ("x",), 1)])
def test_transformers_round_matches_the_exact_round(preset, ctx, gamma):
    """Chi-square over the round's outcomes; an outcome of probability 0 must never appear. On zeros after x
    the drafter proposes z (q 1/2) which the target forbids (p 0): transformers must reject it."""
    model = toy.load_model(preset)
    want = exact.round_distribution(model, ctx, Chain(gamma), ENTRY.rule).outcomes
    got = hf_counts(model, ctx, gamma, ROUNDS, seed=25)
    assert set(got) <= set(want), set(got) - set(want)
    keys = sorted(want)
    observed = [got.get(k, 0) for k in keys]
    expected = [ROUNDS * float(want[k]) for k in keys]
    assert min(expected) > 5  # the chi-square approximation holds
    result = stats.chisquare(observed, expected)
    assert result.pvalue > FALSE_ALARM, (result, dict(zip(keys, observed)))


def test_planted_zero_uniform_follows_the_installed_releases_comparison(monkeypatch):
    """zeros after x, draft z: p(z | x) = 0 < q(z | x) = 1/2, so p/q = 0. With every uniform 0:

    - up to 5.24 (u <= p/q) transformers keeps z (n_matches 1) and draws the bonus from p(. | z) =
      (1/4, 0, 3/4): the float edge the gallery prices at q(z) P(u = 0) = 2^-25 per round;
    - from 5.25 (u < p/q) it rejects z and draws from the residual, which gives z no mass.
    """
    fn = speculative_sampling()
    model = toy.load_model("zeros")
    z = model.vocab.index("z")
    ids, cand, new = round_inputs(model, ("x",), (z,))
    torch.manual_seed(0)
    valid, n = fn(ids, cand, 1, new)
    assert int(n) == 0 and valid[0].tolist()[0] != z  # a real uniform rejects it
    monkeypatch.setattr(torch, "rand_like", lambda t, *a, **k: torch.zeros_like(t))
    for seed in range(20):
        torch.manual_seed(seed)
        valid, n = fn(ids, cand, 1, new)
        tokens = valid[0].tolist()
        if STRICT:
            assert int(n) == 0 and len(tokens) == 1 and tokens[0] != z, (transformers.__version__, tokens)
        else:
            first, bonus = tokens
            assert int(n) == 1 and first == z and model.vocab[bonus] in ("x", "z"), (transformers.__version__, tokens)
