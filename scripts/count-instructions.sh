#!/usr/bin/env bash
# Counts the instructions `quantlens-cli quantize FILE --all -q` executes (valgrind's callgrind), per
# element of a 256×4096 f32 tensor: the whole process, what the same process costs on a 1×64 tensor
# (its start), and its ten costliest functions. Counts, unlike timings, do not move with a shared
# machine's load, so a change to a kernel can be weighed exactly.
#   scripts/count-instructions.sh [--build DIR] [quantize options...]   e.g. --preset nvfp4
# Needs valgrind and Debian's python3 with numpy; builds nothing (DIR defaults to build/dev).
set -euo pipefail
cd "$(dirname "$0")/.."
build=build/dev
if [ "${1:-}" = "--build" ]; then build="$2"; shift 2; fi
cli="$build/app/cli/quantlens-cli"
[ -x "$cli" ] || { echo "no $cli: build first (scripts/test.sh)" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rows=256 cols=4096
write() { # write FILE ROWS COLS: a normal(0, 0.02) f32 tensor "w"
    /usr/bin/python3 - "$@" <<'PY'
import json, struct, sys
import numpy as np
path, rows, cols = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
w = np.random.default_rng(1).normal(0, 0.02, (rows, cols)).astype("<f4")
header = json.dumps({"w": {"dtype": "F32", "shape": [rows, cols], "data_offsets": [0, w.nbytes]}}).encode()
with open(path, "wb") as f:
    f.write(struct.pack("<Q", len(header)) + header + w.tobytes())
PY
}
count() { # count FILE OUT [quantize options]: callgrind of quantize FILE --all -q
    local file=$1 out=$2
    shift 2
    valgrind --tool=callgrind --callgrind-out-file="$out" "$cli" quantize "$file" --all -q "$@" \
        >/dev/null 2>"$work/log" || { cat "$work/log" >&2; exit 1; }
}
write "$work/w.safetensors" $rows $cols
write "$work/tiny.safetensors" 1 64
count "$work/w.safetensors" "$work/cg" "$@"
# The same process on a 1×64 tensor: what starting, loading and reporting cost whatever the size.
count "$work/tiny.safetensors" "$work/cg-start" "$@"
start=$(callgrind_annotate "$work/cg-start" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }')
callgrind_annotate "$work/cg" 2>/dev/null | /usr/bin/python3 -c '
import os, re, subprocess, sys
elements = int(sys.argv[1])
lines = sys.stdin.read().splitlines()
total = next(int(l.split()[0].replace(",", "")) for l in lines if "PROGRAM TOTALS" in l)
start = int(sys.argv[2])
print(f"process: {total / 1e6:.1f}M instructions, {total / elements:.1f} per element")
print(f"  of which the same process on a 1x64 tensor (start, load, report): {start / elements:.1f} per element")
rows = [l for l in lines if re.match(r"^\s*[\d,]+ \(\s*[\d.]+%\)\s+\S", l) and "PROGRAM TOTALS" not in l]
for l in rows[:10]:
    count, where = re.match(r"^\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*)$", l).groups()
    count = int(count.replace(",", ""))
    source, _, function = where.partition(":")  # the source file, then the (demangled) function
    function = subprocess.run(["c++filt"], input=function, capture_output=True, text=True).stdout.strip()
    function = function.split(" [")[0]  # the object file it came from
    nested = re.match(r"_Z+N(\d.*)", function)  # a lambda: named by the function it is in
    if nested:
        parts, rest = [], nested.group(1)
        while (m := re.match(r"(\d+)", rest)):
            n = len(m.group(1))
            parts.append(rest[n:n + int(m.group(1))])
            rest = rest[n + int(m.group(1)):]
        function = "a lambda in " + "::".join(parts)
    file = os.path.basename(source)
    print(f"{count / elements:8.2f} per element  {file}: {function[:100]}")
' $((rows * cols)) "$start"
