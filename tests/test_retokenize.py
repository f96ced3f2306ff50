"""A drafter with another tokenizer (``specsim.labs.retokenize``): which verifications stay exact, exactly.

Exact results are Fractions compared with ==. The brute-force checks below
recompute the same distributions with separate code: a regular expression
for the target's tokenizer, and the point-mass rule written the way engines
run it (the target samples every position and drafts are kept while they
match), enumerated over every draft and every target draw.
"""
from __future__ import annotations

import itertools
import re
from fractions import Fraction as F

import pytest

from specsim import exact
from specsim.labs import retokenize as R

PAIR = R.example()
TARGET_CUT = re.compile("ab|a|b")  # longest match first over {a, b, ab}, written without the library


def brute_draft_texts(text, gamma):
    """{draft text: probability}: every string of gamma drafter characters."""
    out = {}
    for chars in itertools.product("ab", repeat=gamma):
        pr, at = F(1), text
        for c in chars:
            pr *= dict(zip(PAIR.draft.vocab, PAIR.draft.row(at)))[c]
            at += c
        out["".join(chars)] = pr
    return out


def brute_sample_and_match(text, gamma, boundary):
    """The point-mass rule as engines run it: p sampled at every draft position, drafts kept while equal."""
    vocab = PAIR.target.vocab
    out = {}
    for draft, pd in brute_draft_texts(text, gamma).items():
        tokens = tuple(TARGET_CUT.findall(draft))
        if boundary == "drop" and tokens[-1] == "a":
            tokens = tokens[:-1]
        for draws in itertools.product(vocab, repeat=len(tokens) + 1):
            pr, emitted = pd, ()
            for i, y in enumerate(draws):  # the target's draw at position i sees the drafts before it
                pr *= dict(zip(vocab, PAIR.target.row(text + "".join(tokens[:i]))))[y]
            for i, y in enumerate(draws):
                emitted += (y,)
                if i == len(tokens) or y != tokens[i]:
                    break
            out[emitted] = out.get(emitted, 0) + pr
    return {k: v for k, v in out.items() if v}


@pytest.mark.parametrize("boundary", ["keep", "drop"])
@pytest.mark.parametrize("gamma", [1, 2, 3])
def test_point_mass_round_equals_sample_and_match_by_brute_force(gamma, boundary):
    for text in ("a", "b"):
        assert R.round_distribution(PAIR, text, gamma, "point-mass", boundary).outcomes == \
            brute_sample_and_match(text, gamma, boundary)


def test_target_joint_equals_the_product_of_p_by_brute_force():
    vocab = PAIR.target.vocab
    brute = {}
    for seq in itertools.product(vocab, repeat=3):
        pr, at = F(1), "b"
        for y in seq:
            pr *= dict(zip(vocab, PAIR.target.row(at)))[y]
            at += y
        brute[seq] = pr
    assert R.target_joint(PAIR, "b", 3) == brute


def test_drafter_token_row_equals_the_first_token_of_the_cut_by_brute_force():
    for text in ("a", "b"):
        first = {x: F(0) for x in PAIR.target.vocab}
        for draft, pr in brute_draft_texts(text, 3).items():
            first[TARGET_CUT.findall(draft)[0]] += pr
        assert R.drafter_token_row(PAIR, text) == tuple(first[x] for x in PAIR.target.vocab)


@pytest.mark.parametrize("variant", ["point-mass", "draft-law"])
@pytest.mark.parametrize("boundary", R.BOUNDARIES)
def test_exact_variants_keep_the_target_distribution_of_three_tokens(variant, boundary):
    for text in ("a", "b"):
        for gamma in (1, 2, 3):
            assert R.speculative_joint(PAIR, text, gamma, 3, variant, boundary) == R.target_joint(PAIR, text, 3)
            assert R.total_variation(PAIR, text, gamma, 3, variant, boundary) == 0


