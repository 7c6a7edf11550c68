#!/usr/bin/env bash
# The command line as CI sees it, on the bundled example (no ../shared
# needed): every exit status of docs/formats.md, several report formats in one run
# with consistent counts, --jobs, --load, the GitHub step summary, and
# .nsys-rep inputs without nsys on PATH.
set -uo pipefail
bin="$TG_BINARY"
example="$1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }

expect_status() {  # expect_status WANT DESCRIPTION -- command...
    local want=$1 what=$2
    shift 3
    "$@" >"$tmp/out" 2>"$tmp/err"
    local got=$?
    [ "$got" = "$want" ] || fail "$what: exit $got, expected $want ($(head -c 300 "$tmp/err"))"
}

# 0, 1: the gate
expect_status 1 "example fails the gate" -- "$bin" check "$example"
expect_status 0 "--fail-on never" -- "$bin" check --fail-on never "$example"
cat > "$tmp/pass.yaml" <<'YAML'
version: 1
rules:
  - id: no-huge-copies
    title: No copy over 1 GB
    severity: error
    source: memcpy
    where: bytes > 1GB
    fail_when: count > 0
    message: "{count} copies over 1 GB"
YAML
expect_status 0 "a passing custom rule" -- "$bin" check --rules "$tmp/pass.yaml" "$example"
expect_status 1 "warnings fail with --fail-on warning" -- "$bin" check --fail-on warning --rules builtin "$example"

# 2: usage, rule and baseline errors
expect_status 2 "unknown option" -- "$bin" check --no-such-option "$example"
expect_status 2 "no trace" -- "$bin" check
expect_status 2 "unknown format" -- "$bin" check --format yaml "$example"
printf 'version: 1\nrules:\n  - id: x\n    source: memcpy\n    where: bytes > \n' > "$tmp/bad.yaml"
expect_status 2 "malformed rule" -- "$bin" check --rules "$tmp/bad.yaml" "$example"
grep -q "bad.yaml:5:" "$tmp/err" || fail "malformed rule: no file:line in '$(cat "$tmp/err")'"
echo "not: [a baseline" > "$tmp/bad-baseline.yaml"
expect_status 2 "malformed baseline" -- "$bin" check --baseline "$tmp/bad-baseline.yaml" "$example"
expect_status 2 "unknown --set rule" -- "$bin" check --set nope.min_gap=1ms "$example"

# 3: unreadable traces
echo "hello" > "$tmp/not-sqlite.sqlite"
expect_status 3 "not SQLite" -- "$bin" check "$tmp/not-sqlite.sqlite"
[ "$(wc -l < "$tmp/err")" -ge 1 ] && grep -q "not-sqlite.sqlite" "$tmp/err" || fail "not SQLite: message lacks the file"
expect_status 3 "missing file" -- "$bin" check "$tmp/absent.sqlite"
touch "$tmp/report.nsys-rep" "$tmp/old.qdrep"
expect_status 3 ".nsys-rep without nsys" -- env PATH=/nonexistent "$bin" check "$tmp/report.nsys-rep"
grep -q "nsys export --type sqlite --output $tmp/report.sqlite $tmp/report.nsys-rep" "$tmp/err" ||
    fail ".nsys-rep: no export command in '$(cat "$tmp/err")'"
# .qdrep (nsys before 2021.4) is a report too: the same sentence
expect_status 3 ".qdrep without nsys" -- env PATH=/nonexistent "$bin" check "$tmp/old.qdrep"
grep -q "old.qdrep: this is an Nsight Systems report, and nsys is not on PATH to export it; run \`nsys export --type sqlite --output $tmp/old.sqlite $tmp/old.qdrep\`" "$tmp/err" ||
    fail ".qdrep: not the report sentence: '$(cat "$tmp/err")'"

