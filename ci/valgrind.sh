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
# valgrind itself breaks: wall-clock limits (rules/test_hostile bounds a
# 20000-error load to 2 s) and byte comparisons of structs whose padding
# is never written (model_join's test_rebuild_is_stable). Nor, to keep CI
# within its time, two tests whose own process does only SQLite's work
# around a binary that runs natively anyway: hostile_cost (writes fixtures
# of 200,000 rows: 7 minutes under valgrind) and reproduce_corpus (runs the
# reproduce SQL in SQLite: 2.3 minutes). Both run in the plain and the
# sanitizer suites.
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
EXCLUDE='rules/test_hostile model_join hostile_cost reproduce_corpus'
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
# (exit 99 on any memcheck error), with their deadlines stretched.
if [ $# -eq 0 ]; then
    wrapper="$PWD/$B/valgrind-tracegate.sh"
    printf '#!/bin/sh\nexec valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect "%s" "$@"\n' \
        "$PWD/$B/tracegate" >"$wrapper"
    chmod +x "$wrapper"
    start=$(date +%s)
    for t in files rules rows inject max_memory readonly outputs messages schema kineto cost; do
        rc=0
        TG_BINARY="$wrapper" TG_HOSTILE_TIMEOUT_SCALE=60 TG_SOURCE_ROOT="$PWD" \
            TG_HOSTILE_ONE_COMMAND=1 TG_HOSTILE_SMALL=1 \
            TG_SHARED_TRACES="$PWD/../shared/traces" "$B/tests/hostile/test_hostile_$t" \
            >"$B/valgrind-hostile-$t.log" 2>&1 || rc=$?
        if [ $rc -ne 0 ] && [ $rc -ne 77 ]; then
            echo "valgrind: the binary failed under memcheck in hostile_$t (log: $B/valgrind-hostile-$t.log)"
            grep -E 'FAILED|ERROR|==[0-9]+==' "$B/valgrind-hostile-$t.log" | head -30
            exit 1
        fi
        echo "valgrind: tracegate clean on hostile_$t$([ $rc -eq 77 ] && echo ' (skipped: no shared traces)')"
    done
    echo "valgrind: the binary is clean on every hostile input in $(( $(date +%s) - start )) s"
fi
