#!/usr/bin/env bash
# `cmake --install` of the build into a temporary prefix puts a quantlens package that Debian's
# interpreter imports from there (and not from the build folder).
#   install_check.sh CMAKE BUILD_DIR PYTHON INSTALL_DIR(relative to the prefix)
set -euo pipefail
cmake=$1 build=$2 python=$3 dir=$4
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
"$cmake" --install "$build" --prefix "$prefix" --component python >/dev/null
cd "$prefix"
PYTHONPATH="$prefix/$dir" "$python" -c "
import sys, numpy as np, quantlens
assert quantlens.__file__.startswith('$prefix/'), quantlens.__file__
r = quantlens.quantize(np.ones((4, 8), np.float32))
assert r.codes.shape == (4, 8)
print('installed and imported from', quantlens.__file__)
"
