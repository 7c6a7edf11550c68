#!/usr/bin/env bash
# Suppressions (docs/suppressions.md, issue #19) through the command line,
# on the bundled example: accepted findings no longer gate but are shown
# as suppressed with their reason in every format; unused, expired and
# exceeded suppressions are reported; a malformed file or an unknown rule
# is a usage error; `rules lint --suppress` checks the file; merge keeps
# and applies suppressions.
set -uo pipefail
bin="$TG_BINARY"
example="$1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }
run() {  # run WANT DESCRIPTION -- command...
    local want=$1 what=$2
    shift 3
    "$@" >"$tmp/out" 2>"$tmp/err"
    local got=$?
    [ "$got" = "$want" ] || fail "$what: exit $got, expected $want ($(head -c 400 "$tmp/err"))"
}
says() { grep -qF -- "$3" "$1" || fail "$2: no '$3' in '$(head -c 600 "$1")'"; }

# the example fails on three error findings: accept them all
cat > "$tmp/accept.yaml" <<'YAML'
version: 1
suppressions:
  - rule: sync-memcpy
    reason: the example copies 16 MiB every step on purpose
    trace: "example*.sqlite"
  - rule: gpu-idle-gap
    reason: its host stall is the point of the example
  - rule: iteration-variance
    reason: follows from the stall
    max_count: 30
YAML
run 0 "every gating finding suppressed" -- "$bin" check --suppress "$tmp/accept.yaml" \
    -o json="$tmp/r.json" -o junit="$tmp/r.xml" -o sarif="$tmp/r.sarif" -o markdown="$tmp/r.md" \
    -o github="$tmp/r.gh" -o html="$tmp/r.html" "$example"
[ -s "$tmp/err" ] && fail "suppressions that all apply still warned: $(cat "$tmp/err")"
# text
[ "$(grep -c '^  SUPPRESSED error ' "$tmp/out")" = 3 ] || fail "text: not 3 SUPPRESSED lines"
says "$tmp/out" "text" "suppressed: the example copies 16 MiB every step on purpose ($tmp/accept.yaml:3)"
says "$tmp/out" "text" "evidence ("   # details are still there
grep -q "^tracegate: PASS — 1 warning finding, 3 suppressed" "$tmp/out" || fail "text: verdict '$(tail -1 "$tmp/out")'"
# json
[ "$(jq -r .status "$tmp/r.json")" = pass ] || fail "json: status not pass"
[ "$(jq -r '.traces[0].results[] | select(.rule == "sync-memcpy") | .status' "$tmp/r.json")" = fail ] ||
    fail "json: a suppressed finding is no longer status fail"
[ "$(jq -r '.traces[0].results[] | select(.rule == "gpu-idle-gap") | .suppressed.reason' "$tmp/r.json")" = \
  "its host stall is the point of the example" ] || fail "json: no suppressed.reason"
