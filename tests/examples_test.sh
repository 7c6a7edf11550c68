#!/usr/bin/env bash
# The bundled example stays what the README says: `check` fails the gate
# (exit 1) with sync-memcpy, gpu-idle-gap and iteration-variance, and the
# committed baselines/example.yaml is exactly what re-recording the example
# gives (same SOURCE_DATE_EPOCH), and passes both regression rules.
set -euo pipefail
bin="$TG_BINARY"
root="$TG_SOURCE_ROOT"
example="$1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

set +e
"$bin" check --format json "$example" > "$tmp/check.json"
status=$?
set -e
[ "$status" = 1 ] || { echo "check on the example exited $status, expected 1"; exit 1; }
for rule in sync-memcpy gpu-idle-gap iteration-variance; do
    grep -q "\"rule\": \"$rule\"" "$tmp/check.json" || { echo "$rule missing"; exit 1; }
done
python_free_status() {  # status of a rule in the JSON, without a JSON tool
    awk -v r="\"rule\": \"$1\"" 'index($0, r) { found = 1 } found && /"status"/ { gsub(/[",]/, ""); print $2; exit }' "$2"
}
for rule in sync-memcpy gpu-idle-gap iteration-variance; do
    s=$(python_free_status "$rule" "$tmp/check.json")
    [ "$s" = fail ] || { echo "$rule: $s, expected fail"; exit 1; }
done

SOURCE_DATE_EPOCH=1796083200 "$bin" baseline record -o "$tmp/example.yaml" "$example" 2>/dev/null
cmp "$tmp/example.yaml" "$root/baselines/example.yaml" || {
    echo "baselines/example.yaml is stale: re-record it with"
    echo "  SOURCE_DATE_EPOCH=1796083200 tracegate baseline record -o baselines/example.yaml build/examples/example.sqlite"
    exit 1
}
"$bin" check --format json --baseline "$root/baselines/example.yaml" "$example" > "$tmp/base.json" || true
for rule in iteration-time-regression gpu-time-regression; do
    s=$(python_free_status "$rule" "$tmp/base.json")
    [ "$s" = pass ] || { echo "$rule against the example baseline: $s, expected pass"; exit 1; }
done
echo "example: check fails as documented; baseline fresh and passing"
