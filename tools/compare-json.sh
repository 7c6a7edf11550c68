#!/bin/bash
# Compare the JSON of two tracegate builds on every corpus trace (exports
# and Kineto JSON traces): `check` with this tree's built-in rules,
# `metrics` and `info`. Used to show that a refactoring changes no output
# (issue #15): build the commit before it in a worktree, then
#
#   tools/compare-json.sh OLD/build/tracegate build/tracegate [TRACES_DIR]
#
# Keys the newer build adds on purpose are listed in DROP_NEW and removed
# from its output before the comparison (each with the commit that added
# it); everything else must be byte-identical. Exit 0 when all match.
set -u
old=$1 new=$2
root=$(cd "$(dirname "$0")/.." && pwd)
traces=${3:-$root/../shared/traces}
# One rule set for both, so rule locations match; RULES=DIR picks another
# (the old tree's rules.d when this tree has rules the old build cannot read).
rules=${RULES:-$root/rules.d}
# Added after the refactoring started, on purpose (units as data, issue
# #15): the metric's unit and the regression direction of a result, and the
# units objects beside values and evidence fields.
# Also added since (issue #22): the devices' steady busy and copy time in metrics.
# Also added since (issue #23): where a trace was recorded and its workload
# in check's results (rank, rank_from, world_size, job, host, pids, workload).
# Also added since (issue #18, docs/host.md): a failure's cause, metrics'
# host_side, and info's host-side tables (OSRT_API, CUDA_CALLCHAINS,
# OSRT_CALLCHAINS, CUDNN_EVENTS, CUBLAS_EVENTS).
# Also added since (issue #15, docs/formats.md): each trace's trace_format.
# DROP_NEW=. compares everything (two builds that both have those keys).
DROP_NEW=${DROP_NEW:-'del(.. | objects | (.metric_unit?, .trace_format?, (.regression? | select(type == "string")), (.units? | select(type == "object")),
                          .busy_time_steady_ns?, .copy_time_steady_ns?, .copy_frac_steady?, .cause?, .host_side?))
          | del(.traces[]?.rank, .traces[]?.rank_from, .traces[]?.world_size, .traces[]?.job, .traces[]?.host,
                .traces[]?.pids, .traces[]?.workload)
          | del(.traces[]?.tables?.OSRT_API, .traces[]?.tables?.CUDA_CALLCHAINS, .traces[]?.tables?.OSRT_CALLCHAINS,
                .traces[]?.tables?.CUDNN_EVENTS, .traces[]?.tables?.CUBLAS_EVENTS)'}
command -v jq >/dev/null || { echo "compare-json: jq is needed" >&2; exit 2; }
[ -d "$traces" ] || { echo "compare-json: no traces at $traces" >&2; exit 2; }
work=$(mktemp -d) || exit 2
trap 'rm -rf "$work"' EXIT
n=0 same=0 differ=0
# Run both builds with the same arguments and compare output and status.
compare() {
    local args=("$@")
    "$old" "${args[@]}" >"$work/old.json" 2>"$work/old.err"; so=$?
    "$new" "${args[@]}" >"$work/new.raw" 2>"$work/new.err"; sn=$?
    if [ -s "$work/new.raw" ] && jq -e . "$work/new.raw" >/dev/null 2>&1; then
        jq --indent 2 "$DROP_NEW" "$work/new.raw" >"$work/new.json"
        jq --indent 2 . "$work/old.json" >"$work/old.norm" 2>/dev/null || cp "$work/old.json" "$work/old.norm"
    else
        cp "$work/new.raw" "$work/new.json"
        cp "$work/old.json" "$work/old.norm"
    fi
    n=$((n + 1))
    if [ $so -eq $sn ] && cmp -s "$work/old.norm" "$work/new.json" && cmp -s "$work/old.err" "$work/new.err"; then
        same=$((same + 1))
    else
        differ=$((differ + 1))
        echo "DIFFERS: ${args[*]} (exit $so -> $sn)"
        diff "$work/old.norm" "$work/new.json" | head -20
        diff "$work/old.err" "$work/new.err" | head -5
    fi
}

while IFS= read -r -d '' t; do
    compare check --rules "$rules" --format json "$t"
    compare metrics --format json "$t"
    compare info --format json "$t"
done < <(find "$traces" \( -name '*.sqlite' -o -path '*/kineto/*' \( -name '*.json' -o -name '*.json.gz' \) \) \
              -print0 | sort -z)
# Baselines: both builds record the realistic pair (the date line aside,
# identical), then check every h200-torch trace against the old one's.
pair=("$traces/h200-torch/realistic_baseline_run1.sqlite" "$traces/h200-torch/realistic_baseline_run2.sqlite")
if [ -f "${pair[0]}" ] && [ -f "${pair[1]}" ]; then
    "$old" baseline record --rules "$rules" -o "$work/old.yaml" "${pair[@]}" 2>/dev/null
    "$new" baseline record --rules "$rules" -o "$work/new.yaml" "${pair[@]}" 2>/dev/null
    [ -s "$work/old.yaml" ] && [ -s "$work/new.yaml" ] || { echo "compare-json: baseline record failed" >&2; exit 2; }
    n=$((n + 1))
    if diff <(grep -v '^date:' "$work/old.yaml") <(grep -v '^date:' "$work/new.yaml"); then
        same=$((same + 1))
    else
        differ=$((differ + 1))
        echo "DIFFERS: baseline record"
    fi
    for t in "$traces"/h200-torch/*.sqlite; do
        compare check --rules "$rules" --baseline "$work/old.yaml" --format json "$t"
    done
fi
echo "compare-json: $n outputs, $same identical, $differ differ"
[ $differ -eq 0 ]
