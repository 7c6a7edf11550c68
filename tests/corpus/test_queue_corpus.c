/*
** Corpus test (issue 38, item 2): `metrics`' queue numbers against the
** peers' definitions (docs/rules.md, "Queue time"), on shared exports. The
** test reads each kernel's queue from the export by its own SQL (kernel
** start minus the end of the last-starting runtime or driver call of its
** process and correlation id: the nested row of a call recorded twice) and
** computes here, in C, the median with early kernels at 0 (HTA's launch
** delay) and the median without them (nsys stats kernexecsum), and their
** count; `metrics` must give the same, and its query for each must give it
** back on the export.
**
** Skips with a message when ../shared/traces is absent.
*/
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "corpus.h"
#include "sqlrun.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const traces[] = {
    "public/nvfuser-h200-nsys2025.1-nvtx-heavy.sqlite", "public/saxpy-mpi-cuda_nsys_perlmutter0.sqlite",
    "h200-nsys/drv_busy.sqlite", "h200-nsys/drv_starve.sqlite", "h200-torch/gpu_idle_bad.sqlite",
};

/* Each launched kernel's raw queue (may be negative). */
static const char raw_sql[] =
    "WITH calls AS (SELECT (globalTid >> 24) & 16777215 AS pid, correlationId AS corr, start, end FROM "
    "CUPTI_ACTIVITY_KIND_RUNTIME WHERE coalesce(correlationId, 0) != 0), "
    "last AS (SELECT c.pid, c.corr, c.end FROM calls c WHERE NOT EXISTS (SELECT 1 FROM calls d WHERE d.pid = "
    "c.pid AND d.corr = c.corr AND d.start > c.start)) "
    "SELECT k.start - l.end AS q FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN last l ON l.pid = (k.globalPid >> 24) "
    "& 16777215 AND l.corr = k.correlationId ORDER BY q";

static double median(const double *v, size_t n)
{
    if (!n) return NAN;
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void same(const char *file, const char *what, double want, const json_t *got)
{
    if (isnan(want)) {
        if (!json_is_null(got)) fail_msg("%s: %s should be null", file, what);
        return;
    }
    if (!json_is_number(got) || fabs(json_number_value(got) - want) > 1e-6 * fmax(1, fabs(want)))
        fail_msg("%s: %s is %g, the export's kernels give %g", file, what, json_is_number(got) ?
                 json_number_value(got) : NAN, want);
}

/* The number `column` of the first result set of query `sql`. */
static const json_t *from_query(json_t *sets, const char *column)
{
    return json_object_get(json_array_get(json_array_get(sets, 0), 0), column);
}

static void check_trace(const char *rel)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", corpus_traces, rel);
    if (access(path, R_OK) != 0) fail_msg("%s is absent", path);
    char err[512];
    json_t *sets = sqlrun(path, raw_sql, err, sizeof err);
    if (!sets) fail_msg("%s: %s", rel, err);
    json_t *rows = json_array_get(sets, 0);
    size_t n = json_array_size(rows), n_after = 0;
    double *all = calloc(n + 1, sizeof *all), *after = calloc(n + 1, sizeof *after);
    assert_true(all && after);
    for (size_t i = 0; i < n; i++) {
        double q = json_number_value(json_object_get(json_array_get(rows, i), "q"));
        all[i] = q < 0 ? 0 : q;
        if (q >= 0) after[n_after++] = q;
    }
    json_decref(sets);
    qsort(all, n, sizeof *all, cmp);
    int status;
    json_t *doc = corpus_json(&status, "metrics --format json '%s'", path);
    json_t *m = json_array_get(json_object_get(doc, "traces"), 0);
    if (!m) m = doc;
    same(rel, "queue_ns_p50", median(all, n), json_object_get(m, "queue_ns_p50"));
    same(rel, "queue_ns_p50_unclamped", median(after, n_after), json_object_get(m, "queue_ns_p50_unclamped"));
    same(rel, "queue_clamped", (double)(n - n_after), json_object_get(m, "queue_clamped"));
    static const char *const keys[][2] = {{"queue_ns_p50", "p50_queue_ns"},
                                          {"queue_ns_p50_unclamped", "p50_queue_ns"},
                                          {"queue_clamped", "count"}};
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
        const char *sql = json_string_value(json_object_get(json_object_get(m, "queries"), keys[k][0]));
        if (!sql) fail_msg("%s: no query for %s", rel, keys[k][0]);
        json_t *got = sqlrun(path, sql, err, sizeof err);
        if (!got) fail_msg("%s: %s: %s", rel, keys[k][0], err);
        const json_t *v = from_query(got, keys[k][1]);
        double want = json_number_value(json_object_get(m, keys[k][0]));
        if (json_is_null(json_object_get(m, keys[k][0]))) want = NAN;
        same(rel, keys[k][0], want, v);
        json_decref(got);
    }
    printf("%s: %zu kernels, %zu started before their call returned; p50 %g ns clamped, %g ns without them\n", rel,
           n, n - n_after, median(all, n), median(after, n_after));
    free(all);
    free(after);
    json_decref(doc);
}

static void test_queue_medians(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof traces / sizeof *traces; i++) check_trace(traces[i]);
}

int main(void)
{
    if (!corpus_init("queue time against the peers' definitions (issue 38)")) return 77;
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_queue_medians)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
