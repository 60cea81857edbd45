#!/usr/bin/env bash
# Installs what is missing, builds QuantLens and opens it on the bundled sample model.
#   scripts/run.sh                    open the desktop app on the sample
#   scripts/run.sh FILE               open FILE instead
#   scripts/run.sh --screenshot PNG   render the main window with results to PNG and exit
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup-deps.sh
# The same tree as scripts/test.sh, and only the two programs: after the tests nothing is rebuilt.
cmake --preset dev >/dev/null
targets=(--target quantlens-cli)
grep -q "^QUANTLENS_GUI:BOOL=ON" build/dev/CMakeCache.txt && targets+=(--target quantlens)
cmake --build --preset dev -j "$(nproc)" "${targets[@]}"

sample=resources/sample/sample_model.safetensors
bin=build/dev/app
if [ -x "$bin/gui/quantlens" ]; then
    if [ "${1:-}" = "--screenshot" ]; then
        QT_QPA_PLATFORM=offscreen exec "$bin/gui/quantlens" --screenshot "$2" "$sample"
    fi
    exec "$bin/gui/quantlens" "${1:-$sample}"
fi
# Without the desktop app (QUANTLENS_GUI=OFF), show the same analysis in the terminal.
file="${1:-$sample}"
"$bin/cli/quantlens-cli" inspect "$file"
exec "$bin/cli/quantlens-cli" quantize "$file" --all
