"""`specsim gpt generate --scheme` (and its shorthand --tree / --verify block / --gamma), `--rule`, and
`specsim gpt bench --schemes`: JSON keys, the old flags giving the same run, lossy rules, refusals."""
import json

import pytest

from specsim.schemes.tree import drafted


def test_generate_tree_json_has_the_tree_trace(cli_json):
    d = cli_json("gpt", "generate", "--prompt", "def f(x):", "--tokens", "20", "--tree", "2,2,1",
                 "--drafts", "distinct", "--device", "cpu", "--seed", "3")
    assert (d["trace_format"], d["mode"], d["scheme"], d["gamma"]) == (2, "speculative", "tree:2,2,1:distinct", None)
    assert len(d["tokens"]) == 20 and len(d["rounds"]) == d["target_passes"]
    for r in d["rounds"]:
        assert {"scheme", "parents", "drafts", "accepted_nodes", "emitted", "start", "mask_shape", "cache",
                "p_rows", "q_rows", "tried", "accepted", "accepted_flags", "acceptance", "closing_kind",
                "closing_token", "u"} <= set(r)
        m = len(r["parents"])
        assert m == len(r["drafts"]) == drafted((2, 2, 1)) and r["mask_shape"] == [m + 1, r["start"] + m + 1]
        assert r["emitted"][:-1] == [r["drafts"][i] for i in r["accepted_nodes"]]
        assert r["accepted"] == len(r["accepted_nodes"]) and len(r["accepted_flags"]) == len(r["tried"])
        assert r["cache"]["target"]["after_crop"] == r["start"] + r["accepted"] + 1
    assert sum(len(r["emitted"]) for r in d["rounds"]) >= 20


def test_generate_scheme_equals_the_old_flags(cli_json):
    base = ("gpt", "generate", "--prompt", "def f(x):", "--tokens", "15", "--device", "cpu", "--seed", "5")
    for flags, scheme in ((["--verify", "block"], "block:4"), (["--gamma", "3"], "chain:3"),
                          (["--tree", "2,1", "--drafts", "distinct"], "tree:2,1:distinct"), ([], "chain:4")):
        old, new = cli_json(*base, *flags), cli_json(*base, "--scheme", scheme)
        assert old == new and old["scheme"] == scheme


def test_generate_block_json_marks_the_scheme(cli_json):
    d = cli_json("gpt", "generate", "--prompt", "def f(x):", "--tokens", "15", "--verify", "block",
                 "--device", "cpu")
    assert d["scheme"] == "block:4" and d["gamma"] == 4 and len(d["tokens"]) == 15
    assert all(r["block"].keys() == {"w", "h", "stops"} and len(r["block"]["w"]) == 5 for r in d["rounds"])


def test_generate_readable_names_the_scheme(cli):
    code, out, _ = cli("gpt", "generate", "--prompt", "x = ", "--tokens", "10", "--tree", "3,1", "--order", "bfs",
                       "--device", "cpu")
    assert code == 0 and out.startswith("x = ") and "tree:3,1 (bfs): 10 tokens in" in out
    code, out, _ = cli("gpt", "generate", "--prompt", "x = ", "--tokens", "10", "--verify", "block", "--device", "cpu")
    assert code == 0 and "block:4: 10 tokens in" in out


@pytest.mark.parametrize("argv,rule", [(["--scheme", "tree:2,1"], "tree-no-residual-update"),
                                       (["--scheme", "chain:3"], "typical-acceptance"),
                                       (["--tree", "2", "--drafts", "distinct"], "top-k-tree-as-if-sampled"),
                                       (["--gamma", "2"], "greedy-draft-with-sampled-q")])
def test_a_lossy_rule_runs_on_the_real_model(cli, cli_json, argv, rule):
    """A lossy rule runs end to end and changes the text. Whether it changes a given text is chance (a round
    where the two rules decide alike leaves it as it was), so the text is long enough that on the shipped
    weights each of these rules does, with this seed."""
    args = ("gpt", "generate", "--prompt", "def f(x):", "--tokens", "60", "--device", "cpu", "--seed", "1", *argv)
    d = cli_json(*args, "--rule", rule)
    assert len(d["tokens"]) == 60 and d["tokens"] != cli_json(*args)["tokens"]  # the rule changes the text
    code, out, _ = cli(*args, "--rule", rule)
    assert code == 0 and f"rule {rule}: 60 tokens in" in out


