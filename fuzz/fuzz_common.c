/*
** The pipeline and helpers of fuzz_common.h.
*/
#include "fuzz_common.h"

#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "baseline/baseline.h"
#include "check/check.h"
#include "eval/eval.h"
#include "model/model.h"
#include "report/info.h"
#include "report/metrics.h"
#include "report/report.h"
#include "tg_config.h"
#include "fixture.h"
#include "logsafe.h"

static tg_ruleset *builtin;
static tg_metrics_defs *metrics_defs;
static char scratch[4096];

static char *last_summary;

static void cleanup(void)
{
    if (scratch[0]) unlink(scratch);
    free(last_summary);
    last_summary = NULL;
    tg_rules_free(builtin);
    builtin = NULL;
    tg_metrics_defs_free(metrics_defs);
    metrics_defs = NULL;
}

const tg_ruleset *fz_builtin_rules(void)
{
    if (builtin) return builtin;
    const char *path = TG_SOURCE_ROOT "/rules.d";
    tg_diag d;
    tg_diag_init(&d);
    builtin = tg_rules_load(&path, 1, NULL, 0, &d);
    metrics_defs = builtin ? tg_metrics_defs_new(builtin, &d) : NULL;
    tg_diag_clear(&d);
    if (!builtin || !metrics_defs) {
        fprintf(stderr, "fuzz: cannot load %s\n", path);
        abort();
    }
    atexit(cleanup);
    return builtin;
}


static void broken_promise(tg_format fmt, const char *why, const char *text, size_t len, size_t at)
{
    size_t from = at > 40 ? at - 40 : 0, n = len - from < 120 ? len - from : 120;
    fprintf(stderr, "fuzz: the %s report breaks its promise: %s at byte %zu: ", tg_format_name(fmt), why, at);
    fwrite(text + from, 1, n, stderr);
    fputc('\n', stderr);
    abort();
}

void fz_report_checked(tg_format fmt, const tg_run_result *run, const tg_ruleset *rs, const tg_report_opts *ro)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return;
    tg_status st = tg_report_write(fmt, run, rs, ro, f);
    if (fclose(f) != 0 || st != TG_OK || !text) {
        free(text);
        return;
    }
    size_t at = 0;
    const char *why = NULL;
    if (fmt == TG_FMT_JSON || fmt == TG_FMT_SARIF) {
        json_error_t err;
        json_t *doc = json_loadb(text, len, 0, &err);
        if (!doc) why = "it is not JSON";
        json_decref(doc);
    } else if (!ro->color) {
        why = tg_logsafe_problem(text, len, fmt == TG_FMT_GITHUB, &at);
        if (!why && fmt == TG_FMT_MARKDOWN && len > TG_REPORT_COMMENT_MAX) why = "it is larger than a GitHub comment";
    }
    if (why) broken_promise(fmt, why, text, len, at);
    free(text);
}

/* Every format (all = true) or only text and JSON: reports dominate the
** cost of an execution, and each path needs them once. */
static void reports(const tg_ruleset *rs, tg_run_result *run, bool all)
{
    tg_report_opts ro = {.fail_on = TG_SEV_ERROR, .tool_version = "fuzz"};
    for (int f = 0; f < (all ? TG_FMT_COUNT : 2); f++) fz_report_checked((tg_format)f, run, rs, &ro);
}

/* Record a baseline from the run, write it, read it back and compare the
** run with it: the path `baseline record` + `check --baseline` takes. */
static void baseline_round_trip(const tg_ruleset *rs, tg_run_result *run)
{
    tg_diag diag;
    tg_diag_init(&diag);
    tg_baseline *b = tg_baseline_record(run, rs, "fuzz", "2025-01-01", &diag);
    tg_diag_clear(&diag);
    if (!b) return;
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (mem) {
        tg_baseline_write(b, mem);
        fclose(mem);
        tg_baseline *back = tg_baseline_load_string(text, len, "fuzz-baseline.yaml", &diag);
        tg_diag_clear(&diag);
        if (back) {
            tg_baseline_apply(back, rs, run, true, &diag);
            tg_diag_clear(&diag);
            reports(rs, run, false);
            tg_baseline_free(back);
        }
        free(text);
    }
    tg_baseline_free(b);
}

/* "rule verdict count;" of every result: what the lean load must repeat. */
static char *summary(const tg_trace_result *out)
{
    char *text = NULL;
    for (size_t i = 0; i < out->n_results; i++) {
        const tg_rule_result *r = &out->results[i];
        if (!tg_fixture_append(&text, "%s %d %lld;", r->rule, (int)r->verdict, (long long)r->count)) abort();
    }
    return text ? text : strdup("");
}

