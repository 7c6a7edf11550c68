#!/bin/sh
# `tracegate baseline record|show` end to end on the shared traces (skipped,
# exit 77, when they are absent): reproducible output under
# SOURCE_DATE_EPOCH, exit statuses of docs/formats.md, and the regression verdicts
# of traces/README.md through `check --baseline`.
set -u
TG=${TG_BINARY:?TG_BINARY not set}
T=${TG_SHARED_TRACES:-}
if [ -z "$T" ] || [ ! -r "$T/h200-torch/realistic_regressed.sqlite" ]; then
    echo "SKIP: shared traces not found (TG_SHARED_TRACES=$T)"
    exit 77
fi
R1=$T/h200-torch/realistic_baseline_run1.sqlite
R2=$T/h200-torch/realistic_baseline_run2.sqlite
REG=$T/h200-torch/realistic_regressed.sqlite
D1=$T/h200-nsys/drv_train_run1.sqlite
D2=$T/h200-nsys/drv_train_run2.sqlite
D3=$T/h200-nsys/drv_train_run3.sqlite
OTHER_GPU=$T/public/dlprof-pytorch-rtx2070s-pyprof-nvtx-nsys2022.1.sqlite
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# expect STATUS DESCRIPTION CMD...: run CMD, compare its exit status
expect() {
    want=$1; what=$2; shift 2
    "$@" >"$DIR/out" 2>"$DIR/err"
    got=$?
    if [ "$got" -ne "$want" ]; then
        fail "$what: exit $got, want $want"
        sed 's/^/    /' "$DIR/err"
    fi
}

export SOURCE_DATE_EPOCH=1700000000
expect 0 "record realistic run1+run2" "$TG" baseline record -o "$DIR/a.yaml" "$R1" "$R2"
expect 0 "record again" "$TG" baseline record -o "$DIR/b.yaml" "$R1" "$R2"
cmp -s "$DIR/a.yaml" "$DIR/b.yaml" || fail "two recordings differ"
grep -q '^date: "2023-11-14"$' "$DIR/a.yaml" || fail "SOURCE_DATE_EPOCH not used for the date"
expect 0 "record to stdout" "$TG" baseline record -o - "$R1" "$R2"
cmp -s "$DIR/a.yaml" "$DIR/out" || fail "-o - differs from -o FILE"

expect 0 "show" "$TG" baseline show "$DIR/a.yaml"
grep -q "iteration-time-regression" "$DIR/out" || fail "show lacks iteration-time-regression"
grep -q "realistic_baseline_run2.sqlite" "$DIR/out" || fail "show lacks the run names"

# the verdicts of traces/README.md
expect 1 "realistic_regressed vs run1+run2 fails" "$TG" check --baseline "$DIR/a.yaml" "$REG"
grep "iteration-time-regression" "$DIR/out" | grep -q FAIL || fail "iteration-time-regression did not fail"
grep "gpu-time-regression" "$DIR/out" | grep -q FAIL || fail "gpu-time-regression did not fail"
expect 0 "record run1" "$TG" baseline record -o "$DIR/r1.yaml" "$R1"
"$TG" check --baseline "$DIR/r1.yaml" "$R2" >"$DIR/out" 2>&1
grep -E "(iteration|gpu)-time-regression" "$DIR/out" | grep -q FAIL && fail "run2 vs run1 regressed"
expect 0 "record drv_train run1+run2" "$TG" baseline record -o "$DIR/d.yaml" "$D1" "$D2"
for set in "" "--set gpu-time-regression.min_change=0.5%"; do
    # shellcheck disable=SC2086
    "$TG" check --baseline "$DIR/d.yaml" $set "$D3" >"$DIR/out" 2>&1
    grep -E "(iteration|gpu)-time-regression" "$DIR/out" | grep -q FAIL &&
        fail "drv_train_run3 regressed ($set)"
done

# exit statuses
expect 2 "no -o" "$TG" baseline record "$R1"
expect 2 "bad --set" "$TG" baseline record -o "$DIR/x.yaml" --set nodot "$R1"
expect 2 "unknown subcommand" "$TG" baseline frob
expect 3 "unreadable trace" "$TG" baseline record -o "$DIR/x.yaml" "$R1" "$DIR/missing.sqlite"
[ -e "$DIR/x.yaml" ] && fail "a baseline was written although a trace was unreadable"
expect 2 "runs from two GPU models" "$TG" baseline record -o "$DIR/x.yaml" "$D1" "$OTHER_GPU"
grep -q "NVIDIA H200" "$DIR/err" || fail "mismatch message lacks the GPU names"
# allowed, but that capture has no iterations: the regression rules cannot
# be recorded from it, and no baseline is written
expect 3 "--allow-mismatch, no iterations" "$TG" baseline record --allow-mismatch -o "$DIR/x.yaml" "$D1" "$OTHER_GPU"
grep -q "cannot record regression rule .* from dlprof.*NVTX range" "$DIR/err" || fail "no reason why the rule cannot be recorded"
[ -e "$DIR/x.yaml" ] && fail "a baseline was written without its regression metrics"
# (its two convolutions as iterations: its pyprof `{...}` markers would be
# ranges of which 9 of 22 launch no GPU work, too few periods to judge)
expect 0 "--allow-mismatch, both runs with iterations" "$TG" baseline record --allow-mismatch \
    --iteration-pattern '^(iteration|aten::_convolution.*)$' -o "$DIR/x.yaml" "$D1" "$OTHER_GPU"
expect 2 "check against another GPU's baseline" "$TG" check --baseline "$DIR/d.yaml" "$OTHER_GPU"
printf 'format_version: 1\nruns: [\n' >"$DIR/bad.yaml"
expect 2 "malformed baseline" "$TG" baseline show "$DIR/bad.yaml"
grep -q "bad.yaml:3:1" "$DIR/err" || { fail "no file:line:col for a malformed baseline"; cat "$DIR/err"; }
expect 2 "SOURCE_DATE_EPOCH garbage" env SOURCE_DATE_EPOCH=soon "$TG" baseline record -o - "$R1"

if [ "$failures" -ne 0 ]; then
    echo "$failures failure(s)"
    exit 1
fi
echo "ok"
