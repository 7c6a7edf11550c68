#!/usr/bin/env bash
# Install the Debian packages tracegate needs to build and test.
# Safe to run repeatedly; uses sudo when not root.
set -euo pipefail
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# the build and its libraries (libpq-dev: the PostgreSQL client of the team
# history), the tests' tools (jq, xmllint, sqlite3), and postgresql: the
# server the team-history test starts as a throwaway cluster of its own
# (tests/unit/history/pg_test.sh; the package's own cluster is not used)
$SUDO apt-get install -y -qq --no-install-recommends \
    gcc libc6-dev meson ninja-build pkg-config \
    libyaml-dev libsqlite3-dev libcmocka-dev libjansson-dev \
    libyajl-dev zlib1g-dev libpq-dev \
    jq libxml2-utils sqlite3 \
    postgresql >/dev/null
