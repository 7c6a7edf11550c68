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

# tg_browser_check WHAT PAGE [CANARY]: open $tmp/check.html, a harness
# page that loads PAGE in a frame (same origin with
# --allow-file-access-from-files) and writes PASS, or what failed, into
# <pre id="result">, which --dump-dom prints; fail (the caller's fail)
# unless it says PASS and PAGE logged nothing to the console. CANARY, a
# page that must log (an outside image its CSP blocks), loaded by the
# harness beside PAGE, proves the console check sees such messages.
tg_browser_check() {
    local what=$1 page=$2 canary=${3:-}
    chrome --allow-file-access-from-files --enable-logging=stderr --v=0 --virtual-time-budget=10000 \
        --window-size=1400,1000 --dump-dom "file://$tmp/check.html" >"$tmp/dom" 2>"$tmp/log"
    grep -q '<pre id="result">PASS</pre>' "$tmp/dom" ||
        fail "$what: $(grep -o '<pre id="result">[^<]*' "$tmp/dom" | cut -c18- | head -c 1500)"
    # the page itself logs nothing: no error, no blocked or failed load
    grep "CONSOLE" "$tmp/log" | grep -F "$(basename "$page")" > "$tmp/console"
    [ -s "$tmp/console" ] && fail "$what: console messages: $(head -c 800 "$tmp/console")"
    # the positive control: the canary's blocked image is logged, in the
    # form the check above looks for
    if [ -n "$canary" ]; then
        grep "CONSOLE" "$tmp/log" | grep -F "$(basename "$canary")" | grep -F "Content Security Policy" > "$tmp/canary"
        if [ -s "$tmp/canary" ]; then
            echo "ok   console canary: $(head -1 "$tmp/canary" | sed 's/.*CONSOLE[^]]*] //' | cut -c1-110)..."
        else
            fail "$what: the console canary $(basename "$canary") logged nothing: the console check cannot see messages ($(grep -c CONSOLE "$tmp/log") CONSOLE lines)"
        fi
    fi
}
