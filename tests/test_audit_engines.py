"""`specsim audit` pointed at real engines: transformers on a local checkpoint pair with its drafting options,
the speculation an audit saw, and known bugs of real releases caught.

Every audit is seeded (run i uses seed + i), so each verdict is reproducible. The known bugs are judged at
``--tokens 2`` with the runs below; each was first checked to be caught at those runs from other, disjoint
seeds as well (the power, not one lucky seed), and the exact engine beside them passes at the same budget.
"""
import json
import types
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from specsim.gpt.audit_child import drafts_in_window  # noqa: E402
from specsim.gpt.hf.options import parse_hf_options, split_hf_options  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = f"{ROOT}/specsim/gpt/audit_engines.py"
BUGS = f"{ROOT}/specsim/gpt/audit_bugs.py"


def audit(cli, *argv):
    code, out, err = cli("audit", "--prompt", "def ", *argv, "--json")
    return code, (json.loads(out) if out else None), err


# -- --hf options, parsed strictly ------------------------------------------------------------------------
def test_hf_options_are_typed_and_split_between_the_assistant_and_generate():
    opts = parse_hf_options(["num_assistant_tokens=3", "assistant_confidence_threshold=0",
                             "num_assistant_tokens_schedule=heuristic", "prompt_lookup_num_tokens=2"])
    assert opts == {"num_assistant_tokens": 3, "assistant_confidence_threshold": 0.0,
                    "num_assistant_tokens_schedule": "heuristic", "prompt_lookup_num_tokens": 2}
    assistant, generate = split_hf_options(opts)
    assert set(assistant) == {"num_assistant_tokens", "assistant_confidence_threshold",
                              "num_assistant_tokens_schedule"} and generate == {"prompt_lookup_num_tokens": 2}


@pytest.mark.parametrize("item, words", [
    ("num_assistant_tokens=x", "whole number"), ("num_assistant_tokens=0", "whole number"),
    ("assistant_confidence_threshold=1.5", "from 0 to 1"), ("num_assistant_tokens_schedule=fast", "one of"),
    ("repetition_penalty=1.2", "cannot reproduce"), ("min_p=0.1", "cannot reproduce"),
    ("top_k=5", "--top-k"), ("temperature=0.5", "--temperature"), ("warp_speed=9", "unknown --hf option"),
    ("num_assistant_tokens", "key=value"),
])
def test_a_bad_hf_option_is_one_line(item, words):
    with pytest.raises(ValueError) as e:
        parse_hf_options([item])
    assert words in str(e.value) and "\n" not in str(e.value)


def test_the_same_option_twice_is_refused():
    with pytest.raises(ValueError, match="given twice"):
        parse_hf_options(["num_assistant_tokens=2", "num_assistant_tokens=3"])


# -- the speculation an audit saw ------------------------------------------------------------------------
def _round(parents, emitted):
    return types.SimpleNamespace(parents=parents, emitted=emitted)


def test_drafts_in_the_window_are_counted_by_their_position():
    chain = [-1, 0, 1, 2]  # a chain of 4 drafts: depths 1..4
    # K = 2: round 1 (one token emitted) holds depths 1, 2 in the window; round 2 starts at position 1: depth 1
    assert drafts_in_window([_round(chain, [5]), _round(chain, [6, 7])], 2) == 3
    assert drafts_in_window([_round(chain, [5, 6, 7])], 2) == 2  # the second round lies outside the window
    tree = [-1, -1, 0, 0, 2]  # depths 1, 1, 2, 2, 3
    assert drafts_in_window([_round(tree, [1, 2])], 2) == 4 and drafts_in_window([_round(tree, [1])], 1) == 2
    assert drafts_in_window([_round([], [9]), _round(chain, [1])], 1) == 0  # a round without drafts


def test_specsim_engine_reports_the_drafts_it_verified(cli):
    code, r, err = audit(cli, "--engine", "specsim", "--tokens", "2", "--samples", "150")
    assert code == 0, err
    # chain:4 at K = 2: two drafts of round 1 in the window, plus one of round 2 when round 1 emitted one token
    assert 2 * 150 <= r["verified_drafts"] <= 3 * 150 and r["runs_with_drafts"] == 150


def test_hf_at_one_token_drafts_nothing_and_is_refused(cli):
    pytest.importorskip("transformers")
    code, r, err = audit(cli, "--engine", "hf", "--tokens", "1", "--samples", "30")
    assert code == 2 and r is None
    line = err.strip().splitlines()[-1]
    assert "no speculative audit" in line and "--tokens" in line and "assistant_confidence_threshold=0" in line


# -- a local checkpoint pair and transformers' options ------------------------------------------------------
@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    pytest.importorskip("transformers")
    from specsim.gpt.hf.export import export_hf
    root = tmp_path_factory.mktemp("pair")
    export_hf(str(root / "target"), "target")
    export_hf(str(root / "draft"), "draft-distilled")
    return root


def test_a_checkpoint_pair_is_judged_against_its_own_target(cli, checkpoints):
    # roles swapped: the distilled drafter is the target, so a reference from the shipped target would fail
    code, r, err = audit(cli, "--engine", "hf", "--target", checkpoints / "draft", "--draft", checkpoints / "target",
                         "--tokens", "2", "--samples", "300", "--hf", "assistant_confidence_threshold=0",
                         "--hf", "num_assistant_tokens=3")
    assert code == 0, err
    assert r["verdict"] == "consistent with the target" and r["target"] == str(checkpoints / "draft")
    assert r["hf_options"] == {"assistant_confidence_threshold": 0.0, "num_assistant_tokens": 3}
    # K = 2: transformers drafts at most K - 1 = 1 token in the first round and nothing after it
    assert r["verified_drafts"] == r["runs_with_drafts"] == 300


