#!/bin/bash
# The tiny GPT's GPU path in one prepared run (a script, not collected by pytest), for a machine with
# an NVIDIA GPU: the device tool's `run` copies this working tree there and runs
#     bash tests/gpu_check.sh
# It installs the package into a fresh virtual environment (torch with CUDA from the package index
# or a local wheel cache), then writes under $OUT (default ./gpu-results):
#   env.txt        the GPU, the driver, torch's CUDA build
#   selfcheck.json `specsim gpt selfcheck --device cuda --json`: greedy equals plain, caches, masks, p
#   bench.json     `specsim gpt bench --device cuda --json`: measured speedup per gamma with c, v, alpha
#   profile.json   `specsim gpt bench --profile --device cuda --json`: where a round's time goes
# Each step has its own timeout, so a hang costs minutes, not the session; the exit status is the
# selfcheck's (0 all checks pass).
set -u
out=${OUT:-gpu-results}
mkdir -p "$out"
if [ ! -x .gpu-venv/bin/python ]; then
  python3 -m venv .gpu-venv || exit 2
  .gpu-venv/bin/python -m pip install -q --upgrade pip >/dev/null
  .gpu-venv/bin/python -m pip install -q torch >"$out/install.txt" 2>&1 || { echo "torch did not install"; exit 2; }
  .gpu-venv/bin/python -m pip install -q -e . >>"$out/install.txt" 2>&1 || { echo "specsim did not install"; exit 2; }
fi
py=.gpu-venv/bin/python
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1
  $py -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'available', torch.cuda.is_available())"
} >"$out/env.txt"
cat "$out/env.txt"
timeout 300 $py -m specsim.cli gpt selfcheck --device cuda --json >"$out/selfcheck.json" 2>"$out/selfcheck.err"
status=$?
echo "selfcheck exit $status"
timeout 240 $py -m specsim.cli gpt bench --device cuda --gammas 1-6 --json >"$out/bench.json" 2>"$out/bench.err"
echo "bench exit $?"
timeout 240 $py -m specsim.cli gpt bench --profile --device cuda --gammas 2,4,6 --json >"$out/profile.json" 2>"$out/profile.err"
echo "profile exit $?"
exit $status
