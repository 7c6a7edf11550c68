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

# outlier runs (docs/regressions.md, "Outlier runs"): a baseline one bad
# run cannot poison
expect 2 "run1+run2+regressed is refused" "$TG" baseline record -o "$DIR/x.yaml" "$R1" "$R2" "$REG"
[ -e "$DIR/x.yaml" ] && fail "a baseline was written with an outlier run"
for rule in gpu-time-regression iteration-time-regression; do
    grep "run $REG is inconsistent" "$DIR/err" | grep -q "on $rule" || fail "the refusal does not name $REG on $rule"
done
grep -q "12.91 ms (+9.98% from their median) against 11.74 ms, 11.74 ms" "$DIR/err" ||
    fail "the refusal lacks the values"
grep -q "realistic_baseline_run[12].sqlite is inconsistent" "$DIR/err" && fail "an unchanged run was called an outlier"
expect 2 "run1+regressed: two runs that disagree" "$TG" baseline record -o "$DIR/x.yaml" "$R1" "$REG"
grep -q "runs $R1 and $REG disagree on gpu-time-regression.*no telling which one is odd" "$DIR/err" ||
    fail "two disagreeing runs are not both named"
expect 0 "--keep-outliers" "$TG" baseline record --keep-outliers -o "$DIR/k.yaml" "$R1" "$R2" "$REG"
grep -q "kept as an outlier: listed in kept_outliers" "$DIR/err" || fail "--keep-outliers kept the run silently"
grep -q '^format_version: 2$' "$DIR/k.yaml" || fail "a baseline with kept outliers is not format 2"
[ "$(grep -c '^    kept_outliers: \[2\]$' "$DIR/k.yaml")" -eq 2 ] || fail "kept_outliers does not list run 2 on both rules"
expect 0 "show a baseline with kept outliers" "$TG" baseline show "$DIR/k.yaml"
grep -q "outliers kept, left out of the value and band: realistic_regressed.sqlite" "$DIR/out" ||
    fail "show does not list the kept outlier"
expect 1 "realistic_regressed vs the baseline that kept it fails" "$TG" check --baseline "$DIR/k.yaml" "$REG"
for rule in gpu-time-regression iteration-time-regression; do
    grep "FAIL .* $rule" "$DIR/out" | grep -q "the baseline keeps 1 outlier run (realistic_regressed.sqlite" ||
        fail "$rule did not fail against the baseline that kept the regressed run, or did not say it keeps it"
done
expect 0 "run1 vs the baseline that kept the outlier passes" "$TG" check --baseline "$DIR/k.yaml" "$R1"
expect 0 "run1 vs run1+run2 passes" "$TG" check --baseline "$DIR/a.yaml" "$R1"
# every unchanged series records: near-identical runs and noisy wall time
# are not outliers (drv_train: +-0.3% period, +-0.03% GPU time)
expect 0 "drv_train run1..3 record" "$TG" baseline record -o "$DIR/d3.yaml" "$D1" "$D2" "$D3"
expect 0 "drv_train run3 vs run1..3 passes" "$TG" check --baseline "$DIR/d3.yaml" "$D3"
K=$T/kineto/h200-series
if [ -n "${TG_CORPUS_QUICK:-}" ]; then
    echo "SKIP: the Kineto series (3 x 113 MB of JSON) under TG_CORPUS_QUICK"
elif [ -r "$K/realistic_baseline_run3.json.gz" ]; then
    # +-13% wall time between unchanged runs: 31.8, 37.4, 41.7 ms
    expect 0 "Kineto series run1..3 record" "$TG" baseline record -o "$DIR/k3.yaml" \
        "$K/realistic_baseline_run1.json.gz" "$K/realistic_baseline_run2.json.gz" "$K/realistic_baseline_run3.json.gz"
    expect 2 "Kineto series run1..3 + slow_run1 is refused" "$TG" baseline record -o "$DIR/x.yaml" \
        "$K/realistic_baseline_run1.json.gz" "$K/realistic_baseline_run2.json.gz" \
        "$K/realistic_baseline_run3.json.gz" "$K/realistic_baseline_slow_run1.json.gz"
    grep -q "run $K/realistic_baseline_slow_run1.json.gz is inconsistent .* on gpu-time-regression" "$DIR/err" ||
        fail "slow_run1 is not named as the outlier"
else
    echo "SKIP: the Kineto series is absent"
fi
# a significant change outside the band below min_change is said in every
# format, not passed silently (+9.98% GPU time under a 20% gate)
for f in text json sarif junit markdown html; do
    expect 1 "the below-the-gate notice ($f)" "$TG" check --format "$f" --baseline "$DIR/a.yaml" \
        --set gpu-time-regression.min_change=20% "$REG"
    grep -q "significant, below the 20% gate" "$DIR/out" || fail "no below-the-gate notice in $f"
done
# the committed baselines still load and judge (format 1)
for f in "${TG_SOURCE_ROOT:-.}"/baselines/*.yaml; do
    expect 0 "show $f" "$TG" baseline show "$f"
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
# (two workloads, so their GPU times also disagree far beyond run-to-run
# noise: --keep-outliers records them, with a warning naming both)
expect 0 "--allow-mismatch, both runs with iterations" "$TG" baseline record --allow-mismatch --keep-outliers \
    --iteration-pattern '^(iteration|aten::_convolution.*)$' -o "$DIR/x.yaml" "$D1" "$OTHER_GPU"
grep -q "no telling which one is odd" "$DIR/err" || fail "two disagreeing runs kept without a warning"
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
