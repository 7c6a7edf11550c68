#!/usr/bin/env bash
# Fuzz the engine with libFuzzer (fuzz/README.md): installs clang and its
# runtime, configures build-fuzz (clang, ASan + UBSan, coverage on every
# object), generates the seed corpora (small exports made from SQL, the
# project's own rule and baseline files), runs each target for
# FUZZ_SECONDS (default 60) and fails on any crash, leak, sanitizer report
# or timeout; two targets run at a time. The merge target's seeds are `check --format json` outputs
# of the bundled example and of the small exports (alone and in pairs).
# Crashing inputs are left in build-fuzz/artifacts/ ($FUZZ_BUILD_DIR).
#
#   bash ci/fuzz.sh                      # every target, 60 s each
#   FUZZ_SECONDS=3600 bash ci/fuzz.sh rules trace_rows
#   FUZZ_SEED=1 FUZZ_SECONDS=30 bash ci/fuzz.sh   # what ci/test.sh runs
set -euo pipefail
cd "$(dirname "$0")/.."
B=${FUZZ_BUILD_DIR:-build-fuzz}
SECONDS_EACH=${FUZZ_SECONDS:-60}
# FUZZ_SEED fixes libFuzzer's random seed (CI uses one, so a run explores
# the same inputs first); 0 = a new seed each run.
SEED=${FUZZ_SEED:-0}
TARGETS=("$@")
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=(rules trace_file trace_rows btree baseline baseline_fields merge kineto)

SUDO=""
[ "$(id -u)" != 0 ] && SUDO="sudo"
if ! command -v clang >/dev/null || ! ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends clang libclang-rt-14-dev >/dev/null ||
        $SUDO apt-get install -y -qq --no-install-recommends clang libclang-rt-dev >/dev/null
fi
bash ci/deps.sh

# werror off: this build hunts crashes; warnings are the gcc build's job
# (clang has warnings gcc lacks).
if [ ! -f $B/build.ninja ]; then
    CC=clang meson setup $B --buildtype=debug -Doptimization=1 -Dwerror=false \
        -Db_sanitize=address,undefined -Db_lundef=false -Dc_args=-fsanitize=fuzzer-no-link
fi
ninja -C $B fuzz/fuzz-rules fuzz/fuzz-trace-file fuzz/fuzz-trace-rows fuzz/fuzz-btree fuzz/fuzz-baseline fuzz/fuzz-baseline-fields fuzz/fuzz-merge fuzz/fuzz-kineto \
    fuzz/fuzz-mkseeds tracegate examples/example.sqlite

work=$B/corpus
mkdir -p "$work" $B/artifacts
$B/fuzz/fuzz-mkseeds $B/seeds
# btree: the same small exports, their pages read by the direct reader
mkdir -p $B/seeds/btree
cp $B/seeds/trace_file/*.sqlite $B/seeds/btree/
mkdir -p $B/seeds/rules $B/seeds/baseline
cp rules.d/*.yaml $B/seeds/rules/
find tests/rules examples -name '*.yaml' -size -64k -exec cp {} $B/seeds/rules/ \; 2>/dev/null || true
cp baselines/*.yaml $B/seeds/baseline/ 2>/dev/null || true
# kineto: small JSON traces written for it (2025 and 2021 spellings, a bare array)
mkdir -p $B/seeds/kineto
cp fuzz/kineto_seeds/*.json $B/seeds/kineto/
# merge: real results (exit 1 or 3 is a verdict here, not a failure)
mkdir -p $B/seeds/merge
merge_seed() {   # NAME TRACE [check options...]
    local name=$1 trace=$2
    shift 2
    ASAN_OPTIONS=detect_leaks=0 $B/tracegate check --format json "$@" "$trace" >"$B/seeds/merge/$name.json" 2>/dev/null || true
}
merge_seed example $B/examples/example.sqlite
merge_seed example-baseline $B/examples/example.sqlite --baseline baselines/example.yaml
merge_seed example-skip $B/examples/example.sqlite --missing-data=skip --fail-on warning
merge_seed unreadable fuzz/README.md
for f in $B/seeds/trace_file/*.sqlite; do merge_seed "$(basename "$f" .sqlite)" "$f"; done
# two ranks in one input (documents split at NUL): the straggler check
{ cat $B/seeds/merge/example.json; printf '\0'; cat $B/seeds/merge/example-baseline.json; } >$B/seeds/merge/two-ranks.bin
{ cat $B/seeds/merge/example.json; printf '\0'; cat $B/seeds/merge/unreadable.json; printf '\0';
  cat $B/seeds/merge/full-3.0.json 2>/dev/null; } >$B/seeds/merge/three-ranks.bin

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# each target for its own SECONDS_EACH, two at a time (one libFuzzer
# process each); a target's outcome is left in its .rc file
fuzz_one() {
    local t=$1 max_len dict=() log=$B/fuzz-$1.log rc=0
    rm -f "$B/fuzz-$t.rc"
    case $t in
        trace_rows) max_len=1024 ;;   # ~150 edits: the export stays small
        baseline_fields) max_len=512 ;;   # 64 edits are read, plus raw values
        *) max_len=65536 ;;
    esac
    [ -f fuzz/$t.dict ] && dict=(-dict=fuzz/$t.dict)
    mkdir -p "$work/$t"
    $B/fuzz/fuzz-${t//_/-} -max_total_time="$SECONDS_EACH" -seed="$SEED" -rss_limit_mb=2048 -timeout=10 \
        -max_len=$max_len -print_final_stats=1 -artifact_prefix=$B/artifacts/$t- "${dict[@]}" \
        "$work/$t" $B/seeds/$t >"$log" 2>&1 || rc=$?
    echo $rc >"$B/fuzz-$t.rc"
}
echo "fuzz: ${#TARGETS[@]} targets, ${SECONDS_EACH}s each, two at a time"
# shellcheck source=ci/two-at-a-time.sh
. ci/two-at-a-time.sh
two_at_a_time fuzz_one "${TARGETS[@]}"
status=0
for t in "${TARGETS[@]}"; do
    log=$B/fuzz-$t.log
    if [ "$(cat "$B/fuzz-$t.rc" 2>/dev/null || echo none)" = 0 ]; then
        runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')
        cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 || true)
        echo "fuzz-$t: ok, $runs executions, $cov, corpus $(ls "$work/$t" | wc -l) inputs"
    else
        status=1
        echo "fuzz-$t: FAILED (log: $log)"
        { grep -E 'ERROR|runtime error|SUMMARY|Test unit written|==[0-9]+==|No such file' "$log" || true; } | head -20
    fi
done
exit $status
