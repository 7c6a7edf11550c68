#!/usr/bin/env bash
# Issue 31, classes 7-9: what merge must not take on trust.
#  7. results judged by different rule sets (another rule file, --set, a
#     suppression, another tracegate version, no rules_digest at all) are
#     refused (exit 2) naming the ranks on each side, unless
#     --allow-mixed-rules, which every format then states;
#  8. a world size is a claim: --world-size above the cap (2^20) is exit 2
#     naming it, a result claiming 10^8 ranks is not trusted, and missing
#     ranks are runs, so the output is bounded by the results;
#  9. an input that is not a readable regular file (a dangling link, a
#     FIFO, a directory named *.json) is exit 2, named or found in DIR; a
#     FIFO never blocks (timeout is only a safety net: the exit status is
#     what is asserted).
# On the bundled example: no ../shared needed.
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
    timeout 120 "$@" >"$tmp/out" 2>"$tmp/err"
    local got=$?
    [ "$got" = "$want" ] || fail "$what: exit $got, expected $want ($(head -c 300 "$tmp/err"))"
    [ -z "$text" ] || grep -qF -- "$text" "$tmp/out" "$tmp/err" ||
        fail "$what: no '$text' in $(head -c 600 "$tmp/out" "$tmp/err")"
}

check() {  # check RANK OUT [check options...]: one rank's result of 4
    local rank=$1 out=$2
    shift 2
    "$bin" check --format json --rank "$rank" --world-size 4 --job 31 "$@" "$example" > "$out" 2>/dev/null
    [ -s "$out" ] || fail "check --rank $rank $*: no result"
}

# ------------------------------------------------ 7. one rule set, or said
mkdir -p "$tmp/same"
for r in 0 1 2 3; do check $r "$tmp/same/rank$r.json"; done
digest=$(jq -r .rules_digest "$tmp/same/rank0.json")
case "$digest" in sha256:????????????????????????????????????????????????????????????????) ;;
    *) fail "rules_digest is not sha256: and 64 hex digits: $digest" ;; esac