# a report among other inputs is one unreadable input, like a text file in
# its place: the others are checked and every report file is written
for bad in "$tmp/report.nsys-rep" "$tmp/not-sqlite.sqlite"; do
    rm -f "$tmp/mixed.json" "$tmp/mixed.xml"
    expect_status 1 "$(basename "$bad") among good traces" -- env PATH=/nonexistent "$bin" check \
        -o json="$tmp/mixed.json" -o junit="$tmp/mixed.xml" "$example" "$bad" "$example"
    [ -s "$tmp/mixed.json" ] && [ -s "$tmp/mixed.xml" ] || fail "$(basename "$bad") among good traces: reports not written"
    [ "$(jq '.traces | length' "$tmp/mixed.json" 2>/dev/null)" = 3 ] || fail "$(basename "$bad"): not 3 traces in the JSON"
    jq -e --arg f "$bad" '.traces[1] | .file == $f and (.error | length > 0) and (.results | length == 0)' \
        "$tmp/mixed.json" >/dev/null || fail "$(basename "$bad"): not an unreadable entry in the JSON"
    grep -q 'type="trace-unreadable"' "$tmp/mixed.xml" || fail "$(basename "$bad"): no unreadable testcase in JUnit"
    [ "$(grep -c 'tracegate: error:' "$tmp/err")" = 1 ] || fail "$(basename "$bad"): not one error line: $(cat "$tmp/err")"
done

# which status wins (docs/formats.md, "Run status and exit status"): a
# finding that fails the gate (1) over an unreadable trace or missing data
# (3), in check, in every format's status and in merge
expect_status 1 "a failing finding beside an unreadable trace" -- "$bin" check --format json "$example" "$tmp/not-sqlite.sqlite"
[ "$(jq -r .status "$tmp/out")" = fail ] || fail "precedence: JSON status $(jq -r .status "$tmp/out"), expected fail"
grep -q "FAIL — [0-9]* error findings\?, .*1 unreadable trace" <("$bin" check "$example" "$tmp/not-sqlite.sqlite" 2>/dev/null) ||
    fail "precedence: the text verdict line is not FAIL"
expect_status 3 "the same with --fail-on never" -- "$bin" check --fail-on never --format json "$example" "$tmp/not-sqlite.sqlite"
[ "$(jq -r .status "$tmp/out")" = error ] || fail "precedence: JSON status $(jq -r .status "$tmp/out"), expected error"
"$bin" check --format json "$example" "$tmp/not-sqlite.sqlite" > "$tmp/m1.json" 2>/dev/null
expect_status 1 "merge: a failing finding beside an unreadable trace" -- "$bin" merge "$tmp/m1.json"
expect_status 3 "merge --fail-on never: the unreadable trace" -- "$bin" merge --fail-on never "$tmp/m1.json"
# a rule lacking data beside a failing finding: 1, and the line says both apart
cp "$example" "$tmp/no-nvtx.sqlite"
sqlite3 "$tmp/no-nvtx.sqlite" "DROP TABLE NVTX_EVENTS;"
expect_status 1 "sync-memcpy fails, NVTX missing" -- "$bin" check "$tmp/no-nvtx.sqlite"
grep -q "^tracegate: FAIL — [0-9]* error findings\?, .*rules lacking data" "$tmp/out" ||
    fail "missing NVTX: verdict line '$(tail -1 "$tmp/out")'"
grep -q "rule error\|[0-9] errors\b" "$tmp/out" && fail "missing NVTX: 'error' means two things: $(tail -1 "$tmp/out")"
expect_status 3 "NVTX missing, nothing else gates" -- "$bin" check --fail-on never "$tmp/no-nvtx.sqlite"

# several formats in one run, consistent counts
"$bin" check --format text -o json="$tmp/r.json" -o junit="$tmp/r.xml" -o sarif="$tmp/r.sarif" \
    -o markdown="$tmp/r.md" -o github="$tmp/r.gh" "$example" > "$tmp/r.txt" 2>/dev/null
