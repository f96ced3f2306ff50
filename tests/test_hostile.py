"""Hostile and careless input against every command: one line on stderr, exit code 2, fast.

Each case runs ``python -m specsim.cli`` in a subprocess with a 20 s timeout
(a regression fails instead of hanging) and must be refused well before it:
exit code 2, exactly one stderr line, no traceback. The files are built in
tmp_path: a FIFO, a directory, /dev/zero, JSON nested 100,000 deep, models
whose expansion is huge, numbers past every digit and exponent limit.
"""
from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

from specsim.bounds import LIMITS
from specsim.toy import random_model

TIMEOUT = 20  # seconds per case: a hang fails here instead of blocking CI
FAST = 10  # seconds: a refusal must come well under the timeout (most take ~1 s, the interpreter's start)
ROOT = Path(__file__).resolve().parent.parent


def _model(vocab, order, rows=None, **extra) -> dict:
    import itertools
    keys = [" ".join(c) for c in itertools.product(vocab, repeat=order)] if rows is not None else []
    data = {"vocab": vocab, "order": order,
            "target": {k: rows for k in keys}, "draft": {k: rows[::-1] for k in keys}}
    data.update(extra)
    return data


def _d1000(rng) -> dict:
    """Two tokens, every row with its own 1,000-digit denominator."""
    def row():
        den = rng.randrange(10**999, 10**1000)
        num = rng.randrange(den // 4, den // 2)
        return [f"{num}/{den}", f"{den - num}/{den}"]
    return {"vocab": ["x", "y"], "order": 1, "target": {"x": row(), "y": row()}, "draft": {"x": row(), "y": row()}}


def _files(tmp: Path) -> dict:
    """Every hostile file, by name; values are paths as strings."""
    rng = random.Random(0)
    f = {}

    def write(name, text):
        path = tmp / name
        path.write_text(text) if isinstance(text, str) else path.write_bytes(text)
        f[name] = str(path)

    write("v2", json.dumps(_model(["x", "y"], 1, ["1/3", "2/3"])))
    write("order12", json.dumps(_model(["0", "1"], 12, ["1/3", "2/3"])))
    den = rng.randrange(10**599, 10**600)
    num = rng.randrange(den // 4, den // 2)
    write("d600", json.dumps(_model(["x", "y"], 1, [f"{num}/{den}", f"{den - num}/{den}"])))
    write("order20", json.dumps(_model(["0", "1"], 20)))
    write("order_huge", '{"vocab": ["0", "1"], "order": 1000000000, "target": {}, "draft": {}}')
    write("explode", json.dumps(_model([f"t{i}" for i in range(64)], 3)))  # 64^3 contexts, 400 bytes
    write("deep", "[" * 100_000 + "]" * 100_000)
    write("int5001", '{"vocab": ["x"], "order": 1, "target": {"x": [' + "1" * 5001 + ']}, "draft": {}}')
    big = "1" * 4400
    write("frac4400", json.dumps(_model(["x", "y"], 1, [f"{big}/{big}1", "0"])))
    write("nan", '{"vocab": ["x"], "order": 1, "target": {"x": [NaN]}, "draft": {"x": [1]}}')
    write("inf", '{"vocab": ["x"], "order": 1, "target": {"x": [Infinity]}, "draft": {"x": [1]}}')
    write("float1e400", '{"vocab": ["x"], "order": 1, "target": {"x": [1e400]}, "draft": {"x": [1]}}')
    write("strexp", json.dumps(_model(["x", "y"], 1, ["1e-100000000", "1"])))
    write("binary", bytes(range(256)) * 4)
    write("empty", "")
    write("array", "[]")
    write("strnan", json.dumps(_model(["x", "y"], 1, ["nan", "1"])))
    write("v16", random_model(16, seed=0).to_json())  # γ 4, N 3 was once refused at 200,000 steps
    write("v64", random_model(64, seed=0).to_json())
    write("d1000", json.dumps(_d1000(rng)))  # round γ 3 once reached ~8,000 digits and Python refused to print
    big_file = tmp / "big.json"
    with open(big_file, "wb") as fh:  # sparse: over the size limit without writing it
        fh.truncate(LIMITS.file_bytes + 1)
    f["big"] = str(big_file)
    fifo = tmp / "fifo.json"
    os.mkfifo(fifo)
    f["fifo"] = str(fifo)
    f["dir"] = str(tmp)
    f["zero"] = "/dev/zero"
    return f


HUGE_FRACTION = "1" * 300 + "/" + "3" * 301

# (argv with {file} placeholders, words the one-line message must contain)
CASES = [
    # inputs that once hung
    ("round {v2} --gamma 19", "lower γ"),
    ("pitfalls seed --tokens 8 --gamma 12", "lower γ or N"),
    ("pitfalls {v2} --gamma 19 --tokens 1", "lower γ or N"),
    ("prove {v2} --tokens 12 --gammas 1-64", "lower γ or N"),
    ("prove {order12} --tokens 5 --gammas 1-64", "lower γ or N"),
    ("round {d600} --gamma 12", "lower γ"),
    ("generate seed --tokens 100000", "tokens must be between"),
    ("trace seed --temperature 1e-9", "below 1/100"),
    ("trace seed --temperature 1/1000000", "below 1/100"),
    ("speedup --alpha 1e-100000000 --gamma 3 --cost 0.1", "exponent"),
    ("speedup --alpha 0.5 --gamma 3 --cost 1e1000000000", "exponent"),
    (f"best-gamma --alpha {HUGE_FRACTION} --cost 0.1", "digits"),
    ("round {fifo}", "not a regular file"),
    ("round {explode}", "contexts is too many"),
    ("round {order_huge}", "order 1000000000 is too large"),
    # inputs that once ended in a traceback
    ("speedup --alpha 0.5 --gamma 3 --cost 1e400", "exponent"),
    ("best-gamma --alpha 0.5 --cost 1e400", "exponent"),
    ("round {order20}", "order 20 is too large"),
    ("round {zero}", "not a regular file"),
    ("round {deep}", "nests 100,000 levels"),
    ("sample seed --rounds 1000000000", "rounds must be between"),
    ("prove {int5001}", "digits"),
    ("prove {frac4400}", "digits"),
    # more files
    ("round {dir}", "is a directory"),
    ("round {big}", "the limit is"),
    ("round {nan}", "NaN is refused"),
    ("round {inf}", "Infinity is refused"),
    ("round {float1e400}", "exponent"),
    ("round {strexp}", "exponent"),
    ("round {strnan}", "finite"),
    ("round {binary}", "not valid JSON"),
    ("round {empty}", "not valid JSON"),
    ("round {array}", "JSON object"),
    ("trace {fifo}", "not a regular file"),
    ("sample {deep}", "nests"),
    ("pitfalls {zero}", "not a regular file"),
    ("generate {explode}", "contexts is too many"),
    # more numbers and work
    ("trace seed --temperature inf", "temperature must be a number"),
    ("trace seed --temperature nan", "temperature must be a number"),
    ("trace seed --temperature -1", "temperature must be >= 0"),
    ("sample seed --temperature 1e-9 --rounds 10", "below 1/100"),
    ("speedup --alpha nan --gamma 3 --cost 0.1", "finite"),
    ("speedup --alpha inf --gamma 3 --cost 0.1", "finite"),
    ("speedup --alpha 1/0 --gamma 3 --cost 0.1", "divides by zero"),
    ("speedup --alpha 0.5 --gamma 3 --cost 1e100", "cost must be <="),
    ("best-gamma --alpha 0.5 --cost 0.1 --max-gamma 100000", "max-gamma must be between"),
    ("round seed --gamma 100000", "gamma must be between"),
    ("round seed --gamma 12", "lower γ"),
    ("prove seed --gammas 1-99999999999999999999", "gammas must be between 1 and 64"),
    ("sample seed --rounds 100000000 --gamma 64", "lower --rounds or γ"),
    ("sample seed --rule always-accept --rounds 10000000", "broken rule"),
    ("sample seed --gamma 20 --check --rounds 10", "lower γ"),
    ("generate seed --tokens 10000 --gamma 64", "lower --tokens or γ"),
    ("pitfalls {d600} --gamma 8 --tokens 4", "lower γ or N"),
    ("trace seed --top-k 99999999", "top-k must be between"),
    ("gpt generate --prompt hi --tokens 100000", "tokens must be between"),
    ("gpt bench --gammas 1-99999999999", "gammas must be between 1 and 64"),
    # a limit a person can raise, named in the refusal; absurd limits refused
    ("prove {v16} --gamma 4 --tokens 4", "lower γ or N, or raise it with --max-work 2"),
    ("prove {v16} --gamma 4 --tokens 3 --max-work 1000", "raise it with --max-work 1"),
    ("round seed --max-work 1e9", "is not a whole number of steps"),
    ("round seed --max-work -5", "must be from 1 to 100,000,000,000 steps"),
    ("sample seed --max-work 100000000001", "must be from 1 to"),
    ("pitfalls seed --max-work ５", "U+FF15"),
    ("compare seed --max-work 0", "must be from 1"),
    ("compare {v16} --budget 3 --max-work 500000", "(18 schemes) means"),  # compare counts its trees too
    # results with more digits than can be shown, refused before the work
    ("round {d1000} --gamma 3", "digits; the limit is 4,300 digits"),
    ("round {d1000} --gamma 3 --json", "digits; the limit is 4,300 digits"),
    ("round {d1000} --tree 2,1", "digits; the limit is 4,300 digits"),
    ("round {d1000} --gamma 3 --verify block", "digits; the limit is 4,300 digits"),
    ("pitfalls {d1000} --gamma 2 --tokens 2", "digits"),
    ("prove {d1000} --tokens 5 --gamma 1", "digits"),
    ("compare {d1000} --budget 3", "digits"),
    ("sample {d1000} --check --rounds 10", "digits"),
    # sampled work grows with the vocabulary and the tree
    ("sample {v64} --tree 64 --rounds 70000", "lower --rounds or the tree"),
    ("sample {v64} --rounds 20000000", "lower --rounds or γ"),
    ("sample {v64} --verify block --rounds 20000000", "lower --rounds or γ"),
    ("sample {v64} --rule always-accept --rounds 1000000", "broken rule"),
    # full-width and other non-ASCII digits, underscores, huge integers
    ("round seed --gamma ４", "U+FF14 FULLWIDTH DIGIT FOUR is not an ASCII digit"),
    ("prove seed --gammas 1-３", "U+FF13"),
    ("round seed --tree ２,1", "U+FF12"),
    ("gpt bench --schemes chain:４", "U+FF14"),
    ("gpt bench --schemes tree:٣", "U+0663"),
    ("gpt generate --prompt hi --tree ２", "U+FF12"),
    ("sample seed --rounds 1_000", "is not an integer"),
    ("generate seed --tokens ¹", "U+00B9"),
    ("sample seed --rounds " + "1" * 5000, "5,000 digits"),
    ("gpt generate --prompt hi --draft lookup:３", "unknown drafter"),
    # one bound for every scheme of the tiny GPT, before torch loads
    ("gpt generate --prompt hi --tokens 4096 --gamma 64", "lower --tokens or --gamma, or raise it with --max-work"),
    ("gpt generate --prompt hi --tokens 4096 --gamma 64 --json --top 128", "lower --tokens or --gamma"),
    ("gpt generate --prompt hi --tokens 4096 --gamma 64 --verify block", "recorded probabilities"),
    ("gpt generate --prompt hi --tokens 4096 --tree 8,7", "lower --tokens or --tree"),
    ("gpt bench --schemes block:64 --tokens 4096 --repeats 50", "lower --tokens, --repeats or --schemes"),
    ("gpt bench --gammas 1-64 --tokens 4096 --repeats 50", "lower --tokens, --repeats or --gammas"),
    ("gpt bench --drafters distilled,lookup:3 --gamma 64 --tokens 4096 --repeats 50", "target positions"),
    ("gpt bench --max-work abc", "max-work"),
    # bench-sample: one run, the loop's run and the repeats together are bounded
    ("bench-sample --rounds 100000000 --repeats 100", "lower --rounds or γ"),
    ("bench-sample --loop-rounds 3000000", "lower --loop-rounds"),
    ("bench-sample --loop-rounds 100000 --loop-repeats 50", "lower --loop-rounds or --loop-repeats"),
    ("bench-sample --rounds 20000000 --loop-rounds 1000 --repeats 100", "lower --rounds or --repeats"),
]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    return _files(tmp_path_factory.mktemp("hostile"))


@pytest.mark.parametrize("argv, words", CASES, ids=[c[0][:60] for c in CASES])
def test_hostile_input_is_refused_in_one_line(files, argv, words):
    args = [a.format(**files) for a in argv.split()]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "specsim.cli", *args], capture_output=True, text=True,
                          timeout=TIMEOUT, env=env, cwd=ROOT)
    wall = time.perf_counter() - start
    lines = done.stderr.splitlines()
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    assert done.returncode == 2, (done.returncode, done.stderr[-500:])
    assert len(lines) == 1, lines[:5]
    assert words in lines[0], lines[0]
    assert wall < FAST, f"{wall:.1f} s"


