/*
** Hostile rows in exports that are otherwise well formed: wrong column
** types, NULL where nsys writes NOT NULL, an end before its start,
** timestamps at the int64 limits, duplicate and missing correlation ids,
** every table empty, every row unusable, a million distinct NVTX names, a
** required column missing. The loader skips or clamps what it cannot use
** with one warning per table, and the gate still answers; an export that
** holds nothing usable is missing data (exit 3), never a silent pass.
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

#define STRINGS "INSERT INTO StringIds VALUES (1, 'saxpy'), (2, 'cudaLaunchKernel'), (3, 'cudaMemcpy');"
#define KERNEL "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, streamId, correlationId, " \
               "globalPid, demangledName, shortName) VALUES "
#define RUNTIME "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, globalTid, correlationId, nameId) VALUES "
#define NVTX "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES "

/* A fixture from shape + rows; the test owns it. */
static char *export_of(const char *schema, const char *rows_sql)
{
    char *p = tg_fixture_build(schema, rows_sql);
    assert_non_null(p);
    return p;
}

/* A capture of a few microseconds of GPU work is too little to judge for
** the utilization and starvation rules (docs/rules.md, "Too little to
** judge"): check exits 3 on such a fixture though every row was read. */
#define TOO_LITTLE 3

static void run3(const char *what, const char *path, int check_status, size_t warnings, const char *part)
{
    static const char *const cmds[] = {"check", "info", "metrics"};
    for (size_t i = 0; i < hx_commands(3); i++) {
        char label[128];
        snprintf(label, sizeof label, "%s %s", cmds[i], what);
        hx_result r;
        hx_run(&r, cmds[i], path);
        hx_expect_warnings(label, &r, i == 0 ? check_status : 0, warnings, part);
        hx_free(&r);
    }
}

static void test_text_in_start(void **state)
{
    (void)state;
    char *p = export_of(tg_fixture_schema_3_0,
        STRINGS KERNEL "('abc', 2000, 0, 7, 1, 1 << 24, 1, 1), (1000, 2000, 0, 7, 2, 1 << 24, 1, 1),"
                       "(x'00ff', 5000, 0, 7, 3, 1 << 24, 1, 1), (3000.5, 4000.25, 0, 7, 4, 1 << 24, 1, 1);"
        RUNTIME "(900, 950, (1 << 24) | 1, 2, 2);");
    run3("text and blob in start", p, TOO_LITTLE, 1, "CUPTI_ACTIVITY_KIND_KERNEL: skipped 2 rows");
    tg_fixture_remove(p);
}

static void test_wrong_types_elsewhere(void **state)
{
    (void)state;
    char *p = export_of(tg_fixture_schema_3_0,
        STRINGS KERNEL "(1000, 2000, 'gpu0', x'07', 'one', 'pid', 'saxpy', 99999), "
                       "(3000, 4000, 1e300, -1, 1.5, -9223372036854775808, -1, 1);"
        RUNTIME "(900, 950, 'tid', 'one', 'cudaLaunchKernel'), (2900, 2950, 1.5e19, 1.5, 2);"
        "INSERT INTO TARGET_INFO_GPU (id, name, smCount, totalMemory) VALUES ('zero', 7, 'many', -1);");
    run3("text/blob/real in id columns", p, TOO_LITTLE, 0, NULL);
    tg_fixture_remove(p);
}

