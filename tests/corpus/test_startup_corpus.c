/*
** Start-up calls and the limit that applied, on the shared traces (issue
** 32, item 5; docs/rules.md, "Start-up calls", "Rows set aside" and
** "Messages"):
**
**   - on exports without iterations, alloc-in-loop and blocking-sync-api
**     set aside the calls made before their process's first kernel, say
**     how many and how long, and state the limit of the test without
**     iterations (a share of the trace), never "n/a per iteration";
**   - the set-aside numbers come back from the reproduce SQL (with the
**     thresholds moved by --set so that the rule fires and cites), and
**     from an independent query over the raw tables;
**   - on traces with iterations nothing is set aside (start-up is never in
**     a steady iteration) and the messages state the per-iteration limit,
**     so the verdicts of the shared README stand (verdicts_corpus checks
**     them all).
**
** Skips with a message when ../shared is absent.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "corpus.h"
#include "sqlrun.h"

#define DLPROF "public/dlprof-pytorch-rtx2070s-pyprof-nvtx-nsys2022.1.sqlite"
#define MOCK "public/nsysai-rtx3080-mock-minimal-nsys2026.1.sqlite"
#define SENDRECV "public/nsysai-h100-2gpu-nccl-sendrecv-before-0.3s-window-nsys2026.2.sqlite"

/* The allocation calls of alloc-in-loop's macro (rules.d/50-memory.yaml)
** that start before their process's first kernel, from the raw tables:
** count and total time, in one row. */
#define RAW_STARTUP_ALLOCS                                                                                   \
    "WITH c AS (SELECT r.start, r.\"end\", (r.globalTid >> 24) & 16777215 AS pid, s.value AS name "          \
    "FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId), "                              \
    "k AS (SELECT (globalPid >> 24) & 16777215 AS pid, min(start) AS first FROM CUPTI_ACTIVITY_KIND_KERNEL " \
    "GROUP BY 1) SELECT count(*) AS n, coalesce(sum(c.\"end\" - c.start), 0) AS t FROM c JOIN k "            \
    "ON k.pid = c.pid WHERE c.start < k.first AND (c.name GLOB 'cudaMalloc*' OR c.name GLOB 'cudaFree*' "    \
    "OR c.name GLOB 'cudaHostAlloc*' OR c.name GLOB 'cuMemAlloc*' OR c.name GLOB 'cuMemFree*' "              \
    "OR c.name GLOB 'cuMemHostAlloc*') AND instr(c.name, 'Async') = 0"

static json_t *check_json(const char *rel, const char *extra)
{
    int st;
    return corpus_json(&st, "check --format json --missing-data=skip %s '%s/%s'", extra, corpus_traces, rel);
}

static long long value_of(json_t *r, const char *name)
{
    return json_integer_value(json_object_get(json_object_get(r, "values"), name));
}

static const char *message_of(json_t *r)
{
    const char *m = json_string_value(json_object_get(r, "message"));
    return m ? m : "(no message)";
}

/* The raw query's (n, t) on an export. */
static void raw_startup(const char *rel, long long *n, long long *t)
{
    char path[4096], err[512];
    snprintf(path, sizeof path, "%s/%s", corpus_traces, rel);
    json_t *sets = sqlrun(path, RAW_STARTUP_ALLOCS, err, sizeof err);
    if (!sets) fail_msg("raw start-up query on %s: %s", rel, err);
    json_t *row = json_array_get(json_array_get(sets, 0), 0);
    *n = json_integer_value(json_object_get(row, "n"));
    *t = json_integer_value(json_object_get(row, "t"));
    json_decref(sets);
}

/* dlprof: 15 start-up allocation calls taking 2.08 s (the context's first
** cudaMalloc among them) would be the whole of alloc-in-loop's count. */
static void test_dlprof_startup_set_aside(void **state)
{
    (void)state;
    json_t *doc = check_json(DLPROF, "");
    json_t *r = corpus_result(doc, "alloc-in-loop");
    assert_non_null(r);
    assert_string_equal(corpus_status(doc, "alloc-in-loop"), "pass");
    assert_string_equal(message_of(r), "no finding: no api row matches; 15 start-up calls taking 2.08 s, "
                                       "before the first kernel, are not counted");
    long long n, t;
    raw_startup(DLPROF, &n, &t);
    assert_int_equal(value_of(r, "set_aside"), n);
    assert_int_equal(value_of(r, "set_aside_duration_ns"), t);
    assert_int_equal(n, 15);
    r = corpus_result(doc, "blocking-sync-api");
    assert_string_equal(corpus_status(doc, "blocking-sync-api"), "pass");
    assert_string_equal(message_of(r), "15 blocking synchronize calls (no iterations) blocked the host 850 us, "
                                       "0.0343% of the trace (limit 10%); 13 start-up calls taking 234 us, before "
                                       "the first kernel, are not counted");
    assert_null(strstr(message_of(r), "per iteration"));
    json_decref(doc);
}

