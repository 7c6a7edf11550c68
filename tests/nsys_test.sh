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
#   - export a private copy of the report, made while its bytes were
#     hashed, never the report by its path again: a report rewritten just
#     before nsys runs (by the wrapper) is judged, and cached, as the bytes
#     hashed, and the rewritten one is exported afresh later (issue 31);
#   - with a cache directory it cannot write, warn of that, export into a
#     private temporary directory (removed afterwards) and go on;
#   - take a corrupt .nsys-rep among good inputs as one unreadable trace
#     ("`COMMAND` failed", COMMAND exactly the nsys call the wrapper saw)
#     while the others are checked and reported, nothing of it left in the
#     cache;
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
nsys=$(tg_find_nsys)
[ -n "$nsys" ] || tg_skip nsys "no nsys (TG_NSYS, PATH, or the root of bash ci/nsys-deps.sh, which unpacks Nsight Systems 2022.4)"
"$nsys" --version >/dev/null 2>&1 || tg_skip nsys "$nsys does not run"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }

# the two reports, one after the other (CPU sampling and context switches
# off: a container may not allow them). Two nsys sessions at once can
# collide (CI's sanitizer suite once lost both while other tests ran), so
# they are sequential, and a failed recording is tried once more.
record() {  # record NAME SECONDS
    local try
    for try in 1 2; do
        timeout 120 "$nsys" profile -t osrt -s none --cpuctxsw=none --force-overwrite true \
            -o "$tmp/$1" /bin/sleep "$2" >"$tmp/$1.log" 2>&1 && [ -s "$tmp/$1.nsys-rep" ] && return 0
        echo "nsys: recording $1 failed (try $try): $(tail -n 3 "$tmp/$1.log" | tr '\n' ' ')"
    done
    return 1
}
record short 0.2 && record long 0.5 ||
    tg_skip nsys "$nsys profile cannot record here: $(tail -n 3 "$tmp/short.log" "$tmp/long.log" | tr '\n' ' ')"
echo "nsys: recorded with $("$nsys" --version): short.nsys-rep ($(wc -c < "$tmp/short.nsys-rep") bytes), long.nsys-rep"

# tracegate runs nsys from PATH: a wrapper that logs its calls
mkdir "$tmp/bin"
# (with TG_TEST_CUT_EXPORT set it writes half an export where nsys was
# told to, then kills tracegate: a run cut short; with TG_TEST_REWRITE="SRC
# DEST" it copies SRC over DEST first: a report rewritten after tracegate
# hashed it)
cat > "$tmp/bin/nsys" <<SH
#!/bin/sh
echo "\$*" >> "$tmp/calls"
[ -z "\${TG_TEST_REWRITE:-}" ] || cp \$TG_TEST_REWRITE
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
cached() { find "$tmp/cache/tracegate" -maxdepth 1 -name '*.sqlite' 2>/dev/null | wc -l; }

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
# bounds that only tell the 200 ms program from the 500 ms one: a loaded
# host oversleeps, so no bound asks for speed (tests/hostile/README.md)

# 1. exported on the fly, then checked
cp "$tmp/short.nsys-rep" "$tmp/run.nsys-rep"
check "$tmp/run.nsys-rep"
st=$?
[ "$st" = 1 ] || fail "first check: exit $st, expected 1 (the sleep found): $(head -c 300 "$tmp/err.txt")"
read -r status count ms <<< "$(slept "$tmp/run.nsys-rep")"
[ "$status $count" = "fail 1" ] || fail "first check: long-sleep is '$status $count', expected 'fail 1'"
in_range "${ms:-0}" 190 489 || fail "first check: the sleep lasted ${ms:-?} ms, expected about 200"
[ "$(jq -r '.traces[0].nsys_version' "$tmp/out.json")" = "$("$nsys" --version | grep -o '20[0-9.]*' | head -1)" ] ||
    fail "first check: the trace's nsys version is not the recording nsys's"
