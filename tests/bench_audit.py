"""Audit benchmark (not part of the test suite): runs per second of each engine, and the runs and seconds each
known bug takes to reach the verdict "not the target".

    python tests/bench_audit.py [--samples 300] [--tokens 2] [--prompt "def "] [--only NAME]

Part 1 prints one JSON object per engine: runs/s over ``--samples`` runs at ``--tokens`` (the child's sampling
only, building the engine aside), the verdict and the drafted tokens it verified in the judged window.
Part 2 audits each known bug at N = 50, 100, 200, ... (doubling, seed 0; at ``--tokens`` or the K its entry
names: 30 for a token-by-token audit) until it reads "not the target" and prints the first N that does, with the wall-clock seconds of that whole audit (starting the child, loading
the engine and computing the reference included) and of the sampling alone; and the runs the default test
needs to reject an engine that far (``samples_needed`` for the TV seen, probability 0.8; joint audits only: token
by token the TV printed is the probability-rank PITs' histogram's, ``tv_definition``).
"""
import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from specsim.gpt import audit  # noqa: E402
from specsim.labs import audit as judge  # noqa: E402

GPT = Path(__file__).resolve().parent.parent / "specsim" / "gpt"
EXAMPLES, BUGS = GPT / "audit_engines.py", GPT / "audit_bugs.py"
ENGINES = [("specsim", {}), ("hf", {"hf_options": ["assistant_confidence_threshold=0"]}),
           (f"{EXAMPLES}:Textbook", {}), (f"{EXAMPLES}:SampleAndMatch", {})]
KNOWN_BUGS = [
    ("transformers 4.44.2 greedy assistant (reproduction)", f"{BUGS}:GreedyAssistant", {}),
    ("shared noise, draft/test/recovery (vLLM 54282 shape)", f"{BUGS}:SharedNoise", {}),
    ("cache not rolled back after a rejection", f"{BUGS}:StaleCacheAfterRejection", {}),
    ("cache not rolled back after a rejection, token by token", f"{BUGS}:StaleCacheAfterRejection", {"tokens": 30}),
    ("raw q under top-k 5 (transformers 47932 shape)", f"{EXAMPLES}:RawQUnderTopK", {"top_k": 5}),
    ("transformers 5.25.0 assistant_ensemble_weight=0.5 (live, documented lossy)", "hf",
     {"hf_options": ["assistant_ensemble_weight=0.5", "assistant_confidence_threshold=0"]}),
]


def name_of(engine: str) -> str:
    return engine.rsplit(":", 1)[-1] if ":" in engine else engine


def gemma4_bugs() -> list:
    """transformers' live Gemma-4 assistant path on a tiny random pair written to a temporary folder: jointly at
    K = 3 (its multi-token candidate generator drafts nothing in the first round) and token by token at K = 30."""
    import tempfile
    from specsim.gpt import api
    from specsim.gpt.hf.gemma4 import write_tiny_gemma4_pair
    paths = write_tiny_gemma4_pair(tempfile.mkdtemp(prefix="specsim-gemma4-"), api.load_pair("distilled").vocab)
    pair = {"target_dir": paths["target"], "draft_dir": paths["assistant"],
            "hf_options": ["assistant_confidence_threshold=0"]}
    label = "transformers Gemma-4 assistant, argmax drafts with raw logits as q (live, transformers issue 47932)"
    return [(label, "hf", pair | {"tokens": 3}), (label + ", token by token", "hf", pair | {"tokens": 30})]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=300)
    ap.add_argument("--tokens", type=int, default=2)
    ap.add_argument("--prompt", default="def ")
    ap.add_argument("--only", default=None, help="run only the engines whose name contains this")
    args = ap.parse_args()
    for engine, extra in ENGINES:
        if args.only and args.only not in name_of(engine):
            continue
        r = audit.audit(engine, args.prompt, args.tokens, args.samples, **extra)
        print(json.dumps({"engine": name_of(engine), "runs_per_s": r["samples_per_s"], "verdict": r["verdict"],
                          "verified_drafts": r["verified_drafts"], "tokens": args.tokens}), flush=True)
    bugs = list(KNOWN_BUGS) + gemma4_bugs()
    for label, engine, extra in bugs:
        if args.only and args.only.lower() not in (name_of(engine) + label).lower():
            continue
        n = 50
        while n <= judge.MAX_SAMPLES:
            start = time.monotonic()
            r = audit.audit(engine, args.prompt, extra.get("tokens", args.tokens), n,
                            **{k: v for k, v in extra.items() if k != "tokens"})
            wall = time.monotonic() - start
            if r["verdict"] == "not the target" or n >= 6400:
                break
            n *= 2
        caught = r["verdict"] == "not the target"
        print(json.dumps({"bug": label, "engine": name_of(engine), "tokens": extra.get("tokens", args.tokens),
                          "caught": caught, "runs": n, "seconds_to_verdict": round(wall, 1),
                          "sampling_seconds": round(n / r["samples_per_s"], 1), "runs_per_s": r["samples_per_s"],
                          "tv": r.get("tv"), "p_value": r["p_value"],
                          "runs_to_reject_at_this_tv": judge.samples_needed(r["tv"], r["df"]) if "df" in r else None}),
              flush=True)


if __name__ == "__main__":
    main()
