#!/usr/bin/env bash
# Checks rerun_if_leak_checker_crashed.sh on stand-in suites: it reruns one whose tests all passed
# before the leak checker crashed, and lets every other failure stand without a rerun.
set -uo pipefail
guard="$(dirname "$0")/rerun_if_leak_checker_crashed.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# A stand-in suite: prints its totals, then, on its first run only, `extra` and a checker crash.
stand_in() { # name totals extra
    cat >"$tmp/$1" <<SUITE
#!/usr/bin/env bash
echo "Totals: $2, 0 skipped"
if [ ! -e "$tmp/$1.ran" ]; then
    touch "$tmp/$1.ran"
    ${3:-true}
    echo "Tracer caught signal 11: addr=0x0"
    echo "==1==LeakSanitizer has encountered a fatal error."
    exit 1
fi
SUITE
    chmod +x "$tmp/$1"
}

stand_in crash "3 passed, 0 failed"
out=$(bash "$guard" "$tmp/crash") || fail "a checker crash after passing tests was not rerun to success: $out"
grep -q "running the suite once more" <<<"$out" || fail "the rerun was not announced"

stand_in leak "3 passed, 0 failed" 'echo "ERROR: LeakSanitizer: detected memory leaks"'
bash "$guard" "$tmp/leak" >/dev/null && fail "a leak report was rerun away"

stand_in failed "2 passed, 1 failed"
bash "$guard" "$tmp/failed" >/dev/null && fail "a failed test was rerun away"

stand_in ubsan "3 passed, 0 failed" 'echo "x.cpp:1:2: runtime error: signed integer overflow"'
bash "$guard" "$tmp/ubsan" >/dev/null && fail "a UBSan error was rerun away"

echo "PASS: the guard reruns only a checker crash after passing tests"
