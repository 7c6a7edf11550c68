#!/usr/bin/env bash
# Ranks within one export (docs/iterations.md, "Ranks within one export"):
# the bundled example (one process, device 0) made into a three-rank export
# by copying its process onto devices 1 and 2, the third copy's times
# stretched by 1.5 (a slow rank). Checks: one `ranks` entry per process;
# each number reproduced by its own SQL in the sqlite3 shell; the copy equal
# to the original and the stretched copy 1.5 times it; rank 0's period equal
# to the single-process trace's workload period (computed by another path);
# the straggler found, gating as merge gates the same result; a shared
# device or a single process not split.
set -u
example=$1
T=${TG_BINARY:-${TRACEGATE:-tracegate}}
command -v sqlite3 >/dev/null || { echo "SKIP: no sqlite3 shell"; exit 77; }
command -v jq >/dev/null || { echo "SKIP: no jq"; exit 77; }
tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# copy pid 1000 (its kernels, copies, calls and ranges; the example has no
# memsets) as pid $2 on device $3, times stretched by $4 from the first start
copy() {
    local st='(SELECT s FROM t0) + CAST((start - (SELECT s FROM t0)) * '"$4"' AS INTEGER)'
    local en='(SELECT s FROM t0) + CAST((end - (SELECT s FROM t0)) * '"$4"' AS INTEGER)'
    local tid="globalTid - (1000 << 24) + ($2 << 24) - 1000 + $2"
    sqlite3 "$1" "
      CREATE TEMP TABLE t0 AS SELECT min(start) AS s FROM CUPTI_ACTIVITY_KIND_RUNTIME;
      CREATE TEMP TABLE k AS SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE ((globalPid >> 24) & 16777215) = 1000;
      UPDATE k SET start = $st, end = $en, deviceId = $3, globalPid = globalPid - (1000 << 24) + ($2 << 24);
      INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT * FROM k;
      CREATE TEMP TABLE c AS SELECT * FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE ((globalPid >> 24) & 16777215) = 1000;
      UPDATE c SET start = $st, end = $en, deviceId = $3, globalPid = globalPid - (1000 << 24) + ($2 << 24);
      INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY SELECT * FROM c;
      CREATE TEMP TABLE r AS SELECT * FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE ((globalTid >> 24) & 16777215) = 1000;
      UPDATE r SET start = $st, end = $en, globalTid = $tid;
      INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME SELECT * FROM r;
      CREATE TEMP TABLE n AS SELECT * FROM NVTX_EVENTS WHERE ((globalTid >> 24) & 16777215) = 1000;
      UPDATE n SET start = $st, end = CASE WHEN end IS NULL THEN NULL ELSE $en END, globalTid = $tid;
      INSERT INTO NVTX_EVENTS SELECT * FROM n;" || bad "could not build the fixture"
}

cp "$example" "$tmp/three.sqlite"
copy "$tmp/three.sqlite" 2000 1 1
copy "$tmp/three.sqlite" 3000 2 1.5
"$T" check -f json "$tmp/three.sqlite" > "$tmp/three.json"; st=$?
"$T" check -f json "$example" > "$tmp/one.json"

n=$(jq '.traces[0].ranks | length' "$tmp/three.json")
[ "$n" = 3 ] || bad "three processes on three devices gave $n ranks"
[ "$(jq -c '[.traces[0].ranks[] | [.rank, .pid, .device]]' "$tmp/three.json")" = '[[0,1000,0],[1,2000,1],[2,3000,2]]' ] ||
    bad "ranks, pids and devices: $(jq -c '[.traces[0].ranks[] | [.rank, .pid, .device]]' "$tmp/three.json")"
[ "$(jq '.traces[0] | has("ranks")' "$tmp/one.json")" = false ] || bad "a single process was split into ranks"

# every number is what its query gives in the sqlite3 shell
for i in 0 1 2; do
    for k in period_p50_ns:period_p50_query gpu_time_p50_ns:gpu_time_p50_query idle_frac:idle_frac_query; do
        v=$(jq -r ".traces[0].ranks[$i].${k%%:*}" "$tmp/three.json")
        q=$(jq -r ".traces[0].ranks[$i].${k##*:}" "$tmp/three.json")
        got=$(sqlite3 -readonly "$tmp/three.sqlite" "$q" | tail -1)
        awk -v a="$v" -v b="$got" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b != "" && d <= 1e-9 * (a < 0 ? -a : a) + 1e-9) }' ||
            bad "rank $i ${k%%:*}: JSON says $v, its query gives '$got'"
    done
