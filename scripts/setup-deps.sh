#!/usr/bin/env bash
# Installs the Debian packages QuantLens needs to build, test and run. Idempotent:
# packages already present are skipped, so a warm machine pays nothing.
set -euo pipefail

build_pkgs=(cmake g++ lld ninja-build ccache pkg-config libeigen3-dev nlohmann-json3-dev libcli11-dev
            libbenchmark-dev libhdf5-dev qt6-base-dev qt6-svg-dev libqcustomplot-dev libonnx-dev libprotobuf-dev
            python3-dev pybind11-dev python3-pybind11)
# clang-format, clang-tidy: the format and tidy suites. time: GNU time measures the CLI's peak memory (tst_shard). nodejs, npm: ONNX Runtime for the evaluate suite (setup-onnxruntime.sh)
# and onnxruntime-node, the peer it compares with. slurm-wlm and munge: the fan-out suite starts a one-node Slurm cluster (tests/scripts/slurm_fanout.sh).
test_pkgs=(clang-format clang-tidy time python3 python3-numpy python3-h5py python3-torch python3-onnx xvfb xauth slurm-wlm munge nodejs)

want=("${build_pkgs[@]}")
[ "${1:-}" = "--with-test-tools" ] && want+=("${test_pkgs[@]}")

missing=()
for p in "${want[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# npm by command: a nodejs from elsewhere (NodeSource) bundles it, and Debian's npm would conflict with it.
[ "${1:-}" = "--with-test-tools" ] && ! command -v npm >/dev/null && missing+=(npm)
if [ ${#missing[@]} -gt 0 ]; then
    echo "Installing Debian packages: ${missing[*]}" >&2
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# The evaluate suite's ONNX Runtime (npm onnxruntime-node@1.30.0, checksum-checked, under build/onnxruntime).
[ "${1:-}" = "--with-test-tools" ] && bash "$(dirname "$0")/setup-onnxruntime.sh"
exit 0
