/*
** The reporter tests' hand-built run (run_fixture.h) and small helpers to
** render a format into memory and count what came out.
*/
#include "run_fixture.h"

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static tg_named_value *values(tg_arena *a, size_t n, ...)
{
    tg_named_value *v = tg_arena_alloc(a, n * sizeof *v);
    va_list ap;
    va_start(ap, n);
    for (size_t i = 0; i < n; i++) {
        v[i].name = va_arg(ap, const char *);
        v[i].value = va_arg(ap, tg_value);
    }
    va_end(ap);
    return v;
}

static tg_rule_result base_result(const char *rule, const char *title, tg_severity sev,
                                  tg_verdict verdict)
{
    tg_rule_result r = {.rule = rule, .title = title, .severity = sev, .verdict = verdict};
    r.metric_value = NAN;
    r.baseline.p_value = NAN;
    r.baseline.band_lo = r.baseline.band_hi = NAN;
    return r;
}

static void rank0(tg_arena *a, tg_trace_result *t)
{
    t->file = "runs/rank0.sqlite";
    t->nsys_version = "2024.5.1.113";
    t->schema_version = "3.11.1";
    t->gpu_names = "NVIDIA H100 80GB HBM3,NVIDIA A100-SXM4-80GB";   /* as check joins them */
    static int32_t pids[] = {4242, 4243};
    t->origin = (tg_origin){.rank = 0, .world_size = 2, .rank_from = "env SLURM_PROCID", .job = "31337",
                            .host = "node-a", .pids = pids, .n_pids = 2};
    static tg_work_entry ops[] = {
        {.name = "gemm_kernel", .kind = TG_WORK_KERNEL, .count = 100, .total = 5e7, .time = 5e5, .launches = 1},
        {.name = "[memcpy HtoD]", .kind = TG_WORK_MEMCPY, .count = 100, .total = 1e7, .time = 1e5, .launches = 1}};
    static tg_work_entry ranges[] = {{.name = "forward", .kind = TG_WORK_NVTX, .count = 100, .total = 2e8, .time = 2e6,
                                      .launches = NAN}};
    static tg_workload work = {.steady_iterations = 95, .gpu_time = 6e5, .period = 2.5e6, .idle = 1.9e6,
                               .total = 6e7, .ops = ops, .n_ops = 2, .ranges = ranges, .n_ranges = 1,
                               .sql_steady = "SELECT (globalTid >> 24) & 16777215 AS pid, start, end FROM "
                                             "NVTX_EVENTS WHERE rowid IN (7, 9)",
                               .table_kernel = "CUPTI_ACTIVITY_KIND_KERNEL", .table_memcpy = "CUPTI_ACTIVITY_KIND_MEMCPY",
                               .table_memset = "CUPTI_ACTIVITY_KIND_MEMSET", .table_runtime = "CUPTI_ACTIVITY_KIND_RUNTIME",
                               .table_nvtx = "NVTX_EVENTS"};
    t->workload = &work;
    t->n_results = 5;
    t->results = tg_arena_alloc(a, t->n_results * sizeof *t->results);
    tg_rule_result *r = t->results;

    r[0] = base_result("sync-memcpy", "Synchronous memcpy blocks the host", TG_SEV_ERROR, TG_V_FAIL);
    r[0].count = 400;
    r[0].message = "400 synchronous copies blocked the host for 1.2 s";
    r[0].advice = "Use pinned host memory and cudaMemcpyAsync on a stream.";
    r[0].rule_file = "rules.d/memcpy.yaml";
    r[0].rule_line = 12;
    r[0].n_values = 2;
    r[0].values = values(a, 2, "count", tg_int(400, TG_UNIT_NONE), "sum_duration_ns",
                         tg_int(1200000000, TG_UNIT_NS));
    r[0].n_evidence = 2;
    r[0].evidence = tg_arena_alloc(a, 2 * sizeof *r[0].evidence);
    r[0].evidence[0] = (tg_evidence){.table = "CUPTI_ACTIVITY_KIND_MEMCPY", .rowid = 12, .start = 1000, .end = 5000,
        .fields = values(a, 3, "bytes", tg_int(16777216, TG_UNIT_BYTES), "api", tg_str(NASTY),
                         "pinned", tg_bool(false)), .n_fields = 3, .next_rowid = -1, .row = -1};
    r[0].evidence[1] = (tg_evidence){.table = "CUPTI_ACTIVITY_KIND_MEMCPY", .rowid = 40, .start = TG_NULL_I64,
        .end = TG_NULL_I64, .fields = values(a, 1, "api", tg_str("cuMemcpyDtoH_v2")), .n_fields = 1,
        .next_rowid = -1, .row = -1};
    r[0].reproduce = "SELECT rowid, start, end, bytes FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE rowid IN (12, 40)";
    /* the cause (docs/host.md): call sites, one unknown sentence */
    static const char *stack[] = {"cudaMemcpy (libcudart.so.12)", "step(int) (train.so)"};
    static int64_t site_rows[] = {12, 40};
    static tg_cause_item sites[] = {{.source = "call_site", .name = "step(int)", .module = "train.so", .tid = -1,
                                     .count = 300, .time = 9e8, .launch_time = NAN, .share = 0.75,
                                     .table = "CUPTI_ACTIVITY_KIND_MEMCPY", .rowids = site_rows, .n_rowids = 2,
                                     .stack = stack, .n_stack = 2}};
    static const char *unknown0[] = {"100 of the 400 copies have no recorded stack"};
    static tg_cause cause0 = {.kind = TG_CAUSE_CALL_SITE,
                              .summary = "300 of the 400 copies were made from step(int) in train.so",
                              .unknown = unknown0, .n_unknown = 1, .items = sites, .n_items = 1,
                              .reproduce = "SELECT 'step(int)' AS call_site, count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY"};
    r[0].cause = &cause0;

    r[1] = base_result("pageable-async-memcpy", "Async copy from pageable memory", TG_SEV_WARNING, TG_V_PASS);
    r[1].message = "0 async copies touch pageable memory";
    r[1].values = values(a, 1, "count", tg_int(0, TG_UNIT_NONE));
    r[1].n_values = 1;

    r[2] = base_result("gpu-idle-gap", "GPU idle gap", TG_SEV_ERROR, TG_V_SKIP);
    r[2].count = TG_NULL_I64;
    r[2].message = "the capture has no GPU activity";
    r[2].missing_data = true;

    r[3] = base_result("low-gpu-utilization", "Low GPU utilization", TG_SEV_WARNING, TG_V_FAIL);
    r[3].count = 1;
    r[3].message = "device 0: busy 31% of steady time, below 50% | see " NASTY;
    r[3].advice = "Feed the GPU: larger batches, fewer host syncs.";
    r[3].values = values(a, 2, "busy_frac_steady", tg_float(0.31, TG_UNIT_RATIO), "weird",
                         tg_float(NAN, TG_UNIT_NONE));
    r[3].n_values = 2;
    r[3].rule_file = "/nonexistent/team rules/util.yaml";
    r[3].rule_line = 3;
    /* a host cause whose thread name is hostile */
    static int64_t act_rows[] = {926};
    static tg_cause_item act[] = {{.source = "osrt", .name = "usleep", .thread = NASTY, .tid = 1063,
                                   .launch_thread = true, .count = 1, .time = 7e8, .launch_time = NAN, .share = 0.97,
                                   .call_site = "main", .call_module = "drvload", .table = "OSRT_API",
                                   .rowids = act_rows, .n_rowids = 1}};
    static tg_cause_window win = {.evidence = 0, .pid = 1063, .start = 1000, .end = 720001000,
                                  .accounted = 700000000, .items = act, .n_items = 1};
    static tg_cause cause3 = {.kind = TG_CAUSE_HOST, .summary = "the thread " NASTY " was in usleep",
                              .windows = &win, .n_windows = 1, .reproduce = "WITH w(win, pid, s, e) AS (VALUES (0, 1063, 1000, 720001000)) SELECT 1"};
    r[3].cause = &cause3;

    r[4] = base_result("iteration-variance", "Iteration time varies", TG_SEV_ERROR, TG_V_ERROR);
    r[4].message = "regular expression \"[\" failed to compile";
}

