#!/usr/bin/env bash
# The history commands on the shared series (docs/history.md, issue 30):
# nights of unchanged code give no change point and pass; runs 1% and 2%
# slower in GPU time, and 10% slower steps on the realistic workload, give
# exactly one change point, at the first slow run; check --history judges
# against the runs before it (inconclusive, with the number of runs needed,
# until there are 3), fails the slow runs, and passes them once the change
# is accepted; bad --db inputs get one sentence and write nothing.
#
# The slow runs are copies of the real exports with every timestamp
# stretched around the first one (sqlite3 on a copy in the test's
# directory; the shared traces are only read), so every op, gap and step
# takes that much longer: GPU time and step period both grow by the factor.
set -uo pipefail
TG=${TG_BINARY:?run through meson test}
S=${TG_SHARED_TRACES:-}
if [ -z "$S" ] || [ ! -d "$S/h200-nsys" ]; then
    echo "skipped: the shared traces are absent (TG_SHARED_TRACES=${S:-unset})"
    exit 77
fi
command -v sqlite3 >/dev/null || { echo "skipped: sqlite3 (Debian sqlite3) is not installed"; exit 77; }
command -v jq >/dev/null || { echo "skipped: jq is not installed"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

# stretch IN OUT FACTOR: a copy of export IN whose timestamps are stretched
# by FACTOR around its earliest start
stretch() {
    cp "$1" "$2" && chmod u+w "$2"
    local tables t0 sql=""
    tables=$(sqlite3 "$2" "SELECT m.name FROM sqlite_master m WHERE m.type = 'table' AND
        EXISTS (SELECT 1 FROM pragma_table_info(m.name) WHERE name = 'start') AND
        EXISTS (SELECT 1 FROM pragma_table_info(m.name) WHERE name = 'end')")
    t0=$(for t in $tables; do sqlite3 "$2" "SELECT MIN(start) FROM \"$t\" WHERE start IS NOT NULL"; done |
        grep -E '^[0-9]+$' | sort -n | head -1)
    for t in $tables; do
        sql+="UPDATE \"$t\" SET start = $t0 + CAST(ROUND((start - $t0) * $3) AS INTEGER),
              end = $t0 + CAST(ROUND((end - $t0) * $3) AS INTEGER) WHERE start IS NOT NULL AND end IS NOT NULL;"
    done
    sqlite3 "$2" "BEGIN; $sql COMMIT;"
}

# day N as an ISO time: the nights of a series
day() { printf '2026-11-%02dT03:00:00Z' "$1"; }

cps() { "$TG" history show --db "$1" --format json | jq -r --arg r "$2" \
    '[.change_points[] | select(.rule == $r)] | map(.label) | join(",")'; }

D=$S/h200-nsys
# ---------------------------------------------------------------- drv_train
for f in 1.01 1.02; do
    for k in 1 2 3; do stretch "$D/drv_train_run$k.sqlite" "$T/slow$f-$k.sqlite" "$f"; done
done
for pct in 1.01 1.02; do
    db=$T/drv-$pct.db
    # 20 nights of unchanged code (the three real runs in turn)
    for n in $(seq 1 20); do
        k=$(( (n - 1) % 3 + 1 ))
        "$TG" history add --db "$db" --label "n$n" --time "$(day "$n")" "$D/drv_train_run$k.sqlite" >/dev/null ||
            bad "history add n$n ($pct)"
    done
    [ "$(cps "$db" gpu-time-regression)" = "" ] && ok "20 unchanged drv_train nights: no change point" ||
        bad "20 unchanged nights ($pct) gave change points: $(cps "$db" gpu-time-regression)"
    # a night of unchanged code passes against them
    "$TG" check --history "$db" --no-record "$D/drv_train_run2.sqlite" >"$T/out" 2>&1
    rc=$?
    [ $rc = 0 ] && grep -Eq "judged against 10 runs of workload w[0-9a-f]{12} in .*: n11 .. n20" "$T/out" &&
        ok "unchanged run passes against the last 10 nights" || { bad "unchanged run: exit $rc"; cat "$T/out"; }
    # then 10 nights of slower code, each judged as it comes
    for n in $(seq 21 30); do
        k=$(( (n - 1) % 3 + 1 ))
        "$TG" check --history "$db" --label "n$n" --time "$(day "$n")" --format json "$T/slow$pct-$k.sqlite" \
            >"$T/c$n.json" 2>"$T/c$n.err"
        echo $? >"$T/c$n.rc"
    done
    got=$(cps "$db" gpu-time-regression)
    [ "$got" = "n21" ] && ok "+$pct GPU time: one change point, at n21" || bad "+$pct: change points '$got', not n21"
    v=$(jq -r '.traces[0].results[] | select(.rule == "gpu-time-regression") | .status' "$T/c21.json")
    if [ "$pct" = 1.02 ]; then
        # beyond the 2% gate only just: a regression or at least a notice
        { [ "$v" = fail ] && [ "$(cat "$T/c21.rc")" = 1 ]; } && ok "+2% GPU time fails against the history" ||
            bad "+2%: gpu-time-regression $v, exit $(cat "$T/c21.rc")"
    else
        m=$(jq -r '.traces[0].results[] | select(.rule == "gpu-time-regression") | .message' "$T/c21.json")
        case $m in *"significant, below the 2% gate"*) ok "+1% GPU time: a notice, below the gate" ;;
        *) bad "+1%: no notice: $v: $m" ;; esac
    fi