void fz_run_trace(tg_trace *t, const tg_ruleset *rs)
{
    if (!rs) rs = fz_builtin_rules();
    json_t *info = tg_info_json(t, NULL);
    json_decref(info);
    free(tg_info_text(t, NULL));

    tg_diag diag;
    tg_diag_init(&diag);
    tg_model_params mp = {0};
    tg_model *m = tg_model_build(t, &mp, &diag);
    tg_diag_clear(&diag);
    if (!m) return;

    fz_builtin_rules();   /* and metrics' definitions */
    json_t *metrics = tg_metrics_json(m, metrics_defs);
    if (metrics) {
        free(tg_metrics_text(metrics));
        json_decref(metrics);
    }

    tg_run_result run = {.arena = tg_arena_new()};
    if (!run.arena) abort();
    run.traces = tg_arena_alloc(run.arena, sizeof *run.traces);
    run.n_traces = 1;
    tg_trace_result *out = &run.traces[0];
    out->arena = tg_arena_new();
    out->file = t->path;
    for (int mode = 0; mode < 2; mode++) {
        tg_eval_opts eo = {.missing = mode ? TG_MISSING_SKIP : TG_MISSING_FAIL};
        tg_status st = tg_eval_model(rs, m, &eo, out->arena, out, &diag);
        tg_diag_clear(&diag);
        if (st == TG_OK && !mode) {
            free(last_summary);
            last_summary = summary(out);
        }
        if (st == TG_OK) reports(rs, &run, mode == 1);
        if (st == TG_OK && mode) baseline_round_trip(rs, &run);
    }
    tg_arena_free(out->arena);
    tg_arena_free(run.arena);
    tg_model_free(m);
}

/* The way `check` loads by default (engine/check: kernels as spans, the
** API table streamed keeping the calls a rule admits). Its verdicts and
** counts must be those of the full load (the oracle); a difference aborts. */
static void run_lean(const char *path, const tg_ruleset *rs)
{
    tg_diag diag;
    tg_diag_init(&diag);
    tg_check_plan plan = tg_check_plan_for(rs);
    tg_trace_result out = {0};
    if (tg_check_trace(&plan, path, &out, &diag) == TG_OK && last_summary) {
        char *lean_summary = summary(&out);
        if (strcmp(lean_summary, last_summary) != 0) {
            fprintf(stderr, "lean load differs from full load:\n  full: %s\n  lean: %s\n", last_summary,
                    lean_summary);
            abort();
        }
        free(lean_summary);
    }
    tg_diag_clear(&diag);
    tg_arena_free(out.arena);
}

void fz_run_path(const char *path, const tg_ruleset *rs)
{
    tg_diag diag;
    tg_diag_init(&diag);
    tg_trace *t = tg_trace_open(path, &diag);
    tg_diag_clear(&diag);
    if (!t) return;
    free(last_summary);
    last_summary = NULL;
    fz_run_trace(t, rs);
    tg_trace_close(t);
    run_lean(path, rs ? rs : fz_builtin_rules());
}

const char *fz_scratch_write(const uint8_t *data, size_t size)
{
    if (!scratch[0]) {
        const char *dir = getenv("TMPDIR");
        snprintf(scratch, sizeof scratch, "%s/tg-fuzz-XXXXXX.sqlite", dir && *dir ? dir : "/tmp");
        int fd = mkstemps(scratch, 7);
        if (fd < 0) abort();
        close(fd);
        fz_builtin_rules();   /* registers the cleanup */
    }
    int fd = open(scratch, O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0) abort();
    size_t off = 0;
    while (off < size) {
        ssize_t n = write(fd, data + off, size - off);
        if (n <= 0) abort();
        off += (size_t)n;
    }
    close(fd);
    return scratch;
}