def test_stream_law_is_exact_only_when_the_last_token_is_settled():
    tv = {b: R.total_variation(PAIR, "a", 2, 3, "stream-law", b) for b in R.BOUNDARIES}
    assert tv == {"keep": F(111, 500), "drop": F(637, 12500), "extend": 0}
    # with extend, the draft's own law is the stream's law: the two rounds are one
    for gamma in (1, 2, 3):
        assert R.round_distribution(PAIR, "b", gamma, "stream-law", "extend").outcomes == \
            R.round_distribution(PAIR, "b", gamma, "draft-law", "extend").outcomes


def test_drafter_probabilities_as_q_are_lossy_for_every_boundary():
    tv = {b: R.total_variation(PAIR, "a", 2, 3, "drafter-as-q", b) for b in R.BOUNDARIES}
    assert tv == {"keep": F(912, 3125), "drop": F(637, 12500), "extend": F(873, 12500)}
    # one drafted token, settled: its law is the drafter's row, so the misconception is right there
    assert R.total_variation(PAIR, "a", 1, 3, "drafter-as-q", "extend") == 0


def test_same_tokenizer_and_intersection_drafters_are_exact():
    for drafter in ("same", "intersection"):
        chained = exact.speculative_joint(R.TargetTokenPair(PAIR, drafter), ("a",), 2, 3)
        assert chained == R.target_joint(PAIR, "a", 3)


def test_costs_one_draft_by_hand():
    """gamma = 1 after "a": point mass sum_x D(x) p(x); textbook rule sum_x min(p(x), q(x))."""
    p = PAIR.target.row("a")  # a, b, ab
    q = PAIR.draft.row("a")  # a, b
    c = R.costs(PAIR, "a", 1)
    assert c["point-mass, keep"] == q[0] * p[0] + q[1] * p[1]
    assert c["intersection"] == min(p[0], q[0]) + min(p[1], q[1])
    assert c["same tokenizer"] == sum(min(a, b) for a, b in zip(p, R.drafter_token_row(PAIR, "a")))
    assert c["draft-law, extend"] == c["same tokenizer"]


def test_costs_pinned():
    assert R.costs(PAIR, "a", 2) == {
        "point-mass, keep": F(2061, 5000), "point-mass, drop": F(857, 2500), "point-mass, extend": F(10071, 25000),
        "draft-law, keep": F(471, 500), "draft-law, drop": F(359, 500), "draft-law, extend": F(523, 500),
        "intersection": F(81, 100), "same tokenizer": F(3083, 2500)}
    r = R.round_distribution(PAIR, "a", 1, "point-mass", "extend")
    assert r.drafter_steps == 1 + PAIR.draft.row("a")[0]  # one more character after a drafted "a"
    assert r.expected_tokens == r.expected_accepted + 1


