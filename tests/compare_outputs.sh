#!/usr/bin/env bash
# Byte-compare the CLI's outputs (text, --json, help; fixed seeds) at a git revision and in this working tree:
#   tests/compare_outputs.sh REV        e.g. tests/compare_outputs.sh HEAD~10
# Prints one "DIFF" line per command whose output (stdout, stderr and exit code) changed, then a count.
# For refactors that must leave every output as it was.
set -euo pipefail
rev=${1:?usage: tests/compare_outputs.sh REV}
here=$(cd "$(dirname "$0")/.." && pwd)
py=${PYTHON:-python}
work=$(mktemp -d)
trap 'git -C "$here" worktree remove --force "$work/before" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git -C "$here" worktree add -q --detach "$work/before" "$rev"

commands() {
    for s in chain:3 block:3 tree:2,2,1 tree:2,1:distinct "chain:max=4,stop=0.4" "tree:dynamic,budget=4,depth=2,topk=2"; do
        echo "round seed --context a --scheme $s"
        echo "round seed --context a --scheme $s --json"
        echo "prove seed --tokens 2 --context a --scheme $s"
        echo "prove seed --tokens 2 --context b --scheme $s --json"
        echo "sample seed --scheme $s --rounds 2000 --seed 3 --json"
        echo "trace seed --context a --scheme $s --seed 4"
        echo "gpt generate --prompt def --scheme $s --tokens 30 --seed 1 --json"
    done
    echo "compare seed --context a --budget 2"
    echo "compare seed --context a --budget 3 --json"
    echo "best-gamma --alpha 0.8 --cost 0.05"
    echo "speedup --alpha 0.6 --gamma 8 --cost 0.2"
    echo "prove seed --tokens 2 --gammas 1-2,4 --context b"
    echo "check-rule specsim/labs/pitfalls.py:NoBonusToken --models 20 --gammas 1-2 --seed 1"
    for d in eagle lookup:3 early-exit:2 trained; do echo "gpt generate --prompt def --draft $d --tokens 40 --seed 2"; done
    echo "gpt generate --prompt def --draft trained --scheme tree:2,2 --tokens 40 --seed 2 --json"
    echo "--help"
    echo "round --help"
    echo "gpt generate --help"
}

run_all() {  # ROOT OUT
    mkdir -p "$2"
    local i=0
    while read -r line; do
        i=$((i + 1))
        # shellcheck disable=SC2086  # the command line is split on purpose
        (cd "$1" && PYTHONPATH=. timeout 300 "$py" -m specsim.cli $line > "$2/$i.out" 2>&1; echo "exit $?" >> "$2/$i.out")
        echo "$line" > "$2/$i.cmd"
    done < <(commands)
}

run_all "$work/before" "$work/a"
run_all "$here" "$work/b"
changed=0
for f in "$work"/a/*.out; do
    n=$(basename "$f")
    if ! cmp -s "$f" "$work/b/$n"; then
        echo "DIFF: specsim $(cat "$work/a/${n%.out}.cmd")"
        changed=$((changed + 1))
    fi
done
echo "$(ls "$work"/a/*.out | wc -l) commands, $changed with a different output"