@pytest.mark.parametrize("prompt, options", [
    ("def f(x): return f(x", ["prompt_lookup_num_tokens=2"]),  # n-grams of the prompt, no assistant model
    ("def ", ["num_assistant_tokens_schedule=heuristic", "assistant_confidence_threshold=0"]),
])
def test_transformers_drafting_options_pass_through_and_stay_exact(cli, prompt, options):
    pytest.importorskip("transformers")
    code, out, err = cli("audit", "--engine", "hf", "--prompt", prompt, "--tokens", "3", "--samples", "100",
                         *[a for o in options for a in ("--hf", o)], "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["runs_with_drafts"] > 0 and set(r["hf_options"]) == {o.split("=")[0] for o in options}


@pytest.mark.parametrize("argv, words", [
    (["--engine", "specsim", "--draft", "x"], "--drafter NAME"),
    (["--engine", "hf", "--target", "x"], "give both"),
    (["--engine", "specsim", "--hf", "num_assistant_tokens=2"], "--engine hf only"),
    (["--engine", "hf", "--hf", "repetition_penalty=1.3"], "cannot reproduce"),
    (["--engine", "hf", "--target", "/nonexistent/t", "--draft", "/nonexistent/d"], "/nonexistent/t"),
])
def test_bad_engine_settings_are_one_line(cli, argv, words):
    pytest.importorskip("transformers")
    code, r, err = audit(cli, *argv, "--samples", "10")
    assert code == 2 and r is None and words in err and len(err.strip().splitlines()) == 1, err


def test_a_transformers_outside_the_tested_range_is_warned_about(monkeypatch):
    pytest.importorskip("transformers")
    from specsim import deps
    from specsim.gpt import audit as gpt_audit
    assert gpt_audit.engine_settings("hf", None, None, [])[1] == []  # the installed release is tested
    monkeypatch.setattr(deps, "installed_version", lambda name: "4.44.2" if name == "transformers" else "1")
    warnings = gpt_audit.engine_settings("hf", None, None, [])[1]
    assert len(warnings) == 1 and "transformers 4.44.2" in warnings[0] and deps.TESTED["transformers"] in warnings[0]
    assert gpt_audit.engine_settings("specsim", None, None, [])[1] == []


# -- known bugs, caught ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("engine, samples, extra", [
    (f"{BUGS}:GreedyAssistant", 300, []),
    (f"{BUGS}:SharedNoise", 500, []),
    (f"{BUGS}:StaleCacheAfterRejection", 300, []),
    (f"{EXAMPLES}:RawQUnderTopK", 300, ["--top-k", "5"]),
])
def test_known_bugs_are_caught_at_two_tokens(cli, engine, samples, extra):
    code, r, err = audit(cli, "--engine", engine, "--tokens", "2", "--samples", samples, *extra)
    assert code == 1, err
    assert r["verdict"] == "not the target" and r["p_value"] < r["alpha"]


def test_the_textbook_round_with_its_hooks_stays_exact(cli):
    code, r, err = audit(cli, "--engine", f"{EXAMPLES}:Textbook", "--tokens", "2", "--samples", "300")
    assert code == 0, err


def test_a_bug_after_the_first_rejection_is_invisible_in_the_first_token(cli):
    # the first round is exact, so its first token is a sample of p: only a later token can show the bug
    code, r, err = audit(cli, "--engine", f"{BUGS}:StaleCacheAfterRejection", "--tokens", "1", "--samples", "300")
    assert code == 0, err


# -- the README's wrapper around to_hf_model, and a live Gemma-4 pair -----------------------------------------
def test_the_readmes_to_hf_model_wrapper_is_an_exact_engine(cli, tmp_path):
    pytest.importorskip("transformers")
    import re
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = next(b for b in re.findall(r"```python\n(.*?)```", text, flags=re.S) if "class HFWrapper" in b)
    path = tmp_path / "wrapper.py"
    path.write_text(block, encoding="utf-8")
    code, r, err = audit(cli, "--engine", f"{path}:HFWrapper", "--tokens", "2", "--samples", "200")
    assert code == 0, err


def test_a_tiny_gemma4_pair_is_audited_live_and_caught_token_by_token(cli, tmp_path):
    transformers = pytest.importorskip("transformers")
    if not hasattr(transformers, "Gemma4AssistantForCausalLM"):
        pytest.skip(f"transformers {transformers.__version__} has no Gemma-4 assistant")
    from specsim.gpt import api
    from specsim.gpt.hf.gemma4 import write_tiny_gemma4_pair
    paths = write_tiny_gemma4_pair(str(tmp_path), api.load_pair("distilled", device="cpu").vocab)
    # transformers' own multi-token candidate generator: argmax drafts, raw logits as q
    # (transformers issue 47932); judged token by token over 30 tokens, so every round counts (caught at these
    # runs from seeds 0 and 5000 alike)
    code, r, err = audit(cli, "--engine", "hf", "--target", paths["target"], "--draft", paths["assistant"],
                         "--tokens", "30", "--samples", "100", "--hf", "assistant_confidence_threshold=0")
    assert code == 1, err
    assert r["verdict"] == "not the target" and r["runs_with_drafts"] == 100 and r["verified_drafts"] > 100
