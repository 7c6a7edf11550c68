#!/usr/bin/env bash
# A gate must never pass a run it could not judge (docs/regressions.md):
# every way a regression gate used to pass a slower run by accident, on
# the bundled example and its committed baseline (no ../shared needed).
# Each case states the exit status and the sentence that says why.
set -uo pipefail
bin="$TG_BINARY"
example="$1"
root="$TG_SOURCE_ROOT"
base="$root/baselines/example.yaml"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }

# expect WANT DESCRIPTION NEEDLE -- command...: exit status and a sentence on stderr or stdout
expect() {
    local want=$1 what=$2 needle=$3
    shift 4
    "$@" >"$tmp/out" 2>"$tmp/err"
    local got=$?
    [ "$got" = "$want" ] || fail "$what: exit $got, expected $want ($(head -c 400 "$tmp/err"))"
    grep -qF -- "$needle" "$tmp/out" "$tmp/err" || fail "$what: no '$needle' in the output ($(head -c 400 "$tmp/err"))"
}

# the committed baseline judges the example: both regression rules pass
expect 0 "the example against its own baseline" "gpu-time-regression" -- \
    "$bin" check --rules builtin --baseline "$base" --fail-on never "$example"

# 1. --baseline given but no iteration matched (a renamed marker): exit 3, never "skipped"
# (--fail-on never: the example's own findings would fail the gate, exit 1,
# which wins over missing data -- docs/formats.md -- and is checked too)
expect 3 "no iteration matched the pattern" "none of its 30 NVTX ranges matches the iteration pattern ^renamed\$" -- \
    "$bin" check --fail-on never --baseline "$base" --iteration-pattern '^renamed$' "$example"
expect 1 "no iteration matched, the example's findings gate" "cannot be computed on this trace" -- \
    "$bin" check --baseline "$base" --iteration-pattern '^renamed$' "$example"
grep -q "SKIP .*regression" "$tmp/out" && fail "a regression rule was skipped"
# ... and --missing-data=skip does not make it a pass
expect 3 "no iteration, --missing-data=skip" "cannot be computed on this trace" -- \
    "$bin" check --fail-on never --baseline "$base" --iteration-pattern '^renamed$' --missing-data=skip "$example"

# 2. a baseline whose samples were emptied: refused, naming the entry
sed 's/^    samples: \[.*/    samples: []/; /^      [0-9]/d' "$base" > "$tmp/no-samples.yaml"
expect 2 "samples emptied" "holds no gpu_time samples though the rule compares them" -- \
    "$bin" check --baseline "$tmp/no-samples.yaml" "$example"
grep -q "no-samples.yaml:[0-9]" "$tmp/err" || fail "samples emptied: no file:line"
# ... or whose samples key was deleted
awk '/^    samples: \[/ { skip = 1; next } skip && /^      [0-9]/ { next } { skip = 0; print }' "$base" > "$tmp/no-samples-key.yaml"
grep -q "^    samples:" "$tmp/no-samples-key.yaml" && fail "samples key deleted: the key is still there"
expect 2 "samples key deleted" "holds no gpu_time samples though the rule compares them" -- \
    "$bin" check --baseline "$tmp/no-samples-key.yaml" "$example"

# 3. a baseline without the metric: empty map, or one entry removed
awk '/^metrics:/ { print "metrics: {}"; skip = 1; next } /^runs:/ { skip = 0 } !skip' "$base" > "$tmp/empty.yaml"
expect 2 "metrics: {}" "'metrics' is empty" -- "$bin" check --baseline "$tmp/empty.yaml" "$example"
awk '/^  gpu-time-regression:/ { skip = 1; next } /^  [a-z]/ { skip = 0 } /^runs:/ { skip = 0 } !skip' "$base" > "$tmp/one.yaml"
expect 2 "an entry removed" "has no entry for regression rule gpu-time-regression" -- \
    "$bin" check --baseline "$tmp/one.yaml" "$example"

# 3b. a baseline without its workload fingerprint: a wholly different
# trace would pass against it as an improvement (docs/regressions.md)
awk '/^workload:/ { skip = 1; next } skip && /^ / { next } { skip = 0; print }' "$base" > "$tmp/no-workload.yaml"
grep -q "^workload:" "$tmp/no-workload.yaml" && fail "no workload: the section is still there"
expect 2 "no workload fingerprint" "no-workload.yaml carries no workload fingerprint (it has no 'workload' section)" -- \
    "$bin" check --fail-on never --baseline "$tmp/no-workload.yaml" "$example"