static void rank1(tg_arena *a, tg_trace_result *t)
{
    t->file = "runs/rank1.sqlite";
    t->nsys_version = "2025.1.1";
    t->schema_version = "3.15";
    t->n_results = 4;
    t->results = tg_arena_alloc(a, t->n_results * sizeof *t->results);
    tg_rule_result *r = t->results;

    r[0] = base_result("sync-memcpy", "Synchronous memcpy blocks the host", TG_SEV_ERROR, TG_V_PASS);
    r[0].message = "0 synchronous copies blocked the host for 0 ns";
    r[0].rule_file = "rules.d/memcpy.yaml";
    r[0].rule_line = 12;

    /* A warning-severity regression: it gates even with --fail-on error. */
    r[1] = base_result("gpu-time-regression", "GPU time per iteration regressed", TG_SEV_WARNING, TG_V_FAIL);
    r[1].count = 48;
    r[1].message = "p50 GPU time 13.1 ms vs baseline 12.3 ms (+6.5%, p=0.0012)";
    r[1].metric = "p50(gpu_time)";
    r[1].metric_unit = TG_UNIT_NS;
    r[1].metric_value = 13.1e6;
    r[1].values = values(a, 1, "p50_gpu_time_ns", tg_float(13.1e6, TG_UNIT_NS));
    r[1].n_values = 1;
    r[1].regression = 1;
    r[1].baseline = (tg_baseline_cmp){.present = true, .value = 12.3e6, .current = 13.1e6, .change = 0.065,
                                      .p_value = 0.0012, .n_baseline = 50, .n_current = 48, .regression = true,
                                      .outside_band = true, .band_lo = 12.0e6, .band_hi = 12.6e6,
                                      .band_measured = true, .spread = 0.008, .n_runs = 3,
                                      .workload_match = 1, .busy_then = NAN, .busy_now = NAN};

    r[2] = base_result("iteration-time-regression", "Iteration period regressed", TG_SEV_ERROR, TG_V_PASS);
    r[2].count = 48;
    r[2].message = "p50 period 20.0 ms vs baseline 22.0 ms";
    r[2].metric = "p50(period)";
    r[2].metric_unit = TG_UNIT_NS;
    r[2].metric_value = 20e6;
    r[2].regression = 1;
    r[2].baseline = (tg_baseline_cmp){.present = true, .value = 22e6, .current = 20e6, .change = -0.0909,
                                      .p_value = NAN, .n_baseline = 50, .n_current = 48, .improvement = true,
                                      .band_lo = NAN, .band_hi = NAN, .spread = NAN, .workload_match = NAN,
                                      .busy_then = NAN, .busy_now = NAN};

    r[3] = base_result("team:note,rule", "A note", TG_SEV_INFO, TG_V_FAIL);
    r[3].count = 2;
    r[3].message = "2 kernels named `__global__` ran";
}

