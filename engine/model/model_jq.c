/*
** The model as jq (model_jq.h): one binding per view, each written once by
** its own function, which first asks for the views it reads (need()), so a
** program computes only what its rule uses, in order -- model_sql.c's
** shape for a JSON trace.
**
** The views and what they stand for in the C code:
**
**   x          every event the Kineto reader loads (trace_kineto_map.c),
**              compact: index, kind (0 kernel, 1 copy, 2 memset, 3 API
**              call, 4 range, 5 sync), times in ns, the args it reads
**   cap        first and last timestamp of those (trace.c)
**   iters      the iterations: event indices chosen by model_marker.c,
**              their index per process, warmup, partial, steady
**              (model_iter.c); itp: per process, for the lookup by time
**   win        first steady start to last steady end (else the capture)
**   pids       the busiest CPU process, and whether there is one only: a
**              GPU op's process is its launching call's (tg_kin_finish)
**   calls      every API call: base name, flags of its name, iteration
**              containing its start (tg_model_finder_find)
**   launch     per correlation id the call that launched the ops with
**              that id: the first in start order (model_join.c)
**   kernel, memcpy, memset, api, nvtx     the row sources
**   iteration  + GPU time, span, kernels, launches and blocking calls of
**              each iteration, its period from GPU completion
**   ops        every kernel, copy and memset in start order (model_ops.c)
**   gap        the idle intervals of each (process, device) pair
**   device, trace  the facts (model_device.c, model.c); dev: the device
**              rows by id, for device.FIELD
*/
#include "model_jq.h"
#include "model_int.h"
#include "model_sql.h"
#include "model_views.h"

#include <stdlib.h>
#include <string.h>

/* The views, each with the call that writes it on the writer w: the enum
** and need() are expanded from this list (model_views.h). */
#define JQ_VIEWS(V)                                                                                            \
    V(FUNCS, view_funcs(w)) V(X, view_x(w)) V(CAPTURE, view_capture(w)) V(ITER, view_iter(w))                  \
    V(WINDOW, view_window(w)) V(PIDS, view_pids(w)) V(CALLS, view_calls(w)) V(LAUNCH, view_launch(w))          \
    V(KERNEL, view_kernel(w)) V(MEMCPY, view_memop(w, true)) V(MEMSET, view_memop(w, false))                   \
    V(API, view_api(w)) V(NVTX, view_nvtx(w)) V(ITERATION, view_iteration(w)) V(OPS, view_ops(w))              \
    V(GAP, view_gap(w)) V(DEVICE, view_device(w)) V(TRACE, view_trace(w))

enum view { JQ_VIEWS(TG_VIEW_ENUM) V_COUNT };

typedef struct jqw {
    const tg_model *m;
    const uint64_t *fields;    /* per source: the columns the caller reads */
    FILE *f;
    bool done[V_COUNT];
} jqw;

static void need(jqw *w, enum view v);

/* Device columns by what computes them (as model_sql.c). */
static const char *const nccl_fields[] = {"nccl_time", "nccl_overlap", "exposed_nccl_time", NULL};
static const char *const queue_fields[] = {"queue_p50", "queue_kernels", "queue_clamped", NULL};

void tg_jq_put_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
        else if (*p < 0x20 || *p == 0x7f) fprintf(f, "\\u%04x", *p);
        else fputc(*p, f);
    }
    fputc('"', f);
}

static bool wants_any(const jqw *w, tg_source_id src, const char *const *names)
{
    for (; *names; names++) {
        const tg_field_def *f = tg_field_find(src, *names);
        if (f && (w->fields[src] & tg_model_sql_field_bit(f))) return true;
    }
    return false;
}

/* ------------------------------------------------------------ the views */

