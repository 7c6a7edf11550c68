/*
** --max-memory SIZE for check, info and metrics: an export whose loading
** is estimated (tg_trace_estimate_bytes: row counts and name lengths, read
** with cheap SQL counts) to need more than SIZE is refused before it is
** read, with exit 3 and "FILE: needs more than SIZE (--max-memory)",
** instead of meeting the OOM killer half way through a CI job. A limit
** above the need changes nothing; a malformed size is a usage error.
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
#include "trace/trace.h"

static char *big_export(void)
{
    /* 200000 NVTX ranges with distinct names and as many kernels: about
    ** 120 MiB by the estimate (peak RSS of check about 80 MiB) */
    char *p = tg_fixture_build(tg_fixture_schema_3_0,
        "INSERT INTO StringIds VALUES (1, 'k'), (2, 'cudaLaunchKernel');"
        "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 200000)"
        " INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid)"
        " SELECT i * 10, i * 10 + 5, 59, 'range_' || i, (1 << 24) | 1 FROM c;"
        "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 200000)"
        " INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, streamId, correlationId, globalPid,"
        " demangledName, shortName) SELECT i * 10, i * 10 + 4, 0, 7, i, 1 << 24, 1, 1 FROM c;"
        /* one call: an empty API table beside kernels would be missing data */
        "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, globalTid, correlationId, nameId)"
        " VALUES (1, 2, (1 << 24) | 1, 1, 2);");
    assert_non_null(p);
    return p;
}

static void test_estimate(void **state)
{
    (void)state;
    char *p = big_export();
    int64_t need = tg_trace_estimate_bytes(p);
    printf("  estimate for 200000 kernels + 200000 named ranges: %.1f MiB\n", (double)need / 1048576.0);
    assert_true(need > 40 * 1048576LL && need < 200 * 1048576LL);
    assert_int_equal(tg_trace_estimate_bytes("/dev/zero"), -1);
    assert_int_equal(tg_trace_estimate_bytes("/nonexistent/trace.sqlite"), -1);
    tg_diag d;
    tg_diag_init(&d);
    assert_true(tg_trace_fits(p, 0, &d));              /* no limit */
    assert_true(tg_trace_fits(p, need, &d));
    assert_false(tg_trace_fits(p, 16 * 1048576LL, &d));
    assert_int_equal(d.n_errors, 1);
    assert_int_equal(d.status, TG_ETRACE);
    assert_non_null(strstr(d.msgs[0].text, "needs more than 16 MiB (--max-memory)"));
    tg_diag_clear(&d);
    tg_fixture_remove(p);
}

static void test_refused_over_the_limit(void **state)
{
    (void)state;
    char *p = big_export();
    static const char *const cmds[] = {"check", "info", "metrics"};
    for (size_t i = 0; i < 3; i++) {
        char label[96];
        snprintf(label, sizeof label, "%s --max-memory 16MiB (needs ~120 MiB)", cmds[i]);
        hx_result r;
        hx_run(&r, cmds[i], "--max-memory", "16MiB", p);
        hx_expect_line(label, &r, 3, "needs more than 16 MiB (--max-memory)");
        assert_non_null(strstr(r.err, p));
        hx_free(&r);
        snprintf(label, sizeof label, "%s --max-memory=4GiB", cmds[i]);
        hx_run(&r, cmds[i], "--max-memory=4GiB", p);
        hx_expect_warnings(label, &r, 0, 0, NULL);
        hx_free(&r);
    }
    tg_fixture_remove(p);
}

static void test_bad_sizes(void **state)
{
    (void)state;
    static const char *const bad[] = {"0", "-5MiB", "12XB", "lots", "1e30GiB", ""};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char label[64];
        snprintf(label, sizeof label, "check --max-memory '%s'", bad[i]);
        hx_result r;
        hx_run(&r, "check", "--max-memory", bad[i], "/dev/null");
        hx_expect_line(label, &r, 2, "--max-memory");
        hx_free(&r);
    }
    int64_t b;
    assert_true(tg_parse_size("512MiB", &b) && b == 512LL << 20);
    assert_true(tg_parse_size("2gib", &b) && b == 2LL << 30);
    assert_true(tg_parse_size("1.5GB", &b) && b == 1500000000LL);
    assert_true(tg_parse_size("800M", &b) && b == 800LL << 20);
    assert_true(tg_parse_size("4096", &b) && b == 4096);
    assert_false(tg_parse_size("0.1", &b));
    char buf[32];
    tg_format_size(512LL << 20, buf, sizeof buf);
    assert_string_equal(buf, "512 MiB");
    tg_format_size(1536LL << 20, buf, sizeof buf);
    assert_string_equal(buf, "1.5 GiB");
    tg_format_size(900, buf, sizeof buf);
    assert_string_equal(buf, "900 bytes");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_estimate),
        cmocka_unit_test(test_refused_over_the_limit),
        cmocka_unit_test(test_bad_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
