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
                            repeats=1, calls=2)
    assert best["target"] > 0 and best["verify"][2] > 0
    assert (best["draft"][2] > 0) == (draft != "lookup:2")  # prompt lookup has no model: no cost
