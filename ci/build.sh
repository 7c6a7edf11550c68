#!/usr/bin/env bash
# Configure and build tracegate into build/ (plain) — used by the README's
# main-job command and by ci/test.sh; bench/run --compare-builds builds the
# same into a directory of its own (ci/build.sh DIR) to time it against the
# release build.
#
# The code is the release build's: -O3 (meson's debugoptimized alone is -O2,
# which made check on a 1M-kernel export about 10% slower than the release
# build: bench/README.md, "The build the README makes"). What stays of a
# debug build costs nothing at run time: debug info (-g does not change the
# code gcc emits) and internal invariant failures aborting at the place
# (no NDEBUG: engine/common/invariant.c reads the flag only on a failure).
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
if [ ! -f "$B/build.ninja" ]; then
    meson setup "$B" --buildtype=debugoptimized -Doptimization=3
else
    # a build/ set up before (at -O2) gets the release build's code too
    opt=$(meson introspect "$B" --buildoptions |
          python3 -c 'import json, sys; print([o["value"] for o in json.load(sys.stdin) if o["name"] == "optimization"][0])')
    [ "$opt" = 3 ] || meson configure "$B" -Doptimization=3
fi
ninja -C "$B"