char *fz_rows_sql(void)
{
    char *sql = NULL;
    bool ok = tg_fixture_append(&sql,
        "INSERT INTO StringIds VALUES (1,'saxpy'),(2,'cudaLaunchKernel'),(3,'cudaMemcpy'),"
        "(4,'cudaMemcpyAsync'),(5,'cudaMemset'),(6,'cudaStreamSynchronize'),"
        "(7,'ncclDevKernel_AllReduce_Sum_f32'),(8,'gemm'),(9,'CUDA profiling overhead'),"
        "(10,'iteration'),(11,'cuMemcpyHtoD_v2'),(12,'cuCtxSynchronize');"
        "INSERT INTO TARGET_INFO_GPU (id, name, smCount, totalMemory, computeMajor, computeMinor)"
        " VALUES (0,'NVIDIA H200',132,150000000000,9,0),(1,'NVIDIA H200',132,150000000000,9,0);"
        "INSERT INTO PROCESSES VALUES (%lld, 77, 'python');"
        "INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1700000000000000000, 'x', 'y');",
        (long long)tg_fixture_gpid(77));
    const int64_t gpid = tg_fixture_gpid(77), gtid = tg_fixture_gtid(77, 78);
    int64_t corr = 1, t0 = 1000000;
    for (int it = 0; it < 12 && ok; it++) {
        int64_t base = t0 + it * 2000000 + (it == 9 ? 600000000 : 0);   /* one long stall */
        ok = tg_fixture_append(&sql,
            "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES (%lld, %lld, 59, '%s', %lld);",
            (long long)base, (long long)(base + 1500000), it < 5 ? "warmup" : "iteration", (long long)gtid);
        for (int k = 0; k < 3 && ok; k++, corr++) {
            int64_t s = base + 10000 + k * 300000;
            int dev = k == 2 ? 1 : 0;
            ok = tg_fixture_append(&sql,
                "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, globalTid, correlationId, nameId)"
                " VALUES (%lld, %lld, %lld, %lld, 2);"
                "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId,"
                " correlationId, globalPid, demangledName, shortName, gridX, blockX, registersPerThread)"
                " VALUES (%lld, %lld, %d, 1, 7, %lld, %lld, %d, %d, 128, 256, 32);",
                (long long)s, (long long)(s + 5000), (long long)gtid, (long long)corr,
                (long long)(s + 20000), (long long)(s + 220000), dev, (long long)corr,
                (long long)gpid, k == 1 ? 7 : 8, k == 1 ? 7 : 1);
        }
        int64_t s = base + 1000000;
        ok = ok && tg_fixture_append(&sql,
            "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, globalTid, correlationId, nameId)"
            " VALUES (%lld, %lld, %lld, %lld, %d);"
            "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId,"
            " correlationId, globalPid, bytes, copyKind, srcKind, dstKind)"
            " VALUES (%lld, %lld, 0, 1, 7, %lld, %lld, %d, 1, 0, 2);",
            (long long)s, (long long)(s + 80000), (long long)gtid, (long long)corr, it % 2 ? 3 : 4,
            (long long)(s + 10000), (long long)(s + 70000), (long long)corr, (long long)gpid,
            it % 3 ? 16777216 : 4096);
        corr++;
        s += 100000;
        ok = ok && tg_fixture_append(&sql,
            "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, globalTid, correlationId, nameId)"
            " VALUES (%lld, %lld, %lld, %lld, 5);"
            "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, streamId,"
            " correlationId, globalPid, value, bytes, memKind) VALUES (%lld, %lld, 0, 1, 7, %lld, %lld, 0, 1024, %d);"
            "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, globalTid, correlationId, nameId)"
            " VALUES (%lld, %lld, %lld, %lld, %d);"
            "INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start, end, deviceId, contextId, streamId,"
            " correlationId, globalPid, syncType) VALUES (%lld, %lld, 0, 1, 7, %lld, %lld, 3);",
            (long long)s, (long long)(s + 30000), (long long)gtid, (long long)corr,
            (long long)(s + 5000), (long long)(s + 6000), (long long)corr, (long long)gpid, it % 2 ? 1 : 2,
            (long long)(s + 40000), (long long)(s + 300000), (long long)gtid, (long long)(corr + 1),
            it % 4 ? 6 : 12, (long long)(s + 40000), (long long)(s + 300000), (long long)(corr + 1),
            (long long)gpid);
        corr += 2;
    }
    ok = ok && tg_fixture_append(&sql,
        "INSERT INTO PROFILER_OVERHEAD (start, end, globalTid, nameId) VALUES (%lld, %lld, %lld, 9);"
        "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES (%lld, NULL, 34, 'mark', %lld);"
        "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES (%lld, %lld, 60, 'outer', %lld);",
        (long long)(t0 + 50000), (long long)(t0 + 90000), (long long)gtid, (long long)(t0 + 7), (long long)gtid,
        (long long)t0, (long long)(t0 + 700000000), (long long)gtid);
    if (!ok) {
        free(sql);
        return NULL;
    }
    return sql;
}
