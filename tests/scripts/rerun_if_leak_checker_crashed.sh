#!/usr/bin/env bash
# Runs a suite of a sanitized build. LeakSanitizer's exit-time checker sometimes crashes on its own
# ("Tracer caught signal 11 ... LeakSanitizer has encountered a fatal error"): a known fault of the
# checker, not a leak, seen after every test of a suite had passed. Only then is the suite run once
# more, saying so. Any other failure stands, a leak report or a sanitizer error among them.
#   rerun_if_leak_checker_crashed.sh SUITE [ARGS...]
set -uo pipefail
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
if [ "$rc" -ne 0 ] &&
    grep -q "LeakSanitizer has encountered a fatal error" "$log" &&
    grep -qE "^Totals: [0-9]+ passed, 0 failed" "$log" &&
    ! grep -qE "ERROR: (LeakSanitizer|AddressSanitizer)|runtime error:" "$log"; then
    echo "--- every test passed, then the leak checker itself crashed at exit; running the suite once more"
    rm -f "$log"
    exec "$@"
fi
exit "$rc"
