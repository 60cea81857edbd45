#!/usr/bin/env bash
# Runs a model as a Slurm job array on a real single-node cluster started here, merges the parts and
# checks the merged report equals a one-process run (timings aside) and the sharded export holds
# the one-process export's tensors byte for byte.
#   slurm_fanout.sh QUANTLENS_CLI SOURCE_DIR
# Exit 77 (skipped, with the reason) where Slurm and munge are not installed or cannot start.
set -uo pipefail
cli=$1 src=$2
skip() { echo "SKIP: $*"; exit 77; }
for tool in slurmctld slurmd munged sbatch sinfo; do
    command -v "$tool" >/dev/null || skip "$tool not installed (Debian: apt-get install slurm-wlm munge)"
done
[ "$(id -u)" = 0 ] || skip "slurmd runs jobs as any user only as root; run this suite as root"

tmp=$(mktemp -d)
chmod 711 "$tmp" # munged wants its socket reachable
stop() {
    for pidfile in "$tmp/slurmd.pid" "$tmp/slurmctld.pid" "$tmp/munged.pid"; do
        [ -s "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null
    done
    sleep 1
    for pidfile in "$tmp/slurmd.pid" "$tmp/slurmctld.pid" "$tmp/munged.pid"; do
        [ -s "$pidfile" ] && kill -9 "$(cat "$pidfile")" 2>/dev/null
    done
    rm -rf "$tmp"
}
trap stop EXIT
logs() { for f in "$tmp"/*.log "$tmp"/run/logs/*.log; do [ -f "$f" ] && { echo "== $f"; tail -20 "$f"; }; done; }

mkdir -p "$tmp/state" "$tmp/spool" "$tmp/run" "$tmp/munge"
chmod 711 "$tmp/munge"
head -c 1024 /dev/urandom >"$tmp/munge/munge.key"
chmod 400 "$tmp/munge/munge.key"
munged --force --key-file="$tmp/munge/munge.key" --socket="$tmp/munge/munge.socket" \
    --pid-file="$tmp/munged.pid" --log-file="$tmp/munged.log" --seed-file="$tmp/munge/munge.seed" ||
    skip "munged does not start: $(tail -3 "$tmp/munged.log" 2>/dev/null)"

port=$((20000 + RANDOM % 20000))
host=$(hostname -s)
cat >"$tmp/slurm.conf" <<CONF
ClusterName=quantlens-test
SlurmctldHost=$host
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
AuthInfo=socket=$tmp/munge/munge.socket
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$tmp/slurm.conf
slurmctld -f "$SLURM_CONF" || { logs; skip "slurmctld does not start"; }
slurmd -f "$SLURM_CONF" || { logs; skip "slurmd does not start"; }
for _ in $(seq 60); do
    sinfo -h -o %t 2>/dev/null | grep -q idle && break
    sleep 1
done
sinfo -h -o %t 2>/dev/null | grep -q idle || { logs; skip "the node never became idle: $(sinfo 2>&1 | tail -2)"; }

model=$src/resources/sample/sample_model.safetensors
work=$tmp/run
export QUANTLENS_CLI=$cli
if ! timeout 600 "$src/scripts/slurm/submit.sh" --wait 4 "$model" "$work" --all --dtype int8 --export-layout native --out out/model.safetensors; then
    logs
    echo "FAIL: the array or its merge failed"
    exit 1
fi
"$cli" quantize "$model" --all --dtype int8 --export-layout native -q --report "$tmp/single.json" --out "$tmp/single.safetensors" >/dev/null ||
    { echo "FAIL: the one-process run failed"; exit 1; }
# The same report but for timings; the same tensors, byte for byte, in the sharded export.
strip() { grep -v -E '"(prepare|upload|kernel|download|total|total_min|total_max)_ms"|"runs"' "$1"; }
if ! diff <(strip "$work/report.json") <(strip "$tmp/single.json") >/dev/null; then
    echo "FAIL: the merged report differs from the one-process report"
    diff <(strip "$work/report.json") <(strip "$tmp/single.json") | head -20
    exit 1
fi
parts=$(ls "$work"/part-*.json | wc -l)
[ "$parts" = 4 ] || { echo "FAIL: $parts parts instead of 4"; exit 1; }
# Names, dtypes, shapes and sizes; not where each is stored (the shard and offset differ by design).
unstored() { sed -E 's/  [^ ]+ @ [0-9]+$//' | sort; }
"$cli" inspect "$work/out/model.safetensors.index.json" | unstored >"$tmp/sharded.txt" ||
    { echo "FAIL: the index does not open"; exit 1; }
"$cli" inspect "$tmp/single.safetensors" | unstored >"$tmp/single.txt"
diff "$tmp/sharded.txt" "$tmp/single.txt" >/dev/null ||
    { echo "FAIL: the sharded export lists other tensors than the one-process export"; exit 1; }
echo "PASS: 4 Slurm array tasks merged into the one-process report"