/* Helpers every view may call. tg_ns: a number of microseconds (maybe
** text) as integer ns from $base us, the integer part and the fraction
** scaled apart; tg_ts: a timestamp from the base (tg_model_jq_base_us),
** tg_dur: a duration; tg_abs: back to the file's clock;
** tg_int: a number, or the trailing digits of a text ("stream 7");
** tg_union: intervals in start order (objects with start, end) as their
** union's segments [s, e]; tg_clip: the segments' length inside [a, b]. */
static void view_funcs(jqw *w)
{
    long long base = tg_model_jq_base_us(w->m);
    fprintf(w->f, "def tg_ns($base): (if type == \"string\" then (tonumber? // null) else . end) | if type == \"number\" "
                  "then floor as $f | ($f - $base) * 1000 + ((. - $f) * 1000 | round) else null end; "
                  "def tg_ts: tg_ns(%lld); def tg_dur: tg_ns(0); "
                  "def tg_abs: if . == null then null else . + %lld000 end; ", base, base);
    fputs(""
          "def tg_int: if type == \"number\" then . elif type == \"string\" then "
          "((capture(\"(?<d>[0-9]{1,15}) *$\") | .d | tonumber)? // null) else null end; "
          "def tg_union: [foreach (.[], null) as $o ({s: null, e: null, out: null}; "
          "if $o == null then {out: (if .s != null then [.s, .e] else null end)} "
          "elif .s == null then {s: $o.start, e: $o.end, out: null} "
          "elif $o.start > .e then {s: $o.start, e: $o.end, out: [.s, .e]} "
          "else .out = null | (if $o.end > .e then .e = $o.end else . end) end; .out // empty)]; "
          "def tg_len: map(.[1] - .[0]) | add // 0; "
          "def tg_clip($a; $b): map(([.[1], $b] | min) - ([.[0], $a] | max) | if . > 0 then . else 0 end) | add // 0; "
          ". as $doc | .traceEvents as $e | ", w->f);
}

/* The loaded events; kinds by `cat` as tg_kin_cat_of reads them. */
static void view_x(jqw *w)
{
    need(w, V_FUNCS);
    fputs("[range(0; $e | length) as $i | $e[$i] | select(.ph == \"X\") | .cat as $c | "
          "(if $c == \"kernel\" or $c == \"Kernel\" then 0 elif $c == \"gpu_memcpy\" or $c == \"Memcpy\" then 1 "
          "elif $c == \"gpu_memset\" or $c == \"Memset\" then 2 elif $c == \"cuda_runtime\" or $c == \"cuda_driver\" "
          "or $c == \"Runtime\" or $c == \"Driver\" then 3 elif $c == \"user_annotation\" or (($c == \"cpu_op\" or "
          "$c == \"Operator\") and (.name | type == \"string\" and length > 13 and startswith(\"ProfilerStep#\"))) "
          "then 4 elif $c == \"cuda_sync\" then 5 else empty end) as $k | (.ts | tg_ts) as $s | select($s != null) | "
          "((.dur | tg_dur) // 0) as $d | {i: $i, k: $k, name: (.name // \"\"), start: $s, "
          "end: (if $d < 0 then $s else $s + $d end)} + (if $k <= 2 then $e[$i] as $v | "
          "{corr: $v.args.correlation, device: (($v.args.device // $v.pid) | tg_int), "
          "stream: (($v.args.stream // $v.tid) | tg_int), bytes: $v.args.bytes} elif $k <= 4 then $e[$i] as $v | "
          "{pid: ($v.pid | tg_int), tid: ($v.tid | tg_int), corr: $v.args.correlation} else {} end)] as $x | ", w->f);
}

static void view_capture(jqw *w)
{
    need(w, V_X);
    fputs("{first: ($x | map(.start) | min), last: ($x | map(.end) | max)} as $cap | ", w->f);
}

/* "[i, ...]": the event indices of the iterations (partial_only: those the
** capture cut), in index order. */
static void put_iteration_list(jqw *w, bool partial_only)
{
    const tg_model *m = w->m;
    fputc('[', w->f);
    const char *sep = "";
    for (size_t i = 0; i < m->n_iterations; i++) {
        if (partial_only && !m->iterations[i].partial) continue;
        fprintf(w->f, "%s%lld", sep, (long long)m->iterations[i].rowid);
        sep = ",";
    }
    fputc(']', w->f);
}

