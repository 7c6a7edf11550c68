#!/usr/bin/env bash
# The test command of README.md and .ci/run: installs dependencies, builds,
# runs the whole suite (unit, rule and corpus tests), then runs it again
# under AddressSanitizer + UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/deps.sh
bash ci/build.sh
meson test -C build --print-errorlogs --num-processes 2

if [ ! -f build-asan/build.ninja ]; then
    meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false --buildtype=debug
fi
ninja -C build-asan
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    meson test -C build-asan --print-errorlogs --num-processes 2 --timeout-multiplier 3
echo "tracegate: all tests passed (plain and sanitized)"