done

# the JSON's change point says what the issue asks for
db=$T/drv-1.02.db
"$TG" history show --db "$db" --format json >"$T/show.json"
jq -e '.change_points[0] | has("rule") and has("label") and has("before") and has("after") and has("change")
       and has("p") and has("contributors")' "$T/show.json" >/dev/null &&
    ok "change point fields" || bad "change point lacks fields: $(jq -c '.change_points[0]' "$T/show.json")"
jq -e '.change_points[0] | .after > .before and .p <= 0.001 and (.contributors | length) > 0' "$T/show.json" \
    >/dev/null && ok "change point: after > before, p <= 0.001, contributors named" ||
    bad "change point values: $(jq -c '.change_points[0]' "$T/show.json")"

# every number show gives comes with the SQL that gives it from the history
jq -r '.workloads[0].series[] | select(.rule == "gpu-time-regression") | .query' "$T/show.json" >"$T/q.sql"
sqlite3 -separator ' ' "$db" <"$T/q.sql" | awk '{print $1, $3 + 0}' >"$T/q.out"
jq -r '.workloads[0].series[] | select(.rule == "gpu-time-regression") | .runs[] | "\(.label) \(.value)"' \
    "$T/show.json" | awk '{print $1, $2 + 0}' >"$T/j.out"
[ -s "$T/q.out" ] && cmp -s "$T/q.out" "$T/j.out" && ok "the series' query gives its values ($(wc -l <"$T/q.out") runs)" ||
    { bad "the series' query"; diff "$T/q.out" "$T/j.out" | head -5; }

# a JSON result of check is a run too, regressed as it was judged
db2=$T/from-json.db
"$TG" history add --db "$db2" --label j21 "$T/c21.json" >/dev/null || bad "history add RESULT.json"
"$TG" history show --db "$db2" --format json >"$T/j.json"
want=$(jq '.traces[0].results[] | select(.rule == "gpu-time-regression") | .baseline.current' "$T/c21.json")
got=$(jq '.workloads[0].series[] | select(.rule == "gpu-time-regression") | .runs[0].value' "$T/j.json")
[ "$want" = "$got" ] && [ "$want" != null ] && ok "history add RESULT.json keeps its value ($got)" ||
    bad "RESULT.json: value $got, the result's $want"
sqlite3 "$db2" "SELECT regressed FROM tg_runs" | grep -qx 1 && ok "a result that regressed is kept as regressed" ||
    bad "RESULT.json's regression not kept"