/* The reproduce SQL of a firing alloc-in-loop (thresholds moved) gives the
** set-aside numbers the result states, on an export without iterations. */
static void test_mock_reproduce_set_aside(void **state)
{
    (void)state;
    json_t *doc = check_json(MOCK, "--set alloc-in-loop.min_calls=0 --set alloc-in-loop.max_alloc_time=0%");
    json_t *r = corpus_result(doc, "alloc-in-loop");
    assert_string_equal(corpus_status(doc, "alloc-in-loop"), "fail");
    assert_string_equal(message_of(r), "1 allocation and free call (no iterations; limit more than 0), 3.57 ms in "
                                       "them, 0.477% of the trace (limit 0%); 1 start-up call taking 769 us, before "
                                       "the first kernel, is not counted");
    const char *sql = json_string_value(json_object_get(r, "reproduce"));
    assert_non_null(sql);
    char path[4096], err[512];
    snprintf(path, sizeof path, "%s/%s", corpus_traces, MOCK);
    json_t *sets = sqlrun(path, sql, err, sizeof err);
    if (!sets) fail_msg("reproduce: %s", err);
    json_t *got = json_array_get(json_array_get(sets, 0), 0);
    assert_true(sqlrun_agrees(json_object_get(json_object_get(r, "values"), "set_aside"),
                              json_object_get(got, "set_aside"), 0));
    assert_true(sqlrun_agrees(json_object_get(json_object_get(r, "values"), "set_aside_duration_ns"),
                              json_object_get(got, "set_aside_duration_ns"), 0));
    long long n, t;
    raw_startup(MOCK, &n, &t);
    assert_int_equal(value_of(r, "set_aside"), n);
    assert_int_equal(value_of(r, "set_aside_duration_ns"), t);
    json_decref(sets);
    json_decref(doc);
}

/* A blocking finding without iterations states the share of the trace and
** its limit, and the start-up sync it did not count. */
static void test_sendrecv_blocking_limit(void **state)
{
    (void)state;
    json_t *doc = check_json(SENDRECV, "");
    json_t *r = corpus_result(doc, "blocking-sync-api");
    assert_string_equal(corpus_status(doc, "blocking-sync-api"), "fail");
    assert_string_equal(message_of(r), "32 blocking synchronize calls (no iterations) blocked the host 315 ms, "
                                       "105% of the trace (limit 10%); 1 start-up call taking 9.45 ms, before the "
                                       "first kernel, is not counted");
    assert_int_equal(value_of(r, "set_aside"), 1);
    json_decref(doc);
}

/* With iterations nothing is set aside and the per-iteration limit is said. */
static void test_iterations_unchanged(void **state)
{
    (void)state;
    static const char *const traces[] = {"h200-nsys/drv_sync_api.sqlite", "h200-torch/sync_memcpy_bad.sqlite",
                                         "h200-nsys/drv_steady.sqlite"};
    for (size_t i = 0; i < sizeof traces / sizeof *traces; i++) {
        json_t *doc = check_json(traces[i], "");
        const char *rules[] = {"alloc-in-loop", "blocking-sync-api"};
        for (size_t k = 0; k < 2; k++) {
            json_t *r = corpus_result(doc, rules[k]);
            assert_non_null(r);
            if (value_of(r, "set_aside") != 0)
                fail_msg("%s %s: %lld rows set aside in steady state", traces[i], rules[k], value_of(r, "set_aside"));
            assert_null(strstr(message_of(r), "not counted"));
        }
        const char *m = message_of(corpus_result(doc, "blocking-sync-api"));
        if (!strstr(m, "per iteration, limit 1)")) fail_msg("%s: %s", traces[i], m);
        json_decref(doc);
    }
}

int main(void)
{
    if (!corpus_init("start-up corpus")) return 77;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dlprof_startup_set_aside),
        cmocka_unit_test(test_mock_reproduce_set_aside),
        cmocka_unit_test(test_sendrecv_blocking_limit),
        cmocka_unit_test(test_iterations_unchanged),
    };
    return cmocka_run_group_tests_name("corpus start-up", tests, NULL, NULL);
}
