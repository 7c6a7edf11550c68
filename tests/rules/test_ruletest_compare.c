/*
** The rule-test comparer (engine/ruletest/ruletest_compare.c): expectations
** read from a test text against rule results built by hand. Every kind of
** difference is reported once, with the expected value as written and the
** actual one as a literal of the rule language; values within a tolerance
** and floating-point noise pass.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ruletest/ruletest_int.h"

static tg_ruletest_file *file;
static tg_arena *arena;

/* One case whose `expect:` is the given flow mapping. */
static const tg_rt_case *expect(const char *expect_yaml)
{
    char text[4096];
    snprintf(text, sizeof text,
             "version: 1\ntests:\n  - name: t\n    rule: r\n    input: {trace: x.sqlite}\n    expect: %s\n",
             expect_yaml);
    tg_diag d;
    tg_diag_init(&d);
    tg_ruletest_free(file);
    file = tg_ruletest_load_text("c.test.yaml", text, strlen(text), &d);
    for (size_t k = 0; k < d.n; k++) print_error("%d:%d %s\n", d.msgs[k].pos.line, d.msgs[k].pos.col, d.msgs[k].text);
    assert_non_null(file);
    tg_diag_clear(&d);
    return &file->cases[0];
}

static tg_named_value values[8];
static tg_named_value ev_fields[2];
static tg_evidence evidence[3];

/* A failing sync-memcpy-like result: 2 copies, 2 rows cited. */
static tg_rule_result result(void)
{
    values[0] = (tg_named_value){"count", tg_int(2, TG_UNIT_NONE)};
    values[1] = (tg_named_value){"sum_duration_ns", tg_int(3000000, TG_UNIT_NS)};
    values[2] = (tg_named_value){"sum_bytes", tg_int(33554432, TG_UNIT_BYTES)};
    values[3] = (tg_named_value){"cv_period", tg_float(0.2 + 1e-16, TG_UNIT_NONE)};
    values[4] = (tg_named_value){"min_busy_frac_steady", tg_float(0.3, TG_UNIT_RATIO)};
    values[5] = (tg_named_value){"p50_queue_ns", tg_null()};
    values[6] = (tg_named_value){"trace_schema_version", tg_str("3.0.0")};
    ev_fields[0] = (tg_named_value){"api", tg_str("cuMemcpyHtoD")};
    ev_fields[1] = (tg_named_value){"bytes", tg_int(16777216, TG_UNIT_BYTES)};
    evidence[0] = (tg_evidence){.table = "CUPTI_ACTIVITY_KIND_MEMCPY", .rowid = 2, .start = 5000000,
                                .end = 7000000, .fields = ev_fields, .n_fields = 2, .next_rowid = -1, .row = -1};
    evidence[1] = (tg_evidence){.table = "CUPTI_ACTIVITY_KIND_MEMCPY", .rowid = 1, .start = 1000000,
                                .end = 2000000, .fields = ev_fields, .n_fields = 2, .next_rowid = -1, .row = -1};
    return (tg_rule_result){.rule = "r", .verdict = TG_V_FAIL, .count = 2,
                            .message = "2 synchronous copies blocked the host for 3 ms",
                            .values = values, .n_values = 7, .evidence = evidence, .n_evidence = 2};
}

static tg_rt_result compare(const tg_rt_case *c, const tg_rule_result *res)
{
    tg_rt_result r = {0};
    assert_true(tg_ruletest_compare(c, res, arena, &r));
    for (size_t i = 0; i < r.n_diffs; i++)
        print_message("  %s: expected %s, actual %s\n", r.diffs[i].what, r.diffs[i].expected, r.diffs[i].actual);
    return r;
}

static void assert_diff(const tg_rt_result *r, size_t i, const char *what, const char *expected, const char *actual)
{
    assert_true(i < r->n_diffs);
    assert_string_equal(r->diffs[i].what, what);
    assert_string_equal(r->diffs[i].expected, expected);
    assert_string_equal(r->diffs[i].actual, actual);
}