static void view_iter(jqw *w)
{
    need(w, V_FUNCS);
    fprintf(w->f, "%s as $hasit | (", w->m->has_iterations ? "true" : "false");
    put_iteration_list(w, true);
    fputs(" | map({key: tostring, value: true}) | from_entries) as $partial | ", w->f);
    /* the only thing taken from tracegate, named for what it is */
    put_iteration_list(w, false);
    fprintf(w->f, " as $iterations_tracegate_chose | $iterations_tracegate_chose | map(. as $i | $e[$i] | "
                  "(.ts | tg_ts) as $s | ((.dur | tg_dur) // 0) as $d | {i: $i, pid: ((.pid | tg_int) // -1), "
                  "tid: (.tid | tg_int), name: (.name // \"\"), start: $s, end: (if $d < 0 then $s else $s + $d end)}) "
                  "| sort_by(.pid, .start, .i) | group_by(.pid) | map(length as $n | to_entries | map(.value + "
                  "{index: .key, warmup: ($n >= %d and .key < %d)} | .partial = ($partial[.i | tostring] // false) | "
                  ".steady = ((.warmup or .partial) | not))) | add // [] | . as $iters | "
                  "(reduce ($iters | group_by(.pid))[] as $g ({}; .[$g[0].pid | tostring] = {starts: ($g | "
                  "map(.start)), rows: $g, maxend: [foreach $g[] as $r (null; if . == null or $r.end > . then "
                  "$r.end else . end)]})) as $itp | "
                  "def tg_back($l; $t; $j): if $j < 0 or $l.maxend[$j] < $t then null elif $l.rows[$j].end >= $t "
                  "then $l.rows[$j] else tg_back($l; $t; $j - 1) end; "
                  "def tg_it($p; $t): $itp[$p | tostring] as $l | if $l == null or $t == null then null else "
                  "($l.starts | bsearch($t)) as $b | tg_back($l; $t; if $b >= 0 then $b else -2 - $b end) end; "
                  "def tg_steady(it): if $hasit then (it | .steady) // false else true end; ",
            TG_WARMUP_MIN_ITERATIONS, TG_WARMUP_COUNT);
}

static void view_window(jqw *w)
{
    need(w, V_CAPTURE);
    need(w, V_ITER);
    fputs("($iters | map(select(.steady))) as $st | {ws: (if $st | length > 0 then $st | map(.start) | min "
          "else $cap.first end), we: (if $st | length > 0 then $st | map(.end) | max else $cap.last end)} as $win | "
          "(reduce ($st | group_by(.pid))[] as $g ({}; .[$g[0].pid | tostring] = ($g | map(.start) | min))) "
          "as $first_steady | ", w->f);
}

static void view_pids(jqw *w)
{
    need(w, V_X);
    fputs("([$x[] | select(.k == 3 or .k == 4) | .pid // -1] | group_by(.) | map({p: .[0], n: length})) as $pc | "
          "($pc | map(select(.p >= 0)) | sort_by(-.n, .p) | .[0].p // -1) as $main | "
          "($pc | length <= 1 or (length == 2 and .[0].p < 0)) as $single | "
          "(if $single then {} else reduce ($x[] | select(.k == 3 and .corr != null)) as $a ({}; "
          ".[$a.corr | tostring] = ($a.pid // -1)) end) as $corr_pid | "
          "def tg_op_pid: if $single then $main else $corr_pid[.corr | tostring] // $main end; ", w->f);
}

void tg_jq_put_base_name(FILE *f)
{
    /* \A and \z: ^ and $ would also match at a newline inside the name */
    fputs("def tg_base: if length > 5 and (endswith(\"_ptsz\") or endswith(\"_ptds\")) then .[:-5] | tg_base "
          "elif test(\"(?s)\\\\A.+_v[0-9]+\\\\z\") then sub(\"_v[0-9]+\\\\z\"; \"\") | tg_base else . end; ", f);
}