[ "$(calls)" = 1 ] || fail "first check: $(calls) nsys exports, expected 1"
[ "$(cached)" = 1 ] || fail "first check: $(cached) exports in the cache, expected 1"
echo "nsys: exported and checked: long-sleep $status, 1 nanosleep of $ms ms"

# 2. the same report again: the cached export, no nsys call
export_file=$(find "$tmp/cache/tracegate" -maxdepth 1 -name '*.sqlite')
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
[ -z "$(find "$tmp/cache2/tracegate" -maxdepth 1 -name '*.sqlite')" ] ||
    fail "cut export: the half-written export is in the cache under the report's name"
XDG_CACHE_HOME="$tmp/cache2" check "$tmp/long.nsys-rep"
st=$?
read -r status count ms_cut <<< "$(slept "$tmp/long.nsys-rep")"
[ "$st" = 1 ] && in_range "${ms_cut:-0}" 490 60000 ||
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
in_range "${ms2:-0}" 490 60000 || fail "changed report: the sleep lasted ${ms2:-?} ms, expected about 500 (the new report's)"
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
    *"\`$tmp/bin/nsys $(grep -F "/report.nsys-rep" "$tmp/calls" | tail -1)\` failed (exit status "*) ;;
    *) fail "corrupt report: its error is '$err', expected the failed nsys export, as it was called ($(tail -1 "$tmp/calls"))" ;;
esac
grep -qF "ERROR unreadable: $tmp/cut.nsys-rep" "$tmp/out.txt" || fail "corrupt report: the text report does not list it unreadable"
[ "$(slept "$tmp/good.nsys-rep" | cut -d' ' -f1,2)" = "fail 1" ] || fail "corrupt report: good.nsys-rep was not checked"
[ "$(slept "$tmp/run.nsys-rep" | cut -d' ' -f3)" = "$ms2" ] || fail "corrupt report: run.nsys-rep was not checked"
[ "$(cached)" = 2 ] || fail "corrupt report: $(cached) exports in the cache, expected 2 (the failed one removed, good.nsys-rep = short: cached)"
"$bin" check --rules "$tmp/sleep.yaml" --fail-on never "$tmp/cut.nsys-rep" "$tmp/good.nsys-rep" >/dev/null 2>&1
st=$?
[ "$st" = 3 ] || fail "corrupt report, gate off: exit $st, expected 3 (an unreadable trace)"
echo "nsys: a corrupt report is one unreadable trace; the good ones were checked"

# 5. the report rewritten between its hash and the export (here, by the
#    wrapper, just before nsys runs): nsys exports the private copy of the
#    bytes hashed, so the run judges them and the entry named by their hash
#    holds their export; the rewritten report is exported afresh later
cp "$tmp/short.nsys-rep" "$tmp/race.nsys-rep"
n=$(calls)
TG_TEST_REWRITE="$tmp/long.nsys-rep $tmp/race.nsys-rep" XDG_CACHE_HOME="$tmp/cache3" check "$tmp/race.nsys-rep"
st=$?
read -r status count ms_race <<< "$(slept "$tmp/race.nsys-rep")"
[ "$st" = 1 ] && [ "${ms_race:-}" = "$ms" ] ||
    fail "rewritten report: exit $st, a sleep of ${ms_race:-?} ms, expected 1 and $ms (the bytes hashed: short's)"
cmp -s "$tmp/race.nsys-rep" "$tmp/long.nsys-rep" || fail "rewritten report: the wrapper did not rewrite it"
last=$(tail -1 "$tmp/calls")
case "$last" in
    *" $tmp/cache3/tracegate/.export-"*/report.nsys-rep) ;;
    *) fail "rewritten report: nsys was not run on a private copy in the cache: $last" ;;
esac
cp "$tmp/short.nsys-rep" "$tmp/short-again.nsys-rep"
XDG_CACHE_HOME="$tmp/cache3" check "$tmp/short-again.nsys-rep"
[ "$(slept "$tmp/short-again.nsys-rep")" = "fail 1 $ms" ] ||
    fail "rewritten report: short's bytes are not cached as short's export: $(slept "$tmp/short-again.nsys-rep")"
