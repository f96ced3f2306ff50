"""What isolation costs a rule check (not part of the test suite): start-up and per answer, isolated against
unisolated (``SPECSIM_ISOLATION=off``, the judge as it was before isolation), interleaved.

    python tests/bench_isolation.py [--repeats 7] [--models 100]

Each repeat runs, in alternating order, four checks of the correct rule from a file: a start-up check (no
random model, one chain, one token: the child's start, the isolation, the import, a few answers) and a
full check (``--models`` random models, γ 1-3, N 2), each isolated and unisolated. It prints one JSON object:
for each mode the median and the range over repeats of the start-up seconds, the full check's seconds, the
answers asked and the microseconds per answer ((full - start-up) / (answers of full - answers of start-up)),
the distinct questions (what was asked before every question was asked twice), then the isolated/unisolated ratios of the medians of the paired repeats. The answers asked include every
question asked twice (a share of repeats during the check, all again at the end), in both modes.
"""
import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from specsim.labs import sandbox  # noqa: E402

RULE = "from specsim.rule import RoundRule\nclass R(RoundRule):\n    pass\n"
DISTINCT = []  # distinct questions of each check (the answers before asking twice)
_recheck = sandbox.OracleRule.recheck


def _counting(self):
    DISTINCT.append(len(self.memo))
    return _recheck(self)


sandbox.OracleRule.recheck = _counting


def one(path: str, isolated: bool, models: int, gammas, n_tokens: int) -> tuple:
    if isolated:
        os.environ.pop("SPECSIM_ISOLATION", None)
    else:
        os.environ["SPECSIM_ISOLATION"] = "off"
    start = time.perf_counter()
    r = sandbox.check_rule_file(path, "R", gammas=gammas, n_tokens=n_tokens, models=models)
    seconds = time.perf_counter() - start
    assert r.exact and r.isolation["isolated"] is isolated, r.isolation
    return seconds, r.questions, DISTINCT[-1]


def summary(values) -> dict:
    return {"median": round(statistics.median(values), 4), "min": round(min(values), 4), "max": round(max(values), 4)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--models", type=int, default=100)
    args = ap.parse_args()
    folder = tempfile.mkdtemp(prefix="specsim-bench-")
    path = os.path.join(folder, "rule.py")
    Path(path).write_text(RULE)
    runs = {mode: {"start": [], "full": [], "answers": [], "us_per_answer": []} for mode in ("isolated", "unisolated")}
    ratios = {"start": [], "full": [], "us_per_answer": []}
    for i in range(args.repeats):
        order = [True, False] if i % 2 == 0 else [False, True]
        got = {}
        for isolated in order:
            mode = "isolated" if isolated else "unisolated"
            s, s_answers, _ = one(path, isolated, 0, (1,), 1)
            f, f_answers, distinct = one(path, isolated, args.models, (1, 2, 3), 2)
            runs[mode].setdefault("distinct_questions", []).append(distinct)
            per = (f - s) / max(1, f_answers - s_answers) * 1e6
            got[mode] = (s, f, per)
            for key, value in zip(("start", "full", "answers", "us_per_answer"), (s, f, f_answers, per)):
                runs[mode][key].append(value)
        for k, key in enumerate(("start", "full", "us_per_answer")):
            ratios[key].append(got["isolated"][k] / got["unisolated"][k])
    out = {"repeats": args.repeats, "models": args.models,
           **{mode: {key: summary(v) for key, v in r.items()} for mode, r in runs.items()},
           "isolated_over_unisolated": {key: summary(v) for key, v in ratios.items()}}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