@pytest.mark.parametrize("argv,message", [
    (["--tree", "0"], "every width must be >= 1"),
    (["--tree", "2,,1"], "empty width"),
    (["--tree", "-1"], "every width must be >= 1"),
    (["--tree", "30,30"], "the limit is 64"),
    (["--tree", "2", "--plain"], "--tree does not combine with --plain"),
    (["--tree", "2", "--verify", "block"], "--tree does not combine with --verify block"),
    (["--tree", "2", "--draft", "lookup:2"], "the lookup:2 drafter cannot draft a tree"),
    (["--verify", "block", "--plain"], "--plain does not combine with --verify block"),
    (["--scheme", "chain:3", "--plain"], "--plain does not combine with --scheme"),
    (["--scheme", "chain:3", "--gamma", "3"], "--scheme and --gamma do not combine"),
    (["--scheme", "tree:2", "--rule", "typical-acceptance"], "'typical-acceptance' is a chain rule"),
    (["--scheme", "chain:2", "--rule", "tree-no-residual-update"], "'tree-no-residual-update' is a tree rule"),
    (["--scheme", "block:2", "--rule", "always-accept"], "block verification has its own rule"),
    (["--rule", "temperature-on-target-only"], "runs on the toy models only"),
    (["--rule", "nope"], "unknown rule 'nope'"),
    (["--scheme", "tree:2,x"], "scheme 'tree:2,x'"),
    (["--drafts", "unique", "--tree", "2"], "invalid choice: 'unique'"),
])
def test_bad_tree_and_block_input_is_one_line_exit_2(cli, argv, message):
    code, out, err = cli("gpt", "generate", "--prompt", "x", "--device", "cpu", *argv)
    assert code == 2 and out == "" and message in err and err.count("\n") == 1


def test_bench_schemes_json_keys(cli, monkeypatch):
    from specsim.gpt.measure import bench
    monkeypatch.setattr(bench, "N_PROMPTS", 1)  # keys only: keep it quick
    code, out, err = cli("gpt", "bench", "--schemes", "chain:2;block:2;tree:2,1;tree:2:distinct", "--tokens", "8",
                         "--repeats", "1", "--device", "cpu", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert [r["scheme"] for r in d["schemes"]] == ["chain:2", "block:2", "tree:2,1", "tree:2:distinct"]
    for r in d["schemes"]:
        assert {"scheme", "tree", "drafted_tokens", "tokens_per_pass", "alpha", "speedup", "verify_cost",
                "slides"} <= set(r)
        assert r["tokens_per_pass"] >= 1 and r["verify_cost"] > 0 and r["speedup"] > 0 and r["slides"] == 0
    assert [r["drafted_tokens"] for r in d["schemes"]] == [2, 2, 4, 2]
    assert [r["tree"] for r in d["schemes"]] == [[1, 1], [1, 1], [2, 1], [2]]
    assert {"plain_tokens_per_s", "target_step_ms", "threads", "tokens", "prompts"} <= set(d)
    assert d["threads"] == 1 and d["tokens"] == 8 and d["temperature"] == 1


@pytest.mark.parametrize("schemes,message", [("chain:0", "G from 1 to 64"), ("tree:2,,1", "empty width"),
                                             ("medusa:3", "scheme 'medusa:3'"),
                                             ("tree:2:unique", "drafts must be iid or distinct"),
                                             ("chain:4;;tree:2", "scheme ''")])
def test_bad_schemes_are_one_line_exit_2(cli, schemes, message):
    code, out, err = cli("gpt", "bench", "--schemes", schemes, "--device", "cpu")
    assert code == 2 and out == "" and message in err and err.count("\n") == 1


def test_bench_trees_with_a_lookup_drafter_are_refused_before_timing(cli):
    code, out, err = cli("gpt", "bench", "--schemes", "chain:2;tree:2", "--draft", "lookup:2", "--device", "cpu")
    assert code == 2 and out == "" and "the lookup:2 drafter cannot draft a tree" in err and err.count("\n") == 1