[ "$(calls)" = $((n + 1)) ] || fail "rewritten report: short's bytes were exported again"
XDG_CACHE_HOME="$tmp/cache3" check "$tmp/race.nsys-rep"
[ "$(slept "$tmp/race.nsys-rep" | cut -d' ' -f3)" = "$ms2" ] ||
    fail "rewritten report: its new bytes are not judged as long's: $(slept "$tmp/race.nsys-rep")"
[ "$(calls)" = $((n + 2)) ] || fail "rewritten report: its new bytes were not exported ($(($(calls) - n)) exports)"
[ "$(find "$tmp/cache3/tracegate" -mindepth 1 | wc -l)" = 2 ] ||
    fail "rewritten report: the cache holds other than 2 exports: $(find "$tmp/cache3/tracegate" -mindepth 1)"
echo "nsys: a report rewritten after its hash is judged and cached as the bytes hashed"

# 6. a cache directory of this user's that cannot be written: a warning
#    naming it and why, the export made in a private temporary directory
#    (removed afterwards), the report checked. Root writes any directory,
#    so as root tracegate runs as nobody (uid 65534) on its own copies.
ro=$tmp/ro
mkdir -p "$ro/cache/tracegate" "$ro/tmp" "$ro/home"
cp "$tmp/short.nsys-rep" "$ro/run.nsys-rep"
chmod 500 "$ro/cache/tracegate"
as=()
robin=$bin
if [ "$(id -u)" = 0 ]; then
    # nobody may not reach the build (a clone in a 0700 directory): run a
    # copy of the binary (static over libtracegate) from its own directory
    robin=$ro/tracegate
    cp "$bin" "$robin"
    chmod 755 "$tmp"
    chown -R 65534:65534 "$ro"
    as=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
    "${as[@]}" true 2>/dev/null || as=(skip)
fi
if [ "${as[0]:-}" = skip ]; then
    echo "nsys: setpriv cannot run as nobody here: the read-only cache sub-case is skipped"
else
    "${as[@]}" env HOME="$ro/home" TMPDIR="$ro/tmp" XDG_CACHE_HOME="$ro/cache" PATH="$(dirname "$nsys"):/usr/bin:/bin" \
        "$robin" check --rules "$tmp/sleep.yaml" "$ro/run.nsys-rep" >"$tmp/out.txt" 2>"$tmp/err.txt"
    st=$?
    [ "$st" = 1 ] || fail "read-only cache: exit $st, expected 1 (exported privately, the sleep found): $(head -c 400 "$tmp/err.txt")"
    grep -qF "tracegate: warning: cannot write the cache directory $ro/cache/tracegate: Permission denied; exporting into a private temporary directory instead" "$tmp/err.txt" ||
        fail "read-only cache: no warning naming the directory and why: $(head -c 400 "$tmp/err.txt")"
    ! grep -q "failed" "$tmp/err.txt" || fail "read-only cache: nsys is blamed: $(head -c 400 "$tmp/err.txt")"
    [ -z "$(find "$ro/tmp" "$ro/cache/tracegate" -mindepth 1)" ] ||
        fail "read-only cache: left behind: $(find "$ro/tmp" "$ro/cache/tracegate" -mindepth 1 | tr '\n' ' ')"
    echo "nsys: a cache that cannot be written: warned of, exported privately, checked"
fi

# 7. the built-in rules: a capture without CUDA lacks their data
"$bin" check "$tmp/run.nsys-rep" >"$tmp/out.txt" 2>&1
st=$?
[ "$st" = 3 ] || fail "built-in rules on an OS-runtime-only capture: exit $st, expected 3"
grep -qF "which this capture does not contain; record them with 'nsys profile -t cuda'" "$tmp/out.txt" ||
    fail "built-in rules: no missing-data message naming nsys profile -t cuda"

if [ "$failures" = 0 ]; then echo "nsys: all checks passed"; exit 0; fi
echo "nsys: $failures checks failed"
exit 1