void fixture_run(tg_run_result *run)
{
    memset(run, 0, sizeof *run);
    run->arena = tg_arena_new();
    assert_non_null(run->arena);
    run->n_traces = 3;
    run->traces = tg_arena_alloc(run->arena, 3 * sizeof *run->traces);
    rank0(run->arena, &run->traces[0]);
    rank1(run->arena, &run->traces[1]);
    tg_trace_result *bad = &run->traces[2];
    bad->file = "runs/broken.sqlite";
    bad->status = TG_ETRACE;
    bad->error = "runs/broken.sqlite is not an SQLite database (file is not a database)";
}

char *fixture_render(tg_format fmt, const tg_run_result *run, const tg_ruleset *rs,
                     const tg_report_opts *opts)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(tg_report_write(fmt, run, rs, opts, f), TG_OK);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(strlen(buf), len);
    return buf;
}

size_t fixture_count(const char *hay, const char *needle)
{
    size_t n = 0, len = strlen(needle);
    for (const char *p = strstr(hay, needle); p; p = strstr(p + len, needle)) n++;
    return n;
}

size_t fixture_count_lines(const char *text, const char *prefix)
{
    size_t n = 0, len = strlen(prefix);
    for (const char *p = text; p && *p;) {
        if (strncmp(p, prefix, len) == 0) n++;
        p = strchr(p, '\n');
        if (p) p++;
    }
    return n;
}
