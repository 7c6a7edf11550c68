#!/usr/bin/env bash
# Debian's chromium, and poppler-utils (pdftotext: the printed report's
# text), for the HTML report's browser test (tests/html_browser_test.sh).
# Run after ci/deps.sh (which ran apt-get update). Where a skip is a
# failure (the project's CI: tests/require.sh, TG_REQUIRE_ALL=1 or CI
# set), a failed install fails the build here; elsewhere it says so and
# the browser test skips with its reason.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
# shellcheck source=tests/require.sh
. tests/require.sh
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
if command -v chromium >/dev/null && command -v pdftotext >/dev/null; then exit 0; fi
if ! $SUDO apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core poppler-utils >/dev/null; then
    if tg_required; then
        echo "browser-deps: FAILED: chromium and poppler-utils could not be installed, and the browser test must run in CI" >&2
        exit 1
    fi
    echo "browser-deps: chromium could not be installed; the browser test will be skipped" >&2
fi
exit 0
