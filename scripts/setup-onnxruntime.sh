#!/usr/bin/env bash
# Fetches ONNX Runtime 1.30.0 for `quantlens-cli evaluate` and its tests: the npm package
# onnxruntime-node@1.30.0 ships the C library (bin/napi-v6/linux/x64/libonnxruntime.so.1, glibc, loads
# on Debian 12) beside its Node binding. Both packages are checked against the checksums recorded here
# and unpacked as node_modules/ of the cache folder (default build/onnxruntime, never committed): the
# library QuantLens loads, and onnxruntime-node itself, which the tests run as the peer to compare with.
# Idempotent: an unpacked cache is kept.
#   scripts/setup-onnxruntime.sh [CACHE_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."

cache="${1:-build/onnxruntime}"
lib="$cache/node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1"
[ -f "$lib" ] && [ -f "$cache/node_modules/onnxruntime-common/package.json" ] && exit 0

command -v npm >/dev/null || { echo "setup-onnxruntime: npm is needed to fetch onnxruntime-node (apt-get install npm)" >&2; exit 1; }
# name, version, sha256 of the tarball (npm's sha512 integrity in the comment, as `npm pack --json` reports it)
packages=(
    # sha512-twhs1C2C/BFkz1yc5OY0KIU2GUq6DURO7hD4bx5Q2Qy3nAMJwRXW8xU3NVczE29VA9lolLOYepoD8fjTGOfIqw==
    "onnxruntime-node 1.30.0 6e3390d6b783e7be946fad629292799da28d0b42f84856e50d2c1b0383291e75"
    # sha512-7fdVWjAID1dVhH/G8qK3APARunV4VkBFoCQAP7qp4Wkab0mrorvmc+sqiT+mKXOzDqdjN5j+/Z9nb4gzNPWcyA==
    "onnxruntime-common 1.30.0 7906c439e0d3e0f4048caa23b64cdfadc0f455c377f579ce1ab2a4b778f07d5f"
)
mkdir -p "$cache"
tmp="$(mktemp -d "$cache/.fetch.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
for p in "${packages[@]}"; do
    read -r name version sum <<<"$p"
    echo "Fetching $name@$version from the npm registry" >&2
    (cd "$tmp" && npm pack "$name@$version" --silent >/dev/null)
    tgz="$tmp/$name-$version.tgz"
    echo "$sum  $tgz" | sha256sum -c --quiet - || { echo "setup-onnxruntime: $name@$version: checksum mismatch" >&2; exit 1; }
    mkdir -p "$tmp/node_modules/$name"
    # Linux x64 only (the package also holds Windows and macOS builds): the JS, and the library + binding.
    tar xzf "$tgz" -C "$tmp/node_modules/$name" --strip-components=1 --wildcards \
        'package/package.json' 'package/dist/*' \
        $([ "$name" = onnxruntime-node ] && echo 'package/bin/napi-v6/linux/x64/*')
done
rm -rf "$cache/node_modules"
mv "$tmp/node_modules" "$cache/node_modules" # whole, or not at all
echo "ONNX Runtime 1.30.0: $lib" >&2
