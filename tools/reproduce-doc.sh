#!/bin/bash
# The examples of docs/evidence.md ("Every built-in rule on a real
# export"): for each built-in rule, one real export of ../shared/traces
# where it fires, the finding, its values and its reproduce text, and what
# `sqlite3 -readonly -header` prints for it. Writes the markdown to stdout:
#
#   tools/reproduce-doc.sh build/tracegate [TRACES_DIR] > /tmp/examples.md
#
# The SQL is shown wrapped, one statement and one view per line (tracegate
# prints it on one line; both run the same). tests/reproduce_doc_test.sh
# checks that docs/evidence.md holds exactly this output.
set -euo pipefail
bin=$1
root=$(cd "$(dirname "$0")/.." && pwd)
traces=${2:-$root/../shared/traces}
command -v jq >/dev/null || { echo "reproduce-doc: jq is needed" >&2; exit 2; }
command -v sqlite3 >/dev/null || { echo "reproduce-doc: sqlite3 is needed" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$bin" baseline record -o "$work/base.yaml" "$traces/h200-torch/realistic_baseline_run1.sqlite" \
    "$traces/h200-torch/realistic_baseline_run2.sqlite" >/dev/null 2>&1

# rule, export, extra options of check
examples="sync-memcpy h200-nsys/drv_sync_memcpy.sqlite
pageable-async-memcpy h200-nsys/drv_pageable_async.sqlite
sync-memset h200-nsys/drv_memset_pinned.sqlite
blocking-sync-api h200-nsys/drv_sync_api.sqlite
gpu-idle-gap h200-nsys/drv_gaps.sqlite
low-gpu-utilization h200-nsys/drv_starve.sqlite
gpu-starvation h200-nsys/drv_starve.sqlite
kernel-launch-bound h200-nsys/drv_starve.sqlite
iteration-variance h200-nsys/drv_jitter.sqlite
low-nccl-overlap h200-torch/ddp_bad.sqlite
alloc-in-loop h200-torch/realistic_nocache.sqlite
copy-dominated h200-nsys/drv_pinned_async.sqlite
iteration-time-regression h200-torch/realistic_regressed.sqlite --baseline BASE
gpu-time-regression h200-torch/realistic_regressed.sqlite --baseline BASE"

# One statement per line, each view of a WITH on a line of its own.
wrap() {
    sed -e 's/; \(DROP\|CREATE\|WITH\|SELECT\)/;\n\1/g' -e 's/), \([a-z_]*\) AS \(MATERIALIZED \)\?(/),\n  \1 AS \2(/g' \
        -e 's/ AS WITH \([a-z_]*\) AS (/ AS WITH\n  \1 AS (/g'
}

while read -r rule file extra; do
    [ -n "$rule" ] || continue
    extra=${extra//BASE/$work/base.yaml}
    # shellcheck disable=SC2086
    "$bin" check --format json $extra "$traces/$file" > "$work/r.json" || true
    jq -e --arg r "$rule" '.traces[0].results[] | select(.rule == $r)' "$work/r.json" > "$work/one.json"
    sql=$(jq -r .reproduce "$work/one.json")
    shown=${extra//$work\/base.yaml/base.yaml}
    printf '### %s\n\n' "$rule"
    printf '`tracegate check %s%s`%s:\n\n' "${shown:+$shown }" "$file" \
        "${extra:+ (base.yaml recorded from realistic_baseline_run1 and run2)}"
    printf '```\n%s %s %s\nvalues: %s\n```\n\n' "$(jq -r '.status | ascii_upcase' "$work/one.json")" "$rule" \
        "$(jq -r .message "$work/one.json")" "$(jq -c .values "$work/one.json")"
    printf 'reproduce:\n\n```sql\n%s\n```\n\n' "$(printf '%s\n' "$sql" | wrap)"
    printf '`sqlite3 -readonly -header %s "$reproduce"`:\n\n```\n%s\n```\n\n' "$file" \
        "$(sqlite3 -readonly -header "$traces/$file" "$sql")"
done <<< "$examples"