/* nsys declares start/end and most ids NOT NULL; a converter may not. */
static void test_nulls_in_not_null_columns(void **state)
{
    (void)state;
    char *p = export_of(
        "CREATE TABLE StringIds (id INTEGER, value TEXT);"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER, contextId INTEGER,"
        "  streamId INTEGER, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER, shortName INTEGER,"
        "  gridX INTEGER, gridY INTEGER, gridZ INTEGER, blockX INTEGER, blockY INTEGER, blockZ INTEGER,"
        "  registersPerThread INTEGER, staticSharedMemory INTEGER, dynamicSharedMemory INTEGER);"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, globalTid INTEGER,"
        "  correlationId INTEGER, nameId INTEGER, returnValue INTEGER);",
        "INSERT INTO StringIds VALUES (NULL, 'x'), (1, NULL), (2, 'cudaLaunchKernel');"
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end) VALUES (NULL, 100), (100, NULL), (200, 300), (NULL, NULL);"
        "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, nameId) VALUES (150, 160, NULL), (NULL, 10, 2);");
    hx_result r;
    hx_run(&r, "check", "--missing-data=skip", p);
    hx_expect_warnings("check NULL in NOT NULL columns", &r, 0, 2, "skipped 3 rows");
    hx_free(&r);
    run3("NULL in NOT NULL columns", p, 3, 2, "whose start or end is missing");
    tg_fixture_remove(p);
}

static void test_end_before_start(void **state)
{
    (void)state;
    char *p = export_of(tg_fixture_schema_3_0,
        STRINGS KERNEL "(5000, 2000, 0, 7, 1, 1 << 24, 1, 1), (6000, 7000, 0, 7, 2, 1 << 24, 1, 1);"
        RUNTIME "(900, 100, (1 << 24) | 1, 1, 2);");
    run3("end before start", p, TOO_LITTLE, 2, "clamped 1 rows whose end precedes their start");
    tg_fixture_remove(p);
}

static void test_int64_limits(void **state)
{
    (void)state;
    char *p = export_of(tg_fixture_schema_3_0,
        STRINGS KERNEL "(9223372036854775807, 9223372036854775807, 0, 7, 1, 1 << 24, 1, 1),"
                       "(-9223372036854775807, 9223372036854775807, 0, 7, 2, 1 << 24, 1, 1),"
                       "(-9223372036854775808, 0, 0, 7, 3, 1 << 24, 1, 1),"
                       "(4611686018427387903, 4611686018427387903, 0, 7, 4, 1 << 24, 1, 1),"
                       "(1e19, 2e19, 0, 7, 5, 1 << 24, 1, 1),"
                       "(1000, 2000, 0, 7, 6, 1 << 24, 1, 1);"
        RUNTIME "(-9223372036854775807, 9223372036854775807, (1 << 24) | 1, 1, 2),"
                "(900, 950, (1 << 24) | 1, 6, 2);"
        NVTX "(-9223372036854775807, 9223372036854775807, 59, 'iteration', (1 << 24) | 1),"
             "(0, 9223372036854775807, 59, 'iteration', (1 << 24) | 1);");
    /* the kernels left (1000 and 2^62 - 1) have a 146-year idle gap: the gate fails */
    run3("timestamps at INT64_MAX / INT64_MIN", p, 1, 3, "out of range");
    tg_fixture_remove(p);
}

static void test_negative_and_huge_in_range(void **state)
{
    (void)state;
    /* within (-2^62, 2^62): accepted, and sums of durations saturate */
    char *sql = NULL;
    assert_true(tg_fixture_append(&sql, STRINGS));
    for (int i = 0; i < 8; i++)
        assert_true(tg_fixture_append(&sql, KERNEL "(-4611686018427387903, 4611686018427387903, %d, 7, %d, 1 << 24, 1, 1);"
                                      RUNTIME "(-4611686018427387903, 4611686018427387903, (1 << 24) | 1, %d, 2);",
                                      i % 2, i + 1, i + 1));
    assert_true(tg_fixture_append(&sql, NVTX "(-4611686018427387903, 4611686018427387903, 59, 'iteration', (1 << 24) | 1);"
                                        "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, correlationId, globalPid, bytes,"
                                        " copyKind) VALUES (-5000, -4000, 1, 1 << 24, 9223372036854775807, 1);"));
    char *p = export_of(tg_fixture_schema_3_0, sql);
    free(sql);
    /* one iteration has no period: iteration-variance has too few to judge,
    ** exit 3 (docs/rules.md, "Missing data"); every other rule judges */
    run3("overlapping 2^63 ns kernels, negative times", p, 3, 0, NULL);
    hx_result r;
    hx_run(&r, "check", p);
    assert_non_null(strstr(r.out, "ERROR error    iteration-variance"));
    assert_non_null(strstr(r.out, "too few to judge"));
    assert_null(strstr(r.out, "ERROR error    gpu-idle-gap"));
    hx_free(&r);
    tg_fixture_remove(p);
}

