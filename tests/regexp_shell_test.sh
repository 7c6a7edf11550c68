#!/usr/bin/env bash
# docs/evidence.md, "Patterns": a rule's `matches` in its reproduce SQL is
# rewritten for the sqlite3 shell's regexp() (engine/common/regex.c), so
# the real shell (not the tests' own POSIX regexp()) gives the finding's
# count on patterns the two dialects read differently: POSIX classes
# (the shell refuses them), escapes ERE reads as the letter (\L, \u: the
# shell refuses or reads them otherwise), a bracket holding ']' and '-'.
# Each count is also checked against plain SQL on the export, and a
# pattern the shell cannot say (\B) is kept with a comment saying so.
# Runs on the bundled example (argv[1]); skips (77) without the sqlite3 shell.
set -euo pipefail
example="$1"
command -v sqlite3 >/dev/null || { echo "SKIP: no sqlite3 shell"; exit 77; }
command -v jq >/dev/null || { echo "SKIP: no jq"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# id, where, and the plain SQL count over the export's API names
cases=(
  'posix-class@name matches "^cuda[[:alpha:]]+Synchronize$"@cudaDeviceSynchronize_v3020'
  'ere-escapes@name matches "^cu\La\unch[[:upper:]]"@cuLaunchKernel'
  'digit-class@raw_name matches "_v[[:digit:]]{4}$"@cudaDeviceSynchronize_v3020,cudaMemcpy_v3020'
  'group-class@name matches "^cuda(Memcpy|Device[[:alpha:]]*)$"@cudaDeviceSynchronize_v3020,cudaMemcpy_v3020'
  'bracket@raw_name matches "x{0}[]_-]v3020"@cudaDeviceSynchronize_v3020,cudaMemcpy_v3020'
  'none@name matches "^[^[:lower:]]"@'
)
{
    echo "version: 1"
    echo "rules:"
    for c in "${cases[@]}" 'not-word-boundary@name matches "\Bync"@'; do
        IFS='@' read -r id where _ <<< "$c"
        printf '  - id: %s\n    title: %s\n    severity: warning\n    source: api\n    where: >-\n      %s\n' \
            "$id" "$id" "$where"
        printf '    fail_when: count >= 0\n    message: "{count} calls"\n'
    done
} > "$tmp/rules.yaml"
"$TG_BINARY" check --rules "$tmp/rules.yaml" --format json "$example" > "$tmp/r.json" || true
for c in "${cases[@]}"; do
    IFS='@' read -r id where names <<< "$c"
    count=$(jq -r --arg id "$id" '.traces[0].results[] | select(.rule == $id) | .count' "$tmp/r.json")
    jq -r --arg id "$id" '.traces[0].results[] | select(.rule == $id) | .reproduce' "$tmp/r.json" > "$tmp/q.sql"
    grep -q "REGEXP" "$tmp/q.sql" || fail "$id: no REGEXP in the reproduce SQL"
    got=$(sqlite3 -readonly -noheader "$example" < "$tmp/q.sql" 2>&1 | head -1 | cut -d'|' -f1) ||
        fail "$id: the sqlite3 shell failed: $got"
    list="'${names//,/\',\'}'"
    want=$(sqlite3 -readonly -noheader "$example" \
        "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId WHERE s.value IN ($list)")
    [ "$got" = "$count" ] || fail "$id ($where): the shell counts '$got', the finding $count"
    [ "$count" = "$want" ] || fail "$id ($where): the finding counts $count, plain SQL $want"
done
sql=$(jq -r '.traces[0].results[] | select(.rule == "not-word-boundary") | .reproduce' "$tmp/r.json")
case "$sql" in
    *"REGEXP '\\Bync' /* the pattern uses \\B, which the sqlite3 shell's regexp() does not know"*) ;;
    *) fail "not-word-boundary: the untranslatable pattern is not said so: ${sql: -400}" ;;
esac
if [ "$failures" = 0 ]; then echo "regexp_shell: ${#cases[@]} patterns counted alike by the sqlite3 shell"; exit 0; fi
exit 1
