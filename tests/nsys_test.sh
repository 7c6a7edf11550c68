#!/usr/bin/env bash
# .nsys-rep inputs with a real nsys (issue #19; README "Nsight Systems
# reports"): Nsight Systems 2022.4 records two real reports here, `nsys
# profile -t osrt` of /bin/sleep 0.2 and of /bin/sleep 0.5 (no GPU on the
# machine: OS runtime calls are what it can record), and tracegate, finding
# nsys on PATH (a wrapper that logs each call and runs the real one), must
#
#   - export a report on the fly and check it: a rule on its OS runtime
#     calls finds the one nanosleep, of the length slept;
#   - reuse the export on a re-run (no nsys call; the cached file kept);
#   - never reuse an export cut short (tracegate killed while nsys wrote
#     it): the next run exports again;
#   - export a report again when it changed (the same path, new bytes: the
#     cache is keyed by content), and judge the new one;
#   - take a corrupt .nsys-rep among good inputs as one unreadable trace
#     ("nsys export ... failed") while the others are checked and reported,
#     nothing of it left in the cache;
#   - with the built-in rules, say that a capture without CUDA lacks their
#     data (exit 3), never pass it.
#
# nsys is found as TG_NSYS, on PATH, or where ci/nsys-deps.sh unpacks it;
# without it the test skips (a failure in the project's CI:
# tests/require.sh).
set -uo pipefail
bin="$TG_BINARY"
root="$TG_SOURCE_ROOT"
# shellcheck source=tests/require.sh
. "$root/tests/require.sh"
nsys=${TG_NSYS:-$(command -v nsys || true)}
unpacked=${TG_NSYS_ROOT:-/var/cache/tracegate/nsight-systems-2022.4}/usr/lib/x86_64-linux-gnu/nsight-systems/target-linux-x64/nsys
[ -n "$nsys" ] || [ ! -x "$unpacked" ] || nsys=$unpacked
[ -n "$nsys" ] || tg_skip nsys "no nsys (TG_NSYS, PATH, or the root of bash ci/nsys-deps.sh, which unpacks Nsight Systems 2022.4)"
"$nsys" --version >/dev/null 2>&1 || tg_skip nsys "$nsys does not run"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }

# the two reports, recorded at once (CPU sampling and context switches
# off: a container may not allow them)
record() {  # record NAME SECONDS
    timeout 120 "$nsys" profile -t osrt -s none --cpuctxsw=none --force-overwrite true \
        -o "$tmp/$1" /bin/sleep "$2" >"$tmp/$1.log" 2>&1
}
record short 0.2 &
short=$!
record long 0.5 &
long=$!
wait "$short" && wait "$long" && [ -s "$tmp/short.nsys-rep" ] && [ -s "$tmp/long.nsys-rep" ] ||
    tg_skip nsys "$nsys profile cannot record here: $(tail -3 "$tmp/short.log" "$tmp/long.log" | tr '\n' ' ')"
echo "nsys: recorded with $("$nsys" --version): short.nsys-rep ($(wc -c < "$tmp/short.nsys-rep") bytes), long.nsys-rep"

