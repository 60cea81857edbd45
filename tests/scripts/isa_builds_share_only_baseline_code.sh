#!/usr/bin/env bash
# The per-ISA builds (the CPU kernels, the analysis pass and the fast calibrators, built for AVX2 and
# AVX-512) also emit the inline code they share with the rest of the program: weak symbols such as
# destructors and standard-library templates. The linker keeps one copy of each for every caller, so
# a copy built with AVX instructions would crash a baseline caller on a CPU without them. This finds
# every object defining code in an ISA namespace (::avx2::, ::avx512::), whatever its file is named
# or however its ISA was chosen (a flag or a pragma), and checks each of its weak symbols outside
# those namespaces: none may hold a VEX or EVEX instruction. (Found by their symbols: disassembling
# every object of a sanitizer build to find them took minutes.)
#
#   isa_builds_share_only_baseline_code.sh ARCHIVE...   (the static libraries holding the builds)
set -euo pipefail
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A VEX or EVEX instruction: a mnemonic starting with v on an xmm/ymm/zmm or mask register.
vex_insn='^\s+[0-9a-f]+:\s+v[a-z0-9]+\s.*%([xyz]mm|k)[0-9]'
objects=0
bad=0
for archive in "$@"; do
    dir="$tmp/$(basename "$archive")"
    mkdir -p "$dir"
    path=$(realpath "$archive")
    (cd "$dir" && ar x "$path")
    for obj in "$dir"/*.o; do
        [ -e "$obj" ] || continue
        # (counted, not grep -q: an early exit would fail the pipe under pipefail)
        [ "$(nm --defined-only -C "$obj" | grep -cE '::avx(2|512)::' || true)" != 0 ] || continue
        objects=$((objects + 1))
        for sym in $(nm "$obj" | awk '$2 == "W" || $2 == "V" { print $3 }'); do
            name=$(printf '%s\n' "$sym" | c++filt)
            case "$name" in *::avx2::* | *::avx512::*) continue ;; esac
            vex=$(objdump -d --no-show-raw-insn --disassemble="$sym" "$obj" | grep -cE "$vex_insn" || true)
            if [ "$vex" != 0 ]; then
                echo "$(basename "$obj"): shared symbol built with AVX ($vex instructions): $name"
                bad=$((bad + 1))
            fi
        done
    done
done
if [ "$objects" = 0 ]; then
    echo "no object with code in an ISA namespace in: $*" >&2
    exit 1
fi
echo "$objects objects with ISA-namespace code checked, $bad shared symbols built with AVX"
[ "$bad" = 0 ]
