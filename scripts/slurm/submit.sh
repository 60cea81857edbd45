#!/usr/bin/env bash
# Fans a model run out as a Slurm job array, one task per shard, then a merge job that starts when
# every task has ended.
#   scripts/slurm/submit.sh [--wait] N MODEL WORKDIR QUANTIZE_OPTIONS...
# e.g. scripts/slurm/submit.sh 16 /models/llama/model.safetensors.index.json runs/llama \
#          --all --preset tensorrt --dtype int4 --block 1,128 --out out/model.safetensors
# The tasks run in WORKDIR (relative paths in the options are taken from there); it gets
# part-<i>.json from each task, logs/ and report.json. --wait returns when the merge
# has ended, with its exit status. QUANTLENS_CLI names the binary when it is not on PATH; extra
# sbatch options (partition, account, time) go in SBATCH_PARTITION etc., as sbatch reads them.
set -euo pipefail
wait=()
if [ "${1:-}" = "--wait" ]; then wait=(--wait); shift; fi
if [ $# -lt 3 ]; then
    echo "usage: submit.sh [--wait] N MODEL WORKDIR QUANTIZE_OPTIONS..." >&2
    exit 2
fi
count=$1 model=$2 workdir=$3
shift 3
# N is checked as text before any arithmetic: bash evaluates what an arithmetic expression names, so an
# N like 'PWD[$(cmd)0]' would run cmd. Decimal digits within quantize --shard's 1..100000 only.
if ! [[ $count =~ ^[0-9]{1,6}$ ]] || ((10#$count < 1 || 10#$count > 100000)); then
    echo "submit.sh: N must be a whole number from 1 to 100000, got '$count'" >&2
    exit 2
fi
count=$((10#$count)) # 08 is 8, not an octal error
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$workdir/logs"
workdir=$(realpath "$workdir")
model=$(realpath "$model")
array=$(sbatch --parsable --array="0-$((count - 1))" --chdir="$workdir" --output="$workdir/logs/part-%a.log" \
    "$here/quantize-array.sbatch" "$count" "$model" "$@")
array=${array%%;*}
echo "array job $array: $count tasks"
# afterany: the merge runs even when a task failed, and names what is missing.
sbatch --parsable "${wait[@]}" --dependency="afterany:$array" --chdir="$workdir" \
    --output="$workdir/logs/merge.log" "$here/merge.sbatch" "$count"