awk '/^workload:/ { print "workload: {gpu_time: 0, ops: []}"; skip = 1; next } skip && /^ / { next } { skip = 0; print }' \
    "$base" > "$tmp/empty-workload.yaml"
expect 2 "an empty workload" "carries no workload fingerprint (its 'workload' lists no GPU work)" -- \
    "$bin" check --fail-on never --baseline "$tmp/empty-workload.yaml" "$example"
expect 0 "no workload, --allow-mismatch" "comparing anyway because of --allow-mismatch" -- \
    "$bin" check --fail-on never --allow-mismatch --baseline "$tmp/no-workload.yaml" "$example"

# 4. recorded for another definition of the rule (metric, samples field, unit)
sed 's/metric: "p50(period)"/metric: "p90(period)"/' "$base" > "$tmp/other-metric.yaml"
expect 2 "another metric" "its metric is p90(period), the rule's is p50(period)" -- \
    "$bin" check --baseline "$tmp/other-metric.yaml" "$example"
sed 's/samples_field: "period"/samples_field: "duration"/' "$base" > "$tmp/other-samples.yaml"
expect 2 "another samples field" "its samples field is duration, the rule's is period" -- \
    "$bin" check --baseline "$tmp/other-samples.yaml" "$example"
awk '/^  iteration-time-regression:/ { it = 1 } it && /unit: ns/ { sub(/unit: ns/, "unit: none"); it = 0 } { print }' \
    "$base" > "$tmp/other-unit.yaml"
expect 2 "another unit" "its unit is none, the rule's is ns" -- \
    "$bin" check --baseline "$tmp/other-unit.yaml" "$example"

# 5. baseline record where no regression metric can be computed: nothing written
expect 3 "record without iterations" "cannot record regression rule" -- \
    "$bin" baseline record --iteration-pattern '^renamed$' -o "$tmp/none.yaml" "$example"
[ -e "$tmp/none.yaml" ] && fail "a baseline was written without its regression metrics"

# 6. merge of results that judged nothing, and of non-results
printf '{"tool":"tracegate","version":"0.1.0","schema":1,"status":"pass","traces":[]}' > "$tmp/empty.json"
expect 2 "merge of no traces" "holds no traces" -- "$bin" merge "$tmp/empty.json"
printf '{"tool":"tracegate","version":"0.1.0","schema":1,"status":"pass","traces":[{"file":"x.sqlite"}]}' > "$tmp/noresults.json"
expect 2 "merge of a trace without results" "has no rule results and no error" -- "$bin" merge "$tmp/noresults.json"

# 7. merge exits with the merged verdict: a rank straggler fails it (the
#    results judged by one rule set: merge refuses a mix, docs/formats.md)
digest=$(printf 'one rule set' | sha256sum | cut -d' ' -f1)
for rank in 0 1 2; do
    period=$([ $rank = 2 ] && echo 40000000 || echo 30000000)
    printf '{"tool":"tracegate","version":"0.1.0","schema":1,"rules_digest":"sha256:%s","status":"pass","traces":[{"file":"rank%s.sqlite",
      "nsys_version":null,"schema_version":"3.0.0","results":[{"rule":"iteration-time-regression",
      "title":"t","status":"skip","severity":"error","count":20,"message":"no baseline given","advice":null,
      "values":{"count":20,"p50_period_ns":%s},"evidence":[],"reproduce":null,"metric":"p50(period)",
      "metric_value":%s}]}]}' "$digest" "$rank" "$period" "$period" > "$tmp/r$rank.json"
done
expect 1 "merge with a straggler" "rank-straggler" -- "$bin" merge "$tmp/r0.json" "$tmp/r1.json" "$tmp/r2.json"
expect 0 "merge without a straggler" "PASS" -- "$bin" merge "$tmp/r0.json" "$tmp/r1.json"

# 8. the CUDA API table there but empty while copies are recorded: missing data
cp "$example" "$tmp/no-calls.sqlite"
sqlite3 "$tmp/no-calls.sqlite" "DELETE FROM CUPTI_ACTIVITY_KIND_RUNTIME;"
# (--fail-on never: the example's findings would fail the gate, and a
# gating finding wins over missing data, exit 1; docs/formats.md)
expect 3 "empty API table beside 30 copies" "CUPTI_ACTIVITY_KIND_RUNTIME is empty while the capture holds 60 GPU operations (kernels, copies, memsets): CUDA was traced" -- \
    "$bin" check --fail-on never "$tmp/no-calls.sqlite"