done
p0=$(jq '.traces[0].ranks[0].period_p50_ns' "$tmp/three.json")
p1=$(jq '.traces[0].ranks[1].period_p50_ns' "$tmp/three.json")
p2=$(jq '.traces[0].ranks[2].period_p50_ns' "$tmp/three.json")
g0=$(jq '.traces[0].ranks[0].gpu_time_p50_ns' "$tmp/three.json")
g2=$(jq '.traces[0].ranks[2].gpu_time_p50_ns' "$tmp/three.json")
w=$(jq '.traces[0].workload.period_p50_ns' "$tmp/one.json")
g1=$(jq '.traces[0].ranks[1].gpu_time_p50_ns' "$tmp/three.json")
[ "$p0" = "$p1" ] || bad "the exact copy's period $p1 differs from the original's $p0"
[ "$g0" = "$g1" ] || bad "the exact copy's GPU time $g1 differs from the original's $g0"
[ "$p0" = "$w" ] || bad "rank 0's period $p0 differs from the single-process workload period $w"
awk -v a="$p0" -v b="$p2" 'BEGIN { exit !(b > 1.49 * a && b < 1.51 * a) }' || bad "the stretched rank's period $p2 is not 1.5 x $p0"
awk -v a="$g0" -v b="$g2" 'BEGIN { exit !(b > 1.49 * a && b < 1.51 * a) }' || bad "the stretched rank's GPU time $g2 is not 1.5 x $g0"

# GPU time per steady iteration derived here from the export's own tables,
# not from tracegate's views: per process, the example's 30 "iteration"
# ranges (the first 5 warmup), each op joined to its launching call (same
# process, same correlation id) and counted in the range the call starts in;
# the p50 over the 25 steady ones (the 13th)
own=$(sqlite3 -readonly "$tmp/three.sqlite" "
  WITH it AS (SELECT (globalTid >> 24) & 16777215 AS pid, start, end,
                     row_number() OVER (PARTITION BY (globalTid >> 24) & 16777215 ORDER BY start) - 1 AS idx
              FROM NVTX_EVENTS WHERE eventType = 59 AND text = 'iteration'),
       ops AS (SELECT (globalPid >> 24) & 16777215 AS pid, correlationId, end - start AS d FROM CUPTI_ACTIVITY_KIND_KERNEL
               UNION ALL SELECT (globalPid >> 24) & 16777215, correlationId, end - start FROM CUPTI_ACTIVITY_KIND_MEMCPY),
       calls AS (SELECT (globalTid >> 24) & 16777215 AS pid, correlationId, start FROM CUPTI_ACTIVITY_KIND_RUNTIME),
       g AS (SELECT it.pid, it.idx, coalesce(sum(ops.d), 0) AS gt FROM it
             LEFT JOIN calls c ON c.pid = it.pid AND c.start >= it.start AND c.start < it.end
             LEFT JOIN ops ON ops.pid = c.pid AND ops.correlationId = c.correlationId GROUP BY it.pid, it.idx),
       s AS (SELECT pid, gt, row_number() OVER (PARTITION BY pid ORDER BY gt) AS k FROM g WHERE idx >= 5)
  SELECT group_concat(gt, ' ') FROM (SELECT gt FROM s WHERE k = 13 ORDER BY pid);")
mine=$(jq -r '[.traces[0].ranks[].gpu_time_p50_ns] | map(tostring) | join(" ")' "$tmp/three.json")
[ "$own" = "$mine" ] || bad "GPU time p50 per rank: the export's tables give $own, check says $mine"

# the straggler, reported and gated as merge does on the same result
v=$(jq -r '[.traces[0].results[] | select(.rule == "rank-straggler")][0] | "\(.status) \(.message)"' "$tmp/three.json")
case "$v" in "fail rank 2 (pid 3000, device 2): p50 iteration period"*) ;; *) bad "in-export straggler: $v" ;; esac
"$T" merge -f json "$tmp/three.json" > "$tmp/merged.json"; mst=$?
[ "$st" = "$mst" ] || bad "check exits $st, merge of its result $mst"
[ "$(jq -r '[.traces[0].results[] | select(.rule == "rank-straggler")][0].status' "$tmp/merged.json")" = fail ] ||
    bad "merge did not see the slow rank inside the result"

