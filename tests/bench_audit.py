"""Audit benchmark (not part of the test suite): runs per second of each engine, and how long each lossy
example takes to reject.

    python tests/bench_audit.py [--samples 400] [--prompt "def "]

For every engine it runs one audit of the first token (K = 1) and prints one JSON object per engine: runs/s,
the verdict, the TV seen, and for the lossy examples the runs the default test needs to reject an engine that
far away (``samples_needed``, probability 0.8 at a false-alarm rate of 0.001) with the seconds those runs take
at the measured pace.
"""
import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from specsim.gpt import audit  # noqa: E402
from specsim.labs import audit as judge  # noqa: E402

EXAMPLES = Path(__file__).resolve().parent.parent / "specsim" / "gpt" / "audit_engines.py"
ENGINES = [("specsim", {}), ("hf", {}), (f"{EXAMPLES}:SampleAndMatch", {}), (f"{EXAMPLES}:EmitDraft", {}),
           (f"{EXAMPLES}:ResampleFromTarget", {}), (f"{EXAMPLES}:RawQUnderTopK", {"top_k": 5})]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=400)
    ap.add_argument("--prompt", default="def ")
    args = ap.parse_args()
    for engine, extra in ENGINES:
        r = audit.audit(engine, args.prompt, 1, args.samples, **extra)
        row = {"engine": engine.rsplit(":", 1)[-1] if ":" in engine else engine, "top_k": extra.get("top_k"),
               "runs_per_s": r["samples_per_s"], "verdict": r["verdict"], "tv": r["tv"], "tv_ci": r["tv_ci"],
               "tv_exact_engine": r["tv_exact_engine"]}
        if r["verdict"] == "not the target":
            runs = judge.samples_needed(r["tv"], r["df"])
            row |= {"runs_to_reject": runs, "seconds_to_reject": round(runs / r["samples_per_s"], 1)}
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
