#!/usr/bin/env bash
# merge's memory is bounded by the merged result, not by the number of
# inputs (issue #23): the bundled example's result with every built-in
# rule (evidence, reproduce SQL, causes: 74 KB, a real-sized result, as
# large as the corpus's 36-38 KiB or more) replicated to 100 and to 1,000
# ranks with distinct rank fields (bench/replicate-results.awk), each set
# merged once under bench/measure; the peak RSS of the 1,000 may exceed the
# 100's by no more than the merged result's own size (its JSON report).
# Before merge read one file at a time into a doubling array it grew by
# the square of the inputs (1,000 real results: 158 MiB; 3,000: 725 MiB).
# Not a timing test (bench/merge-scale times 10,000). Skipped under
# sanitizers, whose shadow memory and quarantine are not the program's.
set -uo pipefail
bin="$TG_BINARY"
example="$1"
measure="$2"
replicate="$3"
case "${TG_SANITIZE:-none}" in
    none|'') ;;
    *) echo "merge_memory: skipped: peak RSS is not measurable under -Db_sanitize=$TG_SANITIZE"; exit 77 ;;
esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin" check --fail-on never --format json --rank 0 --world-size 1 "$example" >"$tmp/template.json" ||
    { echo "merge_memory: check of the example failed"; exit 1; }
rss() {  # ranks -> peak RSS in KiB of merging them; the merged JSON in $tmp/merged$1.json
    local n=$1
    mkdir -p "$tmp/r$n"
    awk -v N="$n" -v OUT="$tmp/r$n" -f "$replicate" "$tmp/template.json" || return 1
    "$measure" -o "$tmp/m$n" -- "$bin" merge --quiet --fail-on never -o json="$tmp/merged$n.json" "$tmp/r$n" >/dev/null ||
        { echo "merge_memory: merge of $n ranks failed: $(cat "$tmp/m$n")"; return 1; }
    sed -n 's/.*maxrss_kb=\([0-9]*\).*/\1/p' "$tmp/m$n"
}
small=$(rss 100) || exit 1
big=$(rss 1000) || exit 1
merged=$(stat -c %s "$tmp/merged1000.json")
traces=$(grep -c '"rank_from": "--rank"' "$tmp/merged1000.json")
[ "$traces" = 1000 ] || { echo "merge_memory: the merged result holds $traces ranks, not 1000"; exit 1; }
growth=$(( (big - small) * 1024 ))
echo "merge_memory: results of $(( $(stat -c %s "$tmp/template.json") / 1024 )) KiB; peak RSS 100 ranks ${small} KiB," \
     "1,000 ranks ${big} KiB: +$((growth / 1024)) KiB for a merged result of $((merged / 1024)) KiB"
if [ "$growth" -gt "$merged" ]; then
    echo "FAILED: merge's memory grew by more than the merged result"
    exit 1
fi
echo "merge_memory: passed"
