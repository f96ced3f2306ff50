"""`gpt bench --profile`: a round split into its parts, the floors of the model passes, costs measured apart."""
import itertools

import pytest

torch = pytest.importorskip("torch")

from specsim.gpt.config import PRESETS  # noqa: E402
from specsim.gpt.decode import Sampling  # noqa: E402
from specsim.gpt.measure import profile as prof  # noqa: E402
from specsim.gpt.model import GPT  # noqa: E402

PROMPT = "def add(a, b):\n    return a + b\n\ndef sub(a, b):\n    return a - b\n\ndef "  # over 32 characters


def test_a_pass_floor_is_the_slower_of_arithmetic_and_reading_the_weights():
    model = GPT(PRESETS["tiny"])
    c, w = model.config, prof.step_weights(model)
    assert w == sum(m.weight.numel() for m in model.modules() if isinstance(m, torch.nn.Linear))
    flops = 3 * (2 * w + 4 * (10 + 3) * c.n_embd * c.n_layer)
    bytes_ = 4 * (w + 2 * c.n_layer * (10 + 3) * c.n_embd)
    assert prof.pass_floor(model, 3, 10, {"flops_per_s": 1.0, "bytes_per_s": 1e30}) == flops  # compute-bound
    assert prof.pass_floor(model, 3, 10, {"flops_per_s": 1e30, "bytes_per_s": 1.0}) == bytes_  # memory-bound


def test_the_drafters_step_weights_count_only_what_a_step_multiplies(pair):
    from specsim.gpt import api
    target = pair.target
    head = target.lm_head.weight.numel()
    block = prof.linear_weights(target.blocks[0])
    early = api.load_pair("early-exit:2", device="cpu").drafter().model
    assert prof.step_weights(early) == 2 * block + head
    assert prof.step_weights(target) == target.config.n_layer * block + head


def test_the_parts_of_the_rounds_add_up_to_the_decoding_time(pair):
    """With a clock that ticks once per reading, every part counts readings: the seven parts sum to the
    decoding time exactly, the drafter's in-round compute is one tick per drafter pass of the rounds and the
    verify compute one tick per round (the prefills, over 32 positions, are counted apart)."""
    ticks = itertools.count()
    clock = lambda: float(next(ticks))  # noqa: E731
    ids = pair.tokenizer.encode(PROMPT)
    run = prof.profiled_run(pair, ids, 30, 3, Sampling(), 0, clock, torch.device("cpu"))
    assert set(run["parts"]) == set(prof.PARTS)
    assert sum(run["parts"].values()) == run["decode"]
    assert run["parts"]["verify compute"] == run["rounds"]
    assert run["parts"]["draft compute"] == run["steps"]  # every drafter pass of a round: one tick
    assert all(v >= 0 for v in run["parts"].values())


def test_profile_cli_reports_every_part_per_gamma(cli_json):
    out = cli_json("gpt", "bench", "--profile", "--gammas", "2", "--tokens", "12", "--repeats", "1", "--device", "cpu")
    (r,) = out["results"]
    assert r["gamma"] == 2 and list(r["ms_per_round"]) == list(prof.PARTS) == list(r["floor_ms"])
    assert r["floor_ms"]["verify compute"] > 0 and r["floor_ms"]["decide"] == 0
    assert out["probe"]["gflops_per_s"] > 0 and out["probe"]["gbytes_per_s"] > 0
    assert r["ratio_apart"] == pytest.approx(r["speedup"] / r["predicted_apart"], rel=1e-3)


def test_the_profile_counts_each_rounds_first_call_over_several_positions():
    """A round's first drafter call re-reads what the round before kept: a small GPT, the last draft beside
    the closing token after a full acceptance (two positions); the EAGLE drafter, every kept token with the
    target's features (accepted + 1 positions, a step when nothing was accepted). The last round has no
    round after it."""
    import time
    from collections import Counter
    from specsim.gpt import api
    for draft in ("distilled", "eagle"):
        pair = api.load_pair(draft, device="cpu")
        run = prof.profiled_run(pair, pair.tokenizer.encode(PROMPT), 60, 3, Sampling(), 0, time.perf_counter,
                                torch.device("cpu"))
        before = run["accepted"][:-1]
        expected = Counter(2 for a in before if a == 3) if draft == "distilled" else \
            Counter(a + 1 for a in before if a > 0)
        assert run["feeds"] == expected and sum(expected.values()) > 0


def test_the_forecast_drafts_as_a_round_does(cli_json):
    """cost_apart is a round's drafting per drafted token, over a target step: its steps at the step's cost,
    and its first calls over several positions at theirs, each timed apart."""
    out = cli_json("gpt", "bench", "--profile", "--draft", "eagle", "--gammas", "3", "--tokens", "40",
                   "--repeats", "1", "--device", "cpu")
    (r,) = out["results"]
    feeds, feed_ms = r["feeds_per_round"], out["draft_feed_apart_ms"]["3"]
    assert feeds and set(feeds) == set(feed_ms) and all(int(m) > 1 for m in feeds)
    drafting = (r["draft_steps_per_round"] - sum(feeds.values())) * out["draft_step_apart_ms"]["3"] + \
        sum(k * feed_ms[m] for m, k in feeds.items())
    assert r["cost_apart"] == pytest.approx(drafting / (3 * out["target_step_apart_ms"]), rel=1e-2, abs=1e-4)


@pytest.mark.parametrize("flag", [["--schemes", "chain:2"], ["--drafters", "distilled"], ["--peer", "hf"]])
def test_profile_refuses_what_it_does_not_split_in_one_line(cli, flag):
    code, out, err = cli("gpt", "bench", "--profile", *flag)
    assert code == 2 and "--profile and" in err and err.count("\n") == 1


@pytest.mark.parametrize("draft", ["distilled", "eagle", "early-exit:2", "lookup:2"])
def test_costs_apart_start_every_drafter_as_decoding_starts_it(draft):
    """The drafter's step is timed after the drafter started on the prompt as decoding starts it (the
    EAGLE drafter reads the target's features first; it used to be fed the prompt bare and refused)."""
    import time
    from specsim.gpt import api
    pair = api.load_pair(draft, device="cpu")
    best = prof.costs_apart(pair, pair.tokenizer.encode(PROMPT), [2], time.perf_counter, torch.device("cpu"),
                            repeats=1, calls=2, feeds={2: [1, 3, 2]})
    assert best["target"] > 0 and best["verify"][2] > 0
    assert (best["draft"][2] > 0) == (draft != "lookup:2")  # prompt lookup has no model: no cost
    feeds = best["feed"][2]  # a call over one position is a step, timed as one
    assert (list(feeds), all(s > 0 for s in feeds.values())) == (([2, 3], True) if draft != "lookup:2" else ([], True))
