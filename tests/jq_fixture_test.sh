#!/usr/bin/env bash
# docs/kineto.md, "Evidence and reproduce": on a small Kineto trace built
# here with the edge cases of the reader and the model (fractional
# timestamps, a clamped negative dur, a tid "stream 7", a driver call with
# a version suffix, a kernel no call launched, an NCCL kernel overlapping
# compute, an idle stretch, warmup iterations, nested ranges, calls with
# correlation 0), a rule on every source reading every kind of field and
# aggregate, POSIX classes in `matches`: each finding's jq program, run by
# jq, gives every value of the finding (within 1e-9) and one row per
# evidence entry. Skips (77) without jq.
set -euo pipefail
command -v jq >/dev/null || { echo "SKIP: no jq"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
{
echo '{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "GPU X", "numSms": 10, "totalGlobalMem": 1000}],'
echo ' "traceEvents": ['
echo '  {"ph": "M", "name": "process_name", "pid": 100, "tid": 0, "args": {"name": "python"}},'
c=1000
for k in $(seq 0 11); do
    s=$((1000 + k * 1000)); idle=$(( k == 8 ? 400 : 0 ))
    c=$((c + 1)); c2=$((c + 1000)); c3=$((c + 2000)); c4=$((c + 3000))
    echo "  {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"iteration\", \"pid\": 100, \"tid\": 100, \"ts\": $s.5, \"dur\": 990.25},"
    echo "  {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"forward\", \"pid\": 100, \"tid\": 100, \"ts\": $((s + 1)).5, \"dur\": 300},"
    echo "  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 100, \"tid\": 100, \"ts\": $((s + 10)).125, \"dur\": 5.5, \"args\": {\"correlation\": $c}},"
    echo "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"void gemm<128>(float*)\", \"pid\": 0, \"tid\": \"stream 7\", \"ts\": $((s + 12 + idle)).375, \"dur\": $((3 + k % 4)).5, \"args\": {\"device\": 0, \"correlation\": $c, \"grid\": [2, 1, 1]}},"
    echo "  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 100, \"tid\": 100, \"ts\": $((s + 20)), \"dur\": 4, \"args\": {\"correlation\": $c2}},"
    echo "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)\", \"pid\": 0, \"tid\": 9, \"ts\": $((s + 30 + idle)).001, \"dur\": 50, \"args\": {\"device\": 0, \"stream\": 9, \"correlation\": $c2}},"
    echo "  {\"ph\": \"X\", \"cat\": \"cuda_driver\", \"name\": \"cuLaunchKernel_v2\", \"pid\": 100, \"tid\": 101, \"ts\": $((s + 21)), \"dur\": 2, \"args\": {\"correlation\": $c3}},"
    echo "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"elementwise\", \"pid\": 0, \"tid\": 7, \"ts\": $((s + 60 + idle)), \"dur\": $(( k == 3 ? -1 : 20 )), \"args\": {\"device\": 0, \"stream\": 7, \"correlation\": $c3}},"
    echo "  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaMemcpyAsync\", \"pid\": 100, \"tid\": 100, \"ts\": $((s + 100)), \"dur\": 30, \"args\": {\"correlation\": $c4}},"
    echo "  {\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy HtoD (Pageable -> Device)\", \"pid\": 0, \"tid\": 7, \"ts\": $((s + 110 + idle)).5, \"dur\": 40.25, \"args\": {\"device\": 0, \"stream\": 7, \"correlation\": $c4, \"bytes\": $((1048576 * (1 + k % 2)))}},"
    echo "  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaStreamSynchronize\", \"pid\": 100, \"tid\": 100, \"ts\": $((s + 200)), \"dur\": $((10 + k)), \"args\": {\"correlation\": $((c + 4000))}},"
    echo "  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaMalloc\", \"pid\": 100, \"tid\": 100, \"ts\": $((s + 300)), \"dur\": 7, \"args\": {\"correlation\": 0}},"
    echo "  {\"ph\": \"X\", \"cat\": \"gpu_memset\", \"name\": \"Memset (Device)\", \"pid\": 0, \"tid\": 7, \"ts\": $((s + 400 + idle)), \"dur\": 2, \"args\": {\"device\": 0, \"stream\": 7, \"bytes\": 64}},"
    echo "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 100, \"tid\": 100, \"ts\": $((s + 5)), \"dur\": 50},"
done
echo '  {"ph": "X", "cat": "kernel", "name": "orphan_kernel", "pid": 0, "tid": 7, "ts": 13500, "args": {"device": 0, "stream": 7}}'
echo ' ]}'
} > "$tmp/trace.json"
cat > "$tmp/rules.yaml" <<'EOF'
version: 1
rules:
  - {id: k1, title: k1, severity: info, source: kernel, where: "steady", fail_when: count >= 0,
     message: "{count} {sum(duration)} {p50(queue)} {max(queue)} {mean(duration)} {stddev(duration)} {count(nccl)} {n(iteration)} {p90(duration)} {ratio(nccl)} {min(start)} {max(launch_end)}"}
  - {id: k2, title: k2, severity: info, source: kernel, where: "api == null or not (short_name startswith \"gemm\")", fail_when: count >= 0,
     message: "{count} {sum(grid_x)} {max(stream)} {count(nccl and duration > 40us)}"}
  - {id: m1, title: m1, severity: info, source: memcpy, where: "kind == \"HtoD\" and src_kind == \"pageable\" and dst_kind in [\"device\"]", fail_when: count >= 0,
     message: "{count} {sum(bytes)} {max(bytes) / min(bytes)} {sum(duration) + 1us} {cv(bytes)}"}
  - {id: s1, title: s1, severity: info, source: memset, where: "mem_kind == \"device\"", fail_when: count >= 0, message: "{count} {sum(bytes)}"}
  - {id: a1, title: a1, severity: info, source: api, where: "name matches \"^cuda[[:alpha:]]+Synchronize$\" and blocking", fail_when: count >= 0,
     message: "{count} {sum(duration)} {p50(duration)} {trace.steady_iterations} {trace.duration}"}
  - {id: a2, title: a2, severity: info, source: api, where: "raw_name matches \"Launch\\\\w+_v[[:digit:]]\" and steady and driver", fail_when: count >= 0,
     message: "{count} {sum(duration)} {max(tid)}"}
  - {id: i1, title: i1, severity: info, source: iteration, where: "steady", fail_when: count >= 0,
     message: "{cv(period)} {p90(period)} {sum(gpu_time)} {sum(launches)} {sum(launch_time)} {sum(short_kernels)} {max(kernels)} {min(blocking_calls)} {max(gpu_span)} {n(period)} {sum(duration)}"}
  - {id: g1, title: g1, severity: info, source: gap, where: "duration >= 1us", fail_when: count >= 0,
     message: "{count} {max(duration)} {sum(duration)} {count(in_steady_state)}"}
  - {id: d1, title: d1, severity: info, source: device, fail_when: count >= 0,
     message: "{min(busy_frac_steady)} {max(busy_frac)} {max(nccl_overlap)} {sum(exposed_nccl_time)} {max(queue_p50)} {sum(queue_clamped)} {max(copy_frac_steady)} {sum(gaps)} {sum(queue_kernels)} {sum(kernel_time)} {max(span)}"}
  - {id: t1, title: t1, severity: info, source: trace, where: "duration > 0", fail_when: count >= 0,
     message: "{max(kernels)} {max(api_calls)} {max(steady_duration)} {max(blocked_time)} {max(memsets)} {max(nvtx_ranges)} {max(iterations)} {max(devices)} {max(blocking_calls)}"}
  - {id: n1, title: n1, severity: info, source: nvtx, where: "name == \"forward\"", fail_when: count >= 0, message: "{count} {sum(duration)}"}
  - id: grp
    title: grp
    severity: info
    source: api
    where: steady
    fail_when: count >= 0
    evidence:
      group_by: [name]
      columns: [{calls: count}, {time: sum(duration)}, {longest: max(duration)}]
      order_by: time desc
    message: "{count}"
EOF
"$TG_BINARY" check --rules "$tmp/rules.yaml" --format json "$tmp/trace.json" > "$tmp/r.json" 2>/dev/null || true
rules=$(jq -r '.traces[0].results[] | .rule' "$tmp/r.json")
[ "$(echo "$rules" | wc -l)" = 12 ] || fail "not 12 results: $rules"
for id in $rules; do
    jq -r --arg id "$id" '.traces[0].results[] | select(.rule == $id) | .reproduce' "$tmp/r.json" > "$tmp/p.jq"
    if ! jq -c -f "$tmp/p.jq" "$tmp/trace.json" > "$tmp/out" 2> "$tmp/err"; then
        fail "$id: jq failed: $(head -c 300 "$tmp/err")"
        continue
    fi
    jq -c --arg id "$id" '.traces[0].results[] | select(.rule == $id)' "$tmp/r.json" > "$tmp/result"
    bad=$(jq -n -c --slurpfile r "$tmp/result" --slurpfile o "$tmp/out" '
        $r[0] as $res | $o[0] as $v |
        [$res.values | to_entries[] | select(.value != $v[.key] and ((.value | type) != "number" or
            ($v[.key] | type) != "number" or ((($v[.key] - .value) | fabs) > 1e-9 * (.value | fabs) + 1e-9)))
         | [.key, .value, $v[.key]]]
        + (if ($o | length) - 1 != ($res.evidence | length) then [["rows", ($res.evidence | length), ($o | length) - 1]]
           else [] end)
        + [$res.evidence[] | select(.interval == null and .table == "traceEvents") | .rowid as $i
           | select([$o[1:][] | .rowid] | index($i) | not) | ["cited", $i]]')
    [ "$bad" = "[]" ] || fail "$id: $bad"
done
if [ "$failures" = 0 ]; then echo "jq_fixture: $(echo "$rules" | wc -l) findings reproduced by jq"; exit 0; fi
exit 1
