#!/usr/bin/env bash
# Ranks from the command line (issue #23): check's --rank, --rank-pattern,
# --world-size, --job and --host as the JSON result records them, refused
# before any trace is read when they cannot fit; merge of a directory and
# of a --files-from list; two results for one rank (exit 2) and a rank
# without a result (exit 3), each with its message; a merged result merged
# again with the missing rank's own result; the same result given twice
# (exit 2); a gap in the ranks without a world size (exit 3). On the bundled example: no
# ../shared needed.
set -uo pipefail
bin="$TG_BINARY"
example="$1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }

expect() {  # expect STATUS DESCRIPTION TEXT -- command...: exit status, and TEXT in stdout+stderr
    local want=$1 what=$2 text=$3
    shift 4
    "$@" >"$tmp/out" 2>"$tmp/err"
    local got=$?
    [ "$got" = "$want" ] || fail "$what: exit $got, expected $want ($(head -c 300 "$tmp/err"))"
    [ -z "$text" ] || grep -qF -- "$text" "$tmp/out" "$tmp/err" ||
        fail "$what: no '$text' in $(head -c 400 "$tmp/out" "$tmp/err")"
}

# check: the rank as the options tell it
expect 1 "--rank, --world-size, --job, --host" "" -- \
    "$bin" check --format json --rank 2 --world-size 3 --job 4242 --host node-7 "$example"
for member in '"rank": 2,' '"rank_from": "--rank",' '"world_size": 3,' '"job": "4242",' '"host": "node-7",' \
              '"period_p50_ns":' '"gpu_time_ns":' '"idle_ns":'; do
    grep -qF -- "$member" "$tmp/out" || fail "check --rank: no $member in the JSON"
done
expect 1 "no rank option: the rank is unknown" '"rank": null,' -- "$bin" check --format json "$example"
mkdir -p "$tmp/node0"
ln -s "$(cd "$(dirname "$example")" && pwd)/$(basename "$example")" "$tmp/node0/rank5.sqlite"
expect 1 "--rank-pattern" '"rank": 5,' -- "$bin" check --format json --rank-pattern 'rank([0-9]+)' "$tmp/node0/rank5.sqlite"
grep -qF '"rank_from": "--rank-pattern"' "$tmp/out" || fail "--rank-pattern: rank_from"

# options that cannot fit: exit 2 before any trace is read (the trace does not exist)
expect 2 "--rank with two traces" "--rank 1 names the rank of one trace, and 2 are given" -- \
    "$bin" check --rank 1 "$tmp/absent-a.sqlite" "$tmp/absent-b.sqlite"
expect 2 "--rank outside --world-size" "--rank 3 is not a rank of a world of 3 (ranks 0 to 2)" -- \
    "$bin" check --rank 3 --world-size 3 "$tmp/absent.sqlite"
expect 2 "--rank-pattern that misses" "--rank-pattern 'rank([0-9]+)' does not match this path" -- \
    "$bin" check --rank-pattern 'rank([0-9]+)' "$tmp/absent.sqlite"
expect 2 "--rank-pattern without a group" "has no group" -- "$bin" check --rank-pattern 'rank' "$tmp/rank1.sqlite"
expect 2 "--rank and --rank-pattern" "use one" -- "$bin" check --rank 1 --rank-pattern 'rank([0-9]+)' "$tmp/rank1.sqlite"
expect 2 "--rank -1" "--rank wants a rank" -- "$bin" check --rank -1 "$example"
expect 2 "--world-size 0" "--world-size wants the number of ranks" -- "$bin" check --world-size 0 "$example"

# three ranks, one result each, in a directory
mkdir -p "$tmp/results"
for r in 0 1 2; do
    "$bin" check --format json --rank $r --world-size 3 --job 4242 "$example" > "$tmp/results/rank$r.json" 2>/dev/null