for f in r.json r.xml r.sarif r.md r.gh r.txt; do [ -s "$tmp/$f" ] || fail "-o: $f not written"; done
fails_json=$(grep -c '"status": "fail"' "$tmp/r.json")
# JUnit: a finding below --fail-on is a passing test case with <system-out>
fails_junit=$(( $(grep -c '<failure ' "$tmp/r.xml") + $(grep -c '<system-out>' "$tmp/r.xml") ))
grep -q '<failure message=[^>]* type="warning"' "$tmp/r.xml" && fail "junit: a warning below --fail-on is a <failure>"
"$bin" check --fail-on warning -o junit="$tmp/rw.xml" "$example" >/dev/null 2>&1
grep -q '<failure message=[^>]* type="warning"' "$tmp/rw.xml" || fail "junit --fail-on warning: warnings are not failures"
fails_text=$(grep -c '^  FAIL ' "$tmp/r.txt")
annots=$(grep -c '^::\(error\|warning\|notice\)' "$tmp/r.gh")
# json also says "status": "fail" at the top level
[ "$((fails_json - 1))" = "$fails_junit" ] && [ "$fails_junit" = "$fails_text" ] && [ "$fails_text" = "$annots" ] ||
    fail "formats disagree: json $((fails_json - 1)), junit $fails_junit, text $fails_text, github $annots"
if command -v xmllint >/dev/null; then xmllint --noout "$tmp/r.xml" || fail "junit not well-formed"; fi

# --jobs gives the same result as one job
cp "$example" "$tmp/a.sqlite"; cp "$example" "$tmp/b.sqlite"; cp "$example" "$tmp/c.sqlite"
"$bin" check --format json "$tmp/a.sqlite" "$tmp/b.sqlite" "$tmp/c.sqlite" > "$tmp/j1.json" 2>/dev/null
"$bin" check --format json --jobs 3 "$tmp/a.sqlite" "$tmp/b.sqlite" "$tmp/c.sqlite" > "$tmp/j3.json" 2>/dev/null
cmp -s "$tmp/j1.json" "$tmp/j3.json" || fail "--jobs 3 differs from one job"

# GitHub step summary
GITHUB_STEP_SUMMARY="$tmp/summary.md" "$bin" check --format github "$example" >/dev/null 2>&1
grep -q "sync-memcpy" "$tmp/summary.md" 2>/dev/null || fail "no step summary written"

# --load: loading only what the rules read gives what loading everything gives
expect_status 2 "--load bogus" -- "$bin" check --load bogus "$example"
[ "$(wc -l < "$tmp/err")" = 1 ] && grep -q "'bogus'" "$tmp/err" ||
    fail "--load bogus: not one line naming the value: '$(cat "$tmp/err")'"
cat > "$tmp/api.yaml" <<'YAML'
version: 1
rules:
  - id: steady-memcpy-calls
    title: Blocking copy calls in steady state
    severity: warning
    source: api
    where: name == "cudaMemcpy" and steady
    fail_when: count > 0
    evidence: {order_by: duration desc, limit: 5}
    message: "{count} cudaMemcpy calls took {sum(duration)} of {trace.api_calls} calls"
  - id: slow-launches
    title: Slow kernel launches
    severity: info
    source: kernel
    where: queue > 1us
    fail_when: count > 0
    message: "{count} kernels queued over 1 us"
YAML
for rules in "" "--rules builtin --rules $tmp/api.yaml"; do
    # shellcheck disable=SC2086  # $rules holds shell words
    "$bin" check --format json $rules "$example" > "$tmp/load-needed.json" 2>/dev/null
    needed=$?
    # shellcheck disable=SC2086
    "$bin" check --format json --load all $rules "$example" > "$tmp/load-all.json" 2>/dev/null
    all=$?
    [ "$needed" = "$all" ] || fail "--load all ${rules:-(built-in rules)}: exit $all, default $needed"
    [ -s "$tmp/load-needed.json" ] && cmp -s "$tmp/load-needed.json" "$tmp/load-all.json" ||
        fail "--load all ${rules:-(built-in rules)}: JSON differs from the default"
done
grep -q '"steady-memcpy-calls"' "$tmp/load-all.json" || fail "--load: the api rule did not run"

