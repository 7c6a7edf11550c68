#!/usr/bin/env bash
# Run the test suite under valgrind memcheck on a plain -O1 build
# (build-valgrind: no sanitizers, which valgrind cannot run beside), then
# the tracegate binary itself on every hostile input (phase 2 below).
# Every test executable runs under valgrind; the tracegate processes the
# command and hostile tests start run natively (no --trace-children), so
# those suites cost little more than usual. Any memcheck error or a
# definitely/indirectly lost block fails the test.
#
# Not run under valgrind: tests that are shell scripts (valgrind would check
# bash and dash, not tracegate) and, listed below, tests whose asserts
# valgrind itself breaks: CPU-time limits measured in the test's own
# process, which memcheck multiplies (rules/test_hostile bounds a
# 20000-error load to 2 s of CPU); regex, whose cost is counted in matcher
# steps, for its time (random patterns against glibc); and byte
# comparisons of structs whose padding is never written (model_join's
# test_rebuild_is_stable). Nor, to keep CI within its time: sort (arrays
# of 200,000-700,000 rows, the sizes its page-moving merge needs: 3 minutes
# under valgrind), and the corpus tests whose own process only runs the
# binary natively and reads its JSON (all but info_corpus and
# metrics_corpus, which load traces in-process): hostile_cost (writes
# fixtures of 200,000 rows: 7 minutes), reproduce_corpus (runs the
# reproduce SQL in SQLite), baseline_corpus, kineto_corpus and the rest
# below (2-3 minutes each); likewise the hostile suites whose process
# only writes inputs and runs the binary (all but max_memory, messages and
# rules): phase 2 runs each of them again with the binary under memcheck,
# and over the whole corpus (hostile_readonly). All of them run in the
# plain and the sanitizer suites.
#
# Phase 2 runs the binary itself under memcheck on every hostile suite:
# files, rules, rows, inject, max_memory, readonly, outputs, messages,
# schema (views, virtual tables, a huge schema, values over the cap),
# kineto (truncated, corrupt, huge and deep JSON) and cost (its cases with
# small fixtures: long names under the regex matcher, macro explosions;
# TG_HOSTILE_SMALL=1 leaves out the 200,000-row ones). Each input goes
# through one command (TG_HOSTILE_ONE_COMMAND=1: check, whose loaders info
# and metrics share), as each run under memcheck costs seconds.
#
#   bash ci/valgrind.sh                 # every other test: unit, corpus, rules, hostile
#   bash ci/valgrind.sh corpus          # only the tests whose name contains a word
set -euo pipefail
cd "$(dirname "$0")/.."
B=${VALGRIND_BUILD_DIR:-build-valgrind}
SUDO=""
[ "$(id -u)" != 0 ] && SUDO="sudo"
if ! command -v valgrind >/dev/null; then
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends valgrind >/dev/null
fi
bash ci/deps.sh
if [ ! -f "$B/build.ninja" ]; then
    meson setup "$B" --buildtype=plain -Doptimization=1 -Ddebug=true
fi
ninja -C "$B"
EXCLUDE='rules/test_hostile regex model_join sort hostile_cost reproduce_corpus jq_reproduce_corpus load_corpus
    baseline_corpus kineto_corpus verdicts_corpus nvidia_agreement copy_share_corpus formats_corpus host_corpus
    origin_corpus hostile_files hostile_rows hostile_inject hostile_readonly hostile_outputs hostile_schema
    hostile_kineto'
mapfile -t TESTS < <(python3 - "$B" "$EXCLUDE" "$@" <<'PY'
import json, subprocess, sys
build, exclude, words = sys.argv[1], sys.argv[2].split(), sys.argv[3:]
tests = json.loads(subprocess.run(["meson", "introspect", "--tests", build], check=True,
                                  capture_output=True, text=True).stdout)
for t in tests:
    prog = t["cmd"][0]
    if prog.endswith(("/sh", "/bash", "/dash")) or t["name"] in exclude:
        continue
    if words and not any(w in t["name"] for w in words):
        continue
    print(t["name"])
PY
)
echo "valgrind: ${#TESTS[@]} tests"
start=$(date +%s)
TG_CORPUS_QUICK=1 meson test -C "$B" --print-errorlogs --num-processes 2 --timeout-multiplier 20 \
    --wrap='valgrind --quiet --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite,indirect --track-origins=no' \
    "${TESTS[@]}"
echo "valgrind: all tests clean in $(( $(date +%s) - start )) s"

# Phase 2: the tracegate binary itself under memcheck, on every hostile
# input and over the whole shared corpus (test_hostile_readonly): the
# hostile drivers run natively and start the binary through this wrapper
# (exit 99 on any memcheck error), with their CPU budgets (and so their
# wall-clock safety nets, hostile.h) stretched 60 times.
if [ $# -eq 0 ]; then
    wrapper="$PWD/$B/valgrind-tracegate.sh"
    printf '#!/bin/sh\nexec valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect "%s" "$@"\n' \
        "$PWD/$B/tracegate" >"$wrapper"
    chmod +x "$wrapper"
    start=$(date +%s)
    # two suites at a time (each drives one binary under memcheck at a
    # time), the longest first; a suite's status is left in its .rc file
    hostile_one() {
        local t=$1 rc=0
        rm -f "$B/valgrind-hostile-$t.rc"
        TG_BINARY="$wrapper" TG_HOSTILE_TIMEOUT_SCALE=60 TG_SOURCE_ROOT="$PWD" \
            TG_HOSTILE_ONE_COMMAND=1 TG_HOSTILE_SMALL=1 \
            TG_SHARED_TRACES="$PWD/../shared/traces" "$B/tests/hostile/test_hostile_$t" \
            >"$B/valgrind-hostile-$t.log" 2>&1 || rc=$?
        echo $rc >"$B/valgrind-hostile-$t.rc"
    }
    suites=(rows outputs readonly inject messages max_memory rules schema files kineto cost)
    # shellcheck source=ci/two-at-a-time.sh
    . ci/two-at-a-time.sh
    two_at_a_time hostile_one "${suites[@]}"
    failed=0
    for t in "${suites[@]}"; do
        rc=$(cat "$B/valgrind-hostile-$t.rc" 2>/dev/null || echo "none")
        if [ "$rc" != 0 ] && [ "$rc" != 77 ]; then
            echo "valgrind: the binary failed under memcheck in hostile_$t (status $rc, log: $B/valgrind-hostile-$t.log)"
            { grep -E 'FAILED|ERROR|==[0-9]+==' "$B/valgrind-hostile-$t.log" || true; } | head -30
            failed=1
            continue
        fi
        echo "valgrind: tracegate clean on hostile_$t$([ "$rc" = 77 ] && echo ' (skipped: no shared traces)')"
    done
    [ $failed = 0 ] || exit 1
    echo "valgrind: the binary is clean on every hostile input in $(( $(date +%s) - start )) s"
fi
