#!/usr/bin/env bash
# The README's main job: install dependencies, build, and check the bundled
# example trace (generated at build time from examples/example.sql) with the
# built-in rules. Exits with tracegate's status (1: the gate failed, as it
# should on this example, which holds a synchronous copy and an idle gap).
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/deps.sh
bash ci/build.sh
exec ./build/tracegate check "$@" build/examples/example.sqlite
