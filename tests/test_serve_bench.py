"""`specsim gpt serve-bench`: refusals before torch, the limits the CLI and the library share, the result's
shape on a tiny run (no wall-clock asserts), and the roofline's predictions it prints."""
import json

import pytest

from specsim.cli import main
from specsim.cli import serve_bench_cmds as cmds


def run_cli(argv, capsys):
    try:
        code = main(argv)
    except SystemExit as e:  # argparse's own refusals
        code = e.code
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("argv, message", [
    (["--batch", "1,65"], "batch must be between 1 and 64, got 65"),
    (["--gammas", "0-17"], "gammas must be between 0 and 16, got 17"),
    (["--tokens", "161"], "tokens must be between 1 and 160"),
    (["--threads", "3"], "threads must be 1, all or 1,all"),
    (["--batch", "1-64", "--gammas", "0-16", "--tokens", "160"], "target positions; the limit is"),
])
def test_bad_input_is_one_line_before_torch(argv, message, capsys):
    code, out, err = run_cli(["gpt", "serve-bench", *argv], capsys)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_cli_limits_agree_with_the_library():
    from specsim.gpt import batch
    from specsim.gpt.measure import serve_bench
    assert (cmds.MAX_BATCH, cmds.MAX_GAMMA) == (batch.MAX_BATCH, batch.MAX_GAMMA)
    assert (cmds.MAX_TOKENS, cmds.MAX_REPEATS) == (serve_bench.MAX_TOKENS, serve_bench.MAX_REPEATS)
    assert cmds.WORK_FLAGS == serve_bench.WORK_FLAGS


def test_a_tiny_run_prints_measured_and_predicted_columns(capsys):
    code, out, _ = run_cli(["gpt", "serve-bench", "--batch", "1,2", "--gammas", "0,2", "--tokens", "6",
                            "--repeats", "2", "--json"], capsys)
    assert code == 0
    result = json.loads(out)
    (run,) = result["runs"]
    assert run["threads"] == 1
    rows = {(r["batch"], r["gamma"]): r for r in run["rows"]}
    assert set(rows) == {(1, 0), (1, 2), (2, 0), (2, 2)}
    for (b, g), r in rows.items():
        assert len(r["tokens_per_s_min_max"]) == 2 and r["tokens_per_s_min_max"][0] <= r["tokens_per_s"]
        if g == 0:
            assert r["v"] == r["predicted_v"] == r["speedup"] == r["predicted_speedup"] == 1.0
            assert r["rounds"] == 6 and r["tokens_per_round"] == 1.0
        else:
            assert 1 <= r["tokens_per_round"] <= 3 and r["rounds"] <= 6
            assert r["v_ratio"] == pytest.approx(r["predicted_v"] / r["v"], rel=0.01)
        assert r["predicted_v"] >= 1 and r["bound"] in ("memory", "compute")
    cal = run["calibration"]
    assert cal["bandwidth_gb_s"] > 0 and cal["matmul_gflop_s"] > 0 and min(cal["overhead_ms"].values()) >= 0
    assert run["worst_v"]["gamma"] == 2


def test_predicted_v_is_the_roofline_ratio():
    """The prediction is specsim.serving's step_cost ratio on the tiny target's shape (fp32)."""
    from specsim.gpt.measure.serve_bench import SHAPES, Calibration
    from specsim.serving.hardware import cpu_from
    from specsim.serving.roofline import step_cost
    hw = cpu_from(20e9, 100e9, 1e-3)
    cal = Calibration(20e9, 100e9, {"target": 1e-3, "draft": 1e-3}, {"target": hw, "draft": hw})
    for b, g in [(1, 3), (16, 6)]:
        want = (step_cost(SHAPES["target"], hw, b, 80, g + 1, dtype="fp32").seconds
                / step_cost(SHAPES["target"], hw, b, 80, 1, dtype="fp32").seconds)
        assert cal.seconds("target", b, 80, g + 1) / cal.seconds("target", b, 80) == pytest.approx(want, rel=1e-12)