@pytest.mark.parametrize("make, message", [
    (lambda: R.text_model([], {}), "non-empty list"),
    (lambda: R.text_model(["a", "a"], {"a": [1, 0]}), "twice"),
    (lambda: R.text_model(["a", "b"], {"a": ["1/2", "1/2"]}), "no row for the context 'b'"),
    (lambda: R.text_model(["a", "b"], {"a": ["1/2", "1/3"], "b": [1, 0]}), "sums to 5/6"),
    (lambda: R.text_model(["a", "b"], {"a": [1, 0], "b": [1, 0], "c": [1, 0]}), "'c' is not 1 character"),
    (lambda: R.text_model(["a"], {"a": [1]}, order=0), "order must be"),
    (lambda: R.MixedPair(R.text_model(["a"], {"a": [1]}), PAIR.draft), "same characters"),
    (lambda: R.MixedPair(R.text_model(["a", "b", "abb"], {"a": [1, 0, 0], "b": [1, 0, 0]}), PAIR.draft),
     "more than 2 characters"),
    (lambda: R.MixedPair(R.text_model(["a", "ab"], {"a": [1, 0], "b": [1, 0]}), PAIR.draft), "'b' is not a target token"),
    (lambda: R.round_distribution(PAIR, "a", 2, "textbook"), "unknown variant"),
    (lambda: R.round_distribution(PAIR, "a", 2, "point-mass", "cut"), "unknown boundary"),
    (lambda: R.round_distribution(PAIR, "a", 0), "gamma must be an integer from 1"),
    (lambda: R.speculative_joint(PAIR, "a", 2, 99), "number of tokens must be"),
    (lambda: R.round_distribution(PAIR, "", 2), "at least 1 character"),
    (lambda: R.round_distribution(PAIR, "ac", 2), "'c' of the text"),
    (lambda: R.round_distribution(PAIR, "a", 40), "lower γ"),
    (lambda: R.TargetTokenPair(PAIR, "other"), "unknown drafter"),
    (lambda: R.stream_row(PAIR, "a", ("a", "b")), "never writes"),
    (lambda: PAIR.target.row("ac"), "do not spell"),
])
def test_bad_input_is_one_line(make, message):
    with pytest.raises(ValueError) as e:
        make()
    assert message in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_exact_variants_on_random_pairs_with_a_multi_character_drafter_token(seed):
    """Target {a, b, ab} of order 2, drafter {a, b, ba} of order 1: random rows, every boundary."""
    import random

    from specsim.toy import random_row

    rng = random.Random(seed)
    target = R.text_model(("a", "b", "ab"), {k: random_row(rng, 3, 12, zeros=False) for k in ("aa", "ab", "ba", "bb")}, 2)
    draft = R.text_model(("a", "b", "ba"), {k: random_row(rng, 3, 12, zeros=False) for k in ("a", "b")})
    pair = R.MixedPair(target, draft)
    for variant in ("point-mass", "draft-law"):
        for boundary in R.BOUNDARIES:
            assert R.total_variation(pair, "ab", 2, 3, variant, boundary) == 0, (variant, boundary)
    assert R.total_variation(pair, "ab", 2, 3, "drafter-as-q", "keep") > 0
    # a drafter token of 2 characters moves the cut, and where it falls says something about the tokens
    # before it: the stream's law is no longer the draft's, even with extend
    assert R.total_variation(pair, "ab", 1, 3, "stream-law", "extend") == \
        {0: F(701, 32400), 1: F(116123, 7729920), 2: F(89, 5760)}[seed]


def test_lesson_27_claims_about_transformers_hold_in_the_installed_source():
    """Lesson 27 describes transformers' two different-tokenizer paths as read in 5.25.0; the lines it
    relies on must be in the installed source (read as text: transformers is not imported)."""
    import importlib.util
    from importlib.metadata import version
    from pathlib import Path

    spec = importlib.util.find_spec("transformers")
    if spec is None:
        pytest.skip("transformers is not installed (the hf extra)")
    where = Path(spec.origin).parent / "generation"
    cg, utils = (where / "candidate_generator.py").read_text(), (where / "utils.py").read_text()
    installed = version("transformers")
    for needle in ("class AssistedCandidateGeneratorDifferentTokenizers(AssistedCandidateGenerator)",
                   "def convert_source_tokens_to_target_tokens(", "def _get_tokens_diag(", "target_lookbehind",
                   "assistant_lookbehind", "return new_target_ids, None",
                   "class UniversalSpeculativeDecodingGenerator(AssistedCandidateGeneratorDifferentTokenizers)",
                   "class AssistantToTargetTranslator", "SuppressTokensLogitsProcessor", "def get_target_ids(",
                   "def get_target_logits(", "2502.05202"):
        assert needle in cg, (installed, needle)
    path = utils[utils.index("def _get_candidate_generator("):]
    order = [path.index(s) for s in ("generation_config.do_sample is True", "assistant_prune_lm_head=True",
                                     "UniversalSpeculativeDecodingGenerator(", "generation_config.do_sample is False",
                                     "AssistedCandidateGeneratorDifferentTokenizers(")]
    assert order == sorted(order), installed
    for needle in ("if do_sample and candidate_logits is not None:", "selected_tokens = new_logits.argmax(dim=-1)"):
        assert needle in utils, (installed, needle)


def test_work_is_refused_before_it_starts():
    with pytest.raises(ValueError, match="lower γ") as e:
        R.costs(PAIR, "a", 9)
    assert "\n" not in str(e.value)
    with pytest.raises(ValueError, match="lower γ or the number of tokens"):
        R.total_variation(PAIR, "a", 12, 2)
