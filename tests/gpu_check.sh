#!/bin/bash
# The tiny GPT's GPU path in one prepared run (a script, not collected by pytest), for a machine with
# an NVIDIA GPU: the device tool's `run` copies this working tree there and runs
#     bash tests/gpu_check.sh
# It runs from this tree with the machine's own CUDA torch when it has one, else installs the package
# into a fresh virtual environment (torch with CUDA from the package index), then writes under $OUT (default ./gpu-results):
#   env.txt        the GPU, the driver, torch's CUDA build
#   selfcheck.json `specsim gpt selfcheck --device cuda --json`: greedy equals plain, caches, masks, p
#   bench.json     `specsim gpt bench --device cuda --json`: measured speedup per gamma with c, v, alpha
#   profile.json   `specsim gpt bench --profile --device cuda --json`: where a round's time goes
#   selfcheck_bf16.json, bench_eagle.json: the same checks with a bfloat16 target, and EAGLE's speedup
# Each step has its own timeout, so a hang costs minutes, not the session; the exit status is the
# selfcheck's (0 all checks pass).
set -u
out=${OUT:-gpu-results}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
if python3 -c "import torch, numpy, sympy, safetensors, scipy, tqdm; assert torch.cuda.is_available()" 2>/dev/null; then
  py=python3  # an image with CUDA torch already in it (no package index needed): run from this tree
  export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
else
  if [ ! -x .gpu-venv/bin/python ]; then
    python3 -m venv .gpu-venv || exit 2
    .gpu-venv/bin/python -m pip install -q --upgrade pip >/dev/null
    .gpu-venv/bin/python -m pip install -q torch >"$out/install.txt" 2>&1 || { echo "torch did not install"; exit 2; }
    .gpu-venv/bin/python -m pip install -q -e . >>"$out/install.txt" 2>&1 || { echo "specsim did not install"; exit 2; }
  fi
  py=.gpu-venv/bin/python
fi
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1
  $py -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'available', torch.cuda.is_available())"
} >"$out/env.txt"
cat "$out/env.txt"
gpt() { timeout "$1" $py -m specsim.cli gpt "${@:3}" >"$out/$2.json" 2>"$out/$2.err"; echo "$2 exit $?"; }
timeout 200 $py -m specsim.cli gpt selfcheck --device cuda --json >"$out/selfcheck.json" 2>"$out/selfcheck.err"
status=$?
echo "selfcheck exit $status"
gpt 120 selfcheck_bf16 selfcheck --device cuda --dtype bfloat16 --json
gpt 150 bench bench --device cuda --gammas 1-6 --json
gpt 150 profile bench --profile --device cuda --gammas 2,4,6 --json
gpt 150 bench_eagle bench --device cuda --dtype bfloat16 --draft eagle --gammas 2-8 --json
exit $status
