#!/usr/bin/env bash
# Configure and build tracegate into build/ (plain) — used by the README's
# main-job command and by ci/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f build/build.ninja ]; then
    meson setup build --buildtype=debugoptimized
fi
ninja -C build