done
echo "not a result" > "$tmp/results/notes.txt"
echo "{" > "$tmp/results/.tracegate-partial.json"   # an interrupted write: hidden, not read
expect 1 "merge of a directory: the example's verdict" "in 3 traces" -- "$bin" merge "$tmp/results"
expect 0 "merge of a directory, gate off" "" -- "$bin" merge --fail-on never "$tmp/results"
ls "$tmp/results"/rank*.json > "$tmp/list"
expect 1 "merge --files-from" "in 3 traces" -- "$bin" merge --files-from "$tmp/list"
# shellcheck disable=SC2016  # $1 and $2 are sh -c's
expect 1 "merge --files-from -" "in 3 traces" -- sh -c '"$1" merge --files-from - < "$2"' sh "$bin" "$tmp/list"
expect 2 "merge --files-from a missing list" "--files-from $tmp/nolist" -- "$bin" merge --files-from "$tmp/nolist"
mkdir -p "$tmp/empty"
expect 2 "merge of a directory without results" "holds no *.json result" -- "$bin" merge "$tmp/empty"

# two results for one rank: exit 2, both named
# (rank 1 checked again elsewhere: a copy of its result is refused as one)
"$bin" check --format json --rank 1 --world-size 3 --job 4242 --host node-9 "$example" > "$tmp/rank1-again.json" 2>/dev/null
expect 2 "a duplicate rank" "rank 1 of job 4242 has two results, $tmp/results/rank1.json" -- \
    "$bin" merge "$tmp/results" "$tmp/rank1-again.json"
grep -qF "and $tmp/rank1-again.json" "$tmp/err" || fail "duplicate rank: the second result is not named"
[ ! -s "$tmp/out" ] || fail "duplicate rank: a report was written"

# a rank without a result: exit 3, the rank named, every format says so
# (--fail-on never: the example's findings would fail the gate, and a
# gating finding wins over a missing rank, exit 1; docs/formats.md)
expect 3 "a missing rank" "no result for 1 of the 3 ranks of job 4242 (rank 2)" -- \
    "$bin" merge --fail-on never -o json="$tmp/merged.json" -o junit="$tmp/merged.xml" "$tmp/results/rank0.json" "$tmp/results/rank1.json"
grep -qF '"missing_ranks": [' "$tmp/merged.json" || fail "missing rank: no missing_ranks in the JSON"
grep -qF '"status": "error"' "$tmp/merged.json" || fail "missing rank: the merged status is not error"
expect 1 "a missing rank beside failing findings" "no result for 1 of the 3 ranks of job 4242 (rank 2)" -- \
    "$bin" merge "$tmp/results/rank0.json" "$tmp/results/rank1.json"
grep -qF 'trace-unreadable' "$tmp/merged.xml" || fail "missing rank: JUnit has no error for it"
expect 2 "--world-size against the results" "--world-size 4, but" -- "$bin" merge --world-size 4 "$tmp/results"
"$bin" check --format json "$example" > "$tmp/plain.json" 2>/dev/null
"$bin" check --format json --host node-2 "$example" > "$tmp/plain2.json" 2>/dev/null
expect 3 "--world-size without ranks in the results" "no result for 2 of the 2 ranks (ranks 0-1)" -- \
    "$bin" merge --fail-on never --world-size 2 "$tmp/plain.json" "$tmp/plain2.json"
grep -qF "2 results name no rank: give check --rank or --rank-pattern" "$tmp/out" ||
    fail "--world-size without ranks: the results without a rank are not named"

# results without a rank: the same file twice, under two names, or a copy
# of it, would count its traces twice; refused before any report
expect 2 "the same result twice" "the same file as $tmp/plain.json, given twice" -- \
    "$bin" merge --fail-on never -o json="$tmp/twice.json" "$tmp/plain.json" "$tmp/plain.json"
[ ! -e "$tmp/twice.json" ] || fail "the same result twice: a report was written"
ln -s "$tmp/plain.json" "$tmp/plain-link.json"
expect 2 "the same result through a link" "the same file as $tmp/plain.json, given twice" -- \
    "$bin" merge --fail-on never "$tmp/plain.json" "$tmp/plain-link.json"