def test_the_table_is_large_enough():
    assert len(CASES) >= 40


def _cli(*args, **env):
    return subprocess.run([sys.executable, "-m", "specsim.cli", *args], capture_output=True, text=True,
                          timeout=TIMEOUT, env=dict(os.environ, PYTHONPATH=str(ROOT), **env), cwd=ROOT)


def test_a_bad_environment_limit_is_one_line_naming_it():
    done = _cli("round", "seed", SPECSIM_MAX_WORK="lots")
    assert done.returncode == 2 and "SPECSIM_MAX_WORK" in done.stderr and done.stderr.count("\n") == 1


def test_the_environment_limit_applies_and_the_option_wins(files):
    """SPECSIM_MAX_WORK lowers (or raises) the limit; --max-work overrides it."""
    low = _cli("prove", "seed", "--tokens", "2", SPECSIM_MAX_WORK="100")
    assert low.returncode == 2 and "the limit is 100:" in low.stderr and "--max-work" in low.stderr
    ok = _cli("prove", "seed", "--tokens", "2", "--max-work", "1000000", SPECSIM_MAX_WORK="100")
    assert ok.returncode == 0 and "checks exact" in ok.stdout, ok.stderr


def test_the_gpt_bound_refuses_before_torch_loads():
    code = ("import sys; from specsim.cli import main; "
            "rc = main(['gpt', 'bench', '--schemes', 'block:64', '--tokens', '4096', '--repeats', '50']); "
            "print(rc, 'torch' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=TIMEOUT,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)), cwd=ROOT)
    assert done.stdout.split() == ["2", "False"], (done.stdout, done.stderr[-500:])
    assert "target positions" in done.stderr


@pytest.mark.parametrize("page, key, settings", [
    ("views/exactness.py", "exact", {"exact-n": 2}),  # N = 2 passes; the round section's γ 3 cannot be shown
    ("views/pitfalls.py", "pit", {}),
    ("views/workbench.py", "wb", {}),
])
def test_app_pages_refuse_fractions_too_long_to_show(files, page, key, settings):
    """1,000-digit fractions once ended in a ValueError on these pages; now one st.error line."""
    from streamlit.testing.v1 import AppTest
    sys.path.insert(0, str(ROOT / "app"))
    from parts import widgets
    at = AppTest.from_file(str(ROOT / "app" / "streamlit_app.py"), default_timeout=60)
    at.run()
    at.switch_page(page)
    at.run()
    at.selectbox(key=f"{key}-model").set_value(widgets.UPLOAD)
    at.run()
    at.file_uploader(key=f"{key}-upload").upload("d1000.json", Path(files["d1000"]).read_bytes(), "application/json")
    at.run()
    for k, v in settings.items():
        at.number_input(key=k).set_value(v)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "\n" not in errors[0] and "the limit is 4,300 digits" in errors[0], errors


def test_a_top_p_below_float32_keeps_the_most_likely_token():
    """--top-p 1e-100 became 0 in float32, dropped every token and ended in a torch RuntimeError."""
    torch = pytest.importorskip("torch")
    from specsim.gpt.rule import adjust
    logits = torch.tensor([[0.5, 2.0, -1.0], [3.0, 1.0, 0.0]])
    assert torch.equal(adjust(logits, top_p=1e-100), torch.tensor([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]))


@pytest.mark.parametrize("argv", [["trace", "seed", "--context"], ["round"], ["pitfalls", "seed", "--rule"],
                                  ["gpt", "generate", "--prompt", "hi", "--draft"], ["gpt", "bench", "--drafters"]])
def test_a_huge_argument_is_not_echoed_whole(argv):
    """A 50,000-character argument came back whole in the error line."""
    done = _cli(*argv, "y" * 50_000)  # (a refused --rule names every known rule: ~550 characters)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and len(done.stderr) < 1000, done.stderr[:300]


@pytest.mark.parametrize("argv", [["gpt", "bench"], ["gpt", "bench", "--schemes", "chain:4;block:4;tree:2,2;tree:4"],
                                  ["gpt", "bench", "--peer", "hf"], ["gpt", "bench", "--drafters", "distilled,lookup:3"],
                                  ["gpt", "generate", "--prompt", "a"], ["gpt", "generate", "--prompt", "a", "--plain",
                                                                         "--tokens", "4096"]])
def test_the_gpt_defaults_pass_their_bound(argv, monkeypatch):
    from specsim.cli import build_parser, gpt_cmds
    monkeypatch.delenv("SPECSIM_MAX_WORK", raising=False)
    args = build_parser().parse_args(argv)
    (gpt_cmds.check_bench_work if argv[1] == "bench" else gpt_cmds.check_generate_work)(args)


def test_the_gpt_bound_reads_the_shipped_sizes():
    pytest.importorskip("torch")
    from specsim.cli import gpt_cmds
    from specsim.gpt import tokenizer
    from specsim.gpt.measure import bench
    assert gpt_cmds.BENCH_PROMPTS == bench.N_PROMPTS and gpt_cmds.BENCH_MAX_PROMPTS == bench.MAX_PROMPTS
    assert gpt_cmds.SHIPPED_VOCAB == len(tokenizer.ASCII_VOCAB)