static void test_correlation_ids(void **state)
{
    (void)state;
    char *sql = NULL;
    assert_true(tg_fixture_append(&sql, STRINGS));
    /* 200 kernels and 200 calls sharing one id, then 200 of each without
    ** (calls that launch nothing: cudaMemcpy calls beside no copy would be
    ** copies the capture lost, missing data) */
    assert_true(tg_fixture_append(&sql, "INSERT INTO StringIds VALUES (4, 'cudaGetDevice');"));
    for (int i = 0; i < 200; i++)
        assert_true(tg_fixture_append(&sql, KERNEL "(%d, %d, 0, 7, 42, 1 << 24, 1, 1);"
                                      RUNTIME "(%d, %d, (1 << 24) | 1, 42, 2);"
                                      KERNEL "(%d, %d, 0, 7, NULL, 1 << 24, 1, 1);"
                                      RUNTIME "(%d, %d, (1 << 24) | 1, NULL, 4);",
                                      100000 + i * 1000, 100500 + i * 1000, 99000 + i * 1000, 99100 + i * 1000,
                                      400000 + i * 1000, 400500 + i * 1000, 399000 + i * 1000, 399100 + i * 1000));
    char *p = export_of(tg_fixture_schema_3_0, sql);
    free(sql);
    run3("duplicate and missing correlation ids", p, TOO_LITTLE, 0, NULL);   /* 0.5 ms of kernels */
    tg_fixture_remove(p);
}

static void test_zero_rows_everywhere(void **state)
{
    (void)state;
    char *p = export_of(tg_fixture_schema_3_0, NULL);
    hx_result r;
    hx_run(&r, "check", p);
    hx_expect_warnings("check zero rows in every table", &r, 3, 0, NULL);
    assert_non_null(strstr(r.out, "no events at all"));
    hx_free(&r);
    hx_run(&r, "check", "--missing-data=skip", p);
    hx_expect_warnings("check --missing-data=skip zero rows", &r, 0, 0, NULL);
    assert_non_null(strstr(r.out, "SKIP"));
    hx_free(&r);
    run3("zero rows in every table", p, 3, 0, NULL);
    tg_fixture_remove(p);
}

static void test_every_row_unusable(void **state)
{
    (void)state;
    char *p = export_of(tg_fixture_schema_3_0,
        STRINGS KERNEL "('a', 'b', 0, 7, 1, 1 << 24, 1, 1), (3.5e300, 5, 0, 7, 2, 1 << 24, 1, 1);"
        RUNTIME "(x'01', 5, (1 << 24) | 1, 1, 2);");
    hx_result r;
    hx_run(&r, "check", p);
    hx_expect_warnings("check every row unusable", &r, 3, 2, "skipped 2 rows");
    assert_non_null(strstr(r.out, "no events at all"));
    hx_free(&r);
    tg_fixture_remove(p);
}

static void test_missing_required_column(void **state)
{
    (void)state;
    char *p = export_of("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"
                        "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, deviceId INTEGER);",
                        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1, 0);");
    static const char *const cmds[] = {"check", "info", "metrics"};
    for (size_t i = 0; i < hx_commands(3); i++) {
        char label[96];
        snprintf(label, sizeof label, "%s kernel table without 'end'", cmds[i]);
        hx_result r;
        hx_run(&r, cmds[i], p);
        hx_expect_line(label, &r, 3, "end");
        hx_free(&r);
    }
    tg_fixture_remove(p);
}