# tracegate runs nsys from PATH: a wrapper that logs its calls
mkdir "$tmp/bin"
# (with TG_TEST_CUT_EXPORT set it writes half an export where nsys was
# told to, then kills tracegate: a run cut short)
cat > "$tmp/bin/nsys" <<SH
#!/bin/sh
echo "\$*" >> "$tmp/calls"
if [ -n "\${TG_TEST_CUT_EXPORT:-}" ]; then
    while [ \$# -gt 1 ]; do [ "\$1" = --output ] && head -c 8192 "$tmp/cut-source.sqlite" > "\$2"; shift; done
    kill -9 \$PPID
    exit 1
fi
exec "$nsys" "\$@"
SH
chmod +x "$tmp/bin/nsys"
export PATH="$tmp/bin:$PATH" XDG_CACHE_HOME="$tmp/cache"
: > "$tmp/calls"
calls() { grep -c '^export ' "$tmp/calls"; }
cached() { find "$tmp/cache/tracegate" -name '*.sqlite' 2>/dev/null | wc -l; }

cat > "$tmp/sleep.yaml" <<'YAML'
version: 1
rules:
  - id: long-sleep
    title: A sleep of 100 ms or more
    severity: error
    source: osrt
    where: name matches "nanosleep" and duration >= 100ms
    fail_when: count > 0
    message: "{count} {count|sleep|sleeps} of {sum(duration)}"
YAML

# check REPORT... -> exit status; the JSON report in $tmp/out.json
check() {
    "$bin" check --rules "$tmp/sleep.yaml" -o json="$tmp/out.json" "$@" >"$tmp/out.txt" 2>"$tmp/err.txt"
}
# slept NAME: the nanosleep the rule found in the trace whose file is NAME, in ms
slept() {
    jq -r --arg f "$1" '.traces[] | select(.file == $f) | .results[] | select(.rule == "long-sleep")
                        | "\(.status) \(.count) \(.values.sum_duration_ns / 1e6 | floor)"' "$tmp/out.json"
}
in_range() { [ "$1" -ge "$2" ] 2>/dev/null && [ "$1" -le "$3" ]; }

# 1. exported on the fly, then checked
cp "$tmp/short.nsys-rep" "$tmp/run.nsys-rep"
check "$tmp/run.nsys-rep"
st=$?
[ "$st" = 1 ] || fail "first check: exit $st, expected 1 (the sleep found): $(head -c 300 "$tmp/err.txt")"
read -r status count ms <<< "$(slept "$tmp/run.nsys-rep")"
[ "$status $count" = "fail 1" ] || fail "first check: long-sleep is '$status $count', expected 'fail 1'"
in_range "${ms:-0}" 190 450 || fail "first check: the sleep lasted ${ms:-?} ms, expected about 200"
[ "$(jq -r '.traces[0].nsys_version' "$tmp/out.json")" = "$("$nsys" --version | grep -o '20[0-9.]*' | head -1)" ] ||
    fail "first check: the trace's nsys version is not the recording nsys's"
[ "$(calls)" = 1 ] || fail "first check: $(calls) nsys exports, expected 1"
[ "$(cached)" = 1 ] || fail "first check: $(cached) exports in the cache, expected 1"
echo "nsys: exported and checked: long-sleep $status, 1 nanosleep of $ms ms"

# 2. the same report again: the cached export, no nsys call
export_file=$(find "$tmp/cache/tracegate" -name '*.sqlite')
before=$(stat -c '%i %Y %s' "$export_file")
check "$tmp/run.nsys-rep"
st=$?
[ "$st" = 1 ] || fail "re-run: exit $st, expected 1"
[ "$(slept "$tmp/run.nsys-rep")" = "fail 1 $ms" ] || fail "re-run: another verdict: $(slept "$tmp/run.nsys-rep")"
[ "$(calls)" = 1 ] || fail "re-run: nsys was called again ($(calls) exports): the cached export is not reused"
[ "$(stat -c '%i %Y %s' "$export_file")" = "$before" ] || fail "re-run: the cached export was rewritten"
echo "nsys: re-run used the cached export"

# 2b. a run killed while nsys exported (a cache of its own): the
#     half-written export is not taken for the report's, and the next run
#     exports the report again
cp "$export_file" "$tmp/cut-source.sqlite"
n=$(calls)
TG_TEST_CUT_EXPORT=1 XDG_CACHE_HOME="$tmp/cache2" "$bin" check --rules "$tmp/sleep.yaml" "$tmp/long.nsys-rep" \
    >/dev/null 2>&1
st=$?
[ "$st" = 137 ] || fail "cut export: tracegate was not killed (exit $st)"
[ -z "$(find "$tmp/cache2/tracegate" -name '*.sqlite' ! -name '*.partial-*')" ] ||
    fail "cut export: the half-written export is in the cache under the report's name"
XDG_CACHE_HOME="$tmp/cache2" check "$tmp/long.nsys-rep"
st=$?
read -r status count ms_cut <<< "$(slept "$tmp/long.nsys-rep")"
[ "$st" = 1 ] && in_range "${ms_cut:-0}" 490 900 ||
    fail "cut export: the next run gave exit $st and a sleep of ${ms_cut:-?} ms, expected 1 and about 500"
[ "$(calls)" = $((n + 2)) ] || fail "cut export: $(($(calls) - n)) nsys exports, expected 2 (the cut one, then a whole one)"
echo "nsys: an export cut short is exported again by the next run"
n=$(calls)

# 3. the report changed under the same name: exported again, the new one judged
cp "$tmp/long.nsys-rep" "$tmp/run.nsys-rep"
check "$tmp/run.nsys-rep"
st=$?
[ "$st" = 1 ] || fail "changed report: exit $st, expected 1"
read -r status count ms2 <<< "$(slept "$tmp/run.nsys-rep")"
in_range "${ms2:-0}" 490 900 || fail "changed report: the sleep lasted ${ms2:-?} ms, expected about 500 (the new report's)"
[ "$(calls)" = $((n + 1)) ] || fail "changed report: $(($(calls) - n)) nsys exports, expected 1"
[ "$(cached)" = 2 ] || fail "changed report: $(cached) exports in the cache, expected 2"
echo "nsys: the changed report was exported again: a nanosleep of $ms2 ms"

# 4. a corrupt report among good inputs: one unreadable trace, the others
#    checked, every report written
head -c 20000 "$tmp/short.nsys-rep" > "$tmp/cut.nsys-rep"
cp "$tmp/short.nsys-rep" "$tmp/good.nsys-rep"
check "$tmp/good.nsys-rep" "$tmp/cut.nsys-rep" "$tmp/run.nsys-rep"
st=$?
[ "$st" = 1 ] || fail "corrupt report: exit $st, expected 1 (the good traces' finding gates; docs/formats.md)"
[ "$(jq '.traces | length' "$tmp/out.json")" = 3 ] || fail "corrupt report: the JSON does not hold 3 traces"
err=$(jq -r --arg f "$tmp/cut.nsys-rep" '.traces[] | select(.file == $f) | .error' "$tmp/out.json")
case "$err" in
    *"export --type sqlite"*failed*) ;;
    *) fail "corrupt report: its error is '$err', expected the failed nsys export" ;;
