#!/bin/bash
# One more `eagle_more` phase of the shipped EAGLE layer, on a GPU (a script, not collected by pytest):
#     bash tests/gpu_train_eagle.sh [DEVICE] [STEPS]
# It copies specsim/gpt/weights to a scratch folder, runs `specsim gpt train --stage eagle_more` there
# (the recipe's defaults unless STEPS is given) and writes the new eagle.safetensors, manifest.json and
# the training log under $OUT (default ./gpu-results). Review the alpha it reports, then copy the two files
# into specsim/gpt/weights to ship them. Run after tests/gpu_check.sh, which picks the Python to use.
set -u
out=${OUT:-gpu-results}
device=${1:-cuda}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
py=${PY:-python3}
if ! $py -c "import torch" 2>/dev/null && [ -x .gpu-venv/bin/python ]; then py=.gpu-venv/bin/python; fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
work=$(mktemp -d)
cp specsim/gpt/weights/* "$work"/
steps=()
[ $# -ge 2 ] && steps=(--eagle-more-steps "$2")
timeout "${TRAIN_TIMEOUT:-400}" $py -m specsim.cli gpt train --stage eagle_more --out "$work" --device "$device" \
  "${steps[@]}" >"$out/train.log" 2>&1
status=$?
echo "train exit $status"
tail -n 3 "$out/train.log"
[ $status -eq 0 ] && cp "$work/eagle.safetensors" "$work/manifest.json" "$out"/
exit $status