/* Corrupt device ids: every row on another device. 4000 devices (rows
** alternating between them) still answer fast; more than 4096 distinct
** ids is a corrupt export (was quadratic: 100000 ids took minutes). */
static void test_device_ids(void **state)
{
    (void)state;
    char *p = export_of(tg_fixture_schema_3_0,
        STRINGS "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 200000)"
        " INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, streamId, correlationId, globalPid,"
        " demangledName, shortName) SELECT i * 10, i * 10 + 5, i % 4000, i % 7, i, (i % 50) << 24, 1, 1 FROM c;"
        /* one call: an empty API table beside kernels would be missing data */
        RUNTIME "(1, 2, (1 << 24) | 1, 1, 2);");
    run3("200000 kernels on 4000 devices", p, 0, 0, NULL);
    tg_fixture_remove(p);
    p = export_of(tg_fixture_schema_3_0,
        STRINGS "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 100000)"
        " INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, streamId, correlationId, globalPid,"
        " demangledName, shortName) SELECT i * 10, i * 10 + 5, i * 20000, i, i, 1 << 24, 1, 1 FROM c;"
        "INSERT INTO TARGET_INFO_GPU (id, name) VALUES (2147483647, 'max'), (-2147483648, 'min');");
    static const char *const cmds[] = {"check", "info", "metrics"};
    for (size_t i = 0; i < hx_commands(3); i++) {
        char label[96];
        snprintf(label, sizeof label, "%s 100000 distinct device ids", cmds[i]);
        hx_result r;
        hx_run(&r, cmds[i], p);
        hx_expect_line(label, &r, 3, "more than 4096 distinct GPU devices");
        hx_free(&r);
    }
    tg_fixture_remove(p);
}

static void test_million_nvtx_names(void **state)
{
    (void)state;
    char *p = export_of(tg_fixture_schema_3_0,
        STRINGS KERNEL "(100, 200, 0, 7, 1, 1 << 24, 1, 1);" RUNTIME "(50, 60, (1 << 24) | 1, 1, 2);"
        "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 1000000)"
        " INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid)"
        " SELECT i * 10, i * 10 + 5, 59, 'range_' || i, (1 << 24) | 1 FROM c;");
    static const char *const cmds[][3] = {{"check", NULL}, {"info", NULL}, {"info", "--format=json"},
                                          {"metrics", NULL}, {"metrics", "--format=json"}};
    for (size_t i = 0; i < hx_commands(sizeof cmds / sizeof *cmds); i++) {
        char label[96];
        snprintf(label, sizeof label, "%s %s 1e6 distinct NVTX names", cmds[i][0], cmds[i][1] ? cmds[i][1] : "");
        hx_result r;
        if (cmds[i][1]) hx_run(&r, cmds[i][0], cmds[i][1], p);
        else hx_run(&r, cmds[i][0], p);
        hx_expect_warnings(label, &r, !strcmp(cmds[i][0], "check") ? TOO_LITTLE : 0, 0, NULL);   /* one kernel */
        /* the output stays readable: names are summarized, not all listed */
        if (r.out_len > (1u << 20)) fail_msg("%s: %zu bytes of output", label, r.out_len);
        hx_free(&r);
    }
    tg_fixture_remove(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text_in_start),
        cmocka_unit_test(test_wrong_types_elsewhere),
        cmocka_unit_test(test_nulls_in_not_null_columns),
        cmocka_unit_test(test_end_before_start),
        cmocka_unit_test(test_int64_limits),
        cmocka_unit_test(test_negative_and_huge_in_range),
        cmocka_unit_test(test_correlation_ids),
        cmocka_unit_test(test_zero_rows_everywhere),
        cmocka_unit_test(test_every_row_unusable),
        cmocka_unit_test(test_missing_required_column),
        cmocka_unit_test(test_device_ids),
        cmocka_unit_test(test_million_nvtx_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
