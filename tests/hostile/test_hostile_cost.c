/*
** Inputs whose cost grew faster than their size (issue #16, "Hangs and
** blow-ups"): many ops and calls sharing one correlation id (the launch
** join was quadratic in them), keys crafted to collide in the join's hash
** tables, long kernel names under backtracking-prone patterns, and macros
** that expand exponentially. Each runs the binary under the hostile
** deadline and checks the answer as well as the time: a fast wrong answer
** is no fix.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fixture.h"
#include "hostile.h"

#define N_DUP 200000
#define STR(x) #x
#define XSTR(x) STR(x)

#define SERIES(n) "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < " n ") "
#define STRINGS "INSERT INTO StringIds VALUES (1, 'k'), (2, 'cudaLaunchKernel'), (3, 'cudaMemcpy'), " \
                "(4, 'cudaLaunchKernel_v7000');"

/* metrics --format json on rows: exit 0 in time, and the document holds
** every one of the NULL-terminated parts. */
static void expect_metrics(const char *what, const char *rows, ...)
{
    char *p = tg_fixture_build(tg_fixture_schema_3_0, rows);
    assert_non_null(p);
    hx_result r;
    hx_run(&r, "metrics", "--format", "json", p);
    hx_expect_warnings(what, &r, 0, 0, NULL);
    va_list ap;
    va_start(ap, rows);
    for (const char *part; (part = va_arg(ap, const char *));)
        if (!strstr(r.out, part)) fail_msg("%s: the metrics lack %s", what, part);
    va_end(ap);
    hx_free(&r);
    tg_fixture_remove(p);
}

/* 200,000 kernels of one process under one correlation id, one call: the
** call launches them all (queue p50 = 980 + 10 * 100000.5 ns). */
static void test_kernels_sharing_an_id(void **state)
{
    (void)state;
    expect_metrics("200000 kernels sharing one correlation id",
        STRINGS SERIES(XSTR(N_DUP))
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, streamId, correlationId, globalPid,"
        " demangledName) SELECT 1000 + x * 10, 1005 + x * 10, 0, 7, 7, 1 << 24, 1 FROM c;"
        "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, globalTid, correlationId, nameId)"
        " VALUES (10, 20, (1 << 24) | 1, 7, 2);",
        "\"kernels\": 200000", "\"api_calls\": 1,", "\"queue_ns_p50\": 1000985.0", NULL);
}

/* The same with 1 MiB device-to-host copies, launched by a blocking
** cudaMemcpy: every one is a synchronous copy. */
static void test_copies_sharing_an_id(void **state)
{
    (void)state;
    expect_metrics("200000 copies sharing one correlation id",
        STRINGS SERIES(XSTR(N_DUP))
        "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, streamId, correlationId, globalPid,"
        " bytes, copyKind, srcKind, dstKind) SELECT 1000 + x * 10, 1005 + x * 10, 0, 7, 7, 1 << 24, 1 << 20, 2, 2, 0"
        " FROM c;"
        "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, globalTid, correlationId, nameId)"
        " VALUES (10, 20, (1 << 24) | 1, 7, 3);",
        "\"memcpys\": 200000", "\"api_calls\": 1,", "\"sync_memcpy\": 200000", NULL);
}

/* 100,000 kernels and 100,000 calls (cudaMemcpy and cudaLaunchKernel by
** turns) under one id. A call whose id the previous holder had under the
** same name is its twin (model_join.c): the copies make one call, the
** launches 50,000. The first launch (end 22) launches every kernel (queue
** p50 = 2000000 + 10 * 50000.5 - 22 ns), the later ones none. */
static void test_calls_and_kernels_sharing_an_id(void **state)
{
    (void)state;
    expect_metrics("100000 kernels and 100000 calls sharing one correlation id",
        STRINGS SERIES("100000")
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, streamId, correlationId, globalPid,"
        " demangledName) SELECT 2000000 + x * 10, 2000005 + x * 10, 0, 7, 7, 1 << 24, 1 FROM c;"
        SERIES("100000")
        "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, globalTid, correlationId, nameId)"
        " SELECT x * 10, x * 10 + 2, (1 << 24) | 1, 7, 2 + (x % 2) FROM c;",
        "\"kernels\": 100000", "\"api_calls\": 50001,", "\"duplicate_api_rows\": 49999",
        "\"queue_ns_p50\": 2499983.0", NULL);
}

/* 200,000 rows of one call (its twins, as old exports record a call twice,
** many times over): one call, the others duplicates of it. */
static void test_call_twins_by_the_thousand(void **state)
{
    (void)state;
    expect_metrics("200000 twins of one call",
        STRINGS SERIES(XSTR(N_DUP))
        "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, globalTid, correlationId, nameId)"
        " SELECT x * 10, x * 10 + 2, (1 << 24) | 1, 7, 2 + 2 * (x % 2) FROM c;"
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, streamId, correlationId, globalPid,"
        " demangledName) VALUES (3000000, 3000005, 0, 7, 7, 1 << 24, 1);",
        "\"api_calls\": 1,", "\"duplicate_api_rows\": 199999", NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kernels_sharing_an_id),
        cmocka_unit_test(test_copies_sharing_an_id),
        cmocka_unit_test(test_calls_and_kernels_sharing_an_id),
        cmocka_unit_test(test_call_twins_by_the_thousand),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