# merge of per-rank results
"$bin" check --format json "$tmp/a.sqlite" > "$tmp/ra.json" 2>/dev/null
"$bin" check --format json "$tmp/b.sqlite" > "$tmp/rb.json" 2>/dev/null
expect_status 1 "merge keeps the failing verdict" -- "$bin" merge "$tmp/ra.json" "$tmp/rb.json"
grep -q "rank-straggler" "$tmp/out" || fail "merge: no straggler check"
expect_status 2 "merge of a non-result" -- "$bin" merge "$tmp/pass.yaml"

# how iterations were found: info and metrics say it, a bad pattern is a usage error
expect_status 0 "info names the iteration marker" -- "$bin" info "$example"
grep -q "iterations: process .*: 30 iteration" "$tmp/out" || fail "info: no iteration marker line ($(grep iterations "$tmp/out"))"
expect_status 0 "info --format json" -- "$bin" info --format json "$example"
grep -q '"marker": "iteration"' "$tmp/out" || fail "info --format json: no iteration_markers"
expect_status 0 "info with a pattern that matches nothing" -- "$bin" info --iteration-pattern '^none$' "$example"
grep -qF 'iterations: none: no NVTX range matches ^none$' "$tmp/out" || fail "info: no 'none' line"
expect_status 2 "info with a bad pattern" -- "$bin" info --iteration-pattern '(' "$example"
expect_status 0 "metrics names the iteration marker" -- "$bin" metrics "$example"
grep -q "markers: process .*: 30 iteration" "$tmp/out" || fail "metrics: no iteration marker line"
expect_status 1 "check names the marker in its header" -- "$bin" check "$example"
grep -q "iterations: iteration[;)]" "$tmp/out" || fail "check: no marker in the header"

# the reproduce queries (docs/formats.md, "sql", "Reproduce queries in text"):
# one line in text, whole with --reproduce, one file per finding with -o sql=DIR
expect_status 1 "check -o sql=DIR" -- "$bin" check -o "sql=$tmp/sql" "$example"
grep -q "reproduce: $tmp/sql/01-example.sqlite-sync-memcpy.sql\$" "$tmp/out" || fail "text does not name the reproduce file"
grep -q "reproduce: SELECT\|reproduce: DROP\|reproduce: WITH" "$tmp/out" && fail "text prints a whole query without --reproduce"
[ -s "$tmp/sql/01-example.sqlite-sync-memcpy.sql" ] || fail "-o sql=DIR wrote no sync-memcpy file"
n_fail=$(grep -c "^  FAIL " "$tmp/out")
n_files=$(ls "$tmp/sql" | grep -vc '\.cause\.')
[ "$n_fail" = "$n_files" ] || fail "-o sql=DIR: $n_files files for $n_fail findings"
rows=$(sqlite3 -readonly "$example" < "$tmp/sql/01-example.sqlite-sync-memcpy.sql" | wc -l)
[ "$rows" -gt 0 ] || fail "the sync-memcpy reproduce file selects nothing"
expect_status 1 "check --reproduce" -- "$bin" check --reproduce "$example"
grep -q "reproduce: [A-Z]" "$tmp/out" || fail "--reproduce prints no query"
expect_status 2 "--format sql" -- "$bin" check --format sql "$example"
grep -q "writes a folder" "$tmp/err" || fail "--format sql: no sentence"
cp "$example" "$tmp/sql/in.sqlite"
expect_status 2 "-o sql=DIR holding the trace" -- "$bin" check -o "sql=$tmp/sql" "$tmp/sql/in.sqlite"
grep -q "lies in that folder" "$tmp/err" || fail "-o sql=DIR holding the trace: no sentence"
expect_status 2 "-o sql=FILE" -- "$bin" check -o "sql=$tmp/sql/in.sqlite" "$example"

if [ "$failures" = 0 ]; then echo "cli: all checks passed"; exit 0; fi
echo "cli: $failures checks failed"
exit 1
