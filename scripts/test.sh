#!/usr/bin/env bash
# Installs what is missing, builds QuantLens and runs every test with ctest.
#   scripts/test.sh              dev preset (RelWithDebInfo)
#   scripts/test.sh --preset asan   the same suites under AddressSanitizer + UBSan
set -euo pipefail
cd "$(dirname "$0")/.."

preset=dev
while [ $# -gt 0 ]; do
    case "$1" in
        --preset) preset="$2"; shift 2 ;;
        *) echo "usage: scripts/test.sh [--preset dev|asan|release]" >&2; exit 2 ;;
    esac
done

bash scripts/setup-deps.sh --with-test-tools
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j "$(nproc)"
ctest --preset "$preset" -j "$(nproc)"