cp "$tmp/plain.json" "$tmp/plain-copy.json"
expect 2 "a copy of a result" "$tmp/plain-copy.json: error: byte-identical to $tmp/plain.json" -- \
    "$bin" merge --fail-on never "$tmp/plain.json" "$tmp/plain-copy.json"
expect 0 "two results without a rank that differ" "in 2 traces" -- \
    "$bin" merge --fail-on never "$tmp/plain.json" "$tmp/plain2.json"

# ranks without a world size: a gap below the highest rank is a rank
# missing whatever the world size (exit 3); without a gap, a warning says
# that a missing last rank cannot be seen
mkdir -p "$tmp/gap"
for r in 0 1 3; do
    "$bin" check --format json --rank $r --job 77 "$example" > "$tmp/gap/rank$r.json" 2>/dev/null
done
expect 3 "ranks 0, 1, 3 and no world size" \
    "no result for 1 of the ranks 0 to 3 of job 77 (rank 2): their check did not run" -- \
    "$bin" merge --fail-on never -o json="$tmp/gap.json" "$tmp/gap"
grep -qF "the world size is unknown (no result records it and no --world-size is given), so ranks above 3 are not accounted for either" \
    "$tmp/out" || fail "rank gap: the unknown world size is not said"
[ "$(jq -c '[.traces[] | select(.missing_ranks) | .missing_ranks[]]' "$tmp/gap.json")" = "[2]" ] ||
    fail "rank gap: missing_ranks is not [2]"
expect 3 "ranks 0, 1, 3 and --world-size 5" "no result for 2 of the 5 ranks of job 77 (ranks 2, 4)" -- \
    "$bin" merge --fail-on never --world-size 5 "$tmp/gap"
rm "$tmp/gap/rank3.json"
expect 0 "ranks 0, 1 and no world size" \
    "warning: the results of job 77 name ranks 0 to 1 but not the world size" -- \
    "$bin" merge --fail-on never "$tmp/gap"
grep -qF "a missing rank above 1 cannot be seen" "$tmp/err" || fail "ranks without a world size: no warning"

# the merged result (which names rank 2 missing) merged with rank 2's own result: complete
expect 1 "merged result + the missing rank" "in 3 traces" -- "$bin" merge "$tmp/merged.json" "$tmp/results/rank2.json"
grep -qF "ranks without a result" "$tmp/out" && fail "re-merge: the missing-rank entry was read back"

# ranks of one steady iteration each: not compared, and every format says why
mkdir -p "$tmp/one"
for r in 0 1 2; do
    jq '.traces[0].workload.steady_iterations = 1 | .traces[0].workload.period_p50_ns = null |
        .traces[0].results |= map(if .rule == "iteration-time-regression" then .metric_value = null |
        .values.p50_period_ns = null else . end)' "$tmp/results/rank$r.json" > "$tmp/one/rank$r.json"
done
why="job 4242: ranks not compared: each of the 3 ranks has 1 steady iteration; the straggler comparison needs"
expect 1 "one iteration per rank: text" "note: $why" -- "$bin" merge "$tmp/one"
grep -qF "rank-straggler" "$tmp/out" && fail "one iteration per rank: a straggler result"
expect 1 "one iteration per rank: markdown" "> **Note:** $why" -- "$bin" merge -f markdown "$tmp/one"
expect 1 "one iteration per rank: JSON" "" -- "$bin" merge -f json "$tmp/one"
jq -e --arg w "$why" '(.ranks_not_compared | startswith($w)) and (.notes | any(startswith($w)))' "$tmp/out" \
    >/dev/null || fail "one iteration per rank: JSON ranks_not_compared and notes"
# compared ranks: nothing said
expect 1 "compared ranks" "" -- "$bin" merge -f json "$tmp/results"
jq -e 'has("ranks_not_compared") | not' "$tmp/out" >/dev/null || fail "compared ranks: ranks_not_compared"

if [ "$failures" = 0 ]; then echo "ranks: all checks passed"; exit 0; fi
echo "ranks: $failures checks failed"
exit 1