# the history keeps each rule's verdict as judged against it
v=$(jq -r '.workloads[0].series[] | select(.rule == "gpu-time-regression") | .runs[] | select(.label == "n21") |
    .verdict' "$T/show.json")
[ "$v" = fail ] && ok "n21's verdict in the history: fail" || bad "n21's stored verdict: $v"

# a slow night after n30 fails until the change is accepted; then passes
"$TG" check --history "$db" --no-record "$T/slow1.02-1.sqlite" >"$T/out" 2>&1
[ $? = 1 ] && ok "slow run fails while the change is not accepted" || { bad "slow run did not fail"; cat "$T/out"; }
"$TG" history accept --db "$db" --label n21 --reason "new saxpy <tile> & co" >/dev/null ||
    bad "history accept"
"$TG" check --history "$db" --no-record "$T/slow1.02-1.sqlite" >"$T/out" 2>&1
[ $? = 0 ] && ok "accepted: the slow run is the new normal" || { bad "slow run after accept"; cat "$T/out"; }
# (into a file: grep -q would stop reading, and show's write error fail the pipe)
"$TG" history show --db "$db" >"$T/show.txt"
grep -q 'accepted (new saxpy <tile> & co)' "$T/show.txt" && ok "show says the accepted reason" ||
    bad "show lacks the reason"

# fewer than 3 usable runs: inconclusive, saying how many more
db=$T/young.db
"$TG" history add --db "$db" --label a "$D/drv_train_run1.sqlite" >/dev/null
"$TG" check --history "$db" --no-record --format json "$D/drv_train_run2.sqlite" >"$T/young.json" 2>/dev/null
jq -e '.traces[0].results[] | select(.rule == "gpu-time-regression") |
       .status == "inconclusive" and (.message | test("2 more runs needed"))' "$T/young.json" >/dev/null &&
    ok "1 run: inconclusive, 2 more runs needed" ||
    bad "young history: $(jq -c '.traces[0].results[] | select(.rule == "gpu-time-regression")' "$T/young.json")"

# a label twice: refused unless --replace
"$TG" history add --db "$db" --label a "$D/drv_train_run2.sqlite" >/dev/null 2>"$T/err"
[ $? = 2 ] && grep -q "already holds a run labelled a" "$T/err" && ok "label twice refused" ||
    { bad "label twice"; cat "$T/err"; }
"$TG" history add --db "$db" --label a --replace "$D/drv_train_run2.sqlite" >/dev/null && ok "--replace" ||
    bad "--replace"

# another workload is kept apart
"$TG" history add --db "$db" --label r1 "$S/h200-torch/realistic_baseline_run1.sqlite" >/dev/null
n=$("$TG" history show --db "$db" --format json | jq '.workloads | length')
[ "$n" = 2 ] && ok "two workloads, kept apart" || bad "workloads: $n"

# the trend page
"$TG" history report --db "$T/drv-1.01.db" -o "$T/trend.html" && grep -q "<svg" "$T/trend.html" &&
    ! grep -Eq 'https?://' "$T/trend.html" && ok "history report: a self-contained page" || bad "history report"

# --------------------------------------------------- the realistic workload
R=$S/h200-torch
for k in 1 2; do stretch "$R/realistic_baseline_run$k.sqlite" "$T/rslow$k.sqlite" 1.10; done
db=$T/real.db
for n in $(seq 1 12); do
    k=$(( (n - 1) % 2 + 1 ))
    "$TG" history add --db "$db" --label "r$n" --time "$(day "$n")" "$R/realistic_baseline_run$k.sqlite" >/dev/null
done
for n in $(seq 13 18); do
    k=$(( (n - 1) % 2 + 1 ))
    "$TG" history add --db "$db" --label "r$n" --time "$(day "$n")" "$T/rslow$k.sqlite" >/dev/null
done
got=$(cps "$db" iteration-time-regression)
[ "$got" = r13 ] && ok "+10% step period on the realistic workload: one change point, at r13" ||
    bad "realistic +10%: change points '$got'"
# runs added without judging still bound the baseline: the slow ones are
# after an unaccepted change point, so a slow run fails
"$TG" check --history "$db" --no-record "$T/rslow1.sqlite" >"$T/out" 2>&1
[ $? = 1 ] && ok "a slow run fails against the runs before the change" || { bad "rslow"; cat "$T/out"; }

# ------------------------------------------------------- the Kineto series
K=$S/kineto/h200-series
if [ -d "$K" ]; then
    db=$T/kineto.db
    for n in $(seq 1 20); do
        k=$(( (n - 1) % 3 + 1 ))
        "$TG" history add --db "$db" --label "k$n" --time "$(day "$n")" "$K/realistic_baseline_run$k.json.gz" \
            >/dev/null || bad "kineto add k$n"
    done
    got="$(cps "$db" iteration-time-regression)$(cps "$db" gpu-time-regression)"
    [ "$got" = "" ] && ok "20 Kineto nights (±15% wall time): no change point" || bad "kineto: change points $got"
    "$TG" check --history "$db" --no-record "$K/realistic_baseline_slow_run1.json.gz" >"$T/out" 2>&1
    [ $? = 1 ] && grep -q "gpu-time-regression" "$T/out" && ok "Kineto slow run fails gpu-time-regression" ||
        { bad "kineto slow"; cat "$T/out"; }
fi

# ------------------------------------------------- ten runners at once
db=$T/ten.db
pids=()
for n in $(seq 1 10); do
    "$TG" history add --db "$db" --label "p$n" --time "$(day "$n")" "$D/drv_train_run$(( (n - 1) % 3 + 1 )).sqlite" \
        >"$T/p$n.out" 2>&1 &
    pids+=($!)
done
f=0
for p in "${pids[@]}"; do wait "$p" || f=1; done
n=$("$TG" history show --db "$db" --format json | jq '.runs')
[ $f = 0 ] && [ "$n" = 10 ] && ok "ten history add at once on one SQLite file: 10 runs" ||
    { bad "ten at once: $n runs"; cat "$T"/p*.out; }

# ------------------------------------------------------------ bad --db
echo "not a database, just text" >"$T/random.db"
mkdir "$T/dir.db"
cp "$D/drv_train_run1.sqlite" "$T/trace.db"
for f in random.db dir.db trace.db; do
    before=$(cd "$T" && find "$f" -type f -exec sha256sum {} + | sort)
    "$TG" history add --db "$T/$f" "$D/drv_train_run1.sqlite" >/dev/null 2>"$T/err"
    rc=$?
    after=$(cd "$T" && find "$f" -type f -exec sha256sum {} + | sort)
    lines=$(wc -l <"$T/err")
    { [ $rc = 2 ] || [ $rc = 3 ]; } && [ "$lines" -ge 1 ] && grep -q "$f" "$T/err" && [ "$before" = "$after" ] &&
        ok "--db $f: exit $rc, $(head -1 "$T/err")" || { bad "--db $f: exit $rc"; cat "$T/err"; }
    "$TG" check --history "$T/$f" "$D/drv_train_run1.sqlite" >/dev/null 2>"$T/err"
    rc=$?
    { [ $rc = 2 ] || [ $rc = 3 ]; } && [ "$before" = "$(cd "$T" && find "$f" -type f -exec sha256sum {} + | sort)" ] &&
        ok "check --history $f: exit $rc" || bad "check --history $f: exit $rc"
done
"$TG" history show --db "$T/absent.db" >/dev/null 2>"$T/err"
[ $? = 2 ] && [ ! -e "$T/absent.db" ] && ok "show of an absent history: exit 2, nothing made" ||
    bad "absent history"
"$TG" check --history "$T/x.db" --baseline "$T/y.yaml" "$D/drv_train_run1.sqlite" >/dev/null 2>&1
[ $? = 2 ] && ok "--history with --baseline refused" || bad "--history with --baseline"
"$TG" check --label x "$D/drv_train_run1.sqlite" >/dev/null 2>&1
[ $? = 2 ] && ok "--label without --history refused" || bad "--label without --history"
"$TG" history add --db "$T/t.db" --time "yesterday" "$D/drv_train_run1.sqlite" >/dev/null 2>&1
[ $? = 2 ] && [ ! -e "$T/t.db" ] && ok "bad --time refused before anything is made" || bad "bad --time"

echo "$fails failure(s)"
[ $fails = 0 ]