/* Base names (tg_jq_put_base_name) and the flags of each distinct name. */
static void view_calls(jqw *w)
{
    need(w, V_X);
    need(w, V_ITER);
    tg_jq_put_base_name(w->f);
    fputs("([$x[] | select(.k == 3) | .name] | unique | map(. as $n | tg_base as $b | {key: $n, value: {name: $b, "
          "driver: ($b | startswith(\"cu\") and (startswith(\"cuda\") | not)), blocking: ($b | IN(", w->f);
    const char *sep = "";
#define X(name) fprintf(w->f, "%s\"%s\"", sep, name), sep = ", ";
    TG_BLOCKING_CALLS(X)
#undef X
    fputs(")), async: ($b | index(\"Async\") != null), copy_or_set: ($b | ", w->f);
    sep = "";
#define X(table, prefix) \
    if (TG_TABLE_##table != TG_TABLE_KERNEL) fprintf(w->f, "%sstartswith(\"%s\")", sep, prefix), sep = " or ";
    TG_OP_CALL_PREFIXES(X)
#undef X
    fputs(")}}) | from_entries) as $names | [$x[] | select(.k == 3) | $names[.name] as $n | {rowid: .i, "
          "name: $n.name, raw_name: .name, start, end: .end, duration: (.end - .start), pid: (.pid // -1), tid: "
          "(.tid // -1), corr, driver: $n.driver, blocking: $n.blocking, sync_memop: ($n.copy_or_set and "
          "($n.async | not)), async: $n.async, it: tg_it(.pid // -1; .start)}] | sort_by(.start, .rowid) "
          "as $calls | ", w->f);
}

static void view_launch(jqw *w)
{
    need(w, V_CALLS);
    fputs("(reduce ($calls | map(select(.corr != null and .corr != 0)) | reverse[]) as $c ({}; "
          ".[$c.corr | tostring] = $c)) as $launch | "
          "def tg_launch($pid): if .corr != null and .corr != 0 then $launch[.corr | tostring] | "
          "if . != null and .pid == $pid then . else null end else null end; ", w->f);
}

/* The launch columns of a GPU op whose launching call is $l. */
static void put_launched(jqw *w)
{
    fputs("tid: $l.tid, api: $l.name, iteration: $l.it.index, steady: tg_steady($l.it), _it: $l.it.i, "
          "_call: $l.rowid, _call_time: (if $l != null then $l.end - $l.start else null end)", w->f);
}

static void view_kernel(jqw *w)
{
    need(w, V_LAUNCH);
    need(w, V_PIDS);
    /* short name: without "void ", template and parameters (trace_kineto_map.c) */
    fputs("[$x[] | select(.k == 0) | tg_op_pid as $pid | tg_launch($pid) as $l | $e[.i].args as $a | "
          "((if .name | startswith(\"void \") then 5 else 0 end) as $b | (.name[$b:] | "
          "[index(\"<\"), index(\"(\")] | map(select(. != null)) | min) as $t | if $t == null then .name[$b:] "
          "elif $t > 0 then .name[$b:$b + $t] else .name end) as $short | {rowid: .i, start, end: .end, "
          "duration: (.end - .start), device: (.device // -1), stream: (.stream // -1), pid: $pid, name, "
          "short_name: $short, grid_x: ($a.grid[0] // -1), grid_y: ($a.grid[1] // -1), grid_z: ($a.grid[2] // -1), "
          "block_x: ($a.block[0] // -1), block_y: ($a.block[1] // -1), block_z: ($a.block[2] // -1), "
          "registers: ($a[\"registers per thread\"] // -1), "
          "launch_end: $l.end, queue: (if $l.end != null then (if .start < $l.end then 0 else .start - $l.end end) "
          "else null end), _clamped: ($l.end != null and .start < $l.end), nccl: (.name | "
          "test(\"nccl\"; \"i\")), ", w->f);
    put_launched(w);
    /* only the first kernel of a call has a queue time: the others of a
    ** graph launch waited for the graph (model_join.c launch_kernel) */
    fputs("}] | (map(select(._call != null)) | group_by(._call) | map({key: (min_by([.start, .rowid]).rowid | "
          "tostring), value: true}) | from_entries) as $first | map(if ._call != null and "
          "($first[.rowid | tostring] | not) then .queue = null | ._clamped = false else . end) as $kernel | ", w->f);
}

/* Copy kind and memory kinds from the name (trace_kineto_map.c
** parse_memop_name): "Memcpy HtoD (Pageable -> Device)". */
static void view_memop(jqw *w, bool copy)
{
    need(w, V_LAUNCH);
    need(w, V_PIDS);
    fputs("def tg_mem_kind: if startswith(\"Pageable\") then \"pageable\" elif startswith(\"Pinned\") then "
          "\"pinned\" elif startswith(\"Device\") then \"device\" elif startswith(\"Array\") then \"array\" "
          "elif startswith(\"Managed\") then \"managed\" else \"unknown\" end; ", w->f);
    fprintf(w->f, "[$x[] | select(.k == %d) | tg_op_pid as $pid | tg_launch($pid) as $l | .name as $n | "
                  "($n | index(\"(\")) as $open | (if $open == null then \"unknown\" else $n[$open + 1:] | "
                  "tg_mem_kind end) as $src | ", copy ? 1 : 2);
    if (copy)
        fputs("($n | index(\" \")) as $sp | (if $sp == null then \"unknown\" else $n[$sp + 1:$sp + 5] | "
              "if IN(\"HtoD\", \"DtoH\", \"HtoA\", \"AtoH\", \"AtoA\", \"AtoD\", \"DtoA\", \"DtoD\", \"HtoH\", "
              "\"PtoP\") then . else \"unknown\" end end) as $kind | (if $open == null then \"unknown\" else "
              "$n[$open + 1:] | index(\" -> \") as $a | if $a == null then \"unknown\" else .[$a + 4:] | "
              "tg_mem_kind end end) as $dst | ", w->f);
    fputs("{rowid: .i, start, end: .end, duration: (.end - .start), device: (.device // -1), stream: (.stream // -1), "
          "pid: $pid, bytes, ", w->f);
    fputs(copy ? "kind: $kind, src_kind: $src, dst_kind: $dst, api_async: ($l.async // false), "
               : "mem_kind: $src, ", w->f);
    fputs("api_sync: ($l.sync_memop // false), ", w->f);
    put_launched(w);
    fprintf(w->f, "}] as $%s | ", copy ? "memcpy" : "memset");
}

static void view_api(jqw *w)
{
    need(w, V_CALLS);
    need(w, V_KERNEL);
    /* startup: before the process's first kernel, outside steady
    ** iterations (model_join.c is_startup) */
    fprintf(w->f, "(reduce $kernel[] as $k ({}; ($k.pid | tostring) as $p | .[$p] = ([.[$p] // $k.start, $k.start] | "
          "min))) as $first_kernel | ($calls | map({rowid, name, raw_name, start, end: .end, duration, pid, tid, "
          "driver, blocking, return_value: null, iteration: .it.index, steady: tg_steady(.it), startup: "
          "($first_kernel[.pid | tostring] as $f | $f != null and .start < $f%s)})) as $api | ",
            w->m->has_iterations ? " and (tg_steady(.it) | not)" : "");
}

static void view_nvtx(jqw *w)
{
    need(w, V_X);
    fputs("[$x[] | select(.k == 4) | {rowid: .i, name, start, end: .end, duration: (.end - .start), pid: (.pid // -1), "
          "tid: (.tid // -1)}] as $nvtx | ", w->f);
}

/* Per iteration: the GPU work launched in it, its launches (each call
** once, the kernels they launched: model_host.c), its blocking calls;
** then the period from GPU completion (model_iter.c). */
static void view_iteration(jqw *w)
{
    need(w, V_KERNEL);
    need(w, V_MEMCPY);
    need(w, V_MEMSET);
    fputs("(reduce (($kernel | map(. + {_kernel: true})) + $memcpy + $memset | map(select(._it != null)) | "
          "group_by(._it))[] as $g ({}; .[$g[0]._it | tostring] = {gpu_time: ($g | map(.end - .start) | add), "
          "gpu_first: ($g | map(.start) | min), gpu_end: ($g | map(.end) | max), kernels: ($g | "
          "map(select(._kernel)) | length), launches: ($g | map(select(._kernel)) | unique_by(._call) | length), "
          "launch_time: ($g | map(select(._kernel)) | unique_by(._call) | map(._call_time) | add // 0), "
          "kernel_time: ($g | map(select(._kernel) | .end - .start) | add // 0), short_kernels: ($g | "
          "map(select(._kernel)) | group_by(._call) | map(select((map(.end - .start) | add) < .[0]._call_time) | "
          "length) | add // 0), graph_launches: ($g | map(select(._kernel)) | group_by(._call) | "
          "map(select(length > 1)) | length), graph_kernels: ($g | map(select(._kernel)) | group_by(._call) | "
          "map(select(length > 1) | length) | add // 0)})) as $work | "
          "(reduce ($calls | map(select(.blocking and .it != null)) | group_by(.it.i))[] as $g ({}; "
          ".[$g[0].it.i | tostring] = ($g | length))) as $blocking | "
          "[$iters | group_by(.pid)[] | map(. + ($work[.i | tostring] // {gpu_time: 0, gpu_first: null, "
          "gpu_end: null, kernels: 0, launches: 0, launch_time: 0, kernel_time: 0, short_kernels: 0, "
          "graph_launches: 0, graph_kernels: 0})) | . as $g | "
          "range(0; length) as $j | $g[$j] as $r | (if $j > 0 then $g[$j - 1] else null end) as $p | "
          "{rowid: $r.i, index: $r.index, name: $r.name, marker: ($r.name | gsub(\"[0-9]+\"; \"N\")), pid: $r.pid, "
          "start: $r.start, end: $r.end, warmup: $r.warmup, partial: $r.partial, steady: $r.steady, "
          "duration: ($r.end - $r.start), period: (if $p != null and $p.warmup == $r.warmup and ($p.partial | not) "
          "and ($r.partial | not) and $p.gpu_end != null and $r.gpu_end != null then $r.gpu_end - $p.gpu_end "
          "else null end), gpu_time: $r.gpu_time, gpu_span: (if $r.gpu_first != null then $r.gpu_end - "
          "$r.gpu_first else null end), kernels: $r.kernels, blocking_calls: ($blocking[$r.i | tostring] // 0), "
          "launches: $r.launches, launch_time: $r.launch_time, kernel_time: $r.kernel_time, "
          "short_kernels: $r.short_kernels, graph_launches: $r.graph_launches, graph_kernels: $r.graph_kernels}] "
          "as $iteration | ", w->f);
}

static void view_ops(jqw *w)
{
    need(w, V_KERNEL);
    need(w, V_MEMCPY);
    need(w, V_MEMSET);
    fputs("[($kernel[] | {rowid, k: 0, start, end: .end, device, pid, kernel: true, nccl, copy: false, queue, _clamped}), "
          "($memcpy[] | {rowid, k: 1, start, end: .end, device, pid, kernel: false, nccl: false, copy: true}), "
          "($memset[] | {rowid, k: 2, start, end: .end, device, pid, kernel: false, nccl: false, copy: false})] | "
          "sort_by(.start, .k, .rowid) as $ops | ", w->f);
}

/* Gaps per (process, device): an op starting after the largest end so far
** opens one (model_device.c visit); the op that reached that end bounds
** it on the left. */
static void view_gap(jqw *w)
{
    need(w, V_OPS);
    need(w, V_WINDOW);
    fputs("[$ops | group_by([.device, .pid])[] | . as $g | foreach .[] as $o ({e: null, b: null, bs: null, g: null}; "
          "(if .e != null and $o.start > .e then {start: .e, end: $o.start, duration: ($o.start - .e), "
          "device: $o.device, pid: $o.pid, before_rowid: .b, _before_start: .bs, after_rowid: $o.rowid} "
          "else null end) as $gap | if .e == null or $o.start > .e or $o.end > .e then {e: $o.end, b: $o.rowid, "
          "bs: $o.start, g: $gap} else .g = $gap end; .g // empty)] | map(. + {in_steady_state: (if $hasit then "
          ".start >= ($first_steady[.pid | tostring] // $win.ws) else true end), before_duration: (.start - "
          "._before_start)}) as $gap | ", w->f);
}

static void view_device(jqw *w)
{
    bool nccl = wants_any(w, TG_SRC_DEVICE, nccl_fields), queue = wants_any(w, TG_SRC_DEVICE, queue_fields);
    const tg_field_def *gaps = tg_field_find(TG_SRC_DEVICE, "gaps");
    need(w, V_OPS);
    need(w, V_WINDOW);
    if (gaps && (w->fields[TG_SRC_DEVICE] & tg_model_sql_field_bit(gaps))) need(w, V_GAP);
    else fputs("[] as $gap | ", w->f);
    FILE *f = w->f;
    fputs("(($doc.deviceProperties // []) | map({key: (.id | tostring), value: .name}) | from_entries) as $gpu | "
          "[$ops | group_by(.device)[] | . as $o | ($o | tg_union) as $busy | ($o | map(select(.copy)) | tg_union) "
          "as $copies | {device: $o[0].device, name: $gpu[$o[0].device | tostring], start: ($o | map(.start) | min), "
          "end: ($o | map(.end) | max), kernels: ($o | map(select(.kernel)) | length), kernel_time: ($o | "
          "map(select(.kernel) | .end - .start) | add // 0), _busy: ($busy | tg_len), busy_time_steady: ($busy | "
          "tg_clip($win.ws; $win.we)), copy_time_steady: ($copies | tg_clip($win.ws; $win.we)), "
          "first_rowid: $o[0].rowid, last_rowid: ($o | min_by([-.end, .k, .start, .rowid]) | .rowid)", f);
    if (nccl)
        fputs(", _nccl: (if any($o[]; .nccl) then {n: ($o | map(select(.nccl)) | tg_union | tg_len), "
              "c: ($o | map(select(.kernel and (.nccl | not))) | tg_union | tg_len), a: ($o | map(select(.kernel)) | "
              "tg_union | tg_len)} else null end)", f);
    if (queue)
        fputs(", _queue: ($o | map(select(.kernel and .queue != null)) | {q: (map(.queue) | sort), "
              "c: (map(select(._clamped)) | length)})", f);
    fprintf(f, ", gaps: ([$gap[] | select(.device == $o[0].device and .duration >= %lld)] | length)} | "
               ".span = .end - .start | .busy_frac = (if .span > 0 then ._busy / .span else null end) | "
               ".busy_frac_steady = (if $hasit then (if $win.we > $win.ws then .busy_time_steady / "
               "($win.we - $win.ws) else null end) else .busy_frac end) | .copy_frac_steady = (if "
               ".busy_time_steady > 0 then .copy_time_steady / .busy_time_steady else null end)",
            (long long)TG_GAP_MIN_NS);
    /* overlap = |N| + |C| - |N u C| (model_device.c) */
    if (nccl)
        fputs(" | .nccl_time = (._nccl.n // 0) | .nccl_overlap = (if ._nccl.n > 0 then (._nccl.n + ._nccl.c - "
              "._nccl.a) / ._nccl.n else null end) | .exposed_nccl_time = (if ._nccl.n > 0 then ._nccl.a - "
              "._nccl.c else 0 end)", f);
    /* the median queue time, the mean of the two middle ones rounded */
    if (queue)
        fputs(" | (._queue.q | length) as $n | .queue_kernels = $n | .queue_clamped = ._queue.c | "
              ".queue_p50 = (if $n == 0 then null elif $n % 2 == 1 then ._queue.q[($n - 1) / 2] else "
              "((._queue.q[$n / 2 - 1] + ._queue.q[$n / 2]) / 2 | round) end)", f);
    fputs("] | sort_by(.device) as $device | ($device | map({key: (.device | tostring), value: .}) | from_entries) "
          "as $dev | ", f);
}

static void view_trace(jqw *w)
{
    need(w, V_WINDOW);
    need(w, V_CALLS);
    need(w, V_OPS);
    fputs("{duration: (if $cap.first != null then $cap.last - $cap.first else 0 end), kernels: ($kernel | length), "
          "memcpys: ($memcpy | length), memsets: ($memset | length), api_calls: ($calls | length), "
          "nvtx_ranges: ([$x[] | select(.k == 4)] | length), devices: ($ops | map(.device) | unique | length), "
          "iterations: ($iters | length), steady_iterations: ($st | length), steady_duration: ([$win.we - $win.ws, 0] "
          "| max), blocking_calls: ($calls | map(select(.blocking)) | length), blocked_time: ($calls | "
          "map(select(.blocking) | .duration) | add // 0)} as $trace | [$trace] as $trace_rows | ", w->f);
}

/* ------------------------------------------------------------- driving */

TG_VIEW_DRIVER(jqw, JQ_VIEWS)

char *tg_model_jq_with(const tg_model *m, unsigned sources, const uint64_t *fields)
{
    if (tg_trace_query_lang(m->trace) != TG_QUERY_JQ) return NULL;
    char *buf = NULL;
    size_t len = 0;
    jqw w = {.m = m, .fields = fields, .f = open_memstream(&buf, &len)};
    if (!w.f) return NULL;
    need(&w, V_FUNCS);
    /* the device view before the others, so that a gap view it did not
    ** need is still written for a gap rule */
    for (int s = TG_SRC_COUNT - 1; s >= 0; s--)
        if ((sources & (1u << s)) && tg_model_jq_has_source((tg_source_id)s)) need(&w, source_view((tg_source_id)s));
    if (fclose(w.f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

int64_t tg_model_jq_base_us(const tg_model *m)
{
    int64_t first = m->trace->first_ns;
    if (first == TG_NULL_I64) return 0;
    return first >= 0 ? first / 1000 : -((999 - first) / 1000);
}

bool tg_model_jq_has_source(tg_source_id src)
{
    return tg_model_sql_has_source(src);
}

bool tg_model_jq_has_field(const tg_field_def *f)
{
    /* what SQL cannot say but a marker, which jq's gsub writes */
    return tg_model_sql_has_field(f) || (f->source == TG_SRC_ITERATION && !strcmp(f->name, "marker"));
}
