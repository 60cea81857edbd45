#!/usr/bin/env bash
# The Slurm scripts with hostile arguments: a number that is not plain digits (an arithmetic expression
# such as 'PWD[$(cmd)0]', which bash would evaluate and so run cmd, a sign, an exponent, hex, spaces,
# zero, past 100000) is refused with exit 2 before anything runs or is created, and a command
# substitution in any argument (N, MODEL, WORKDIR, the quantize options, the array task id) is never
# run: it reaches sbatch and quantlens-cli as the text it is. sbatch and quantlens-cli are recording
# stand-ins, so this needs no cluster (slurm_fanout runs the scripts on a real one).
#   slurm_hostile_args.sh SOURCE_DIR
set -uo pipefail
src=$1
slurm=$src/scripts/slurm
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
canary=$tmp/canary # what every payload below would create if it ran
failures=0
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

# Stand-ins: each records its arguments, one per line, and answers as the real one would.
mkdir -p "$tmp/bin"
cat >"$tmp/bin/sbatch" <<'EOF'
#!/usr/bin/env bash
printf '%s\n' "$@" >>"$QL_TEST_CALLS/sbatch"
echo "== end" >>"$QL_TEST_CALLS/sbatch"
echo 4242
EOF
cat >"$tmp/bin/quantlens-cli" <<'EOF'
#!/usr/bin/env bash
printf '%s\n' "$@" >"$QL_TEST_CALLS/cli"
EOF
chmod +x "$tmp/bin/sbatch" "$tmp/bin/quantlens-cli"
export PATH="$tmp/bin:$PATH" QUANTLENS_CLI="$tmp/bin/quantlens-cli" QL_TEST_CALLS="$tmp/calls"

reset() {
    rm -rf "$tmp/calls" "$canary" "$tmp/jobs"
    mkdir -p "$tmp/calls"
}

# Every way a number can be other than plain decimal digits within 1..100000.
numbers=(
    "PWD[\$(touch $canary)0]"
    "a[\$(touch $canary)]"
    "x[\`touch $canary\`]"
    "\$(touch $canary)"
    "\`touch $canary\`"
    "1+\$(touch $canary)"
    "4;touch $canary"
    "4 && touch $canary"
    "\$((4))"
    "1+1" "-1" "+4" "0" "000" "100001" "9999999" "1e3" "0x10" "4.0" " 4" "4 " "" "four"
)

for n in "${numbers[@]}"; do
    reset
    out=$(cd "$tmp" && bash "$slurm/submit.sh" "$n" "$src/resources/sample/sample_model.safetensors" "$tmp/jobs" \
        --all 2>&1)
    code=$?
    [ "$code" = 2 ] || fail "submit.sh N='$n': exit $code, not 2 ($out)"
    [[ $out == *"N must be a whole number from 1 to 100000, got '$n'"* ]] ||
        fail "submit.sh N='$n': the message is '$out'"
    [ -e "$canary" ] && fail "submit.sh N='$n' ran the command in it"
    [ -e "$tmp/calls/sbatch" ] && fail "submit.sh N='$n' called sbatch"
    [ -e "$tmp/jobs" ] && fail "submit.sh N='$n' created WORKDIR before refusing"

    reset
    out=$(cd "$tmp" && bash "$slurm/merge.sbatch" "$n" 2>&1)
    code=$?
    [ "$code" = 2 ] || fail "merge.sbatch N='$n': exit $code, not 2 ($out)"
    [[ $out == *"N must be a whole number from 1 to 100000, got '$n'"* ]] ||
        fail "merge.sbatch N='$n': the message is '$out'"
    [ -e "$canary" ] && fail "merge.sbatch N='$n' ran the command in it"
    [ -e "$tmp/calls/cli" ] && fail "merge.sbatch N='$n' ran quantlens-cli"

    reset
    out=$(cd "$tmp" && SLURM_ARRAY_TASK_ID=0 bash "$slurm/quantize-array.sbatch" "$n" model.safetensors 2>&1)
    code=$?
    [ "$code" = 2 ] || fail "quantize-array.sbatch N='$n': exit $code, not 2 ($out)"
    [[ $out == *"N must be a whole number from 1 to 100000, got '$n'"* ]] ||
        fail "quantize-array.sbatch N='$n': the message is '$out'"
    [ -e "$canary" ] && fail "quantize-array.sbatch N='$n' ran the command in it"
    [ -e "$tmp/calls/cli" ] && fail "quantize-array.sbatch N='$n' ran quantlens-cli"
