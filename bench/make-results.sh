#!/usr/bin/env bash
# Regenerates bench/RESULTS.md from the benchmark programs' own output.
#   bench/make-results.sh [BUILD_DIR] [--quick]
# Runs bench_pipeline, bench_quantize, bench_cli_peer (all --markdown) and bench_listing from
# BUILD_DIR/bench (default build/release) and replaces, in bench/RESULTS.md, the text between
# `<!-- begin NAME -->` and `<!-- end NAME -->` for each of them, and the `machine` block with where and
# when this run was made.
# The rest of the file (how to read the tables, the history of the figures) is kept as written.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build/release
quick=()
for a in "$@"; do
    case "$a" in
    --quick) quick=(--quick) ;;
    -h | --help) sed -n '2,8p' "$0"; exit 0 ;;
    *) build="$a" ;;
    esac
done
for p in bench_pipeline bench_quantize bench_cli_peer bench_listing; do
    [ -x "$build/bench/$p" ] || { echo "$build/bench/$p is not built (see the commands in bench/RESULTS.md)" >&2; exit 2; }
done

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
load_before=$(cut -d' ' -f1 /proc/loadavg)
echo "bench_pipeline ${quick[*]}" >&2
"$build/bench/bench_pipeline" "${quick[@]}" --markdown "$out/bench_pipeline.md" >&2
echo "bench_quantize ${quick[*]}" >&2
"$build/bench/bench_quantize" "${quick[@]}" --markdown "$out/bench_quantize.md" >&2
echo "bench_cli_peer ${quick[*]}" >&2
"$build/bench/bench_cli_peer" "${quick[@]}" --markdown "$out/bench_cli_peer.md" >&2
echo "bench_listing" >&2
# Exits 1 when a figure is over its limit: the figures are recorded all the same.
{ echo '```'; "$build/bench/bench_listing" "$out" || true; echo '```'; } > "$out/bench_listing.md"
load_after=$(cut -d' ' -f1 /proc/loadavg)

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)
type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt" 2>/dev/null)
{
    echo "${cpu:-unknown CPU}, $(nproc) threads; ${type:-unknown} build; run $(date -u +%Y-%m-%d) on commit" \
        "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)${quick:+ (--quick)}; load average" \
        "$load_before at the start, $load_after at the end."
} > "$out/machine.md"

python3 - "$out" bench/RESULTS.md <<'PY'
import pathlib, re, sys
out, results = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
text = results.read_text()
for name in ("machine", "bench_pipeline", "bench_quantize", "bench_cli_peer", "bench_listing"):
    body = (out / f"{name}.md").read_text().strip("\n")
    pattern = re.compile(rf"(<!-- begin {name} -->\n).*?(\n<!-- end {name} -->)", re.S)
    if not pattern.search(text):
        sys.exit(f"{results}: no block <!-- begin {name} --> ... <!-- end {name} -->")
    text = pattern.sub(lambda m: m.group(1) + body + m.group(2), text, count=1)
results.write_text(text)
PY
echo "bench/RESULTS.md regenerated; update the notes that cite figures that moved" >&2