# two processes on one device: nothing says they are ranks, no split
cp "$example" "$tmp/shared.sqlite"
copy "$tmp/shared.sqlite" 2000 0 1
"$T" check -f json "$tmp/shared.sqlite" > "$tmp/shared.json"
[ "$(jq '.traces[0] | has("ranks")' "$tmp/shared.json")" = false ] || bad "processes sharing a device were split"
# gen_kineto OUT SLOW: two processes in one trace, pid 100 on device 0 and
# pid 200 on device 1; pid 200's steps SLOW times as long
gen_kineto() {
    local out=$1 slow=$2 c=1000 first=1
    {
    echo '{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "GPU X"}, {"id": 1, "name": "GPU X"}],'
    echo ' "traceEvents": ['
    for p in 100 200; do
        local dev=$(( p == 100 ? 0 : 1 )) f=$(( p == 100 ? 1 : slow ))
        for k in $(seq 0 11); do
            local s=$((1000 + k * 1000 * f)) kd=$((400 * f))
            c=$((c + 1))
            [ $first = 1 ] || echo ','
            first=0
            echo "  {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#$k\", \"pid\": $p, \"tid\": $p, \"ts\": $s, \"dur\": $((900 * f))},"
            echo "  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": $p, \"tid\": $p, \"ts\": $((s + 10)), \"dur\": 5, \"args\": {\"correlation\": $c}},"
            echo "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm\", \"pid\": $dev, \"tid\": 7, \"ts\": $((s + 20)), \"dur\": $kd, \"args\": {\"device\": $dev, \"stream\": 7, \"correlation\": $c}}"
        done
    done
    echo ']}'
    } > "$out"
}

# Kineto: the same split, numbers known from the generator (steps 1 ms
# apart with a 400 us kernel; the slow process twice both), each jq query
# run by jq
gen_kineto "$tmp/k.json" 2
"$T" check -f json "$tmp/k.json" > "$tmp/kr.json"
[ "$(jq -c '[.traces[0].ranks[] | [.rank, .pid, .device, .period_p50_ns, .gpu_time_p50_ns]]' "$tmp/kr.json")" = \
  '[[0,100,0,1000000,400000],[1,200,1,2000000,800000]]' ] ||
    bad "Kineto ranks: $(jq -c '[.traces[0].ranks[]? | [.rank, .pid, .device, .period_p50_ns, .gpu_time_p50_ns]]' "$tmp/kr.json")"
for i in 0 1; do
    for k in period_p50_ns:period_p50_query gpu_time_p50_ns:gpu_time_p50_query idle_frac:idle_frac_query; do
        v=$(jq -r ".traces[0].ranks[$i].${k%%:*}" "$tmp/kr.json")
        jq -r ".traces[0].ranks[$i].${k##*:}" "$tmp/kr.json" > "$tmp/p.jq"
        got=$(jq -f "$tmp/p.jq" "$tmp/k.json")
        awk -v a="$v" -v b="$got" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b != "" && d <= 1e-9 * (a < 0 ? -a : a) + 1e-9) }' ||
            bad "Kineto rank $i ${k%%:*}: JSON says $v, its jq program gives '$got'"
    done
done
case "$(jq -r '[.traces[0].results[] | select(.rule == "rank-straggler")][0] | "\(.status) \(.message)"' "$tmp/kr.json")" in
    "fail rank 1 (pid 200, device 1): p50 iteration period 2 ms is +33.3% from the median rank"*) ;;
    *) bad "Kineto straggler: $(jq -r '[.traces[0].results[] | select(.rule == "rank-straggler")][0].message' "$tmp/kr.json")" ;;
esac
gen_kineto "$tmp/even.json" 1
"$T" check -f json "$tmp/even.json" > "$tmp/er.json"
[ "$(jq -r '[.traces[0].results[] | select(.rule == "rank-straggler")][0].status' "$tmp/er.json")" = pass ] ||
    bad "two equal ranks: the straggler rule did not pass"

[ $fail = 0 ] && echo "ok: ranks within one export"
exit $fail