esac
grep -qF "ERROR unreadable: $tmp/cut.nsys-rep" "$tmp/out.txt" || fail "corrupt report: the text report does not list it unreadable"
[ "$(slept "$tmp/good.nsys-rep" | cut -d' ' -f1,2)" = "fail 1" ] || fail "corrupt report: good.nsys-rep was not checked"
[ "$(slept "$tmp/run.nsys-rep" | cut -d' ' -f3)" = "$ms2" ] || fail "corrupt report: run.nsys-rep was not checked"
[ "$(cached)" = 2 ] || fail "corrupt report: $(cached) exports in the cache, expected 2 (the failed one removed, good.nsys-rep = short: cached)"
"$bin" check --rules "$tmp/sleep.yaml" --fail-on never "$tmp/cut.nsys-rep" "$tmp/good.nsys-rep" >/dev/null 2>&1
st=$?
[ "$st" = 3 ] || fail "corrupt report, gate off: exit $st, expected 3 (an unreadable trace)"
echo "nsys: a corrupt report is one unreadable trace; the good ones were checked"

# 5. the built-in rules: a capture without CUDA lacks their data
"$bin" check "$tmp/run.nsys-rep" >"$tmp/out.txt" 2>&1
st=$?
[ "$st" = 3 ] || fail "built-in rules on an OS-runtime-only capture: exit $st, expected 3"
grep -qF "which this capture does not contain; record them with 'nsys profile -t cuda'" "$tmp/out.txt" ||
    fail "built-in rules: no missing-data message naming nsys profile -t cuda"

if [ "$failures" = 0 ]; then echo "nsys: all checks passed"; exit 0; fi
echo "nsys: $failures checks failed"
exit 1
