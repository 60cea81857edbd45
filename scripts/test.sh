#!/usr/bin/env bash
# Installs what is missing, builds QuantLens and runs every test with ctest.
#   scripts/test.sh              dev preset (RelWithDebInfo)
#   scripts/test.sh --preset asan   the same suites under AddressSanitizer + UBSan
#   scripts/test.sh --werror        any compiler warning fails the build (CI passes it)
#   scripts/test.sh --no-werror     warnings are warnings again
# The warnings setting is kept by the build tree: a run without either flag leaves it as it was (a
# change of it recompiles everything).
set -euo pipefail
cd "$(dirname "$0")/.."

preset=dev
werror=
while [ $# -gt 0 ]; do
    case "$1" in
        --preset) preset="$2"; shift 2 ;;
        --werror) werror=ON; shift ;;
        --no-werror) werror=OFF; shift ;;
        *) echo "usage: scripts/test.sh [--preset dev|asan|release] [--werror | --no-werror]" >&2; exit 2 ;;
    esac
done

bash scripts/setup-deps.sh --with-test-tools
# ONNX and the Python module on by name: their defaults follow what is installed, and the test command
# must not drop their suites without a word if setup-deps could not install them.
cmake --preset "$preset" -DQUANTLENS_ONNX=ON -DQUANTLENS_PYTHON=ON ${werror:+-DQUANTLENS_WARNINGS_AS_ERRORS="$werror"} >/dev/null
build_start=$(date +%s)
cmake --build --preset "$preset" -j "$(nproc)"
echo "build ($preset): $(( $(date +%s) - build_start )) s on $(nproc) core(s)" >&2
ctest --preset "$preset" -j "$(nproc)"
