#!/usr/bin/env bash
# docs/evidence.md stays true: its section "Every built-in rule on a real
# export" is exactly what tools/reproduce-doc.sh prints today (findings,
# values, reproduce SQL and what sqlite3 gives). Skips (77) without
# ../shared/traces or the sqlite3 shell.
set -euo pipefail
traces="${TG_SHARED_TRACES:-}"
if [ -z "$traces" ] || [ ! -d "$traces" ]; then echo "SKIP: ../shared/traces is absent; docs/evidence.md not checked"; exit 77; fi
command -v sqlite3 >/dev/null || { echo "SKIP: no sqlite3 shell"; exit 77; }
doc="$TG_SOURCE_ROOT/docs/evidence.md"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$TG_SOURCE_ROOT/tools/reproduce-doc.sh" "$TG_BINARY" "$traces" > "$tmp/examples.md"
lines=$(wc -l < "$tmp/examples.md")
tail -n "$lines" "$doc" > "$tmp/doc.md"
if ! cmp -s "$tmp/examples.md" "$tmp/doc.md"; then
    diff -u "$tmp/doc.md" "$tmp/examples.md" | head -40
    echo "docs/evidence.md is out of date: regenerate its examples with tools/reproduce-doc.sh build/tracegate"
    exit 1
fi
echo "docs/evidence.md: $(grep -c '^### ' "$tmp/examples.md") rules' examples as the tool prints them"
