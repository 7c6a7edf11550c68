#!/usr/bin/env bash
# The test command of README.md and .ci/run: installs dependencies (and
# Debian's chromium for the HTML report's browser test, Nsight Systems
# 2022.4 unpacked for the nsys test: about 1 min the first time, then
# cached), checks
# that engine/ layers only look down (ci/layers.sh), builds,
# runs the whole suite (unit, rule, hostile-input and corpus tests), the
# Slurm recipe on a real one-node Slurm cluster (tests/slurm/slurm_test.sh:
# installs slurmctld, slurmd and munge, about 30 s; it says SKIPPED and
# why where it cannot run, e.g. without root: where every test must run,
# TG_REQUIRE_ALL=1 as .ci/run sets it or CI set, tests/require.sh, a skip
# of it, of the browser test or of the nsys test fails instead), then
# again under AddressSanitizer + UndefinedBehaviorSanitizer, then under
# valgrind memcheck (ci/valgrind.sh, about 8 min), then each libFuzzer
# target briefly (ci/fuzz.sh: every target, 30 s each, two at a time,
# about 3 min with its build).
# TG_QUICK=1 stops after the sanitized run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/deps.sh
bash ci/browser-deps.sh   # chromium and pdftotext for the HTML report's browser test
bash ci/nsys-deps.sh      # Nsight Systems 2022.4 (not on PATH) for tests/nsys_test.sh
bash ci/layers.sh
bash ci/build.sh
meson test -C build --print-errorlogs --num-processes 2

# shellcheck source=tests/require.sh
. tests/require.sh
slurm=0
bash tests/slurm/slurm_test.sh build/tracegate || slurm=$?
case $slurm in
    0) slurm_done="Slurm recipe" ;;
    77) tg_required && { echo "ci/test.sh: the Slurm recipe test skipped where it must run"; exit 1; }
        slurm_done="Slurm recipe SKIPPED (see above)" ;;
    *) exit "$slurm" ;;
esac

if [ ! -f build-asan/build.ninja ]; then
    meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false --buildtype=debug
fi
ninja -C build-asan
# TG_CORPUS_QUICK: load_corpus compares two rule sets, not every one,
# reproduce_corpus runs the reproduce SQL of nine small exports, not
# all 37, kineto_corpus leaves the series baseline out, and
# jq_reproduce_corpus the jq programs of five small Kineto
# traces, not thirteen (the plain run above did; under the sanitizers each
# run costs 5-20x).
TG_CORPUS_QUICK=1 ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    meson test -C build-asan --print-errorlogs --num-processes 2 --timeout-multiplier 3
if [ "${TG_QUICK:-0}" != 1 ]; then
    bash ci/valgrind.sh
    FUZZ_SEED=1 FUZZ_SECONDS=30 bash ci/fuzz.sh
fi
echo "tracegate: all tests passed (plain, $slurm_done, sanitized, valgrind, fuzz)"
