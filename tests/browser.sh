# shellcheck shell=bash
# Sourced, after tests/require.sh, by the tests that open pages in headless
# Chromium (tests/html_browser_test.sh, tests/unit/history/
# html_browser_history.sh): finding the browser, running it, and skipping
# (tg_skip: exit 77, or a failure in CI) with the reason when it is absent
# or cannot start. ci/browser-deps.sh installs it.

# tg_browser_find NAME: $browser is the first of chromium, chromium-browser
# and google-chrome on PATH; without one, test NAME is skipped.
tg_browser_find() {
    browser=""
    for b in chromium chromium-browser google-chrome; do
        if command -v "$b" >/dev/null; then browser=$(command -v "$b"); break; fi
    done
    [ -n "$browser" ] ||
        tg_skip "$1" "no Chromium (chromium, chromium-browser or google-chrome) on PATH; bash ci/browser-deps.sh installs Debian's chromium"
}

# chrome ARGS...: the browser, headless. Each run gets its own profile
# (under $tmp, the caller's folder); root needs --no-sandbox. The timeout
# is a safety net against a browser that never exits, not a speed check: a
# start takes seconds, and 180 s leaves a loaded machine room to spare.
# shellcheck disable=SC2154  # $tmp is the caller's
chrome() {
    timeout 180 "$browser" --headless --no-sandbox --disable-gpu --no-first-run --disable-extensions \
        --user-data-dir="$tmp/profile" "$@"
}

# tg_browser_start NAME: the browser opens about:blank, or test NAME is
# skipped with the browser's own words; a browser that hangs fails it.
tg_browser_start() {
    chrome --dump-dom about:blank >/dev/null 2>"$tmp/start.err"
    local st=$?
    if [ "$st" = 124 ]; then
        echo "FAILED: $browser --headless on about:blank still running after 180 s (the safety net: a hang, not slowness)"
        exit 1
    elif [ "$st" != 0 ]; then
        tg_skip "$1" "$browser does not start headless: $(grep -v dbus "$tmp/start.err" | tail -2)"
    fi
}
