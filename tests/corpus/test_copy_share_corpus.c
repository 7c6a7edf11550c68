/*
** Corpus test: the device source's steady copy share (busy_time_steady,
** copy_time_steady, copy_frac_steady; engine/model/model_device.c) against
** a direct SQL computation on the export. The steady window comes from
** tracegate (tests/corpus/device-facts.yaml reports it); the union of the
** device's copies, and of all its kernels, copies and memsets, clipped to
** that window, is recomputed with window functions (gaps and islands) and
** must agree to the nanosecond. The traces are those issue #22 names:
** copies dominate drv_sync_memcpy (99%) and drv_pinned_async (95%), not
** drv_train_run1 (13%) nor the realistic runs.
**
** The grouped evidence of alloc-in-loop and copy-dominated (every column of
** every cited group from its reproduce query) is checked with every other
** finding's by test_reproduce_corpus.c.
*/
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corpus.h"

static const struct {
    const char *file;
    double lo, hi;             /* the copy share the issue gives, as a range */
} traces[] = {
    {"h200-nsys/drv_sync_memcpy.sqlite", 0.99, 1.0},
    {"h200-nsys/drv_pinned_async.sqlite", 0.95, 0.96},
    {"h200-nsys/drv_train_run1.sqlite", 0.13, 0.14},
    {"h200-torch/realistic_nocache.sqlite", 0.0, 0.05},
    {"h200-torch/realistic_baseline_run1.sqlite", 0.0, 0.05},
};

/* Union of the intervals `sel` selects (columns start, end), clipped to
** [w0, w1]: -1 when the query fails. */
static long long sql_union(sqlite3 *db, const char *sel, long long w0, long long w1)
{
    char sql[4096];
    snprintf(sql, sizeof sql,
             "WITH ops AS (SELECT max(start, %lld) AS s, min(end, %lld) AS e FROM (%s) "
             "WHERE end > %lld AND start < %lld), "
             "ord AS (SELECT s, e, max(e) OVER (ORDER BY s, e ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) "
             "AS prev FROM ops), "
             "isl AS (SELECT s, e, sum(prev IS NULL OR s > prev) OVER (ORDER BY s, e ROWS UNBOUNDED PRECEDING) "
             "AS g FROM ord) "
             "SELECT coalesce(sum(ge - gs), 0) FROM (SELECT min(s) AS gs, max(e) AS ge FROM isl GROUP BY g)",
             w0, w1, sel, w0, w1);
    sqlite3_stmt *st;
    long long v = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    else
        print_error("union query fails: %s\n", sqlite3_errmsg(db));
    sqlite3_finalize(st);
    return v;
}

static bool has_table(sqlite3 *db, const char *name)
{
    sqlite3_stmt *st;
    bool yes = sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", -1, &st,
                                  NULL) == SQLITE_OK &&
               sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    return yes;
}

/* Busy work of one device: kernels, copies and memsets (the tables there). */
static void busy_select(sqlite3 *db, long long device, char *out, size_t size)
{
    static const char *const tables[] = {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
                                         "CUPTI_ACTIVITY_KIND_MEMSET"};
    size_t len = 0;
    out[0] = 0;
    for (size_t i = 0; i < 3; i++) {
        if (!has_table(db, tables[i])) continue;
        len += (size_t)snprintf(out + len, size - len, "%sSELECT start, end FROM %s WHERE deviceId = %lld",
                                len ? " UNION ALL " : "", tables[i], device);
    }
}

static int check_trace(const char *file, double lo, double hi)
{
    int failures = 0, st;
    json_t *doc = corpus_json(&st, "check --format json --rules '%s/tests/corpus/device-facts.yaml' '%s/%s'",
                              getenv("TG_SOURCE_ROOT"), corpus_traces, file);
    json_t *win = json_object_get(corpus_result(doc, "steady-window"), "values");
    long long w0 = json_integer_value(json_object_get(win, "min_start_ns"));
    long long w1 = json_integer_value(json_object_get(win, "max_end_ns"));
    json_t *ev = json_object_get(corpus_result(doc, "device-copy-share"), "evidence");
    char path[4096], sel[1024], busy[2048];
    snprintf(path, sizeof path, "file:%s/%s?mode=ro&immutable=1", corpus_traces, file);
    sqlite3 *db;
    if (w1 <= w0 || json_array_size(ev) == 0 ||
        sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL) != SQLITE_OK) {
        print_error("%s: no steady window or no device evidence\n", file);
        json_decref(doc);
        return 1;
    }
    size_t i;
    json_t *e;
    json_array_foreach(ev, i, e) {
        json_t *f = json_object_get(e, "fields");
        long long dev = json_integer_value(json_object_get(f, "device"));
        long long got_busy = json_integer_value(json_object_get(f, "busy_time_steady"));
        long long got_copy = json_integer_value(json_object_get(f, "copy_time_steady"));
        double got_frac = json_number_value(json_object_get(f, "copy_frac_steady"));
        snprintf(sel, sizeof sel, "SELECT start, end FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE deviceId = %lld", dev);
        busy_select(db, dev, busy, sizeof busy);
        long long want_copy = sql_union(db, sel, w0, w1), want_busy = sql_union(db, busy, w0, w1);
        if (got_copy != want_copy || got_busy != want_busy || want_busy <= 0 ||
            fabs(got_frac - (double)want_copy / (double)want_busy) > 1e-12) {
            print_error("%s device %lld: copy %lld busy %lld (%.6f), SQL says %lld / %lld\n", file, dev, got_copy,
                        got_busy, got_frac, want_copy, want_busy);
            failures++;
        }
        if (i == 0 && (got_frac < lo || got_frac > hi)) {
            print_error("%s: copy share %.4f outside [%.2f, %.2f]\n", file, got_frac, lo, hi);
            failures++;
        }
    }
    sqlite3_close(db);
    json_decref(doc);
    return failures;
}

static void test_copy_share_matches_sql(void **state)
{
    (void)state;
    int failures = 0;
    for (size_t i = 0; i < sizeof traces / sizeof *traces; i++)
        failures += check_trace(traces[i].file, traces[i].lo, traces[i].hi);
    assert_int_equal(failures, 0);
}

int main(void)
{
    if (!corpus_init("copy share corpus")) return 77;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_copy_share_matches_sql),
    };
    return cmocka_run_group_tests_name("corpus copy share", tests, NULL, NULL);
}