# 8b. the other direction: an op table emptied while the API table keeps
# the calls that launched its ops (docs/rules.md, "Missing data")
cp "$example" "$tmp/no-copies.sqlite"
sqlite3 "$tmp/no-copies.sqlite" "DELETE FROM CUPTI_ACTIVITY_KIND_MEMCPY;"
expect 3 "empty memcpy table beside 30 copy calls" \
    "rule sync-memcpy reads CUDA memory copies, but table CUPTI_ACTIVITY_KIND_MEMCPY is empty while table CUPTI_ACTIVITY_KIND_RUNTIME holds 30 calls that launch them" -- \
    "$bin" check --fail-on never "$tmp/no-copies.sqlite"
grep -q "PASS .*sync-memcpy" "$tmp/out" && fail "sync-memcpy passed without its copies"
cp "$example" "$tmp/no-kernels.sqlite"
sqlite3 "$tmp/no-kernels.sqlite" "DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL;"
expect 3 "empty kernel table beside 30 launches" \
    "rule gpu-idle-gap reads CUDA kernels, but table CUPTI_ACTIVITY_KIND_KERNEL is empty while table CUPTI_ACTIVITY_KIND_RUNTIME holds 30 calls that launch them" -- \
    "$bin" check --fail-on never "$tmp/no-kernels.sqlite"
for rule in low-gpu-utilization gpu-starvation iteration-variance; do
    grep -q "ERROR .*$rule" "$tmp/out" || fail "no kernels: $rule is not missing data"
done

# 8c. an empty NVTX table against the baseline: no iterations, exit 3
cp "$example" "$tmp/no-nvtx.sqlite"
sqlite3 "$tmp/no-nvtx.sqlite" "DELETE FROM NVTX_EVENTS;"
expect 3 "empty NVTX table" "the capture holds no NVTX ranges, so there are no iterations" -- \
    "$bin" check --fail-on never --baseline "$base" "$tmp/no-nvtx.sqlite"

# 8d. half the iterations' GPU work lost: the launches without a GPU record
# make every rule on GPU work an error (docs/rules.md, "Lost data")
cp "$example" "$tmp/half-gpu.sqlite"
sqlite3 "$tmp/half-gpu.sqlite" "DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE rowid % 2 = 0;
    DELETE FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE rowid % 2 = 0;"
expect 3 "every other iteration without GPU work" "have no GPU record" -- \
    "$bin" check --fail-on never --baseline "$base" "$tmp/half-gpu.sqlite"
grep -q "PASS .*iteration-variance" "$tmp/out" && fail "iteration-variance passed over half the GPU work"
grep -q "ERROR .*gpu-time-regression" "$tmp/out" || fail "gpu-time-regression judged half the GPU work"

# 8e. a Kineto trace with kernels but no cuda_runtime events: the
# torch.profiler setting that records them, not nsys's option
# kineto_steps CALLS: 12 ProfilerStep#N with a kernel each, and with
# CALLS=1 the cudaLaunchKernel events that launched them
kineto_steps() {
    printf '{"schemaVersion": 1, "traceEvents": [\n'
    for i in $(seq 0 11); do
        printf '{"ph": "X", "cat": "cpu_op", "name": "ProfilerStep#%d", "pid": 50, "tid": 50, "ts": %d, "dur": 900},\n' $i $((i * 1000))
        [ "$1" = 1 ] && printf '{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 50, "tid": 50, "ts": %d, "dur": 5, "args": {"correlation": %d}},\n' $((i * 1000 + 10)) $((i + 1))
        printf '{"ph": "X", "cat": "kernel", "name": "k", "pid": 1, "tid": 7, "ts": %d, "dur": 50, "args": {"device": 0, "stream": 7, "correlation": %d}},\n' $((i * 1000 + 100)) $((i + 1))
    done
    printf '{"name": "process_labels", "ph": "M", "ts": 1, "pid": 1, "tid": 0, "args": {"labels": "GPU 0"}}]}\n'
}
kineto_steps 0 > "$tmp/kernels-only.json"
kineto_steps 1 > "$tmp/with-calls.json"
expect 3 "Kineto trace without cuda_runtime events" \
    "the trace holds no Kineto cuda_runtime/cuda_driver events while the capture holds 12 kernels" -- \
    "$bin" check --fail-on never "$tmp/kernels-only.json"