[ "$(jq -r .rules_digest "$tmp/same"/*.json | sort -u | wc -l)" = 1 ] || fail "one command, several digests"
expect 1 "one rule set: the example's verdict" "in 4 traces" -- "$bin" merge "$tmp/same"
# the same files read from another path, in another order: the same digest
rules=$(cd "$(dirname "$0")/.." && pwd)/rules.d
files=("$rules"/*.yaml)
reversed=()
for ((i = ${#files[@]} - 1; i >= 0; i--)); do reversed+=(--rules "${files[i]}"); done
"$bin" check --format json "${reversed[@]}" "$example" > "$tmp/order.json" 2>/dev/null
"$bin" check --format json --rules "$rules" "$example" > "$tmp/dir.json" 2>/dev/null
[ "$(jq -r .rules_digest "$tmp/dir.json")" = "$digest" ] || fail "--rules rules.d: another digest than the built-ins"
[ "$(jq -r .rules_digest "$tmp/order.json")" = "$digest" ] || fail "rules.d's files in reverse order: another digest"

cat > "$tmp/one.yaml" <<'YAML'
version: 1
rules:
  - id: one
    title: One rule
    severity: error
    source: kernel
    where: duration > 0
    fail_when: count > 1000000000
    advice: none
YAML
cat > "$tmp/sup.yaml" <<'YAML'
version: 1
suppressions:
  - rule: sync-memcpy
    reason: issue 31 test
YAML
kinds=(rules set suppress version none)
for kind in "${kinds[@]}"; do
    d="$tmp/mix-$kind"
    mkdir -p "$d"
    cp "$tmp/same"/rank[012].json "$d/"
    case $kind in
    rules) check 3 "$d/rank3.json" --rules "$tmp/one.yaml" ;;
    set) check 3 "$d/rank3.json" --set sync-memcpy.small_htod=32KB ;;
    suppress) check 3 "$d/rank3.json" --suppress "$tmp/sup.yaml" ;;
    version) jq '.version = "0.0.1-older"' "$tmp/same/rank3.json" > "$d/rank3.json" ;;
    none) jq 'del(.rules_digest)' "$tmp/same/rank3.json" > "$d/rank3.json" ;;
    esac
    [ "$kind" = version ] || [ "$kind" = none ] ||
        [ "$(jq -r .rules_digest "$d/rank3.json")" != "$digest" ] || fail "$kind: the digest did not change"
    expect 2 "mixed ($kind): refused" "judged by 2 different rule sets" -- "$bin" merge -o json="$tmp/no.json" "$d"
    grep -qF "ranks 0-2 judged by rules sha256:" "$tmp/err" || fail "mixed ($kind): ranks 0-2 not named: $(cat "$tmp/err")"
    grep -qF "rank 3 judged by rules" "$tmp/err" || fail "mixed ($kind): rank 3 not named: $(cat "$tmp/err")"
    [ ! -e "$tmp/no.json" ] || fail "mixed ($kind): a report was written"
done

# allowed: every format says so
d="$tmp/mix-rules"
for f in text json markdown junit sarif github html; do
    "$bin" merge --allow-mixed-rules --fail-on never -o "$f=$tmp/allowed.$f" "$d" >/dev/null 2>"$tmp/err"
    st=$?
    [ "$st" = 0 ] || fail "--allow-mixed-rules ($f): exit $st ($(head -c 300 "$tmp/err"))"
    grep -qF "different rule sets were merged (--allow-mixed-rules)" "$tmp/allowed.$f" ||
        fail "--allow-mixed-rules: the $f report does not say so"
done
[ "$(jq -r '.rules_digest // "none"' "$tmp/allowed.json")" = none ] || fail "a mixed merge records a rules_digest"
"$bin" merge --fail-on never -o json="$tmp/merged.json" "$tmp/same" >/dev/null 2>/dev/null
[ "$(jq -r .rules_digest "$tmp/merged.json")" = "$digest" ] || fail "a merge of one rule set does not record it"

# ----------------------------------------------- 8. world size: a claim
expect 2 "--world-size 2*10^9" "--world-size 2000000000 is more than the 1048576 ranks merge accepts" -- \
    "$bin" merge --world-size 2000000000 "$tmp/same"
mkdir -p "$tmp/claim"
for r in 0 1; do
    jq '.traces[].world_size = 100000000' "$tmp/same/rank$r.json" > "$tmp/claim/rank$r.json"
done
expect 1 "a result claiming 10^8 ranks" "says the world of job 31 has 100000000 ranks, more than the 1048576" -- \
    "$bin" merge -o json="$tmp/claim.json" "$tmp/claim"
[ "$(jq '.traces | length' "$tmp/claim.json")" = 2 ] || fail "claimed 10^8: not 2 traces"
# the cap itself: two results (no world size of their own) of a world of
# 2^20, one entry of one run
for r in 0 1; do
    "$bin" check --format json --rank $r --job 31 "$example" > "$tmp/r$r.json" 2>/dev/null
done
expect 3 "--world-size 2^20, two results" "no result for 1048574 of the 1048576 ranks of job 31 (ranks 2-1048575)" -- \
    "$bin" merge --fail-on never --world-size 1048576 -o json="$tmp/cap.json" -o junit="$tmp/cap.xml" \
    -o markdown="$tmp/cap.md" -o html="$tmp/cap.html" "$tmp/r0.json" "$tmp/r1.json"
st=$(jq -c '[.traces[] | select(.missing_rank_runs) | .missing_rank_runs, .missing_rank_count, .missing_ranks]' "$tmp/cap.json")
[ "$st" = '[[[2,1048575]],1048574,null]' ] || fail "--world-size 2^20: missing_ranks $st"
for f in json xml md html; do   # bounded by the results: far below a byte per missing rank
    size=$(wc -c < "$tmp/cap.$f")
    [ "$size" -lt 1048574 ] || fail "--world-size 2^20: the $f report is $size bytes"
done

# --------------------------------------- 9. inputs that are not results
mkdir -p "$tmp/dangling" "$tmp/fifo" "$tmp/dir"
cp "$tmp/same"/rank*.json "$tmp/dangling/"
cp "$tmp/same"/rank*.json "$tmp/fifo/"
cp "$tmp/same"/rank*.json "$tmp/dir/"
ln -s "$tmp/nowhere.json" "$tmp/dangling/rank9.json"
mkfifo "$tmp/fifo/rank9.json"
mkdir "$tmp/dir/rank9.json"
expect 2 "a dangling link in DIR" "rank9.json: error: cannot read the result: a symbolic link to nothing" -- \
    "$bin" merge "$tmp/dangling"
expect 2 "a FIFO in DIR" "rank9.json: error: cannot read the result: a FIFO" -- "$bin" merge "$tmp/fifo"
expect 2 "a FIFO named" "rank9.json: error: cannot read the result: a FIFO" -- \
    "$bin" merge "$tmp/same/rank0.json" "$tmp/fifo/rank9.json"
expect 2 "a directory named *.json in DIR" "rank9.json: error: cannot read the result: a directory" -- \
    "$bin" merge "$tmp/dir"
expect 2 "a dangling link named" "cannot read the result: a symbolic link to nothing" -- \
    "$bin" merge "$tmp/dangling/rank9.json"
echo "$tmp/fifo/rank9.json" > "$tmp/list"
expect 2 "a FIFO in --files-from" "cannot read the result: a FIFO" -- "$bin" merge --files-from "$tmp/list"

[ "$failures" = 0 ] || { echo "$failures failures"; exit 1; }
echo "merge_hostile: all passed"