static void test_all_match(void **state)
{
    (void)state;
    tg_rule_result res = result();
    const tg_rt_case *c = expect(
        "{status: fail, count: 2, message: \"blocked the host\","
        " values: {count: 2, sum_duration_ns: 3ms, sum_bytes: 32MiB, cv_period: 0.2,"
        "          min_busy_frac_steady: 30%, p50_queue_ns: null, trace_schema_version: \"3.0.0\"},"
        " evidence: [{rowid: 2, start: 5ms, end: 7ms, table: CUPTI_ACTIVITY_KIND_MEMCPY, api: cuMemcpyHtoD},"
        "            {rowid: 1, bytes: 16MiB}]}");
    tg_rt_result r = compare(c, &res);
    assert_true(r.passed);
    assert_int_equal(r.n_diffs, 0);
    assert_int_equal(r.verdict, TG_V_FAIL);
    assert_int_equal(r.count, 2);
    assert_string_equal(r.message, res.message);
    /* only what is given is compared */
    r = compare(expect("{status: fail}"), &res);
    assert_true(r.passed);
}

static void test_status_count_message(void **state)
{
    (void)state;
    tg_rule_result res = result();
    tg_rt_result r = compare(expect("{status: pass, count: 0, message: \"no finding\"}"), &res);
    assert_false(r.passed);
    assert_int_equal(r.n_diffs, 3);
    assert_diff(&r, 0, "status", "pass", "fail");
    assert_diff(&r, 1, "count", "0", "2");
    assert_diff(&r, 2, "message", "contains \"no finding\"", "\"2 synchronous copies blocked the host for 3 ms\"");
    res.verdict = TG_V_SKIP;
    r = compare(expect("{status: error}"), &res);
    assert_diff(&r, 0, "status", "error", "skip");
}

static void test_values(void **state)
{
    (void)state;
    tg_rule_result res = result();
    tg_rt_result r = compare(
        expect("{status: fail, values: {sum_duration_ns: 2ms, sum_bytes: 32MB, cv_period: 0.21,"
               " min_busy_frac_steady: 0.31, p50_queue_ns: 10us, trace_schema_version: \"3.1.0\", nope: 1}}"),
        &res);
    assert_false(r.passed);
    assert_int_equal(r.n_diffs, 7);
    assert_diff(&r, 0, "values.sum_duration_ns", "2ms", "3ms");
    assert_diff(&r, 1, "values.sum_bytes", "32MB", "33554432B");
    assert_diff(&r, 2, "values.cv_period", "0.21", "0.2");
    assert_diff(&r, 3, "values.min_busy_frac_steady", "0.31", "0.3");
    assert_diff(&r, 4, "values.p50_queue_ns", "10us", "null");
    assert_diff(&r, 5, "values.trace_schema_version", "\"3.1.0\"", "\"3.0.0\"");
    assert_diff(&r, 6, "values.nope", "1",
                "(no such value; the result has count, sum_duration_ns, sum_bytes, cv_period, "
                "min_busy_frac_steady, p50_queue_ns, trace_schema_version)");
}

