#!/usr/bin/env bash
# Runs clang-tidy (the checks in .clang-tidy) over every C++ source of a build, in parallel, and fails
# on any diagnostic. The build must have been configured with CMAKE_EXPORT_COMPILE_COMMANDS (the top
# CMakeLists.txt sets it) and built once, so that generated headers (moc, config.h) exist.
#   scripts/check-tidy.sh [BUILD_DIR] [-j N] [FILE_REGEX]
# FILE_REGEX narrows the files while fixing (default: every .cpp under app, backends, bench, core,
# tests, widgets). Exits 77 (ctest: skipped) where Debian's clang-tidy-14 tools are missing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build/dev
jobs=$(nproc)
# Not the analysis pass's per-ISA builds: they are written in GCC's vector extensions
# (__builtin_shuffle with run-time indices, conditional lvalues of vector lanes), which clang cannot
# compile. The scalar oracle they must match bit for bit (analyzer_reference.cpp) is checked. Nor
# core/base/cpu_isa.cpp: GCC's __builtin_cpu_supports("f16c"), a feature clang 14 does not name.
regex="^$root/(?!core/analysis/analyzer_fast_|core/base/cpu_isa\\.cpp)(app|backends|bench|core|tests|widgets)/.*\\.cpp\$"
while [ $# -gt 0 ]; do
    case "$1" in
    -j) jobs=$2; shift ;;
    -j*) jobs=${1#-j} ;;
    -h | --help) sed -n '2,8p' "$0"; exit 0 ;;
    *) if [ -d "$1" ]; then build=$1; else regex=$1; fi ;;
    esac
    shift
done

run=$(command -v run-clang-tidy-14 || command -v run-clang-tidy || true)
tidy=$(command -v clang-tidy-14 || command -v clang-tidy || true)
if [ -z "$run" ] || [ -z "$tidy" ]; then
    echo "clang-tidy / run-clang-tidy not installed (Debian package clang-tidy-14): skipped" >&2
    exit 77
fi
[ -f "$build/compile_commands.json" ] || { echo "$build/compile_commands.json: configure the build first" >&2; exit 2; }

log=$(mktemp)
trap 'rm -f "$log"' EXIT
start=$(date +%s)
status=0
# -quiet drops clang-tidy's per-file "N warnings generated" chatter; diagnostics stay.
"$run" -clang-tidy-binary "$tidy" -p "$build" -j "$jobs" -quiet "$regex" 2>&1 |
    sed 's/\x1b\[[0-9;]*m//g' >"$log" || status=$?
files=$(grep -cE '^[^ ]*clang-tidy[^ ]* ' "$log" || true)
diagnostics=$(grep -cE ': (warning|error): ' "$log" || true)
if [ "$status" -ne 0 ] || [ "$diagnostics" -ne 0 ]; then
    grep -E ': (warning|error): |^[[:space:]]+\^|^[^[:space:]].*\.(cpp|h):[0-9]+:' "$log" | grep -v '^clang-tidy' | head -400 >&2 || true
    echo "clang-tidy: $diagnostics diagnostic(s) (run-clang-tidy exit $status) in $(( $(date +%s) - start )) s" >&2
    exit 1
fi
echo "clang-tidy: clean over $files file(s) with $jobs job(s) in $(( $(date +%s) - start )) s"