[ "$(jq -r '[.suppressions[].status] | join(",")' "$tmp/r.json")" = used,used,used ] || fail "json: suppressions not all used"
# junit: skipped, type suppressed, the reason in the message; no failure
[ "$(grep -c '<skipped message="suppressed: [^"]*" type="suppressed">' "$tmp/r.xml")" = 3 ] || fail "junit: not 3 suppressed skips"
grep -q '<failure' "$tmp/r.xml" && fail "junit: a suppressed finding is a <failure>"
if command -v xmllint >/dev/null; then xmllint --noout "$tmp/r.xml" || fail "junit not well-formed"; fi
# sarif: results kept, with SARIF's suppressions and the justification
[ "$(jq '[.runs[0].results[] | select(.suppressions)] | length' "$tmp/r.sarif")" = 3 ] || fail "sarif: not 3 suppressed results"
[ "$(jq -r '.runs[0].results[] | select(.ruleId == "iteration-variance") | .suppressions[0].justification' "$tmp/r.sarif")" = \
  "follows from the stall" ] || fail "sarif: no justification"
# github: a notice per suppressed finding, with the reason
[ "$(grep -c '^::notice title=tracegate [a-z-]* (suppressed)::' "$tmp/r.gh")" = 3 ] || fail "github: not 3 notices"
says "$tmp/r.gh" "github" "%0Asuppressed: its host stall is the point of the example"
grep -q '^::error' "$tmp/r.gh" && fail "github: a suppressed finding is an ::error"
# markdown
[ "$(grep -c '| SUPPRESSED |' "$tmp/r.md")" = 3 ] || fail "markdown: not 3 SUPPRESSED rows"
says "$tmp/r.md" "markdown" "(suppressed: follows from the stall"

# html: a SUPPRESSED badge per accepted finding, its reason in the row and the details
[ "$(grep -c '<tr><td><span class="badge suppressed">SUPPRESSED</span>' "$tmp/r.html")" = 3 ] || fail "html: not 3 SUPPRESSED rows"
says "$tmp/r.html" "html" "<em>(suppressed: follows from the stall)</em>"
says "$tmp/r.html" "html" "<strong>Suppressed:</strong> the example copies 16 MiB every step on purpose (<code>$tmp/accept.yaml:3</code>)"

# quiet: the suppressed line and its reason, no details
run 0 "--quiet" -- "$bin" check --quiet --suppress "$tmp/accept.yaml" "$example"
says "$tmp/out" "--quiet" "suppressed: follows from the stall"
grep -A2 "^  SUPPRESSED error    sync-memcpy" "$tmp/out" | grep -q "values:" && fail "--quiet: a suppressed finding's details shown"

# unused, expired, exceeded: reported on stderr (at their line), in the
# report, and the findings they no longer accept gate again
cat > "$tmp/review.yaml" <<'YAML'
version: 1
suppressions:
  - rule: sync-memcpy
    reason: was accepted until 2001
    expires: 2001-01-01
  - rule: iteration-variance
    reason: accepted while few
    max_count: 3
  - rule: alloc-in-loop
    reason: nothing fires
  - rule: gpu-idle-gap
    reason: still accepted
    expires: 2999-12-31
YAML
run 1 "expired and exceeded suppressions gate again" -- "$bin" check --suppress "$tmp/review.yaml" --format json "$example"
says "$tmp/err" "expired" "review.yaml:3:5: warning: the suppression of sync-memcpy expired on 2001-01-01: its 1 finding counts again"
says "$tmp/err" "exceeded" "review.yaml:6:5: warning: the suppression of iteration-variance accepts at most 3, and a finding counts more"
says "$tmp/err" "unused" "review.yaml:9:5: warning: the suppression of alloc-in-loop matched no finding in this run"
[ "$(jq -r '[.suppressions[].status] | join(",")' "$tmp/out")" = expired,exceeded,unused,used ] ||
    fail "json: statuses $(jq -c '[.suppressions[].status]' "$tmp/out")"
[ "$(jq -r '.traces[0].results[] | select(.rule == "sync-memcpy") | .suppressed' "$tmp/out")" = null ] ||
    fail "an expired suppression still accepted its finding"
run 1 "the same in SARIF" -- "$bin" check --suppress "$tmp/review.yaml" --format sarif "$example"
[ "$(jq '[.runs[0].invocations[0].toolExecutionNotifications[] | select(.level == "warning")] | length' "$tmp/out")" = 3 ] ||
    fail "sarif: not 3 warnings for the suppressions to review"
jq -e '.runs[0].invocations[0].toolExecutionNotifications[] | select(.message.text | test("alloc-in-loop matched no finding"))
       | .locations[0].physicalLocation.region.startLine == 9' "$tmp/out" >/dev/null || fail "sarif: the unused one not at line 9"
run 1 "the same in text" -- "$bin" check --suppress "$tmp/review.yaml" "$example"
says "$tmp/out" "text" "suppression $tmp/review.yaml:9: the suppression of alloc-in-loop matched no finding"
run 1 "the same in HTML" -- "$bin" check --suppress "$tmp/review.yaml" -o html="$tmp/review.html" "$example"
says "$tmp/review.html" "html" "<code>$tmp/review.yaml:9</code>: the suppression of alloc-in-loop matched no finding"
says "$tmp/review.html" "html" "<code>$tmp/review.yaml:3</code>: the suppression of sync-memcpy expired on 2001-01-01"

# usage errors: malformed file, unknown rule, missing file; nothing written
printf 'version: 1\nsuppressions:\n  - rule: sync-memcpy\n    reson: typo\n' > "$tmp/bad.yaml"
run 2 "malformed suppression file" -- "$bin" check --suppress "$tmp/bad.yaml" -o json="$tmp/none.json" "$example"
says "$tmp/err" "malformed" "bad.yaml:4:5: error: unknown key 'reson' in a suppression (did you mean 'reason'?)"
[ -e "$tmp/none.json" ] && fail "malformed suppression file: a report was written"
printf 'version: 1\nsuppressions:\n  - {rule: sync-memcopy, reason: typo}\n' > "$tmp/unknown.yaml"
run 2 "unknown rule id" -- "$bin" check --suppress "$tmp/unknown.yaml" "$example"
says "$tmp/err" "unknown rule" "suppression of unknown rule 'sync-memcopy' (did you mean 'sync-memcpy'?)"
run 2 "missing suppression file" -- "$bin" check --suppress "$tmp/absent.yaml" "$example"
says "$tmp/err" "missing file" "the suppression file cannot be opened"
run 2 "a report onto the suppression file" -- "$bin" check --suppress "$tmp/accept.yaml" -o json="$tmp/accept.yaml" "$example"
says "$tmp/err" "-o onto it" "it is the suppression file"

# rules lint --suppress
run 0 "lint a good file" -- "$bin" rules lint --suppress "$tmp/accept.yaml"
grep -q "accept.yaml" "$tmp/err" && fail "lint of a good file: $(grep accept.yaml "$tmp/err")"
run 2 "lint a malformed file" -- "$bin" rules lint --suppress "$tmp/bad.yaml"
says "$tmp/err" "lint malformed" "bad.yaml:4:5: error: unknown key 'reson'"
run 2 "lint an unknown rule" -- "$bin" rules lint --suppress "$tmp/unknown.yaml"
says "$tmp/err" "lint unknown" "did you mean 'sync-memcpy'?"
run 0 "lint an expired suppression: a warning" -- "$bin" rules lint --suppress "$tmp/review.yaml"
says "$tmp/err" "lint expired" "review.yaml:3:5: warning: the suppression of sync-memcpy expired on 2001-01-01"

# merge: a rank's suppressed finding stays suppressed; --suppress applies to merged results
"$bin" check --format json --suppress "$tmp/accept.yaml" "$example" > "$tmp/rank0.json" 2>/dev/null
run 0 "merge keeps suppressions" -- "$bin" merge "$tmp/rank0.json"
[ "$(grep -c '^  SUPPRESSED ' "$tmp/out")" = 3 ] || fail "merge: suppressions lost"
"$bin" check --format json "$example" > "$tmp/plain.json" 2>/dev/null
run 1 "merge without suppressions fails" -- "$bin" merge "$tmp/plain.json"
run 0 "merge --suppress" -- "$bin" merge --suppress "$tmp/accept.yaml" "$tmp/plain.json"
says "$tmp/out" "merge --suppress" "suppressed: follows from the stall"

if [ "$failures" = 0 ]; then echo "suppress: all checks passed"; exit 0; fi
echo "suppress: $failures checks failed"
exit 1
