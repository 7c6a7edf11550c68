/*
** Human-readable numbers (engine/report/units.h): three significant
** digits, the unit chosen after rounding, units from a value or its name.
*/
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <cmocka.h>

#include "report/units.h"

#define CHECK(fn, x, want) do { char b_[TG_UNITS_BUF]; assert_string_equal(fn(b_, sizeof b_, (x)), want); } while (0)

static void test_duration(void **state)
{
    (void)state;
    CHECK(tg_units_duration, 0, "0 ns");
    CHECK(tg_units_duration, 950, "950 ns");
    CHECK(tg_units_duration, 999, "999 ns");
    CHECK(tg_units_duration, 1000, "1.00 us");
    CHECK(tg_units_duration, 1234, "1.23 us");
    CHECK(tg_units_duration, 12345, "12.3 us");
    CHECK(tg_units_duration, 999700, "1.00 ms");     /* rounds up into the next unit */
    CHECK(tg_units_duration, 123456789, "123 ms");
    CHECK(tg_units_duration, 1.2e9, "1.20 s");
    CHECK(tg_units_duration, 61.5e9, "61.5 s");
    CHECK(tg_units_duration, 12345e9, "12345 s");    /* seconds keep their digits */
    CHECK(tg_units_duration, -2500, "-2.50 us");
    CHECK(tg_units_duration, NAN, "nan ns");
}

static void test_bytes(void **state)
{
    (void)state;
    CHECK(tg_units_bytes, 512, "512 B");
    CHECK(tg_units_bytes, 64000, "64.0 KB");
    CHECK(tg_units_bytes, 16777216, "16.8 MB");
    CHECK(tg_units_bytes, 80e9, "80.0 GB");
    CHECK(tg_units_bytes, 1.5e12, "1.50 TB");
}

static void test_ratio_and_change(void **state)
{
    (void)state;
    CHECK(tg_units_ratio, 0.31, "31.0%");
    CHECK(tg_units_ratio, 1.0, "100%");
    CHECK(tg_units_ratio, 0.0314, "3.14%");
    CHECK(tg_units_ratio, 0.001234, "0.123%");
    CHECK(tg_units_ratio, 0, "0%");
    CHECK(tg_units_change, 0.065, "+6.50%");
    CHECK(tg_units_change, -0.0909, "-9.09%");
    CHECK(tg_units_change, 0, "0%");
    CHECK(tg_units_change, NAN, "n/a");
    CHECK(tg_units_change, INFINITY, "+inf%");
    CHECK(tg_units_number, 3, "3");
    CHECK(tg_units_number, 0.123456, "0.1235");
    CHECK(tg_units_number, -INFINITY, "-inf");
}

static void test_from_name(void **state)
{
    (void)state;
    assert_int_equal(tg_units_from_name("sum_duration_ns"), TG_UNIT_NS);
    assert_int_equal(tg_units_from_name("p50_period_ns"), TG_UNIT_NS);
    assert_int_equal(tg_units_from_name("p50(gpu_time)"), TG_UNIT_NS);
    assert_int_equal(tg_units_from_name("duration"), TG_UNIT_NS);
    assert_int_equal(tg_units_from_name("sum_bytes"), TG_UNIT_BYTES);
    assert_int_equal(tg_units_from_name("busy_frac_steady"), TG_UNIT_RATIO);
    assert_int_equal(tg_units_from_name("nccl_overlap"), TG_UNIT_RATIO);
    assert_int_equal(tg_units_from_name("blocked_ratio"), TG_UNIT_RATIO);
    assert_int_equal(tg_units_from_name("count"), TG_UNIT_NONE);
    assert_int_equal(tg_units_from_name("nsys"), TG_UNIT_NONE);   /* a word, not a suffix */
    assert_int_equal(tg_units_from_name(NULL), TG_UNIT_NONE);
}

static void test_value(void **state)
{
    (void)state;
    char b[TG_UNITS_BUF];
    tg_value v = tg_int(1500000, TG_UNIT_NONE);
    assert_string_equal(tg_units_value(b, sizeof b, "max_gap_ns", &v), "1.50 ms");   /* by name */
    assert_string_equal(tg_units_value(b, sizeof b, "count", &v), "1500000");
    v = tg_int(2048, TG_UNIT_BYTES);                                                /* unit wins */
    assert_string_equal(tg_units_value(b, sizeof b, "max_gap_ns", &v), "2.05 KB");
    v = tg_float(0.5, TG_UNIT_NONE);
    assert_string_equal(tg_units_value(b, sizeof b, "busy_frac", &v), "50.0%");
    assert_string_equal(tg_units_value(b, sizeof b, "cv", &v), "0.5");
    v = tg_bool(true);
    assert_string_equal(tg_units_value(b, sizeof b, "x", &v), "true");
    v = tg_null();
    assert_string_equal(tg_units_value(b, sizeof b, "x", &v), "null");
    v = tg_str("sgemm");
    assert_string_equal(tg_units_value(b, sizeof b, "name", &v), "sgemm");
    char small[4];
    v = tg_str("a long kernel name");
    assert_string_equal(tg_units_value(small, sizeof small, "name", &v), "a l");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_duration),
        cmocka_unit_test(test_bytes),
        cmocka_unit_test(test_ratio_and_change),
        cmocka_unit_test(test_from_name),
        cmocka_unit_test(test_value),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
