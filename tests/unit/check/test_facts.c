/*
** How info and metrics read a trace (engine/check/facts.c), on fixtures:
** info keeps one API row per calling process while counting every call
** (process ids small enough for the id map's dense array and one past
** it), metrics' model keeps only the blocking calls, and both refuse a
** trace over --max-memory before reading it.
*/
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "check/check.h"
#include "fixture.h"

/* Five calls of three processes (7, 4000000, 9): two launches and a
** synchronize of 7, a launch of 4000000, a launch of 9. */
static const char *const five_calls =
    "INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel_v7000'), (2, 'cudaStreamSynchronize_v3020');"
    "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, globalTid, correlationId, nameId) VALUES"
    " (100, 110, (7 << 24) | 7, 1, 1), (200, 210, (4000000 << 24) | 1, 2, 1),"
    " (300, 310, (7 << 24) | 7, 3, 1), (400, 500, (7 << 24) | 7, 4, 2), (600, 610, (9 << 24) | 9, 5, 1);";

/* The five calls as an export on disk, and a fresh diag. */
static char *five_calls_export(tg_diag *d)
{
    char *path = tg_fixture_build(tg_fixture_schema_3_0, five_calls);
    assert_non_null(path);
    tg_diag_init(d);
    return path;
}

static bool has_pid(const tg_trace *t, int32_t pid)
{
    for (size_t i = 0; i < t->n_apis; i++)
        if (t->apis[i].pid == pid) return true;
    return false;
}

static void test_info_one_row_per_process(void **state)
{
    (void)state;
    tg_diag d;
    char *path = five_calls_export(&d);
    tg_facts_plan plan = {.threads = 2};
    tg_trace *t = tg_check_open_info(&plan, path, &d);
    assert_non_null(t);
    assert_int_equal(tg_trace_api_rows(t), 5);   /* every call counted */
    assert_int_equal(t->n_apis, 3);              /* one kept per process */
    assert_true(has_pid(t, 7) && has_pid(t, 4000000) && has_pid(t, 9));
    tg_trace_close(t);
    tg_diag_clear(&d);
    tg_fixture_remove(path);
}

static void test_metrics_keeps_blocking_calls(void **state)
{
    (void)state;
    tg_diag d;
    char *path = five_calls_export(&d);
    tg_facts_plan plan = {.threads = 1};
    tg_trace *t = tg_check_open_metrics(&plan, path, &d);
    assert_non_null(t);
    tg_model *m = tg_check_model_metrics(&plan, t, &d);
    assert_non_null(m);
    assert_int_equal(tg_trace_api_rows(t), 5);
    assert_int_equal(t->n_apis, 1);              /* the synchronize */
    assert_true(t->apis[0].blocking);
    assert_int_equal(t->apis[0].start, 400);
    tg_model_free(m);
    tg_trace_close(t);
    tg_diag_clear(&d);
    tg_fixture_remove(path);
}

static void test_max_memory_refuses_before_reading(void **state)
{
    (void)state;
    tg_diag d;
    char *path = five_calls_export(&d);
    tg_facts_plan plan = {.max_memory = 1};
    assert_null(tg_check_open_info(&plan, path, &d));
    assert_true(d.n_errors > 0 && strstr(d.msgs[0].text, "--max-memory"));
    tg_diag_clear(&d);
    tg_diag_init(&d);
    assert_null(tg_check_open_metrics(&plan, path, &d));
    assert_true(d.n_errors > 0 && strstr(d.msgs[0].text, "--max-memory"));
    tg_diag_clear(&d);
    tg_fixture_remove(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_info_one_row_per_process),
        cmocka_unit_test(test_metrics_keeps_blocking_calls),
        cmocka_unit_test(test_max_memory_refuses_before_reading),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
