#!/usr/bin/env bash
# Run the test suite under valgrind memcheck on a plain -O1 build
# (build-valgrind: no sanitizers, which valgrind cannot run beside).
# Every test executable runs under valgrind; the tracegate processes the
# command and hostile tests start run natively (no --trace-children), so
# those suites cost little more than usual. Any memcheck error or a
# definitely/indirectly lost block fails the test.
#
#   bash ci/valgrind.sh                 # unit, corpus, rules, hostile suites
#   bash ci/valgrind.sh --suite corpus  # extra arguments go to meson test
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
start=$(date +%s)
# MALLOC_PERTURB_ off: meson sets it by default and it only slows valgrind.
meson test -C "$B" --print-errorlogs --num-processes 2 --timeout-multiplier 20 \
    --wrap='valgrind --quiet --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite,indirect --track-origins=no' \
    "$@"
echo "valgrind: all tests clean in $(( $(date +%s) - start )) s"