static void test_units_and_tolerances(void **state)
{
    (void)state;
    tg_rule_result res = result();
    /* a unit written must be the value's; a plain number matches any */
    tg_rt_result r = compare(expect("{status: fail, values: {sum_duration_ns: 3000000B, sum_bytes: 33554432}}"), &res);
    assert_int_equal(r.n_diffs, 1);
    assert_diff(&r, 0, "values.sum_duration_ns", "3000000B", "3ms");
    /* absolute tolerance in the value's unit, inclusive */
    r = compare(expect("{status: fail, values: {sum_duration_ns: {value: 3.1ms, tolerance: 100us}}}"), &res);
    assert_true(r.passed);
    r = compare(expect("{status: fail, values: {sum_duration_ns: {value: 3.1ms, tolerance: 99us}}}"), &res);
    assert_diff(&r, 0, "values.sum_duration_ns", "3.1ms +- 99us", "3ms");
    /* relative tolerance as a percentage */
    r = compare(expect("{status: fail, values: {cv_period: {value: 0.21, tolerance: 5%}}}"), &res);
    assert_true(r.passed);
    r = compare(expect("{status: fail, values: {cv_period: {value: 0.21, tolerance: 4%}}}"), &res);
    assert_diff(&r, 0, "values.cv_period", "0.21 +- 4%", "0.2");
    /* a percentage value: percentage points */
    r = compare(expect("{status: fail, values: {min_busy_frac_steady: {value: 31%, tolerance: 1%}}}"), &res);
    assert_true(r.passed);
    r = compare(expect("{status: fail, values: {min_busy_frac_steady: {value: 31%, tolerance: 0.5%}}}"), &res);
    assert_false(r.passed);
    /* nanosecond values print in the largest unit that keeps them whole */
    values[1].value = tg_int(1500001, TG_UNIT_NS);
    r = compare(expect("{status: fail, values: {sum_duration_ns: 1.5ms}}"), &res);
    assert_diff(&r, 0, "values.sum_duration_ns", "1.5ms", "1500001ns");
    values[1].value = tg_int(1500000, TG_UNIT_NS);
    r = compare(expect("{status: fail, values: {sum_duration_ns: 1ms}}"), &res);
    assert_diff(&r, 0, "values.sum_duration_ns", "1ms", "1500us");
    values[1].value = tg_float(NAN, TG_UNIT_NS);
    r = compare(expect("{status: fail, values: {sum_duration_ns: 1ms}}"), &res);
    assert_diff(&r, 0, "values.sum_duration_ns", "1ms", "nan");
}

static void test_evidence(void **state)
{
    (void)state;
    tg_rule_result res = result();
    tg_rt_result r = compare(expect("{status: fail, evidence: [{rowid: 1, api: cuMemcpyDtoH}, {rowid: 1, size: 1}, {rowid: 9}]}"),
                             &res);
    assert_false(r.passed);
    assert_int_equal(r.n_diffs, 5);
    assert_diff(&r, 0, "evidence", "3 rows", "2 rows");
    assert_diff(&r, 1, "evidence[0].rowid", "1", "2");
    assert_diff(&r, 2, "evidence[0].api", "\"cuMemcpyDtoH\"", "\"cuMemcpyHtoD\"");
    assert_diff(&r, 3, "evidence[1].size", "1", "(no such column; the row has table, rowid, start, end, api, bytes)");
    assert_diff(&r, 4, "evidence[2]", "{rowid: 9}", "(no such row)");
    /* rows cited beyond the expected ones are listed */
    r = compare(expect("{status: fail, evidence: [{rowid: 2}]}"), &res);
    assert_int_equal(r.n_diffs, 2);
    assert_diff(&r, 0, "evidence", "1 row", "2 rows");
    assert_diff(&r, 1, "evidence[1]", "(no such row)", "CUPTI_ACTIVITY_KIND_MEMCPY rowid 1 start 1ms");
    /* evidence: [] means no row may be cited */
    r = compare(expect("{status: fail, evidence: []}"), &res);
    assert_diff(&r, 0, "evidence", "0 rows", "2 rows");
    res.n_evidence = 0;
    r = compare(expect("{status: fail, evidence: []}"), &res);
    assert_true(r.passed);
    /* a null end (derived rows) compares as null */
    res.n_evidence = 1;
    evidence[0].end = TG_NULL_I64;
    r = compare(expect("{status: fail, evidence: [{end: null, start: 5ms}]}"), &res);
    assert_true(r.passed);
}

static int setup(void **state)
{
    (void)state;
    arena = tg_arena_new();
    return arena ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    tg_ruletest_free(file);
    tg_arena_free(arena);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_match),
        cmocka_unit_test(test_status_count_message),
        cmocka_unit_test(test_values),
        cmocka_unit_test(test_units_and_tolerances),
        cmocka_unit_test(test_evidence),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
