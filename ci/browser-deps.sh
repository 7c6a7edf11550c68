#!/usr/bin/env bash
# Debian's chromium, for the HTML report's browser test
# (tests/html_browser_test.sh). Run after ci/deps.sh (which ran apt-get
# update). Never fails the build: without a browser that test skips with
# its reason.
set -uo pipefail
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
if command -v chromium >/dev/null; then exit 0; fi
$SUDO apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null ||
    echo "browser-deps: chromium could not be installed; the browser test will be skipped" >&2
exit 0