done

# The array task id comes from the environment: checked the same way, and against N.
for id in "PWD[\$(touch $canary)0]" "\$(touch $canary)" "-1" "4" "1e0" "" " 1"; do
    reset
    out=$(cd "$tmp" && SLURM_ARRAY_TASK_ID=$id bash "$slurm/quantize-array.sbatch" 4 model.safetensors 2>&1)
    code=$?
    [ "$code" = 2 ] || fail "quantize-array.sbatch task '$id': exit $code, not 2 ($out)"
    [[ $out == *"SLURM_ARRAY_TASK_ID must be a whole number from 0 to 3, got '$id'"* ]] ||
        fail "quantize-array.sbatch task '$id': the message is '$out'"
    [ -e "$canary" ] && fail "quantize-array.sbatch task '$id' ran the command in it"
    [ -e "$tmp/calls/cli" ] && fail "quantize-array.sbatch task '$id' ran quantlens-cli"
done

# A valid N (leading zeros read as decimal), with a command substitution in every other argument: the
# model and the work folder are real paths with such names (a file name holds no '/': the payload
# names the canary relative to the folder everything here runs in), and the options carry one too.
reset
model="$tmp/m\$(touch canary).safetensors"
cp "$src/resources/sample/sample_model.safetensors" "$model"
work="$tmp/jobs/w\$(touch canary)\`touch canary\`"
option="out/\$(touch canary).safetensors"
out=$(cd "$tmp" && bash "$slurm/submit.sh" 08 "$model" "$work" --all --out "$option" 2>&1)
code=$?
[ "$code" = 0 ] || fail "submit.sh with hostile names: exit $code ($out)"
[ -e "$canary" ] && fail "submit.sh ran a command substitution from MODEL, WORKDIR or the options"
[ -d "$work/logs" ] || fail "submit.sh did not create '$work/logs' under its literal name"
calls=$(cat "$tmp/calls/sbatch" 2>/dev/null)
[[ $calls == *"--array=0-7"* ]] || fail "submit.sh 08: the array is not 0-7: $calls"
[[ $calls == *"$slurm/quantize-array.sbatch"$'\n'"8"$'\n'"$model"$'\n'"--all"$'\n'"--out"$'\n'"$option"$'\n'"== end"* ]] ||
    fail "submit.sh did not pass N, MODEL and the options to the array as they are: $calls"
[[ $calls == *"--dependency=afterany:4242"*"$slurm/merge.sbatch"$'\n'"8"$'\n'"== end"* ]] ||
    fail "submit.sh did not chain the merge of 8 parts after the array: $calls"

# The array task and the merge as Slurm would start them with those arguments.
reset
(cd "$tmp" && SLURM_ARRAY_TASK_ID=07 bash "$slurm/quantize-array.sbatch" 8 "$model" --all --out "$option") ||
    fail "quantize-array.sbatch with hostile names failed"
[ -e "$canary" ] && fail "quantize-array.sbatch ran a command substitution from its arguments"
expected=$(printf '%s\n' quantize "$model" --shard 7/8 --resume --report part-7.json --quiet --all --out "$option")
[ "$(cat "$tmp/calls/cli" 2>/dev/null)" = "$expected" ] ||
    fail "quantize-array.sbatch ran: $(cat "$tmp/calls/cli" 2>/dev/null)"
reset
(cd "$tmp" && bash "$slurm/merge.sbatch" 3) || fail "merge.sbatch 3 failed"
expected=$(printf '%s\n' merge part-0.json part-1.json part-2.json --out report.json)
[ "$(cat "$tmp/calls/cli" 2>/dev/null)" = "$expected" ] || fail "merge.sbatch 3 ran: $(cat "$tmp/calls/cli")"

if [ "$failures" -gt 0 ]; then
    echo "$failures failures"
    exit 1
fi
echo "PASS: hostile numbers refused with exit 2 before anything ran; no command substitution was run"