grep -q "record them with 'torch.profiler.profile(activities=\[ProfilerActivity.CPU, ProfilerActivity.CUDA\])'" "$tmp/out" ||
    fail "Kineto without API events: no torch.profiler setting"
grep -q "nsys profile -t cuda'" "$tmp/out" && fail "Kineto without API events: nsys's option named"
# ... and a return code, which torch.profiler never records
cat > "$tmp/rc.yaml" <<YAML
version: 1
rules:
  - id: failed-calls
    title: CUDA calls that failed
    severity: error
    source: api
    where: return_value != 0
    fail_when: count > 0
    message: "{count} failed calls"
YAML
expect 3 "return codes of a Kineto trace" "which a PyTorch profiler (Kineto) JSON trace never records" -- \
    "$bin" check --rules "$tmp/rc.yaml" "$tmp/with-calls.json"

# 9. inconclusive: a baseline 5% faster in GPU time than the example, one
# run, run_noise 5% (band +-15%): beyond min_change, significant, inside
# the assumed band. Passes by default, fails with --inconclusive=fail, and
# every format says it.
awk '/^  gpu-time-regression:/ { g = 1 } /^  iteration-time-regression:/ { g = 0 }
     g && !/n_runs|n_samples|mad/ {
         line = $0; out = ""
         while (match(line, /[0-9][0-9][0-9][0-9][0-9][0-9][0-9]+/)) {
             out = out substr(line, 1, RSTART - 1) int(substr(line, RSTART, RLENGTH) * 0.95 + 0.5)
             line = substr(line, RSTART + RLENGTH)
         }
         $0 = out line }
     { print }' "$base" > "$tmp/faster.yaml"
opts=(--baseline "$tmp/faster.yaml" --set gpu-time-regression.run_noise=5%)
expect 0 "inconclusive passes by default" "INCONCLUSIVE" -- "$bin" check --fail-on never "${opts[@]}" "$example"
grep "gpu-time-regression" "$tmp/out" | grep -q "record at least 3 runs in the baseline" ||
    fail "inconclusive: no advice to record more runs"
"$bin" check "${opts[@]}" --fail-on never --inconclusive=fail "$example" >/dev/null 2>&1
[ $? = 0 ] || fail "--fail-on never must still pass"
# the regression rule alone: inconclusive is the only result that could gate
cat > "$tmp/gpu-only.yaml" <<YAML
version: 1
rules:
  - id: gpu-time-regression
    title: GPU time per iteration regressed against the baseline
    severity: error
    source: iteration
    params: {min_change: 2%, alpha: 0.01, run_noise: 5%, min_workload_match: 50%}
    where: steady
    metric: p50(gpu_time)
    samples: gpu_time
    regression: {direction: higher_is_worse}
    message: "p50 GPU time per iteration {p50(gpu_time)}"
YAML
faster_gpu=$tmp/faster-gpu.yaml
awk '/^  iteration-time-regression:/ { skip = 1 } /^runs:/ { skip = 0 } !skip' "$tmp/faster.yaml" > "$faster_gpu"
expect 0 "inconclusive alone passes" "INCONCLUSIVE" -- \
    "$bin" check --rules "$tmp/gpu-only.yaml" --baseline "$faster_gpu" "$example"
expect 1 "inconclusive fails with --inconclusive=fail" "INCONCLUSIVE" -- \
    "$bin" check --rules "$tmp/gpu-only.yaml" --baseline "$faster_gpu" --inconclusive=fail "$example"
for fmt in json junit sarif github markdown; do
    "$bin" check --rules "$tmp/gpu-only.yaml" --baseline "$faster_gpu" --format $fmt "$example" > "$tmp/f.$fmt" 2>/dev/null
    grep -qi "inconclusive" "$tmp/f.$fmt" || fail "$fmt does not show the inconclusive result"
done
grep -q '"status": "inconclusive"' "$tmp/f.json" || fail "json: no status inconclusive"

if [ "$failures" = 0 ]; then echo "fail-closed: all checks passed"; exit 0; fi
echo "fail-closed: $failures checks failed"
exit 1
